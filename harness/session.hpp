#pragma once
// One invocation of benchfp: parses the command line, runs every case, and hands
// main() each kernel call that must run under the sampler (see main.cpp).
#include "alloc_profile.hpp"
#include "callers.hpp"
#include "case_options.hpp"
#include "judge_command.hpp"
#include "kernel_cases.hpp"
#include "perf/event.hpp"
#include "perf/symbols.hpp"
#include "report/case_result.hpp"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace benchfp::harness {

class Session {
public:
    Session(int argc, char** argv);
    ~Session();

    // The next call main() must make through foo and bar, with the sampler
    // running; nullptr once every case is done and the summary printed.
    SampledCall* next_sampled_call();
    int exit_status() const { return exit_status_; }

private:
    struct PendingUnwind;

    void parse(int argc, char** argv);
    void run_corr(const KernelCase& c);
    void run_list(const KernelCase& c);
    void run_perf_group(size_t first, size_t end);
    size_t perf_group_end(size_t first) const;
    SampledCall* begin_unwind(const KernelCase& c);
    void finish_unwind();
    // Records a case's result and prints its status line (or `line` instead, in perf mode).
    void record(const KernelCase& c, report::State state, std::string detail, double ms, nlohmann::json extra,
                const std::string* line = nullptr);
    void finish();
    const perf::EventChoice& event();

    // Options that apply to the whole run, not to cases: command line only.
    struct RunOptions {
        std::string json_path;
        std::string max_isa;
        std::optional<std::string> event;
        uint64_t frequency = 4000;
        uint64_t period = 0;
        std::string perf_template = "default";
    } run_;
    bool csv_header_printed_ = false;
    CaseOptions command_line_;
    AllocProfileOptions alloc_profile_;
    bool alloc_profile_requested_ = false;
    JudgeOptions judge_;
    bool judge_requested_ = false;
    std::optional<jit::Isa> isa_cap_;

    std::vector<KernelCase> cases_;
    size_t next_case_ = 0;
    std::unique_ptr<PendingUnwind> pending_;
    std::optional<perf::EventChoice> event_;
    std::unique_ptr<perf::Symbols> symbols_;
    std::vector<report::CaseResult> results_;
    report::Summary summary_;
    bool done_ = false;      // no further case runs
    bool finished_ = false;  // the summary has been printed
    int exit_status_ = 0;
};

}  // namespace benchfp::harness
