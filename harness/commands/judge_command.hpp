#pragma once
// `benchfp judge`: benchmark results against the stored baseline of the machine
// they ran on, with the checked-in tolerances; writes one report (Markdown,
// JSON, HTML) with a section per machine. Exit 1 on a regression, 2 on bad
// input. --update-baseline records each machine's baseline from the results,
// deliberately, and judges nothing.
//
// Stored files (tolerances, baselines) given as relative paths are found
// relative to the working directory, then to the source tree, like batch files.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace benchfp::harness {

struct JudgeOptions {
    std::vector<std::string> current;        // runs of this build, of one or more machines (min per machine)
    std::vector<std::string> confirm;        // re-runs of what failed in current: a failure must reproduce
    std::vector<std::string> confirm_again;  // a second round of re-runs: and reproduce once more
    std::vector<std::string> baseline_runs;  // runs of the other build, instead of a stored baseline
    std::string baseline;                    // one baseline file for every machine, instead of baselines_dir
    std::string baselines_dir = "results/baselines";  // <dir>/<machine slug>/<suite>.json
    std::string suite = "alloc";
    std::string tolerances = "results/tolerances.json";
    std::string instructions;  // JSON object: id -> instructions per operation
    std::vector<std::string> cases;          // benchfp kernel --json files summarized in the report
    std::vector<std::string> untested_isas;  // named in the report as not tested here
    std::string report_dir = "results/report";
    std::string commit, baseline_label, triggered_by;
    bool update_baseline = false;

    void add_to(CLI::App& app);
};

int run_judge(const JudgeOptions& options);

}  // namespace benchfp::harness
