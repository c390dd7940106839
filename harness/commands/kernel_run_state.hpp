#pragma once
// What the files of KernelRun share (kernel_command.cpp, kernel_perf.cpp,
// kernel_unwind.cpp): the clock and the state of an unwind case in flight.
#include "commands/kernel_command.hpp"
#include "families/workload.hpp"
#include "perf/sampler.hpp"
#include "stepper.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace benchfp::harness {

using Clock = std::chrono::steady_clock;

inline double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

struct KernelRun::PendingUnwind {
    KernelCase c;
    std::unique_ptr<Workload> workload;
    std::unique_ptr<perf::Sampler> sampler;                // main's thread: bar, foo, main
    std::vector<std::unique_ptr<perf::Sampler>> workers;   // each worker of the parallel section
    SampledCall call;
    std::string jit_caller;
    Clock::time_point begun;
};

// A step or abi case in flight (kernel_step.cpp): main makes the stepped call.
struct KernelRun::PendingStep {
    KernelCase c;
    std::unique_ptr<Workload> workload;
    jit::Verification code;  // the decoded instructions the handler checks
    std::unique_ptr<step::Session> session;
    SampledCall call;
    std::string jit_caller;
    std::string abi_mismatch;  // abi: what the probed calls did not give back
    Clock::time_point begun, stepping_began;
};

}  // namespace benchfp::harness
