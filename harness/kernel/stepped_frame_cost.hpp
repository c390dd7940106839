#pragma once
// What a frame policy costs one call, counted exactly: step mode counts every
// JIT instruction of a call and those that touch the stack (stepper.hpp), so
// the same kernel, problem and threads stepped under clobber and under frame or
// preserve differ by just what the policy adds, the link (push rbp, mov rbp,
// rsp, pop rbp) and the spills of a GPR pool without rbp. Timing resolves a
// frame cost to the noise of the machine (perf mode's A/A control); this
// resolves it to one instruction, but only what it counts: not a slower
// address form, nor what a spill costs in time.
#include "report/case_result.hpp"

#include <string>
#include <vector>

namespace benchfp::harness {

// One line per group (kernel, alg, ISA, problem, threads) of whole step
// records (no budget spent, every call stepped) that holds clobber and another
// policy: clobber's counts, then each other policy's difference from them.
// Instructions are counted apart from nops: loop heads are aligned, and a
// prologue of another length pads them differently, so the nops executed
// where a loop is entered differ by policy as placement does (conv below: 227
// more under frame, beside 1 more instruction).
// "kernel/conv/f32/avx512/ic2ih4iw8oc64kh1kw7pw3: clobber 5991 instructions
// and 267 nops, 1183 on the stack; frame +1 (+0.02%) and nops +227, stack +34; ..."
std::vector<std::string> stepped_frame_cost_lines(const std::vector<report::CaseResult>& results);

}  // namespace benchfp::harness
