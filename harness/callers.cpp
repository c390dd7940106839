#include "callers.hpp"

// bar calls the kernel until its budget is spent: every JIT sample has bar right above it.
extern "C" __attribute__((noinline)) void bar(benchfp::harness::SampledCall* call) {
    do {
        call->kernel(call->args);
        ++call->calls;
    } while (!call->done());
}

extern "C" __attribute__((noinline)) void foo(benchfp::harness::SampledCall* call) { bar(call); }
