#pragma once
// The named frames between bar and the JIT code when a driver runs the kernel
// (blocking, parallel sections): unmangled so the unwind check can name them.
#include "jit/generator.hpp"

// Calls a JIT kernel: the function every driver calls it through, so a sample
// in the kernel has this frame right above it when the chain is whole.
extern "C" void benchfp_call_jit(benchfp::jit::KernelFn kernel, const void* args);

// Runs a workload once (its context is a Workload::VariantContext).
extern "C" void benchfp_workload_driver(const void* context);
