#include "report/flame.hpp"

#include "report/html.hpp"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <sstream>
#include <vector>

namespace benchfp::report {

namespace {

struct Frame {
    long count = 0;
    std::map<std::string, std::unique_ptr<Frame>> children;  // sorted by name, as FlameGraph draws them
};

void add_stack(Frame& root, const std::string& stack, long count) {
    Frame* at = &root;
    at->count += count;
    size_t begin = 0;
    while (begin <= stack.size()) {
        const size_t end = std::min(stack.find(';', begin), stack.size());
        auto& child = at->children[stack.substr(begin, end - begin)];
        if (!child) child = std::make_unique<Frame>();
        at = child.get();
        at->count += count;
        begin = end + 1;
    }
}

int depth_of(const Frame& f) {
    int deepest = 0;
    for (const auto& [name, child] : f.children) deepest = std::max(deepest, depth_of(*child));
    return 1 + deepest;
}

// A warm colour from the name (FlameGraph's palette), the same for the same
// frame in every graph; unknown frames grey, so a chain that stops short shows.
std::string colour_of(const std::string& name) {
    if (name.empty() || name.front() == '[') return "rgb(190,190,190)";
    uint32_t h = 2166136261u;  // FNV-1a
    for (unsigned char ch : name) h = (h ^ ch) * 16777619u;
    return "rgb(" + std::to_string(205 + h % 50) + "," + std::to_string(80 + (h >> 8) % 150) + "," +
           std::to_string(50 + (h >> 16) % 40) + ")";
}

struct Layout {
    const FlameOptions& o;
    double px_per_sample;
    long total;
    int top;  // y of the deepest row
    std::ostringstream svg;

    void draw(const std::string& name, const Frame& f, double x, int depth, int depth_count) {
        const double w = f.count * px_per_sample;
        if (w < 0.1) return;  // FlameGraph's minimum width: thinner frames are not drawn
        const int y = top + (depth_count - 1 - depth) * o.frame_height;
        std::ostringstream share;
        share.precision(2);
        share << std::fixed << 100.0 * f.count / total;
        svg << "<g><title>" << escape_html(name) << " (" << f.count << " samples, " << share.str()
            << "%)</title><rect x='" << x << "' y='" << y << "' width='" << w << "' height='" << o.frame_height - 1
            << "' rx='2' fill='" << colour_of(name) << "'/>";
        const std::string label = truncate_label(name, static_cast<int>((w - 6) / 6.6));
        if (!label.empty())
            svg << "<text x='" << x + 3 << "' y='" << y + o.frame_height - 5 << "'>" << escape_html(label) << "</text>";
        svg << "</g>";
        for (const auto& [child_name, child] : f.children) {
            draw(child_name, *child, x, depth + 1, depth_count);
            x += child->count * px_per_sample;
        }
    }
};

}  // namespace

std::string truncate_label(const std::string& text, int max_chars) {
    if (static_cast<int>(text.size()) <= max_chars) return text;
    if (max_chars < 3) return "";
    size_t cut = static_cast<size_t>(max_chars - 2);
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 sequence
    return text.substr(0, cut) + "..";
}

std::string flame_graph_svg(const std::map<std::string, long>& folded, const FlameOptions& o) {
    Frame root;
    for (const auto& [stack, count] : folded)
        if (count > 0) add_stack(root, stack, count);
    if (root.count == 0) return "";
    const int depth = depth_of(root);  // "all" is the root row
    const int title_h = o.title.empty() ? 0 : 24, height = title_h + depth * o.frame_height + 4;
    Layout layout{o, (o.width - 2.0) / root.count, root.count, title_h, {}};
    layout.svg << "<svg xmlns='http://www.w3.org/2000/svg' class='flame' width='" << o.width << "' height='" << height
               << "' viewBox='0 0 " << o.width << ' ' << height << "' font-family='monospace' font-size='11'"
               << (o.id.empty() ? "" : " id='" + escape_html(o.id) + "'") << ">";
    if (!o.title.empty()) layout.svg << "<text x='" << o.width / 2 << "' y='16' text-anchor='middle' font-size='13'>"
                                     << escape_html(o.title) << "</text>";
    layout.draw("all", root, 1, 0, depth);
    layout.svg << "</svg>";
    return layout.svg.str();
}

}  // namespace benchfp::report
