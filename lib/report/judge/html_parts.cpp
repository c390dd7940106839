#include "report/judge/html_parts.hpp"

#include "report/flame.hpp"
#include "report/html.hpp"
#include "report/judge/stats.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace benchfp::report {

namespace {

constexpr double char_px = 7.3;  // one character of 12 px monospace, wide enough for DejaVu Sans Mono

struct Axis {
    double half_range;  // log2 units either side of 1
    double left, width;
    double x(double ratio) const {
        const double v = std::clamp(std::log2(std::max(ratio, 1e-300)), -half_range, half_range);
        return left + width / 2 + v / half_range * width / 2;
    }
};

void axis_svg(std::ostringstream& svg, const Axis& a, int height) {
    for (int k = -2; k <= 2; ++k) {
        const double ratio = std::exp2(k * a.half_range / 2), x = a.x(ratio);
        svg << "<line x1='" << x << "' y1='18' x2='" << x << "' y2='" << height - 4 << "' stroke='"
            << (k == 0 ? "#444" : "#ddd") << "'/><text x='" << x << "' y='13' text-anchor='middle'>"
            << fixed(ratio, ratio < 10 ? 2 : 1) << "</text>";
    }
}

}  // namespace

std::string lollipop_chart(const Judgement& j) {
    std::vector<const Row*> rows;
    for (const Row& r : j.rows)
        if ((r.verdict == RowVerdict::regression || r.verdict == RowVerdict::improvement) && std::isfinite(r.ratio) && r.ratio > 0)
            rows.push_back(&r);
    if (rows.empty())
        return "<p class='no-changes'>No significant change: every judged row is within its tolerance of the baseline.</p>";
    std::stable_sort(rows.begin(), rows.end(), [](const Row* a, const Row* b) { return a->ratio > b->ratio; });
    size_t longest = 0;
    double reach = std::log2(1.25);
    for (const Row* r : rows) {
        longest = std::max(longest, r->kind.size() + 1 + r->id.size());
        reach = std::max({reach, std::fabs(std::log2(r->ratio)) * 1.1, std::log2(1 + r->tolerance) * 1.1});
    }
    const int row_h = 20, height = 24 + row_h * static_cast<int>(rows.size());
    const Axis a{std::min(reach, 4.0), 8 + char_px * static_cast<double>(std::min<size_t>(longest, 120)), 480};
    std::ostringstream svg;
    svg << "<svg xmlns='http://www.w3.org/2000/svg' class='lollipop' width='" << a.left + a.width + 70 << "' height='"
        << height << "' font-family='monospace' font-size='12'>";
    axis_svg(svg, a, height);
    int y = 22;
    for (const Row* r : rows) {
        const bool worse = r->verdict == RowVerdict::regression;
        const std::string colour = worse ? "#c0392b" : "#27ae60", label = r->kind + " " + r->id;
        const double lo = a.x(std::max(1e-9, 1 - r->tolerance)), hi = a.x(1 + r->tolerance), cy = y + row_h / 2.0;
        svg << "<g class='" << (worse ? "regression" : "improvement") << "'><title>" << escape_html(label) << ": "
            << fixed(r->ratio) << " x the baseline (tolerance " << fixed(100 * r->tolerance, 0) << "%)</title>"
            << "<text x='4' y='" << cy + 4 << "'>" << escape_html(truncate_label(label, 120)) << "</text>"
            << "<rect x='" << lo << "' y='" << y + 3 << "' width='" << hi - lo << "' height='" << row_h - 6
            << "' fill='#e8e8e8'/><line x1='" << a.x(1) << "' y1='" << cy << "' x2='" << a.x(r->ratio) << "' y2='" << cy
            << "' stroke='" << colour << "' stroke-width='2'/><circle cx='" << a.x(r->ratio) << "' cy='" << cy
            << "' r='5' fill='" << colour << "'/><text x='" << a.left + a.width + 8 << "' y='" << cy + 4 << "'>"
            << fixed(r->ratio) << "</text></g>";
        y += row_h;
    }
    svg << "</svg>";
    return svg.str();
}

namespace {

// Red (0) to green (1), light enough to read the text on it.
std::string rate_colour(double rate) { return "hsl(" + std::to_string(static_cast<int>(120 * rate)) + ",65%,82%)"; }

void unwind_table(std::ostringstream& html, const CaseSummary& s) {
    std::vector<std::string> frames = {"clobber", "preserve", "frame"};  // the README's order; others after
    std::set<std::pair<std::string, std::string>> kernel_isas;
    for (const auto& [key, rate] : s.unwind) {
        kernel_isas.insert({std::get<0>(key), std::get<1>(key)});
        if (std::find(frames.begin(), frames.end(), std::get<2>(key)) == frames.end()) frames.push_back(std::get<2>(key));
    }
    std::erase_if(frames, [&](const std::string& f) {
        return std::none_of(s.unwind.begin(), s.unwind.end(), [&](const auto& u) { return std::get<2>(u.first) == f; });
    });
    html << "<table id='unwind-rates'><tr><th>kernel</th><th>ISA</th>";
    for (const std::string& f : frames) html << "<th>" << escape_html(f) << "</th>";
    html << "</tr>";
    for (const auto& [kernel, isa] : kernel_isas) {
        html << "<tr><td>" << escape_html(kernel) << "</td><td>" << escape_html(isa) << "</td>";
        for (const std::string& f : frames) {
            const auto it = s.unwind.find({kernel, isa, f});
            if (it == s.unwind.end() || it->second.judged == 0) {
                html << "<td class='rate'>-</td>";
                continue;
            }
            const UnwindRate& r = it->second;
            const double rate = static_cast<double>(r.full) / r.judged;
            html << "<td class='rate' style='background:" << rate_colour(rate) << "' title='"
                 << escape_html(std::to_string(r.full) + " full chains of " + std::to_string(r.judged) +
                                " judged JIT samples; expected " + r.expected)
                 << "'>" << fixed(rate, 3) << (r.passed ? " &#10003;" : " &#10007; FAILED") << "<br><small>expected "
                 << escape_html(r.expected) << "</small></td>";
        }
        html << "</tr>";
    }
    html << "</table>";
}

// What each policy adds to clobber's stepped call (report/stepped_cost.hpp).
void stepped_table(std::ostringstream& html, const CaseSummary& s, const std::vector<std::string>& groups) {
    html << "<table id='stepped-frame-cost'><tr><th>kernel / alg / ISA / problem</th><th>clobber</th>"
            "<th>frame &minus; clobber</th><th>preserve &minus; clobber</th></tr>";
    for (const std::string& group : groups) {
        const auto& policies = s.stepped.at(group);
        const SteppedCounts& clobber = policies.at("clobber");
        html << "<tr><td>" << escape_html(group) << "</td><td>" << escape_html(counts_text(clobber)) << "</td>";
        for (const char* policy : {"frame", "preserve"}) {
            const auto it = policies.find(policy);
            html << "<td>" << (it == policies.end() ? "-" : escape_html(difference_text(it->second, clobber))) << "</td>";
        }
        html << "</tr>";
    }
    html << "</table>";
}

void counts_table(std::ostringstream& html, const CaseSummary& s) {
    html << "<details><summary>Cases per mode and ISA</summary><table><tr><th>mode</th><th>ISA</th><th>ran</th>"
            "<th>passed</th><th>failed</th><th>skipped</th></tr>";
    for (const auto& [key, c] : s.by_mode_isa)
        html << "<tr" << (c.failed ? " class='fail'" : "") << "><td>" << escape_html(key.first) << "</td><td>"
             << escape_html(key.second) << "</td><td class='num'>" << c.ran << "</td><td class='num'>" << c.passed
             << "</td><td class='num'>" << c.failed << "</td><td class='num'>" << c.skipped << "</td></tr>";
    html << "</table></details>";
}

}  // namespace

std::string kernel_cases_html(const CaseSummary& s) {
    if (s.sources.empty()) return "";
    std::ostringstream html;
    html << "<section id='kernel-cases'><h2>Kernel cases</h2><p>" << s.ran() << " cases ran, " << s.failures()
         << " failed";
    if (!s.untested_isas.empty()) {
        html << "; not tested on this machine:";
        for (const std::string& isa : s.untested_isas) html << ' ' << escape_html(isa);
    }
    html << ".</p>";
    counts_table(html, s);
    if (!s.unwind.empty()) {
        html << "<h3>Unwind rates (full chains / judged JIT samples)</h3><p>Green: every chain reached main; red: none "
                "did. Each policy expects its own verdict (clobber broken, preserve skipped-caller, frame full): "
                "&#10003; the cases got it.</p>";
        unwind_table(html, s);
    }
    if (const std::vector<std::string> groups = compared_groups(s.stepped); !groups.empty()) {
        html << "<h3>Frame cost per call, stepped</h3><p>Every JIT instruction of one call counted, nops (loop-head "
                "padding, which moves with the prologue's length) apart, and the instructions that read or write the "
                "stack: what frame and preserve add to clobber's call, exactly.</p>";
        stepped_table(html, s, groups);
    }
    for (const auto& [frame, folded] : s.folded_by_frame) {
        long samples = 0;
        for (const auto& [stack, n] : folded) samples += n;
        const std::string svg = flame_graph_svg(
            folded, {1200, 16, "frame policy " + frame + ": " + std::to_string(samples) + " JIT samples, every kernel and ISA",
                     "flame-" + frame});
        if (!svg.empty()) html << "<h3>Flame graph: " << escape_html(frame) << "</h3>" << svg;
    }
    html << "</section>";
    return html.str();
}

}  // namespace benchfp::report
