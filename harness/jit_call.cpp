#include "jit_call.hpp"

extern "C" __attribute__((noinline)) void benchfp_call_jit(benchfp::jit::KernelFn kernel, const void* args) {
    kernel(args);
}

extern "C" __attribute__((noinline)) void benchfp_workload_driver(const void* context) {
    const auto* c = static_cast<const benchfp::harness::DriverContext*>(context);
    c->run(c->object, c->variant);
}
