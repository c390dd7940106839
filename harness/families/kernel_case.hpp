#pragma once
// One case of `benchfp kernel`: the kernel to build (its spec), what to do with
// it (the mode), the problem and the knobs. A leaf of the harness: the case
// expansion (kernel/kernel_cases) makes cases, the families build from them.
#include "jit/frame_policy.hpp"
#include "jit/isa.hpp"
#include "perf/verdict.hpp"

#include <optional>
#include <string>

namespace benchfp::harness {

struct KernelSpec {
    std::string kernel;  // family: "eltwise"
    std::string alg;     // algorithm within the family: "relu"
    jit::Isa isa = jit::Isa::avx512;
    jit::FramePolicy frame = jit::FramePolicy::frame;
};

// verify: the static frame verifier's findings; step: one call under the trap
// flag, a chain verdict per instruction; abi: callee-saved registers and control
// state across a call, and stack and vector-state rules per stepped instruction.
enum class Mode { corr, perf, unwind, list, verify, step, abi };
inline constexpr Mode all_modes[] = {Mode::corr, Mode::perf, Mode::unwind, Mode::list, Mode::verify, Mode::step, Mode::abi};
const char* to_string(Mode mode);

// The peers `--vs` times side by side with a kernel (perf mode).
struct Peers {
    bool onednn = false;  // the same problem in oneDNN
    bool copy = false;    // a memcpy of the input: the bandwidth reference
    bool peak = false;    // the register-only FMA loop: the compute reference
    bool operator==(const Peers&) const = default;
    bool any() const { return onednn || copy || peak; }
    std::string list() const;  // "onednn,copy": as --vs takes it, empty for none
};

struct KernelCase {
    KernelSpec spec;
    Mode mode = Mode::corr;
    std::optional<perf::Verdict> expect;  // unwind: unset means the rule "every sample full"
    std::string problem;
    int duration_ms = 500;
    int min_samples = 200;
    unsigned seed = 1;
    int max_ms_per_prb = 500;
    // step, abi: the most instructions stepped per thread. At 30-50 thousand
    // traps a second, 5 million is about 2 minutes; gemm 1024^3 would take an hour.
    int64_t max_steps = 5'000'000;
    Peers vs;
    int threads = 1;
    std::string skip_reason;  // non-empty: the ISA cannot run on this host (or above the cap)
    bool isa_explicit = false;  // named by --isa (not "max"): a skip fails the run unless allowed
};

}  // namespace benchfp::harness
