#pragma once
// The kernel cases of a gate run (benchfp kernel --json records: corr, unwind,
// verify, step, abi...) summarized for the report: how many ran, passed and
// failed per mode and ISA, the unwind rate per kernel x ISA x policy, what each
// policy adds to clobber's stepped call (report/stepped_cost.hpp), and the
// repro line of every failed case. A failed case fails the report; a mode or
// ISA in which nothing ran is named, never counted as passed.
#include "report/stepped_cost.hpp"

#include <map>
#include <string>
#include <tuple>
#include <vector>

namespace benchfp::report {

struct CaseCounts {
    int ran = 0, passed = 0, failed = 0, skipped = 0;
};

struct UnwindRate {
    long full = 0, judged = 0;  // over every unwind case of the kernel, ISA and policy
    std::string expected;       // the verdict those cases expected
    bool passed = true;
};

struct CaseSummary {
    std::vector<std::string> sources;
    std::map<std::pair<std::string, std::string>, CaseCounts> by_mode_isa;  // (mode, isa)
    std::map<std::tuple<std::string, std::string, std::string>, UnwindRate> unwind;  // (kernel, isa, frame)
    SteppedCosts stepped;  // step records' counts, by group and policy
    // Folded stacks of every unwind case's JIT samples (its workers' too), by
    // frame policy: "main;foo;bar;<jit>" -> samples (the report's flame graphs).
    std::map<std::string, std::map<std::string, long>> folded_by_frame;
    std::vector<std::string> failed;         // "<file>: <status line>" of every failed case
    std::vector<std::string> untested_isas;  // ISAs the run could not test on its machine
    int ran() const;
    int failures() const { return static_cast<int>(failed.size()); }
};

// Adds the records of one benchfp results file (schema benchfp.kernel-results/1, or the older benchfp.results/1).
// Throws InputError naming the file and field on bad input.
void add_cases(CaseSummary& summary, const std::string& path);

// Markdown sections: the counts, the unwind-rate table, the stepped frame cost, the failures.
std::string render_cases_markdown(const CaseSummary& summary);

}  // namespace benchfp::report
