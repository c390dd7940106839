#include "callers.hpp"

// bar calls the kernel until the deadline: every JIT sample has bar right above it.
extern "C" __attribute__((noinline)) void bar(benchfp::harness::SampledCall* call) {
    do {
        call->kernel(call->args);
        ++call->calls;
    } while (std::chrono::steady_clock::now() < call->deadline);
}

extern "C" __attribute__((noinline)) void foo(benchfp::harness::SampledCall* call) { bar(call); }
