#include "jit_call.hpp"

#include "abi_probe.hpp"
#include "stepper.hpp"

#include <atomic>
#include <mutex>
#include <utility>

namespace {
std::atomic<benchfp::harness::JitCallWay> call_way{benchfp::harness::JitCallWay::plain};
std::mutex mismatch_mutex;
std::string mismatches;  // of the probed calls, under mismatch_mutex
}  // namespace

namespace benchfp::harness {

void set_jit_call_way(JitCallWay way) { call_way = way; }

std::string take_probe_mismatches() {
    std::lock_guard lock(mismatch_mutex);
    return std::exchange(mismatches, {});
}

}  // namespace benchfp::harness

extern "C" __attribute__((noinline)) void benchfp_call_jit(benchfp::jit::KernelFn kernel, const void* args) {
    using namespace benchfp::harness;
    switch (call_way.load(std::memory_order_relaxed)) {
    case JitCallWay::plain: kernel(args); return;
    case JitCallWay::stepped: {
        const bool stepped = step::begin_thread_call();
        kernel(args);
        if (stepped) step::end_thread_call();
        return;
    }
    case JitCallWay::probed: {
        abi::Probe probe;
        abi::probe_call(probe, kernel, args, reinterpret_cast<uintptr_t>(args));
        if (std::string m = probe.mismatches(); !m.empty()) {
            std::lock_guard lock(mismatch_mutex);
            if (mismatches.empty()) mismatches = m;
        }
        return;
    }
    }
}

extern "C" __attribute__((noinline)) void benchfp_workload_driver(const void* context) {
    const auto* c = static_cast<const benchfp::harness::DriverContext*>(context);
    c->run(c->object, c->variant);
}
