#pragma once
// Renderers of a report: Markdown (for a pull request, nanosoldier's layout),
// JSON (for machines) and one self-contained HTML page (verdict and failing
// rows first, a lollipop chart of the significant changes, every other row
// folded). A report holds one section per machine: each machine's results
// judged against that machine's own baseline. The words both human renderers
// share (the verdict line, why a row failed, Version Info) are made once, in
// report_text.cpp.
#include "report/judge/cases.hpp"
#include "report/judge/judge.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace benchfp::report {

struct MachineJudgement {
    RunResults current;
    std::optional<RunResults> baseline;  // none: no baseline for this machine
    std::string baseline_path;           // where it was read from, or where it would be
    Judgement judgement;
    std::string rerun_source;  // the re-run its failures were confirmed on (--confirm), "" when none
};

struct ReportContext {
    std::string commit, baseline_label, date;
    nlohmann::json build;      // what built the judge (the harness's build_info()), shown as is
    std::string triggered_by;  // who or what ran the judge ("ci/gate.sh --quick"), "" when not said
};

struct Report {
    ReportContext context;
    std::vector<MachineJudgement> machines;
    CaseSummary cases;  // the gate's kernel cases, when given (benchfp judge --cases)
    bool failed() const;
    int regressions() const;
    int improvements() const;
};

std::string render_markdown(const Report& report);
nlohmann::json render_json(const Report& report);
std::string render_html(const Report& report);

// The one line a machine's section starts with: what it is and how it was judged.
std::string machine_line(const MachineJudgement& m);

// The verdict in one line that says what failed: "FAILED: 2 benchmarks missing
// from the current run (g/a, g/b); 0 regressions, 0 improvements",
// "passed: 0 regressions, 1 improvement".
std::string verdict_text(const Report& report);
// Why a failing row fails, in words ("over its absolute limit: 1.021 > 1.020").
std::string failure_text(const Row& row);
// A row worth showing among the changes: judged, and not invariant.
bool significant(const Row& row);
// One figure per allocation workload and allocator, a line per workload,
// allocators in the gate's order (the pool's variants, then the peers). Of
// kind "footprint": each allocator's resident bytes per live object at the
// workload's peak, with the in-run footprint ratios judged on them (ratio rows
// of a footprint rule). Of kind "time": the minimum ns an iteration of the
// pool's two builds (compiled_out, off) and of the peers, no ratios (the
// workloads' other variants are judged as in-run ratios to "off"). Empty when
// the run measured none.
struct WorkloadTable {
    struct Line {
        std::string workload;
        std::map<std::string, double> figures;  // by allocator
        std::vector<const Row*> ratios;
    };
    std::vector<std::string> allocators;
    std::vector<Line> lines;
};
WorkloadTable workload_table(const Judgement& judgement, const std::string& kind);
// The fastest peer's time over the pool's with the hook off (above 1: the
// pool is faster), and which peer that is; none where the line lacks either.
struct BestPeer {
    std::string peer;
    double over_pool = 0;
};
std::optional<BestPeer> best_peer(const WorkloadTable::Line& time_line);
// "1.100 (tcmalloc)", or "-" where the line has no best peer: the cell both tables show.
std::string best_peer_text(const WorkloadTable::Line& time_line);
// "1.034 (limit 1.100)" and the rule's name: one footprint ratio as the tables show it.
std::string footprint_ratio_text(const Row& ratio_row);

// The profiler's in-run ratios per allocation workload: a line per workload, a
// column per ratio rule between two of the project's own variants (model.hpp:
// between_own_variants; the hook compiled in and off over compiled out, each
// sampling mode over hook off), rules in results/tolerances.json's order. Not
// the rules with a peer (in the ratio table when significant) nor the
// footprint rules (in Memory footprint). A cell is the row of that rule and
// workload where the judgement has one (a row missing from the run included).
// Every run shows them, significant or not: issue 14's targets are stricter
// than the limits the gate judges, and the table says, row by row, whether
// this run met them.
struct RatioTable {
    struct Line {
        std::string workload;
        std::map<std::string, const Row*> cells;  // by rule name
    };
    std::vector<std::string> rules;
    std::map<std::string, double> targets;  // by rule name; 0: none
    std::vector<Line> lines;
};
RatioTable profiler_ratio_table(const Judgement& judgement);
// What the table's ratios are, said above it in both renderings.
extern const char* const profiler_cost_text;
// A column's heading: the rule's name, and its target where it has one.
std::string ratio_heading(const RatioTable& table, const std::string& rule);
// A cell: the ratio, "1.031 over target" where it is over its row's target.
std::string target_text(const Row& ratio_row);
// "Targets met in this run: 15 of 21." over the table's values that have a
// target (a missing value counts for neither), or "" where none has one.
std::string targets_met_text(const RatioTable& table);

// Version Info of one side: (what, value) pairs -- benchfp, compiler,
// libraries, kernel, CPU, ISA and cores, CPU flags -- "not recorded" where the
// file does not say.
std::vector<std::pair<std::string, std::string>> version_info(const RunResults& run);

}  // namespace benchfp::report
