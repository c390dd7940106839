#pragma once
// The static frame verifier: objtool's idea for emitted code. It decodes a
// built kernel from its entry, follows every path (both sides of every branch,
// stopping at ret, unconditional jumps and traps, so the constants
// generate_data() puts after the epilogue are never decoded as code), and
// tracks through every instruction where rsp is relative to entry and what rbp
// and the other callee-saved registers hold: the caller's value, this kernel's
// frame, or something else. Knows nothing of perf or the harness.
//
// A kernel fails (a message naming the kernel, the offset and the instruction;
// Generator::build() throws it as a VerifyError) when:
//   - a path leaves the code (a jump or branch target outside [begin, begin+size)),
//     jumps indirectly, runs into bytes that do not decode, or reaches one
//     instruction with two different stack states (rsp or saved registers);
//   - at a `ret` rsp is not back where it was at entry, or a callee-saved
//     register (rbx, rbp, r12-r15) does not hold the caller's value again:
//     the epilogue did not pop what the prologue pushed, in order;
//   - a call is made with rsp not 16-byte aligned;
//   - rsp is written other than by push, pop, or add/sub of an immediate;
//   - the policy's rule on rbp is broken, where the declared windows are
//     layout().prologue_end (setup_done()) and layout().epilogue_begin:
//       frame:    rbp is written only by `push rbp; mov rbp, rsp` before
//                 prologue_end and `pop rbp` at or after epilogue_begin. The
//                 windows agree with the code when the frame is established
//                 (the instruction after `mov rbp, rsp`) at or before
//                 prologue_end on every path and holds at every instruction of
//                 [prologue_end, epilogue_begin), and is torn down at or
//                 after epilogue_begin. (The declared prologue window is wider
//                 than the frameless one: it also covers the argument loads.)
//       preserve: no instruction writes rbp.
//       clobber:  rbp is a kernel register, reported as clobbered; its value
//                 must be written before prologue_end (setup_done()) on every
//                 path, so no sample after the window still sees the caller's
//                 frame through it.
#include "jit/code_regions.hpp"
#include "jit/disassembly.hpp"
#include "jit/frame_policy.hpp"

#include <stdexcept>
#include <string>
#include <vector>

namespace benchfp::jit {

class VerifyError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct Verification {
    size_t instructions = 0;  // distinct instructions decoded on some path
    size_t paths = 0;         // straight-line paths: from the entry or a branch target or fall-through to the next jump, branch or ret
    // Offsets of the frame's boundaries (frame policy only, else npos): the
    // first instruction with the frame established, and the `pop rbp`.
    size_t frame_from = npos, frame_until = npos;
    // What rbp held in each window, e.g. "caller,frame" / "frame" / "frame,caller".
    std::string rbp_prologue, rbp_body, rbp_epilogue;
    bool rbp_clobbered = false;
    // The first violation, empty when the code passed, and its offset.
    std::string failure;
    size_t failure_offset = npos;
    bool passed() const { return failure.empty(); }
    // Every decoded instruction by offset, in address order (for the single-step checks).
    std::vector<Instruction> code;
    uint64_t begin = 0;  // the code's address: offsets are from here

    static constexpr size_t npos = static_cast<size_t>(-1);
    // The decoded instruction at `offset`, or null.
    const Instruction* at(size_t offset) const;
};

// Verifies a built kernel's code. Every path is walked even after a violation
// (the first is kept in `failure`), so `code` holds every reachable instruction.
Verification verify(const CodeRegionInfo& layout, FramePolicy policy);

// Whether Generator::build() verifies (on unless --no-verify turned it off). Process-wide.
void set_verify_on_build(bool on);
bool verify_on_build();

}  // namespace benchfp::jit
