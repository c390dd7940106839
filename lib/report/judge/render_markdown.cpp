// The Markdown report, nanosoldier's layout: job properties, then per machine
// the significant rows only, with the meaning of a ratio stated once.
#include "report/judge/render.hpp"

#include "report/judge/stats.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

namespace benchfp::report {

bool Report::failed() const {
    // Kernel cases given but none ran: nothing was tested, which is never a pass.
    const bool nothing_ran = !cases.sources.empty() && cases.ran() == 0;
    return cases.failures() > 0 || nothing_ran ||
           std::any_of(machines.begin(), machines.end(), [](const MachineJudgement& m) { return m.judgement.failed(); });
}

int Report::regressions() const {
    int n = 0;
    for (const MachineJudgement& m : machines) n += m.judgement.regressions;
    return n;
}

int Report::improvements() const {
    int n = 0;
    for (const MachineJudgement& m : machines) n += m.judgement.improvements;
    return n;
}

std::string machine_line(const MachineJudgement& m) {
    const Fingerprint& here = m.current.fingerprint;
    if (!m.baseline)
        return "no baseline for this machine (" + here.describe() + "; " +
               (here.known() ? "it would be " + m.baseline_path : "an unknown machine has none") +
               "): only the absolute limits are judged";
    if (m.judgement.same_machine) return here.describe() + " (same as the baseline's: absolute times are judged)";
    return here.describe() + " (" + (here.known() ? "differs from" : "unknown, not matched with") + " the baseline's " +
           m.baseline->fingerprint.describe() + ": absolute times are reported, not judged)";
}

namespace {

const char* mark(RowVerdict v) {
    switch (v) {
    case RowVerdict::regression:
    case RowVerdict::missing:
    case RowVerdict::invalid: return " :x:";
    case RowVerdict::improvement: return " :white_check_mark:";
    case RowVerdict::unresolved: return " :warning: unresolved";
    default: return "";
    }
}

std::string cell(const Row& r) {
    if (r.verdict == RowVerdict::missing) return "missing :x:";
    if (r.verdict == RowVerdict::added) return "new (" + fixed(r.current) + ")";
    std::string text = fixed(r.ratio) + " (" + fixed(100 * r.tolerance, 0) + "%)" + mark(r.verdict);
    if (r.verdict == RowVerdict::not_judged) text += " (not judged)";
    if (!r.note.empty() && (r.verdict == RowVerdict::regression || r.verdict == RowVerdict::unresolved) && r.limit > 0)
        text += " " + r.note;
    return text;
}

bool significant(const Row& r) { return r.verdict != RowVerdict::invariant && r.verdict != RowVerdict::not_judged; }

const char* meaning =
    "A ratio is the current value over the baseline's, on the minimum over repetitions. A ratio greater than "
    "`1.0` denotes a possible regression (marked with :x:), while a ratio less than `1.0` denotes a possible "
    "improvement (marked with :white_check_mark:); the tolerance is in parentheses. Only significant results - "
    "results that indicate possible regressions or improvements - are shown below (thus, an empty table means "
    "that all benchmark results remained invariant between builds). In-run ratios (one variant over another, "
    "measured side by side) are compared with their stored values and with their absolute limits.";

// {"version": "0.5.0", "compiler": "GNU 12.2.0", ...} -> "version 0.5.0, compiler GNU 12.2.0, ..."
std::string build_text(const nlohmann::json& build) {
    if (!build.is_object()) return "(build not given)";
    std::string text;
    for (const auto& [key, value] : build.items())
        text += (text.empty() ? "" : ", ") + key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
    return text;
}

void benchmark_table(std::ostringstream& md, const Judgement& j) {
    md << "| ID | time ratio | memory ratio |\n|----|------------|--------------|\n";
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
}

void ratio_table(std::ostringstream& md, const Judgement& j) {
    md << "\n| in-run ratio or count | current | baseline | ratio | limit |\n|----|----|----|----|----|\n";
    for (const Row& r : j.rows) {
        if (r.kind != "ratio" && r.kind != "instructions") continue;
        if (!significant(r)) continue;
        md << "| `" << r.id << "` | " << fixed(r.current) << " | " << fixed(r.baseline) << " | " << cell(r) << " | "
           << (r.limit > 0 ? fixed(r.limit) : "") << " |\n";
    }
}

// What each frame policy costs each kernel, measured side by side in this run
// (benchfp kernel --mode=perf): every such ratio, significant or not, since the
// frame cost is what the harness exists to show; with its 95% interval and the
// group's A/A control (the noise floor) where the run paired them.
std::string with_interval(const std::string& value, const Interval* interval) {
    if (!interval) return value;
    return value + " [" + fixed(interval->lo, 4) + ", " + fixed(interval->hi, 4) + "]";
}

void frame_cost_table(std::ostringstream& md, const RunResults& current) {
    std::map<std::string, std::map<std::string, std::string>> by_problem;  // group -> column -> cell
    for (const auto& [id, ratio] : current.ratios)
        for (const char* rule : {"frame / clobber", "preserve / clobber"})
            if (id.ends_with(std::string(": ") + rule)) {
                const auto interval = current.ratio_intervals.find(id);
                by_problem[id.substr(0, id.size() - std::strlen(rule) - 2)][rule] = with_interval(
                    fixed(ratio, 4), interval == current.ratio_intervals.end() ? nullptr : &interval->second);
            }
    if (by_problem.empty()) return;
    for (auto& [group, cells] : by_problem)
        if (const auto aa = current.controls.find(group); aa != current.controls.end())
            cells["A/A"] = with_interval(fixed(aa->second.ratio, 4), aa->second.interval ? &*aa->second.interval : nullptr);
    md << "\n### Frame cost (time over clobber's, same run, same buffers; median of paired ratios [95% interval])\n\n"
       << "| kernel / alg / ISA / problem | frame / clobber | preserve / clobber | A/A (noise floor) |\n|----|----|----|----|\n";
    for (const auto& entry : by_problem) {
        const std::map<std::string, std::string>& cells = entry.second;  // not a structured binding: lambdas capture it
        auto value = [&](const char* column) { return cells.count(column) ? cells.at(column) : std::string("-"); };
        md << "| `" << entry.first << "` | " << value("frame / clobber") << " | " << value("preserve / clobber") << " | "
           << value("A/A") << " |\n";
    }
}

void machine_section(std::ostringstream& md, const MachineJudgement& m, bool titled) {
    const Judgement& j = m.judgement;
    if (titled) md << "## Machine: " << m.current.fingerprint.describe() << "\n\n";
    md << "*Machine:* " << machine_line(m) << "\n\n*Baseline:* "
       << (m.baseline ? m.baseline->source + (m.baseline->commit.empty() ? "" : " (commit " + m.baseline->commit + ")")
                      : "none")
       << "\n\n*Times from:* " << m.current.time_from << "\n\n*Verdict:* "
       << (j.failed() ? "**FAILED** :x:" : "passed") << " (" << j.regressions << " regressions, " << j.improvements
       << " improvements)\n\n";
    benchmark_table(md, j);
    ratio_table(md, j);
    frame_cost_table(md, m.current);
    std::set<std::string> groups;
    for (const auto& [name, _] : m.current.benchmarks) groups.insert(split_benchmark_name(name).first);
    md << "\nBenchmark groups:";
    for (const std::string& g : groups) md << " `" << g << "`";
    md << "\n\n- current: " << m.current.fingerprint.describe() << " (" << m.current.source << ")\n"
       << "- baseline: " << (m.baseline ? m.baseline->fingerprint.describe() + " (" + m.baseline->source + ")" : "none")
       << "\n\n";
}

}  // namespace

std::string render_markdown(const Report& report) {
    const ReportContext& c = report.context;
    std::ostringstream md;
    md << "# benchfp regression gate\n\n## Job properties\n\n"
       << "*Commit:* " << (c.commit.empty() ? "(not given)" : c.commit) << "\n\n";
    if (!c.baseline_label.empty()) md << "*Baseline label:* " << c.baseline_label << "\n\n";
    md << "*Date:* " << c.date << "\n\n*Judged by:* " << build_text(c.build)
       << "\n\n*Machines:* " << report.machines.size() << "\n\n*Verdict:* "
       << (report.failed() ? "**FAILED** :x:" : "passed") << " (" << report.regressions() << " regressions, "
       << report.improvements() << " improvements";
    if (!report.cases.sources.empty()) md << ", " << report.cases.failures() << " failed kernel cases of " << report.cases.ran();
    md << ")\n\n## Results\n\n" << meaning << "\n\n";
    for (const MachineJudgement& m : report.machines) machine_section(md, m, report.machines.size() > 1);
    if (!report.cases.sources.empty() || !report.cases.untested_isas.empty()) md << render_cases_markdown(report.cases);
    return md.str();
}

}  // namespace benchfp::report
