#pragma once
// The caller frames a sampled kernel runs under: main -> foo -> bar -> kernel.
// They are what a fleet profile must show above a JIT sample; callers.cpp is
// built with frame pointers and without sibling calls so each is a real frame.
#include "jit/generator.hpp"

#include <time.h>

#include <chrono>
#include <cstdint>

namespace benchfp::harness {

// What bar calls, and for how long. The budget is the calling thread's CPU
// time, not wall time: samples of task-clock (or cycles) follow CPU time, so a
// loaded machine gives a case as many samples as a quiet one, only later. The
// wall deadline bounds a starved run, which then ends inconclusive.
struct SampledCall {
    jit::KernelFn kernel = nullptr;
    const void* args = nullptr;
    int64_t cpu_deadline_ns = 0;  // CLOCK_THREAD_CPUTIME_ID of the thread that calls bar
    std::chrono::steady_clock::time_point wall_deadline;
    std::chrono::steady_clock::time_point next_check;
    uint64_t calls = 0;
    bool step = false;  // bar sets the trap flag around each call (step and abi modes, stepper.hpp)

    // Sets the budget from now, on the calling thread.
    void start(std::chrono::milliseconds cpu_budget, std::chrono::milliseconds wall_limit) {
        cpu_deadline_ns = thread_cpu_ns() + std::chrono::nanoseconds(cpu_budget).count();
        next_check = std::chrono::steady_clock::now();
        wall_deadline = next_check + wall_limit;
    }
    // The thread's CPU clock is a system call (the steady clock is not): read
    // it once per millisecond, so a kernel of a microsecond still fills the samples.
    bool done() {
        const auto now = std::chrono::steady_clock::now();
        if (now < next_check) return false;
        next_check = now + std::chrono::milliseconds(1);
        return thread_cpu_ns() >= cpu_deadline_ns || now >= wall_deadline;
    }
    static int64_t thread_cpu_ns() {
        timespec t{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        return int64_t(t.tv_sec) * 1000000000 + t.tv_nsec;
    }
};

}  // namespace benchfp::harness

// Unmangled on purpose: these are the names the chain verdict looks for.
extern "C" void foo(benchfp::harness::SampledCall* call);
extern "C" void bar(benchfp::harness::SampledCall* call);

namespace benchfp::harness {
inline constexpr const char* expected_callers[] = {"bar", "foo", "main"};
}
