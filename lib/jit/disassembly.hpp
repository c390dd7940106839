#pragma once
// Emitted code decoded one instruction at a time (Capstone), reduced to what
// the frame verifier and the single-step checks need: how control leaves the
// instruction, which general registers it writes, the stack operations that
// move rsp, and the memory it stores to. Capstone types stay in the .cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

namespace benchfp::jit {

// General registers in encoding order (Xbyak's): rax=0 rcx rdx rbx rsp rbp rsi rdi r8..r15.
inline constexpr int reg_rbx = 3, reg_rsp = 4, reg_rbp = 5, reg_rip = 16, no_reg = -1;
const char* gpr_name(int reg);

struct MemoryOperand {
    int base = no_reg, index = no_reg;  // gpr indices (base may be reg_rip)
    int scale = 1;
    int64_t disp = 0;
    unsigned size = 0;  // bytes
};

struct Instruction {
    enum class Kind : uint8_t {
        other,
        push,         // push reg (reg set) or push imm/mem
        pop,          // pop reg
        mov_rbp_rsp,  // the frame link
        adjust_rsp,   // add/sub rsp, imm: rsp += rsp_delta
        jump,         // unconditional, direct
        branch,       // conditional, direct: falls through too
        call,         // direct or indirect; returns to the next instruction
        ret,
        indirect_jump,
        trap,         // ud2, int3, hlt: the path ends, never returns
    };
    uint64_t address = 0;
    unsigned size = 0;
    std::string text;  // "mov rbp, rsp"
    Kind kind = Kind::other;
    int reg = no_reg;        // push/pop operand
    int64_t rsp_delta = 0;   // adjust_rsp
    uint64_t target = 0;     // jump/branch/direct call
    uint32_t gprs_written = 0;  // bit per gpr index, implicit writes included (rsp of push/pop)
    std::optional<MemoryOperand> store;  // an explicit memory destination
    // The explicit memory operands, read or written, in Capstone's order: one
    // for most, two for movs and cmps ([rsi] and [rdi], either of which may be
    // the stack); none for fs- or gs-relative memory, whose address the
    // registers do not give, nor where the operand is an address only (lea,
    // long nops, prefetches). No x86 instruction names more than two.
    std::array<MemoryOperand, 2> memory = {};
    uint8_t memory_count = 0;
    std::span<const MemoryOperand> memory_operands() const { return {memory.data(), memory_count}; }
    bool uses_upper = false;  // names a ymm or zmm register: may leave upper halves dirty
    bool clears_upper = false;  // vzeroupper, vzeroall
    bool nop = false;           // nop of any length: the padding before an aligned loop head
    // Reads or writes the stack through rsp with no operand that says so, and is
    // no push, pop, call or ret: pushf, popf, enter, leave, and the far
    // transfers (retf, iret, far call), whose return address is CS and RIP.
    bool implicit_stack = false;

    bool writes(int gpr) const { return gprs_written >> gpr & 1u; }
};

// A Capstone handle for x86-64 with details on. Not thread-safe; cheap to keep.
class Disassembler {
public:
    Disassembler();
    ~Disassembler();
    Disassembler(const Disassembler&) = delete;
    Disassembler& operator=(const Disassembler&) = delete;

    // The instruction at `address` (its bytes read from there, at most `max_bytes`),
    // or nothing when they do not decode.
    std::optional<Instruction> decode(uint64_t address, size_t max_bytes) const;
    // The same for bytes copied from elsewhere (another process's code): they
    // are decoded as if they were at `address`.
    std::optional<Instruction> decode(const uint8_t* bytes, size_t max_bytes, uint64_t address) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace benchfp::jit
