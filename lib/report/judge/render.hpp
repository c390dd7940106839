#pragma once
// Renderers of a report: Markdown (for a pull request), JSON (for machines) and
// one self-contained HTML page with an inline SVG chart of every ratio against
// its tolerance band. A report holds one section per machine: each machine's
// results judged against that machine's own baseline.
#include "report/judge/cases.hpp"
#include "report/judge/judge.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace benchfp::report {

struct MachineJudgement {
    RunResults current;
    std::optional<RunResults> baseline;  // none: no baseline for this machine
    std::string baseline_path;           // where it was read from, or where it would be
    Judgement judgement;
};

struct ReportContext {
    std::string commit, baseline_label, date;
    nlohmann::json build;  // what built the judge (the harness's build_info()), shown as is
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

}  // namespace benchfp::report
