// The HTML report: one self-contained page, a chart per machine (every judged
// ratio on a log scale around 1 with its tolerance band behind it), then the
// Markdown report as text.
#include "report/html.hpp"
#include "report/judge/render.hpp"

#include "report/judge/stats.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace benchfp::report {

namespace {

std::string chart(const Judgement& j) {
    std::vector<const Row*> bars;
    for (const Row& r : j.rows)
        if (std::isfinite(r.ratio) && r.ratio > 0) bars.push_back(&r);
    const int row_h = 18, label_w = 420, chart_w = 420, height = 40 + row_h * static_cast<int>(bars.size());
    auto x_of = [&](double ratio) {  // log2 scale, 1.0 in the middle, 0.5..2 across
        const double v = std::max(-1.0, std::min(1.0, std::log2(ratio)));
        return label_w + chart_w / 2.0 + v * chart_w / 2.0;
    };
    std::ostringstream svg;
    svg << "<svg xmlns='http://www.w3.org/2000/svg' width='" << label_w + chart_w + 80 << "' height='" << height
        << "' font-family='monospace' font-size='11'>";
    svg << "<line x1='" << x_of(1) << "' y1='20' x2='" << x_of(1) << "' y2='" << height - 10
        << "' stroke='#444'/><text x='" << x_of(1) - 8 << "' y='14'>1.0</text>";
    svg << "<text x='" << x_of(0.5) << "' y='14'>0.5</text><text x='" << x_of(2) - 16 << "' y='14'>2.0</text>";
    int y = 24;
    for (const Row* r : bars) {
        const char* color = r->verdict == RowVerdict::regression    ? "#c0392b"
                            : r->verdict == RowVerdict::improvement ? "#27ae60"
                                                                    : "#7f8c8d";
        const double lo = x_of(std::max(1e-9, 1 - r->tolerance)), hi = x_of(1 + r->tolerance);
        svg << "<text x='4' y='" << y + 12 << "'>" << escape_html(r->kind + " " + r->id) << "</text>";
        svg << "<rect x='" << lo << "' y='" << y << "' width='" << hi - lo << "' height='" << row_h - 4
            << "' fill='#ecf0f1'/>";
        const double x0 = x_of(1), x1 = x_of(r->ratio);
        svg << "<rect x='" << std::min(x0, x1) << "' y='" << y + 3 << "' width='" << std::max(1.0, std::fabs(x1 - x0))
            << "' height='" << row_h - 10 << "' fill='" << color << "'/>";
        svg << "<text x='" << label_w + chart_w + 6 << "' y='" << y + 12 << "'>" << fixed(r->ratio) << "</text>";
        y += row_h;
    }
    svg << "</svg>";
    return svg.str();
}

}  // namespace

std::string render_html(const Report& report) {
    std::ostringstream html;
    html << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>benchfp regression gate</title>"
         << "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto}pre{white-space:pre-wrap}</style>"
         << "</head><body><h1>benchfp regression gate</h1><p><b>" << (report.failed() ? "FAILED" : "passed")
         << "</b>: " << report.regressions() << " regressions, " << report.improvements()
         << " improvements. Bars: ratio on a log scale (0.5 to 2), grey band: tolerance.</p>";
    for (const MachineJudgement& m : report.machines)
        html << "<h2>" << escape_html(machine_line(m)) << "</h2>" << chart(m.judgement);
    html << "<h2>Report</h2><pre>" << escape_html(render_markdown(report)) << "</pre></body></html>\n";
    return html.str();
}

}  // namespace benchfp::report
