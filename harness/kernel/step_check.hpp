#pragma once
// Judges one stepped call (stepper.hpp): a chain verdict per executed JIT
// instruction, as unwind mode gives one per sample, and the ABI rules checked
// per instruction.
#include "jit/code_regions.hpp"
#include "jit/frame_policy.hpp"
#include "jit/verifier.hpp"
#include "perf/symbols.hpp"
#include "perf/verdict.hpp"
#include "report/case_result.hpp"
#include "stepper.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace benchfp::harness {

struct StepOutcome {
    report::State state = report::State::failed;
    std::string detail;
    nlohmann::json record;
};

struct SteppedCall {
    const std::vector<step::ThreadSteps>& threads;
    const jit::CodeRegionInfo& layout;
    const jit::Verification& code;
    const perf::Symbols& symbols;
    std::string jit_caller;  // empty: bar calls the kernel
    double seconds = 0;      // spent stepping
    uint64_t unstepped_calls = 0;  // calls on threads the session could not step
    uint64_t max_steps = 0;        // the session's budget per thread (ThreadSteps::budget_spent)
};

// The verdict step mode expects without --expect: what the policy promises
// (frame: full; preserve: skipped-caller). clobber promises none, so it is full
// there too, and fails, unless --expect=broken is given.
perf::Verdict step_expectation(jit::FramePolicy policy, std::optional<perf::Verdict> expect);

// The rule: every stepped instruction outside the declared windows has the
// expected verdict, and (frame, preserve) the instructions whose chain is not
// the expected one are exactly those before the frame is linked and after it is
// unlinked (frame: entry .. `mov rbp, rsp` and after `pop rbp` .. `ret`;
// preserve: none). Main's thread must show bar, foo, main; a worker of a
// parallel section must reach its entry function (parallel.hpp).
StepOutcome judge_step(const SteppedCall& call, jit::FramePolicy policy, perf::Verdict wanted);

// abi: the probe's mismatches (callee-saved registers, rsp, DF, MXCSR, x87 CW)
// and the rules checked per stepped instruction (aligned calls, stores within the
// stack above the red zone, vzeroupper before returning with dirty upper halves).
StepOutcome judge_abi(const SteppedCall& call, const std::string& probe_mismatches);

}  // namespace benchfp::harness
