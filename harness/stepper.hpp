#pragma once
// Single-stepping a JIT kernel in this process: the x86 trap flag (TF) makes
// the CPU raise SIGTRAP after every instruction of the thread that set it. The
// handler looks only at instructions inside the JIT region: it walks the
// frame-pointer chain from the interrupted rip/rbp as a profiler would (reads
// checked against the thread's stack bounds first, so they cannot fault) and
// counts each distinct (instruction, chain), and checks stack and vector rules
// on the decoded instruction. It is async-signal-safe: no allocation, no locks;
// every table is allocated before stepping starts (one record per thread).
//
// Who sets TF: bar (callers.cpp) around a direct kernel call, benchfp_call_jit
// (jit_call.cpp) around each call a driver or a parallel section makes, on
// every thread; both clear it right after the call returns.
#include "jit/verifier.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace benchfp::harness::step {

inline constexpr int max_depth = 20;

// One distinct (instruction, chain) of one thread and how often it ran.
struct ChainCount {
    uint32_t offset = 0;  // of the instruction in the JIT region
    uint32_t depth = 0;   // frames used: frames[0] is the instruction, then return addresses
    uint64_t frames[max_depth] = {};
    uint64_t count = 0;
    uint64_t first_step = 0;  // the thread's step index when first seen
};

// A rule broken at a stepped instruction: the first of each kind is kept.
struct Violation {
    enum Kind { misaligned_call, red_zone_store, off_stack_store, dirty_upper_at_ret, count_ };
    bool seen = false;
    uint32_t offset = 0;
    uint64_t rsp = 0, address = 0;
};
const char* to_string(Violation::Kind kind);

struct ThreadSteps {
    bool main_thread = false;
    uint64_t steps = 0;    // instructions executed in the JIT region
    // Of those, the ones that read or write this thread's stack: push, pop,
    // call, ret, pushf, popf, enter, leave, the far transfers (retf, iret, far
    // call), and those with a memory operand in the stack (either of the two
    // that movs and cmps name). Counted
    // exactly, so two policies' counts show what a frame costs a call (its
    // link, and the spills of a GPR pool without rbp) where timing cannot.
    uint64_t stack_accesses = 0;
    // Of the steps, the nops: padding before aligned loop heads, executed where
    // a loop is entered by falling into it. A policy's prologue moves the code
    // after it, so two policies pad differently; this tells that apart.
    uint64_t nops = 0;
    uint64_t outside = 0;  // traps outside it (the callers around the call, drivers)
    uint64_t lost = 0;     // steps whose chain did not fit the table
    bool budget_spent = false;  // stepped max_steps and stopped: the rest ran unstepped
    std::vector<ChainCount> chains;  // distinct ones, in table order (filled entries only, after stop())
    Violation violations[Violation::count_];
};

// The JIT region to step and its decoded instructions (Verification::code).
// Steps every thread that calls begin_thread() until stop(), each for at most
// max_steps instructions in the region: then the thread's trap flag is cleared
// and its calls run at full speed, marked budget_spent (a large problem would
// otherwise take hours).
class Session {
public:
    Session(const jit::Verification& code, uint64_t begin, size_t size, int max_threads, uint64_t max_steps);
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    // Stops stepping (no thread may be inside a stepped call) and returns each thread's record.
    std::vector<ThreadSteps> stop();
    // Kernel calls made while the session ran on threads it had no record
    // for (more threads than max_threads, or stack bounds unreadable): those
    // instructions were not stepped, so no verdict may claim them.
    uint64_t unstepped_calls() const;
};

// Around one kernel call on the current thread: true when a session runs and the
// thread has a record (its stack bounds read, its table assigned), TF then set.
bool begin_thread_call();
void end_thread_call();  // clears TF

}  // namespace benchfp::harness::step
