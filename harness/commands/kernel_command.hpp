#pragma once
// `benchfp kernel`: expands the options and batch files into cases, runs each
// (corr, list and perf here; unwind through main, see below) and prints
// benchdnn-style status lines and the summary.
//
// An unwind case must run under main -> foo -> bar, so it cannot run inside
// this class: next_sampled_call() hands main each call to make with the
// sampler running, and judges it when main asks for the next one.
#include "callers.hpp"
#include "kernel/case_options.hpp"
#include "kernel/isa_tally.hpp"
#include "kernel/kernel_cases.hpp"
#include "kernel/perf_template.hpp"
#include "perf/event.hpp"
#include "perf/symbols.hpp"
#include "report/case_result.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace benchfp::harness {

class Workload;
struct WorkloadCall;

// Options that apply to the whole run, not to cases: command line only.
struct KernelRunOptions {
    CaseOptions cases;
    std::string json_path;
    std::string max_isa;
    std::optional<std::string> event;
    uint64_t frequency = 4000;
    std::optional<int64_t> period;  // signed, so that --period=-1 is out of range rather than 2^64-1
    size_t max_cases = 100000;
    std::vector<std::string> allow_untested;  // ISAs asked for that may be skipped here
    std::string perf_template = "default";
    std::string csv_path;  // --csv: the perf rows as CSV (csv_perf_header()), written atomically at the end
    std::string jit_profile;  // --jit-profile: a list of map, jitdump (jit_profile.hpp); empty: off
    bool list_families = false;  // --list: the family table (as JSON with --json=FILE or -), nothing runs
    bool no_verify = false;      // --no-verify: build kernels without the static frame verifier

    void add_to(CLI::App& app);
};

class KernelRun {
public:
    // Expands the cases; throws UsageError on bad options or cases.
    explicit KernelRun(const KernelRunOptions& options);
    ~KernelRun();

    // The next call main() must make through foo and bar, with the sampler
    // running; nullptr once every case is done and the summary printed.
    SampledCall* next_sampled_call();
    int exit_status() const { return exit_status_; }

private:
    struct PendingUnwind;

    void run_corr(const KernelCase& c);
    void run_list(const KernelCase& c);
    void run_perf_group(size_t first, size_t end);  // kernel_perf.cpp
    // Times the policies of a group that built (each case's kernel at every
    // code placement: `placed`, beside `running`), with its A/A copy and peers;
    // throws when one of those cannot be made (every case then fails).
    void time_perf_group(const std::vector<const KernelCase*>& running,
                         const std::vector<std::vector<WorkloadCall>>& placed, Workload& workload,
                         std::chrono::steady_clock::time_point begun);
    size_t perf_group_end(size_t first) const;
    SampledCall* begin_unwind(const KernelCase& c);  // kernel_unwind.cpp
    void finish_unwind();
    void run_verify(const KernelCase& c);          // kernel_verify.cpp
    SampledCall* begin_step(const KernelCase& c);  // kernel_step.cpp: step and abi modes
    void finish_step();
    // Records a case's result and prints its status line (or `line` instead, in perf mode).
    void record(const KernelCase& c, report::State state, std::string detail, double ms, nlohmann::json extra,
                const PerfLine* line = nullptr);
    // Where status lines, the summary and notes go: stderr when stdout is for a
    // tool (a perf template other than the default: stdout holds only its rows).
    std::ostream& human() const;
    void print_stepped_costs() const;  // before the summary: what each policy adds to clobber's stepped call
    void finish();
    const perf::EventChoice& event();

    void check_run_options() const;
    void check_batches_kept(const std::vector<std::string>& batch_files) const;
    std::string run_repro_options() const;  // the run-wide knobs that differ from their defaults

    KernelRunOptions options_;
    std::optional<jit::Isa> isa_cap_;
    std::string run_repro_;
    bool csv_header_printed_ = false;
    bool rows_only_stdout_ = false;  // stdout holds the perf rows alone
    std::string csv_rows_;           // --csv's file, header first

    std::vector<KernelCase> cases_;
    size_t next_case_ = 0;
    std::unique_ptr<PendingUnwind> pending_;
    struct PendingStep;
    std::unique_ptr<PendingStep> step_pending_;
    std::optional<perf::EventChoice> event_;
    std::unique_ptr<perf::Symbols> symbols_;
    std::vector<report::CaseResult> results_;
    report::Summary summary_;
    IsaTally isa_tally_{std::nullopt};
    bool done_ = false;      // no further case runs
    bool finished_ = false;  // the summary has been printed
    int exit_status_ = 0;
};

// `benchfp kernel --list`: prints the family table, or writes it as JSON to
// `json_path` ("-": standard output). Returns the exit status.
int list_families(const std::string& json_path);

}  // namespace benchfp::harness
