#pragma once
// The named frames between bar and the JIT code when a driver runs the kernel
// (blocking, parallel sections): unmangled so the unwind check can name them.
#include "jit/generator.hpp"

#include <cstddef>

namespace benchfp::harness {

// What benchfp_workload_driver runs: run(object, variant), e.g. a workload's
// whole problem with the kernel of one frame policy.
struct DriverContext {
    void (*run)(const void* object, size_t variant);
    const void* object;
    size_t variant;
};

}  // namespace benchfp::harness

// Calls a JIT kernel: the function every driver calls it through, so a sample
// in the kernel has this frame right above it when the chain is whole.
extern "C" void benchfp_call_jit(benchfp::jit::KernelFn kernel, const void* args);

// Runs a driver once; `context` is a DriverContext. Its signature is a kernel's,
// so bar calls it as it would call the kernel.
extern "C" void benchfp_workload_driver(const void* context);
