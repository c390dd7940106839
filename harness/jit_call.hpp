#pragma once
// The named frames between bar and the JIT code when a driver runs the kernel
// (blocking, parallel sections): unmangled so the unwind check can name them.
#include "jit/generator.hpp"

#include <cstddef>
#include <string>

namespace benchfp::harness {

// What benchfp_workload_driver runs: run(object, variant), e.g. a workload's
// whole problem with the kernel of one frame policy.
struct DriverContext {
    void (*run)(const void* object, size_t variant);
    const void* object;
    size_t variant;
};

// How benchfp_call_jit calls the kernel: plainly (the default), under the trap
// flag (step mode: every thread that calls is stepped), or through the ABI
// probe (abi mode). Process-wide; set only while no parallel section runs.
enum class JitCallWay { plain, stepped, probed };
void set_jit_call_way(JitCallWay way);
// abi: what the probed calls since the last take did not give back, "" when all did.
std::string take_probe_mismatches();

}  // namespace benchfp::harness

// Calls a JIT kernel: the function every driver calls it through, so a sample
// in the kernel has this frame right above it when the chain is whole.
extern "C" void benchfp_call_jit(benchfp::jit::KernelFn kernel, const void* args);

// Runs a driver once; `context` is a DriverContext. Its signature is a kernel's,
// so bar calls it as it would call the kernel.
extern "C" void benchfp_workload_driver(const void* context);
