#pragma once
// A flame graph as inline SVG, from folded stacks (FlameGraph's format: root
// first, frames separated by ';', with a count). Brendan Gregg's layout: the
// root at the bottom, each frame as wide as the samples under it, children
// sorted by name left to right, one row per depth. Every label is escaped and
// truncated to its frame's width; the full name, samples and share are in the
// frame's <title> (a tooltip). No script: the page stays a static document.
//
// Seam: depends only on report/html.hpp (escaping); callers hand it counts.
#include <map>
#include <string>

namespace benchfp::report {

struct FlameOptions {
    int width = 1200;        // pixels
    int frame_height = 16;   // pixels per depth
    std::string title;       // drawn above the graph
    std::string id;          // the <svg>'s id attribute ("" for none)
};

// "" when there is nothing to draw (no stacks, or every count 0).
std::string flame_graph_svg(const std::map<std::string, long>& folded, const FlameOptions& options);

// `text` cut to at most `max_chars` characters, ending in ".." when cut, never
// inside a UTF-8 sequence; "" when not even three characters fit.
std::string truncate_label(const std::string& text, int max_chars);

}  // namespace benchfp::report
