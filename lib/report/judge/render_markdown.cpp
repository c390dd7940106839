// The Markdown report, nanosoldier's layout: Job Properties, Results (the
// meaning of a ratio stated once, then per machine the significant rows only),
// Benchmark Group List, Version Info of both sides.
#include "report/judge/render.hpp"

#include "report/html.hpp"
#include "report/judge/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

namespace benchfp::report {

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

const char* mark(const Row& r) {
    switch (r.verdict) {
    case RowVerdict::regression:
    case RowVerdict::missing:
    case RowVerdict::invalid: return " :x:";
    case RowVerdict::over_limit: return " :no_entry:";
    case RowVerdict::improvement: return " :white_check_mark:";
    case RowVerdict::unresolved: return " :warning: unresolved";
    case RowVerdict::unconfirmed: return " :warning: not confirmed";
    default: return "";
    }
}

// A benchmark's cell: "1.500 (5%) :x:" (nanosoldier's), or what stands instead.
std::string cell(const Row& r) {
    if (r.verdict == RowVerdict::missing) return "missing :x:";
    if (r.verdict == RowVerdict::added) return "new (" + fixed(r.current) + ")";
    std::string text = fixed(r.ratio) + " (" + fixed(100 * r.tolerance, 0) + "%)" + mark(r);
    if (r.verdict == RowVerdict::not_judged) text += " (not judged)";
    if (!r.note.empty() && r.verdict == RowVerdict::unresolved) text += ": " + r.note;
    if (r.verdict == RowVerdict::unconfirmed || (r.fails() && !r.note.empty())) text += ": " + r.note;
    return text;
}

const char* meaning =
    "A ratio greater than `1.0` denotes a possible regression (marked with :x:), while a ratio less than `1.0` "
    "denotes a possible improvement (marked with :white_check_mark:). The ratio is the current value over the "
    "baseline's, on the minimum over repetitions; the tolerance is in parentheses (a ratio regresses when "
    "ratio - tolerance > 1). Only significant results - results that indicate possible regressions or "
    "improvements - are shown below (thus, an empty table means that all benchmark results remained invariant "
    "between builds). In-run ratios (one variant over another, both measured side by side in one run) and "
    "instruction counts are judged twice: against their stored baseline value (:x: a regression beyond "
    "tolerance) and against an absolute limit the value itself must not exceed (:no_entry: over the limit, "
    "whatever the baseline says). Where the failed benchmarks were re-run in a new process (ci/gate.sh does), a "
    "failure the re-run does not show again is reported as not confirmed (:warning:), not failed. A time "
    "regression in a run whose peer allocators (code this project does not change) also read more than 10% over "
    "their baselines is unresolved (:warning:) where it is within 2x their median ratio: the machine moved, and the "
    "run does not show the build slower; a re-run in a new process (ci/gate.sh makes one) then judges it.";

// {"version": "0.5.0", "compiler": "GNU 12.2.0", ...} -> "version 0.5.0, compiler GNU 12.2.0, ..."
std::string build_text(const nlohmann::json& build) {
    if (!build.is_object()) return "(build not given)";
    std::string text;
    for (const auto& [key, value] : build.items())
        text += (text.empty() ? "" : ", ") + key + " " + (value.is_string() ? value.get<std::string>() : value.dump());
    return markdown_text(text);
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
        md << "| " << markdown_code_span(id, MarkdownPlace::table_cell) << " | " << (rows.first ? cell(*rows.first) : "") << " | "
           << (rows.second ? cell(*rows.second) : "") << " |\n";
    }
}

// The last column of an in-run row: what its marks mean, for this row.
std::string ratio_verdict(const Row& r) {
    std::string text;
    if (r.verdict == RowVerdict::regression) text = ":x: regression against the baseline" + (r.note.empty() ? "" : " (" + r.note + ")");
    if (r.verdict == RowVerdict::improvement) text = ":white_check_mark: improvement against the baseline";
    if (r.over_limit) text += std::string(text.empty() ? "" : "; ") + ":no_entry: over the limit (" + fixed(r.current) + " > " + fixed(r.limit) + ")";
    if (r.verdict == RowVerdict::missing) text = ":x: missing: " + r.note;
    if (r.verdict == RowVerdict::invalid) text = ":x: invalid value";
    if (r.verdict == RowVerdict::added) text = "new: no baseline value";
    if (r.verdict == RowVerdict::unresolved) text = ":warning: unresolved: " + r.note;
    if (r.verdict == RowVerdict::unconfirmed) text = ":warning: not confirmed: " + r.note;
    if (r.baseline_over_limit()) text += "; the stored baseline (" + fixed(r.baseline) + ") is itself over the limit";
    return text;
}

void ratio_table(std::ostringstream& md, const Judgement& j) {
    md << "\n| in-run ratio or instruction count | this run | stored baseline | this run / baseline (tolerance) "
          "| absolute limit (this run must be ≤) | verdict |\n|----|----|----|----|----|----|\n";
    for (const Row& r : j.rows) {
        if ((r.kind != "ratio" && r.kind != "instructions") || !significant(r)) continue;
        const std::string change = std::isnan(r.ratio) ? "-" : fixed(r.ratio) + " (" + fixed(100 * r.tolerance, 0) + "%)";
        md << "| " << markdown_code_span(r.id, MarkdownPlace::table_cell) << " | " << fixed(r.current) << " | " << (std::isnan(r.baseline) ? "-" : fixed(r.baseline))
           << " | " << change << " | " << (r.limit > 0 ? fixed(r.limit) : "none") << " | " << ratio_verdict(r) << " |\n";
    }
}

// A value and, where it has one, its interval, as the frame cost table writes them.
std::string with_interval(const std::string& value, const Interval* interval) {
    if (!interval) return value;
    return value + " " + bracketed(*interval);
}

// A group's runs, from its frame costs' records (frame / clobber and preserve
// / clobber: a run whose frame case failed still has its preserve case), each
// run once (its record with an A/A where one has it), in the order read: by
// file, then run in the file.
std::vector<const PairedRecord*> runs_of_group(const RunResults& current, const std::string& group) {
    std::vector<const PairedRecord*> runs;
    std::vector<std::string> files;  // in the order first read
    for (const char* rule : {"frame / clobber", "preserve / clobber"}) {
        const auto records = current.ratio_records.find(group + ": " + rule);
        if (records == current.ratio_records.end()) continue;
        for (const PairedRecord& record : records->second) {
            if (std::find(files.begin(), files.end(), record.file) == files.end()) files.push_back(record.file);
            const auto same = std::find_if(runs.begin(), runs.end(), [&](const PairedRecord* r) {
                return r->file == record.file && r->run_in_file == record.run_in_file;
            });
            if (same == runs.end()) runs.push_back(&record);
            else if (!(*same)->aa) *same = &record;
        }
    }
    const auto file_rank = [&](const PairedRecord* r) { return std::find(files.begin(), files.end(), r->file) - files.begin(); };
    std::stable_sort(runs.begin(), runs.end(), [&](const PairedRecord* a, const PairedRecord* b) {
        return std::pair(file_rank(a), a->run_in_file) < std::pair(file_rank(b), b->run_in_file);
    });
    return runs;
}

// The A/A column's cell of a group: the value alone where the results hold
// one run; for several, each run's named as the judge's notes name it
// ("b.json: ..."), "-" for a run without one.
std::string controls_text(const RunResults& current, const std::string& group) {
    const std::vector<const PairedRecord*> runs = runs_of_group(current, group);
    const auto control = [](const PairedRecord* r) {
        return r->aa ? with_interval(fixed(r->aa->ratio, 4), r->aa->interval ? &*r->aa->interval : nullptr)
                     : std::string("-");
    };
    if (runs.empty()) return "";
    if (runs.size() == 1 && !one_of_several_runs(*runs.front(), current))
        return runs.front()->aa ? control(runs.front()) : "";
    std::string text;
    for (const PairedRecord* r : runs) text += (text.empty() ? "" : "; ") + markdown_text(r->run()) + ": " + control(r);
    return text;
}

// What each frame policy costs each kernel, measured side by side in this run
// (benchfp kernel --mode=perf): every such ratio, significant or not, since the
// frame cost is what the harness exists to show; with its 95% interval (the
// hull of the runs' where runs were merged) and each run's A/A control (the
// noise floor) where the run paired them.
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
        if (const std::string aa = controls_text(current, group); !aa.empty()) cells["A/A"] = aa;
    md << "\n#### Frame cost (time over clobber's, same run, same buffers; median of paired ratios [95% interval; where runs were merged, the hull of theirs, and each run's A/A control, named by its file])\n\n"
       << "| kernel / alg / ISA / problem | frame / clobber | preserve / clobber | A/A (noise floor) |\n|----|----|----|----|\n";
    for (const auto& entry : by_problem) {
        const std::map<std::string, std::string>& cells = entry.second;  // not a structured binding: lambdas capture it
        auto value = [&](const char* column) { return cells.count(column) ? cells.at(column) : std::string("-"); };
        md << "| " << markdown_code_span(entry.first, MarkdownPlace::table_cell) << " | " << value("frame / clobber") << " | " << value("preserve / clobber") << " | "
           << value("A/A") << " |\n";
    }
}

// A workload table's head: the workload's column, one per heading, and the separator line.
void workload_table_head_md(std::ostringstream& md, const std::vector<std::string>& headings) {
    md << "| workload |";
    for (const std::string& heading : headings) md << " " << heading << " |";
    md << "\n|----|";
    for (size_t i = 0; i < headings.size(); ++i) md << "----|";
    md << "\n";
}

// A table of one figure per allocation workload and allocator (the workload,
// then each allocator's figure, "-" where it has none), with a last column of
// its own: `last_column` its heading, `last_cell` a line's cell. Both
// allocator tables below (as workload_section in render_html.cpp).
void workload_table_md(std::ostringstream& md, const WorkloadTable& table, const char* last_column,
                       const std::function<std::string(const WorkloadTable::Line&)>& last_cell) {
    std::vector<std::string> headings = table.allocators;
    headings.push_back(last_column);
    workload_table_head_md(md, headings);
    for (const WorkloadTable::Line& line : table.lines) {
        md << "| " << markdown_code_span(line.workload, MarkdownPlace::table_cell) << " |";
        for (const std::string& a : table.allocators) {
            const auto it = line.figures.find(a);
            md << " " << (it == line.figures.end() ? std::string("-") : fixed(it->second, 1)) << " |";
        }
        md << " " << last_cell(line) << " |\n";
    }
}

// Each allocator's time per iteration on each allocation workload (this run;
// reported, not judged), with the fastest peer over the pool.
void allocation_time_section(std::ostringstream& md, const Judgement& j) {
    const WorkloadTable table = workload_table(j, "time");
    if (table.lines.empty()) return;
    md << "\n#### Allocation time (ns an iteration, the minimum over repetitions, this run; lower is better)\n\n"
       << "The pool with its profiler hook compiled out and compiled in but off (the pool as shipped) beside the "
          "peer allocators, each measured on its own, not paired; best peer / pool is the fastest peer's time over "
          "the pool's with the hook off (above 1: the pool is faster). Reported, not judged: a peer's own time moves "
          "between processes.\n\n";
    workload_table_md(md, table, "best peer / pool", best_peer_text);
}

// What each allocator holds per live object at each workload's peak (this
// run; every figure, significant or not, lower is better), with the in-run
// footprint ratios and their verdicts.
void footprint_section(std::ostringstream& md, const Judgement& j) {
    const WorkloadTable table = workload_table(j, "footprint");
    if (table.lines.empty()) return;
    md << "\n#### Memory footprint (resident bytes per live object at the workload's peak, this run; lower is better)\n\n"
       << "Measured in a child process forked per workload x allocator: its Private_Dirty at the peak minus before "
          "the workload's first allocation, over the live objects then (several workload states at their peak at "
          "once, about 4 MiB live).\n\n";
    workload_table_md(md, table, "in-run footprint ratio (limit)", [](const WorkloadTable::Line& line) {
        std::string verdicts;
        for (const Row* r : line.ratios) {
            verdicts += (verdicts.empty() ? "" : "; ") + footprint_ratio_text(*r) + mark(*r);
            if (r->verdict == RowVerdict::not_judged) verdicts += " (not judged)";
        }
        return verdicts.empty() ? std::string("-") : verdicts;
    });
}

// What the profiler's hook and sampling cost on each allocation workload (this
// run's in-run ratios, every one), against the targets that are not judged.
void profiler_cost_section(std::ostringstream& md, const Judgement& j) {
    const RatioTable table = profiler_ratio_table(j);
    if (table.lines.empty()) return;
    md << "\n#### Profiler cost (in-run ratios of the pool's own variants, this run; lower is better)\n\n"
       << markdown_text(profiler_cost_text);
    if (const std::string met = targets_met_text(table); !met.empty()) md << " " << markdown_text(met);
    md << "\n\n";
    std::vector<std::string> headings;
    for (const std::string& rule : table.rules) headings.push_back(markdown_text(ratio_heading(table, rule)));
    workload_table_head_md(md, headings);
    for (const RatioTable::Line& line : table.lines) {
        md << "| " << markdown_code_span(line.workload, MarkdownPlace::table_cell) << " |";
        for (const std::string& rule : table.rules) {
            const auto it = line.cells.find(rule);
            md << " " << (it == line.cells.end() ? std::string("-") : target_text(*it->second) + mark(*it->second))
               << " |";
        }
        md << "\n";
    }
}

void machine_results(std::ostringstream& md, const MachineJudgement& m, bool titled) {
    const Judgement& j = m.judgement;
    if (titled) md << "### Machine: " << markdown_text(m.current.fingerprint.describe()) << "\n\n";
    md << "*Machine:* " << markdown_text(machine_line(m)) << "\n\n*Times from:* " << m.current.time_from << "\n\n";
    if (!m.rerun_source.empty())
        md << "*Failures re-run in:* " << markdown_text(m.rerun_source) << " (a failure counts only if the re-run shows it too)\n\n";
    benchmark_table(md, j);
    ratio_table(md, j);
    frame_cost_table(md, m.current);
    allocation_time_section(md, j);
    profiler_cost_section(md, j);
    footprint_section(md, j);
    md << "\n";
}

void group_list(std::ostringstream& md, const Report& report) {
    std::set<std::string> groups;
    for (const MachineJudgement& m : report.machines)
        for (const auto& [name, _] : m.current.benchmarks) groups.insert(split_benchmark_name(name).first);
    md << "## Benchmark Group List\n\nHere's a list of all the benchmark groups executed by this job:\n\n";
    for (const std::string& g : groups) md << "- " << markdown_code_span(g, MarkdownPlace::line) << "\n";
    md << "\n";
}

void version_block(std::ostringstream& md, const RunResults& run) {
    md << "```\n";
    for (const auto& [what, value] : version_info(run)) md << what << ": " << value << "\n";
    md << "```\n\n";
}

void version_info_section(std::ostringstream& md, const Report& report) {
    md << "## Version Info\n\n";
    for (const MachineJudgement& m : report.machines) {
        if (report.machines.size() > 1) md << "### Machine: " << markdown_text(m.current.fingerprint.describe()) << "\n\n";
        md << "#### Primary Build (this run)\n\n";
        version_block(md, m.current);
        md << "#### Comparison Build (the baseline)\n\n";
        if (m.baseline) version_block(md, *m.baseline);
        else md << "No baseline for this machine.\n\n";
    }
}

}  // namespace

std::string render_markdown(const Report& report) {
    const ReportContext& c = report.context;
    std::ostringstream md;
    md << "# Benchmark Report\n\n## Job Properties\n\n*Commit(s):* " << (c.commit.empty() ? "(not given)" : markdown_text(c.commit));
    for (const MachineJudgement& m : report.machines)
        if (m.baseline && !m.baseline->commit.empty()) md << " vs " << markdown_text(m.baseline->commit) << " (the baseline's)";
    md << "\n\n*Baseline:* ";
    for (size_t i = 0; i < report.machines.size(); ++i) {
        const MachineJudgement& m = report.machines[i];
        md << (i ? "; " : "") << markdown_text(m.baseline ? m.baseline->source : "none (" + m.baseline_path + ")");
    }
    if (!c.baseline_label.empty()) md << " (" << markdown_text(c.baseline_label) << ")";
    md << "\n\n*Triggered By:* " << (c.triggered_by.empty() ? "not said" : markdown_text(c.triggered_by))
       << "\n\n*Tag Predicate:* `ALL` (every benchmark of the runs given)\n\n*Date:* " << markdown_text(c.date)
       << "\n\n*Judged by:* " << build_text(c.build) << "\n\n*Machines:* " << report.machines.size()
       << "\n\n*Verdict:* " << (report.failed() ? "**" : "") << markdown_text(verdict_text(report)) << (report.failed() ? "** :x:" : "")
       << "\n\n## Results\n\n" << meaning << "\n\n";
    for (const MachineJudgement& m : report.machines) machine_results(md, m, report.machines.size() > 1);
    if (!report.cases.sources.empty() || !report.cases.untested_isas.empty()) md << render_cases_markdown(report.cases) << "\n";
    group_list(md, report);
    version_info_section(md, report);
    return md.str();
}

}  // namespace benchfp::report
