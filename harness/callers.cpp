#include "callers.hpp"

#include "stepper.hpp"

// bar calls the kernel until its budget is spent: every JIT sample has bar right above it.
extern "C" __attribute__((noinline)) void bar(benchfp::harness::SampledCall* call) {
    do {
        // TF is set and cleared by calls of their own, so bar's code and frame are
        // the same as when sampled: the stepped chain is the one a profiler sees.
        const bool stepped = call->step && benchfp::harness::step::begin_thread_call();
        call->kernel(call->args);
        if (stepped) benchfp::harness::step::end_thread_call();
        ++call->calls;
    } while (!call->done());
}

extern "C" __attribute__((noinline)) void foo(benchfp::harness::SampledCall* call) { bar(call); }
