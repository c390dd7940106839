// The HTML report: one self-contained static page (no script) a reader
// understands in five seconds. First the verdict, then the failing rows as a
// table, then a lollipop chart of the significant changes (nanosoldier's: log2
// of each ratio, judged rows only), the kernel cases (unwind rates per kernel x
// ISA x policy, colour-coded, and a flame graph per policy); every other row
// is folded below in <details>, judged and reported-only rows styled apart.
// Tables are emitted as HTML directly (no Markdown library); every name goes
// through escape_html, in text and attributes alike.
#include "report/html.hpp"
#include "report/judge/html_parts.hpp"
#include "report/judge/render.hpp"
#include "report/judge/stats.hpp"

#include <cmath>
#include <functional>
#include <sstream>
#include <utility>

namespace benchfp::report {

namespace {

const char* style =
    "body{font-family:sans-serif;max-width:1240px;margin:1em auto;padding:0 1em;color:#222}"
    "#verdict{padding:.6em 1em;border-radius:6px;margin-bottom:1em}"
    "#verdict.failed{background:#fde2e1;border:2px solid #c0392b}#verdict.passed{background:#e3f6e8;border:2px solid #27ae60}"
    "#verdict h1{margin:.1em 0;font-size:1.6em}#verdict p{margin:.3em 0}"
    "table{border-collapse:collapse;margin:.5em 0;font-size:13px}th,td{border:1px solid #ccc;padding:3px 6px;text-align:left}"
    "th{background:#f2f2f2}td.num{text-align:right;font-family:monospace}code{font-size:12px}"
    "tr.fail td,td.fail{background:#ffd6d6}tr.improvement td{background:#dff5e4}"
    "tr.reported td{color:#777;font-style:italic;background:#fafafa}"
    "span.tag{font-size:11px;padding:0 4px;border-radius:3px;background:#ddd;color:#444;font-style:normal}"
    "details{margin:.8em 0}summary{cursor:pointer;font-weight:bold}"
    "td.rate{font-family:monospace;text-align:center}svg{display:block;margin:.4em 0}";

std::string row_class(const Row& r) {
    if (r.fails()) return "fail";
    if (r.verdict == RowVerdict::improvement) return "improvement";
    if (r.verdict == RowVerdict::not_judged) return "reported";
    return "judged";
}

std::string number(double v) { return std::isnan(v) ? "-" : fixed(v); }

// One judgement row as a table row: machine, kind, id, values, verdict.
void row_html(std::ostringstream& html, const Row& r, const std::string& machine) {
    html << "<tr class='" << row_class(r) << "'>";
    if (!machine.empty()) html << "<td>" << escape_html(machine) << "</td>";
    html << "<td>" << escape_html(r.kind) << "</td><td><code>" << escape_html(r.id) << "</code>";
    if (r.verdict == RowVerdict::not_judged) html << " <span class='tag'>reported only</span>";
    html << "</td><td class='num'>" << number(r.current) << "</td><td class='num'>" << number(r.baseline)
         << "</td><td class='num'>" << number(r.ratio) << "</td><td class='num'>" << fixed(100 * r.tolerance, 0)
         << "%</td><td class='num'>" << (r.limit > 0 ? fixed(r.limit) : "-") << "</td><td>"
         << escape_html(r.fails() ? failure_text(r) + (r.note.empty() ? "" : " (" + r.note + ")")
                                  : std::string(to_string(r.verdict)) + (r.note.empty() ? "" : ": " + r.note));
    if (r.baseline_over_limit()) html << escape_html("; the stored baseline (" + fixed(r.baseline) + ") is itself over the limit");
    html << "</td></tr>";
}

void row_table_head(std::ostringstream& html, bool with_machine) {
    html << "<table><tr>" << (with_machine ? "<th>machine</th>" : "")
         << "<th>kind</th><th>benchmark, ratio or count</th><th>this run</th><th>baseline</th>"
            "<th>this run / baseline</th><th>tolerance</th><th>absolute limit</th><th>verdict</th></tr>";
}

void header(std::ostringstream& html, const Report& report) {
    const ReportContext& c = report.context;
    html << "<header id='verdict' class='" << (report.failed() ? "failed" : "passed") << "'><h1>Benchmark Report: "
         << (report.failed() ? "FAILED" : "passed") << "</h1><p id='verdict-text'>" << escape_html(verdict_text(report))
         << "</p><p>Commit " << escape_html(c.commit.empty() ? "(not given)" : c.commit);
    for (const MachineJudgement& m : report.machines)
        html << " &middot; baseline " << escape_html(m.baseline ? m.baseline->source : "none");
    html << " &middot; " << escape_html(c.date) << "</p></header>";
}

void failures(std::ostringstream& html, const Report& report) {
    const bool several = report.machines.size() > 1;
    std::ostringstream rows;
    int n = 0;
    for (const MachineJudgement& m : report.machines)
        for (const Row& r : m.judgement.rows)
            if (r.fails()) ++n, row_html(rows, r, several ? m.current.fingerprint.describe() : "");
    if (n == 0 && report.cases.failed.empty()) return;
    html << "<section id='failures'><h2>What failed</h2>";
    if (n) {
        row_table_head(html, several);
        html << rows.str() << "</table>";
    }
    if (!report.cases.failed.empty()) {
        html << "<p>Failed kernel cases (each line reproduces its case):</p><ul>";
        for (const std::string& line : report.cases.failed) html << "<li><code>" << escape_html(line) << "</code></li>";
        html << "</ul>";
    }
    html << "</section>";
}

void changes(std::ostringstream& html, const Report& report) {
    html << "<section id='changes'><h2>Significant changes against the baseline</h2>"
            "<p>Judged rows beyond their tolerance only, on a log<sub>2</sub> scale: right of 1 is slower or larger "
            "(red: regression), left is faster or smaller (green: improvement); the grey band is the tolerance. "
            "A value over its absolute limit is not a change and is listed above.</p>";
    for (const MachineJudgement& m : report.machines) {
        if (report.machines.size() > 1) html << "<h3>" << escape_html(machine_line(m)) << "</h3>";
        html << lollipop_chart(m.judgement);
    }
    html << "</section>";
}

// A section with a part per machine: `part` writes one machine's, or nothing
// where it has none. The heading and text come once, before the first part,
// and each part under its machine's line where the report has several; no
// part, no section.
void per_machine_section(std::ostringstream& html, const Report& report, const char* id,
                         const std::string& heading_and_text,
                         const std::function<void(std::ostringstream&, const MachineJudgement&)>& part) {
    bool any = false;
    for (const MachineJudgement& m : report.machines) {
        std::ostringstream body;
        part(body, m);
        if (body.str().empty()) continue;
        if (!any) html << "<section id='" << id << "'>" << heading_and_text;
        any = true;
        if (report.machines.size() > 1) html << "<h3>" << escape_html(machine_line(m)) << "</h3>";
        html << body.str();
    }
    if (any) html << "</section>";
}

// A section of one figure per allocation workload and allocator, a table per
// machine, with a last column of its own (`last`: its heading, and the cell of
// a line with whether the line failed).
void workload_section(std::ostringstream& html, const Report& report, const std::string& kind, const char* id,
                      const std::string& heading_and_text, const char* last_heading,
                      const std::function<std::pair<std::string, bool>(const WorkloadTable::Line&)>& last) {
    per_machine_section(html, report, id, heading_and_text, [&](std::ostringstream& part, const MachineJudgement& m) {
        const WorkloadTable table = workload_table(m.judgement, kind);
        if (table.lines.empty()) return;
        part << "<table><tr><th>workload</th>";
        for (const std::string& a : table.allocators) part << "<th>" << escape_html(a) << "</th>";
        part << "<th>" << last_heading << "</th></tr>";
        for (const WorkloadTable::Line& line : table.lines) {
            const auto [cell, failed] = last(line);
            part << "<tr" << (failed ? " class='fail'" : "") << "><td><code>" << escape_html(line.workload)
                 << "</code></td>";
            for (const std::string& a : table.allocators) {
                const auto it = line.figures.find(a);
                part << "<td class='num'>" << (it == line.figures.end() ? "-" : fixed(it->second, 1)) << "</td>";
            }
            part << "<td>" << escape_html(cell) << "</td></tr>";
        }
        part << "</table>";
    });
}

// Every allocator's time per iteration per workload (this run, reported), with the fastest peer over the pool.
void allocation_time_html(std::ostringstream& html, const Report& report) {
    workload_section(html, report, "time", "allocation-time",
                     "<h2>Allocation time</h2><p>Nanoseconds an iteration, the minimum over repetitions, this run "
                     "(lower is better): the pool with its profiler hook compiled out and compiled in but off (the "
                     "pool as shipped) beside the peer allocators, each measured on its own, not paired. Best peer / "
                     "pool is the fastest peer's time over the pool's with the hook off (above 1: the pool is "
                     "faster). Reported, not judged: a peer's own time moves between processes.</p>",
                     "best peer / pool",
                     [](const WorkloadTable::Line& line) { return std::pair{best_peer_text(line), false}; });
}

// The profiler's in-run ratios per workload (this run, every one), with their
// targets; a cell's verdict where it is not invariant (as the Markdown marks it).
void profiler_cost_html(std::ostringstream& html, const Report& report) {
    per_machine_section(
        html, report, "profiler-cost", "<h2>Profiler cost</h2><p>" + escape_html(profiler_cost_text) + "</p>",
        [](std::ostringstream& part, const MachineJudgement& m) {
            const RatioTable table = profiler_ratio_table(m.judgement);
            if (table.lines.empty()) return;
            if (const std::string met = targets_met_text(table); !met.empty()) part << "<p>" << escape_html(met) << "</p>";
            part << "<table><tr><th>workload</th>";
            for (const std::string& rule : table.rules) part << "<th>" << escape_html(ratio_heading(table, rule)) << "</th>";
            part << "</tr>";
            for (const RatioTable::Line& line : table.lines) {
                part << "<tr><td><code>" << escape_html(line.workload) << "</code></td>";
                for (const std::string& rule : table.rules) {
                    const auto it = line.cells.find(rule);
                    if (it == line.cells.end()) {
                        part << "<td class='num'>-</td>";
                        continue;
                    }
                    const Row& r = *it->second;
                    part << "<td class='num" << (r.fails() ? " fail" : "") << "'>" << escape_html(target_text(r));
                    if (significant(r)) part << ": " << escape_html(to_string(r.verdict));
                    part << "</td>";
                }
                part << "</tr>";
            }
            part << "</table>";
        });
}

// Every allocator's resident bytes per live object per workload (this run),
// with the footprint ratios and their verdicts.
void footprint_html(std::ostringstream& html, const Report& report) {
    workload_section(html, report, "footprint", "footprint",
                     "<h2>Memory footprint</h2><p>Resident bytes per live object at each workload's peak, this run "
                     "(lower is better): a child process forked per workload x allocator, its Private_Dirty at the "
                     "peak minus before the workload's first allocation, over the live objects then.</p>",
                     "in-run footprint ratio (limit)", [](const WorkloadTable::Line& line) {
                         bool failed = false;
                         std::string verdicts;
                         for (const Row* r : line.ratios) {
                             failed = failed || r->fails();
                             verdicts += (verdicts.empty() ? "" : "; ") + footprint_ratio_text(*r) + ": " +
                                         to_string(r->verdict);
                         }
                         return std::pair{verdicts.empty() ? std::string("-") : verdicts, failed};
                     });
}

void all_rows(std::ostringstream& html, const Report& report) {
    for (const MachineJudgement& m : report.machines) {
        int judged = 0, reported = 0;
        for (const Row& r : m.judgement.rows) (r.verdict == RowVerdict::not_judged ? reported : judged) += 1;
        html << "<details class='all-rows'><summary>Every row (" << judged << " judged, " << reported
             << " reported only) of " << escape_html(machine_line(m)) << "</summary><p>Times from: "
             << escape_html(m.current.time_from) << "</p>";
        row_table_head(html, false);
        for (const Row& r : m.judgement.rows) row_html(html, r, "");
        html << "</table></details>";
    }
}

void version_info_html(std::ostringstream& html, const Report& report) {
    html << "<details id='version-info'><summary>Version Info (both sides)</summary>";
    for (const MachineJudgement& m : report.machines) {
        const std::vector<std::pair<std::string, const RunResults*>> sides = {
            {"Primary build (this run)", &m.current}, {"Comparison build (the baseline)", m.baseline ? &*m.baseline : nullptr}};
        for (const auto& [title, run] : sides) {
            html << "<h3>" << escape_html(title) << "</h3>";
            if (!run) {
                html << "<p>No baseline for this machine.</p>";
                continue;
            }
            html << "<table>";
            for (const auto& [what, value] : version_info(*run))
                html << "<tr><th>" << escape_html(what) << "</th><td><code>" << escape_html(value) << "</code></td></tr>";
            html << "</table>";
        }
    }
    html << "</details>";
}

}  // namespace

std::string render_html(const Report& report) {
    std::ostringstream html;
    html << "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Benchmark Report: "
         << (report.failed() ? "FAILED" : "passed") << "</title><style>" << style << "</style></head><body>";
    header(html, report);
    failures(html, report);
    changes(html, report);
    html << kernel_cases_html(report.cases);
    allocation_time_html(html, report);
    profiler_cost_html(html, report);
    footprint_html(html, report);
    all_rows(html, report);
    version_info_html(html, report);
    html << "</body></html>\n";
    return html.str();
}

}  // namespace benchfp::report
