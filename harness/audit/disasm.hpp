#pragma once
// The project's one disassembler (jit::Disassembler) over code read from a foreign process: one instruction at an
// address (for the culprit table), and the frameless windows of code whose
// generator we do not know (push rbp; mov rbp, rsp ... pop rbp; ret).
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace benchfp::harness {

// Bytes of code with the address of their first byte.
struct CodeBytes {
    uint64_t address = 0;
    std::vector<uint8_t> bytes;
    bool contains(uint64_t addr) const { return addr >= address && addr < address + bytes.size(); }
};

// "mov rbp, qword ptr [rdi + 8]": the instruction at `addr` (an instruction
// boundary, e.g. a sampled IP), or a note saying why there is none.
std::string instruction_at(const CodeBytes& code, uint64_t addr);

// Linear sweep from code.address: the [begin, end) windows where a frame-pointer
// walk is one frame short by nature: `push rbp` and the `mov rbp, rsp` after it
// (the frame is not set up yet), and a `ret` right after `pop rbp` or `leave`
// (it is torn down). Data in the code stream may hide windows; it never adds one
// that is not a real push/mov or pop/ret pair.
std::vector<std::pair<uint64_t, uint64_t>> frameless_windows(const CodeBytes& code);

// Every instruction of a linear sweep that writes rbp (or ebp, bp, bpl):
// address and text, in address order. The one at or before a sampled IP is
// the likely culprit that took rbp away from the frame chain.
struct RbpWrite {
    uint64_t address = 0;
    std::string instruction;
};
std::vector<RbpWrite> rbp_writes(const CodeBytes& code);

}  // namespace benchfp::harness
