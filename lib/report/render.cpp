// Renderers of a judgement: Markdown for a pull request, JSON for machines, and
// a self-contained HTML page with an inline SVG chart.
#include "report/judge.hpp"
#include "report/html.hpp"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

namespace benchfp::report {

namespace {

const char* mark(Verdict v) {
    switch (v) {
    case Verdict::regression:
    case Verdict::missing:
    case Verdict::invalid: return " :x:";
    case Verdict::improvement: return " :white_check_mark:";
    default: return "";
    }
}

std::string cell(const Row& r) {
    if (r.verdict == Verdict::missing) return "missing :x:";
    if (r.verdict == Verdict::added) return "new (" + fixed(r.current) + ")";
    std::string text = fixed(r.ratio) + " (" + fixed(100 * r.tolerance, 0) + "%)" + mark(r.verdict);
    if (r.verdict == Verdict::not_judged) text += " (not judged)";
    if (!r.note.empty() && r.verdict == Verdict::regression && r.limit > 0) text += " " + r.note;
    return text;
}

bool significant(const Row& r) { return r.verdict != Verdict::invariant && r.verdict != Verdict::not_judged; }

std::set<std::string> groups_of(const RunResults& r) {
    std::set<std::string> groups;
    for (const auto& [name, m] : r.benchmarks) groups.insert(split_benchmark_name(name).first);
    return groups;
}

const char* meaning =
    "A ratio is the current value over the baseline's, on the minimum over repetitions. A ratio greater than "
    "`1.0` denotes a possible regression (marked with :x:), while a ratio less than `1.0` denotes a possible "
    "improvement (marked with :white_check_mark:); the tolerance is in parentheses. Only significant results - "
    "results that indicate possible regressions or improvements - are shown below (thus, an empty table means "
    "that all benchmark results remained invariant between builds). In-run ratios (one variant over another, "
    "measured side by side) are compared with their stored values and with their absolute limits.";

}  // namespace

std::string render_markdown(const Judgement& j, const RunResults& current, const RunResults& baseline,
                            const ReportContext& c) {
    std::ostringstream md;
    md << "# benchfp regression gate\n\n## Job properties\n\n"
       << "*Commit:* " << (c.commit.empty() ? "(not given)" : c.commit) << "\n\n"
       << "*Baseline:* " << (c.baseline_label.empty() ? c.baseline_path : c.baseline_label)
       << (baseline.commit.empty() ? "" : " (commit " + baseline.commit + ")") << "\n\n"
       << "*Machine:* " << current.fingerprint.describe()
       << (j.same_machine ? " (same as the baseline's: absolute times are judged)"
                          : " (differs from the baseline's " + baseline.fingerprint.describe() +
                                ": absolute times are reported, not judged)")
       << "\n\n*Date:* " << c.date << "\n\n*Verdict:* "
       << (j.failed() ? "**FAILED** :x:" : "passed") << " (" << j.regressions << " regressions, " << j.improvements
       << " improvements)\n\n## Results\n\n" << meaning << "\n\n| ID | time ratio | memory ratio |\n|----|------------|--------------|\n";
    std::map<std::string, std::pair<const Row*, const Row*>> by_benchmark;
    for (const Row& r : j.rows) {
        if (r.kind == "time") by_benchmark[r.id].first = &r;
        if (r.kind == "memory") by_benchmark[r.id].second = &r;
    }
    for (const auto& [id, rows] : by_benchmark) {
        const bool show = (rows.first && significant(*rows.first)) || (rows.second && significant(*rows.second));
        if (!show) continue;
        md << "| `" << id << "` | " << (rows.first ? cell(*rows.first) : "") << " | "
           << (rows.second ? cell(*rows.second) : "") << " |\n";
    }
    md << "\n| in-run ratio or count | current | baseline | ratio | limit |\n|----|----|----|----|----|\n";
    for (const Row& r : j.rows) {
        if (r.kind != "ratio" && r.kind != "instructions") continue;
        if (!significant(r)) continue;
        md << "| `" << r.id << "` | " << fixed(r.current) << " | " << fixed(r.baseline) << " | " << cell(r) << " | "
           << (r.limit > 0 ? fixed(r.limit) : "") << " |\n";
    }
    md << "\n## Benchmark groups\n\n";
    for (const std::string& g : groups_of(current)) md << "- `" << g << "`\n";
    md << "\n## Machine\n\n- current: " << current.fingerprint.describe() << " (" << c.current_path << ")\n"
       << "- baseline: " << baseline.fingerprint.describe() << " (" << c.baseline_path << ")\n";
    return md.str();
}

nlohmann::json render_json(const Judgement& j, const RunResults& current, const RunResults& baseline,
                           const ReportContext& c) {
    nlohmann::json rows = nlohmann::json::array();
    for (const Row& r : j.rows)
        rows.push_back({{"id", r.id},
                        {"kind", r.kind},
                        {"current", std::isnan(r.current) ? nlohmann::json(nullptr) : nlohmann::json(r.current)},
                        {"baseline", std::isnan(r.baseline) ? nlohmann::json(nullptr) : nlohmann::json(r.baseline)},
                        {"ratio", std::isnan(r.ratio) ? nlohmann::json(nullptr) : nlohmann::json(r.ratio)},
                        {"tolerance", r.tolerance},
                        {"limit", r.limit},
                        {"verdict", to_string(r.verdict)},
                        {"note", r.note}});
    return {{"schema", "benchfp.judgement/1"},
            {"commit", c.commit},
            {"baseline", c.baseline_label.empty() ? c.baseline_path : c.baseline_label},
            {"date", c.date},
            {"machine", current.fingerprint.describe()},
            {"baseline_machine", baseline.fingerprint.describe()},
            {"same_machine", j.same_machine},
            {"failed", j.failed()},
            {"regressions", j.regressions},
            {"improvements", j.improvements},
            {"groups", groups_of(current)},
            {"rows", rows}};
}

std::string escape_html(std::string_view text) {
    std::string escaped;
    for (char ch : text) {
        if (ch == '<') escaped += "&lt;";
        else if (ch == '>') escaped += "&gt;";
        else if (ch == '&') escaped += "&amp;";
        else if (ch == '"') escaped += "&quot;";
        else if (ch == '\'') escaped += "&#39;";
        else escaped += ch;
    }
    return escaped;
}

std::string render_html(const Judgement& j, const RunResults& current, const RunResults& baseline,
                        const ReportContext& c) {
    // The chart: one bar per judged ratio, on a log scale around 1, with the
    // tolerance band drawn behind it.
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
        const char* color = r->verdict == Verdict::regression    ? "#c0392b"
                            : r->verdict == Verdict::improvement ? "#27ae60"
                                                                 : "#7f8c8d";
        const double lo = x_of(1 - r->tolerance), hi = x_of(1 + r->tolerance);
        svg << "<text x='4' y='" << y + 12 << "'>" << r->kind << " " << r->id << "</text>";
        svg << "<rect x='" << lo << "' y='" << y << "' width='" << hi - lo << "' height='" << row_h - 4
            << "' fill='#ecf0f1'/>";
        const double x0 = x_of(1), x1 = x_of(r->ratio);
        svg << "<rect x='" << std::min(x0, x1) << "' y='" << y + 3 << "' width='" << std::max(1.0, std::fabs(x1 - x0))
            << "' height='" << row_h - 10 << "' fill='" << color << "'/>";
        svg << "<text x='" << label_w + chart_w + 6 << "' y='" << y + 12 << "'>" << fixed(r->ratio) << "</text>";
        y += row_h;
    }
    svg << "</svg>";

    const std::string escaped = escape_html(render_markdown(j, current, baseline, c));
    std::ostringstream html;
    html << "<!DOCTYPE html><html><head><meta charset='utf-8'><title>benchfp regression gate</title>"
         << "<style>body{font-family:sans-serif;max-width:1000px;margin:2em auto}pre{white-space:pre-wrap}</style>"
         << "</head><body><h1>benchfp regression gate</h1><p><b>"
         << (j.failed() ? "FAILED" : "passed") << "</b>: " << j.regressions << " regressions, " << j.improvements
         << " improvements. Bars: ratio on a log scale (0.5 to 2), grey band: tolerance.</p>" << svg.str()
         << "<h2>Report</h2><pre>" << escaped << "</pre></body></html>\n";
    return html.str();
}

}  // namespace benchfp::report
