#pragma once
// The ABI probe: calls a kernel through a trampoline (Xbyak) that loads canaries
// into the callee-saved registers (rbx, rbp, r12-r15) and records rsp, the
// direction flag, MXCSR and the x87 control word before and after the call.
// A kernel keeps the SysV ABI when all of them come back unchanged.
#include "jit/generator.hpp"

#include <cstdint>
#include <string>

namespace benchfp::harness::abi {

struct Probe {
    // Filled by the trampoline; layout read by its code (offsetof).
    jit::KernelFn fn = nullptr;
    const void* args = nullptr;
    uint64_t canary[6] = {};  // rbx, rbp, r12, r13, r14, r15 before the call
    uint64_t after[6] = {};   // the same registers after it
    uint64_t rsp_before = 0, rsp_after = 0, flags_after = 0;
    uint32_t mxcsr_before = 0, mxcsr_after = 0;
    uint16_t fcw_before = 0, fcw_after = 0;

    // Empty when everything came back; else what did not, e.g. "r12 0x... -> 0x...".
    std::string mismatches() const;
};

// Calls fn(args) through the trampoline; canaries are set from `seed`.
void probe_call(Probe& probe, jit::KernelFn fn, const void* args, uint64_t seed);

}  // namespace benchfp::harness::abi
