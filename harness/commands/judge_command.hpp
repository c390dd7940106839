#pragma once
// `benchfp judge`: Google Benchmark results against the stored baseline, with
// the checked-in tolerances; writes the report (Markdown, JSON, HTML). Exit 1 on
// a regression, 2 on bad input. --update-baseline rewrites the baseline from
// the results, deliberately, and judges nothing.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace benchfp::harness {

struct JudgeOptions {
    std::vector<std::string> current;        // one or more runs of this build (min over all)
    std::vector<std::string> baseline_runs;  // runs of the other build, instead of a stored baseline
    std::string baseline = "results/baselines/alloc.json";
    std::string tolerances = "results/tolerances.json";
    std::string instructions;  // JSON object: id -> instructions per operation
    std::string report_dir = "results/report";
    std::string commit, baseline_label;
    bool update_baseline = false;

    void add_to(CLI::App& app);
};

int run_judge(const JudgeOptions& options);

}  // namespace benchfp::harness
