#pragma once
// The caller frames a sampled kernel runs under: main -> foo -> bar -> kernel.
// They are what a fleet profile must show above a JIT sample; callers.cpp is
// built with frame pointers and without sibling calls so each is a real frame.
#include "jit/generator.hpp"

#include <chrono>
#include <cstdint>

namespace benchfp::harness {

struct SampledCall {
    jit::KernelFn kernel = nullptr;
    const void* args = nullptr;
    std::chrono::steady_clock::time_point deadline;
    uint64_t calls = 0;
    bool step = false;  // bar sets the trap flag around each call (step and abi modes, stepper.hpp)
};

}  // namespace benchfp::harness

// Unmangled on purpose: these are the names the chain verdict looks for.
extern "C" void foo(benchfp::harness::SampledCall* call);
extern "C" void bar(benchfp::harness::SampledCall* call);

namespace benchfp::harness {
inline constexpr const char* expected_callers[] = {"bar", "foo", "main"};
}
