#pragma once
// Judges the samples of one unwind case: a chain verdict per JIT sample, the
// tallies, and PASSED/FAILED against the expected verdict.
#include "jit/code_regions.hpp"
#include "jit/frame_policy.hpp"
#include "perf/ring.hpp"
#include "perf/symbols.hpp"
#include "perf/verdict.hpp"
#include "report/case_result.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <vector>

namespace benchfp::harness {

struct UnwindOutcome {
    report::State state = report::State::failed;
    std::string detail;
    nlohmann::json record;
};

// The rule: every JIT sample outside the prologue/epilogue windows has the
// expected verdict (`full` when none is given), and there are at least
// `min_samples` of them; fewer is FAILED as inconclusive, never PASSED.
// The chain must show bar, foo, main and, when the JIT code is called from a
// driver (not from bar itself), `jit_caller` right above the JIT frame.
// The record's "folded" object holds the chain of every JIT sample (prologue
// ones too) in FlameGraph's folded form, root first: "main;foo;bar;jit" -> samples,
// what the report's flame graph per policy is drawn from.
UnwindOutcome judge_unwind(const std::vector<perf::Sample>& samples, const perf::RingStats& stats,
                           const jit::CodeRegionInfo& code, const perf::Symbols& symbols,
                           const perf::ExpectedCallers& expected, std::optional<perf::Verdict> expect,
                           int min_samples);

// What a sample of the calling thread must show above the JIT frame (bar, foo,
// main, with `jit_caller` right above when a driver calls the kernel), and what a
// pool worker's must (the pool's entry, with benchfp_call_jit right above).
perf::ExpectedCallers calling_thread_callers(const std::string& jit_caller);
perf::ExpectedCallers worker_callers();

// The verdict a frame policy gives every sample (README's table): clobber
// broken, preserve skipped-caller, frame full. An unwind case without --expect
// expects its policy's.
perf::Verdict policy_verdict(jit::FramePolicy policy);

// Frame names (innermost first) as one folded stack: root first, ';'-separated
// (a ';' inside a name becomes ':').
std::string folded_stack(const std::vector<std::string>& innermost_first);

perf::JitCode jit_code_of(const jit::CodeRegionInfo& code);

}  // namespace benchfp::harness
