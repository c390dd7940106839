#pragma once
// The chain verdict of one sample taken in JIT code, and their tallies.
// lib/perf knows no kernel: it is given the JIT region, the windows where the
// frame is not set up, and the callers expected right above the JIT frame.
#include "perf/ring.hpp"
#include "perf/symbols.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace benchfp::perf {

enum class Verdict {
    full,            // the expected callers, in order, right above the JIT frame
    skipped_caller,  // the innermost caller is missing, the others follow in order
    broken,          // anything else: the outermost caller is not reached where it should be
    prologue,        // IP in a prologue/epilogue window: one frame short by nature
};

const char* to_string(Verdict verdict);

// A JIT region with the windows (absolute [begin, end)) where its frame is not set up.
struct JitCode {
    CodeRegion region;
    std::vector<std::pair<uint64_t, uint64_t>> frameless_windows;
};

// The callers a chain must show: `outer`, innermost first (e.g. {"bar", "foo",
// "main"}), and `direct`, the function that calls the JIT code, when that is not
// outer[0] itself (a driver between them).
struct ExpectedCallers {
    std::vector<std::string> outer;
    std::string direct;  // empty: the JIT code is called by outer[0]
    // The callers may be anywhere above the JIT frame (a library between them,
    // as in a foreign process whose JIT is called by a library's own code).
    bool anywhere = false;
};

// Classifies the names of the frames above the JIT frame, innermost first:
//   without `direct`: full when they start with outer, skipped-caller when they
//     start with outer minus its first, broken otherwise;
//   with `direct`: broken unless outer appears in order, contiguous, somewhere;
//     then full when the first is `direct`, skipped-caller when it is not;
//   with `anywhere`: full when outer appears in order, contiguous, somewhere;
//     skipped-caller when only outer minus its first does; broken otherwise.
//     (A library frame lost between the JIT frame and outer goes unnoticed:
//     what the profile shows of the callers is what is judged.)
Verdict classify_callers(std::span<const std::string> callers, const ExpectedCallers& expected);

// The verdict of a sample, or nothing when its IP is not inside the JIT region.
std::optional<Verdict> verdict(const Sample& sample, const JitCode& code, const ExpectedCallers& expected,
                               const Symbols& symbols);

struct Tally {
    uint64_t full = 0, skipped_caller = 0, broken = 0, prologue = 0;
    uint64_t outside = 0;  // samples whose IP was not in the JIT region

    void add(std::optional<Verdict> v);
    uint64_t jit() const { return full + skipped_caller + broken + prologue; }
    uint64_t judged() const { return full + skipped_caller + broken; }  // JIT samples outside the windows
    uint64_t count(Verdict v) const;
    // full / (JIT samples - prologue samples); NaN without judged samples.
    double unwind_rate() const;
};

}  // namespace benchfp::perf
