#include "jit/disassembly.hpp"

#include <capstone/capstone.h>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace benchfp::jit {

namespace {

// Every name of a general register's parts maps to the register's index, so a
// write to ebx or bl counts as a write to rbx.
int gpr_index(x86_reg r) {
    switch (r) {
    case X86_REG_RAX: case X86_REG_EAX: case X86_REG_AX: case X86_REG_AL: case X86_REG_AH: return 0;
    case X86_REG_RCX: case X86_REG_ECX: case X86_REG_CX: case X86_REG_CL: case X86_REG_CH: return 1;
    case X86_REG_RDX: case X86_REG_EDX: case X86_REG_DX: case X86_REG_DL: case X86_REG_DH: return 2;
    case X86_REG_RBX: case X86_REG_EBX: case X86_REG_BX: case X86_REG_BL: case X86_REG_BH: return 3;
    case X86_REG_RSP: case X86_REG_ESP: case X86_REG_SP: case X86_REG_SPL: return 4;
    case X86_REG_RBP: case X86_REG_EBP: case X86_REG_BP: case X86_REG_BPL: return 5;
    case X86_REG_RSI: case X86_REG_ESI: case X86_REG_SI: case X86_REG_SIL: return 6;
    case X86_REG_RDI: case X86_REG_EDI: case X86_REG_DI: case X86_REG_DIL: return 7;
    case X86_REG_RIP: return reg_rip;
    default: break;
    }
    // r8..r15 and their parts: Capstone numbers each size as a run of eight.
    if (r >= X86_REG_R8 && r <= X86_REG_R15) return 8 + (r - X86_REG_R8);
    if (r >= X86_REG_R8D && r <= X86_REG_R15D) return 8 + (r - X86_REG_R8D);
    if (r >= X86_REG_R8W && r <= X86_REG_R15W) return 8 + (r - X86_REG_R8W);
    if (r >= X86_REG_R8B && r <= X86_REG_R15B) return 8 + (r - X86_REG_R8B);
    return no_reg;
}

bool is_wide_vector(x86_reg r) {
    return (r >= X86_REG_YMM0 && r <= X86_REG_YMM31) || (r >= X86_REG_ZMM0 && r <= X86_REG_ZMM31);
}

// Instructions whose memory operand is an address only: computed (lea), or a
// hint that touches nothing (the long nops, the prefetches).
bool names_memory_untouched(unsigned id) {
    switch (id) {
    case X86_INS_LEA:
    case X86_INS_NOP:
    case X86_INS_PREFETCH:
    case X86_INS_PREFETCHNTA:
    case X86_INS_PREFETCHT0:
    case X86_INS_PREFETCHT1:
    case X86_INS_PREFETCHT2:
    case X86_INS_PREFETCHW:
        return true;
    default:
        return false;
    }
}

bool in_group(const cs_insn& insn, uint8_t group) {
    for (uint8_t i = 0; i < insn.detail->groups_count; ++i)
        if (insn.detail->groups[i] == group) return true;
    return false;
}

void classify(const cs_insn& insn, Instruction& out) {
    const cs_x86& x = insn.detail->x86;
    const auto reg_op = [&](int i) { return x.op_count > i && x.operands[i].type == X86_OP_REG ? gpr_index(x.operands[i].reg) : no_reg; };
    const auto imm_op = [&](int i) { return x.op_count > i && x.operands[i].type == X86_OP_IMM; };
    switch (insn.id) {
    case X86_INS_PUSHF:
    case X86_INS_PUSHFQ:
    case X86_INS_POPF:
    case X86_INS_POPFQ:
    case X86_INS_ENTER:
    case X86_INS_LEAVE:
    // Far transfers: CS and RIP (and RFLAGS, RSP and SS for iret) on the stack.
    case X86_INS_RETF:
    case X86_INS_RETFQ:
    case X86_INS_IRET:
    case X86_INS_IRETD:
    case X86_INS_IRETQ:
    case X86_INS_LCALL: out.implicit_stack = true; return;
    case X86_INS_PUSH: out.kind = Instruction::Kind::push; out.reg = reg_op(0); return;
    case X86_INS_POP: out.kind = Instruction::Kind::pop; out.reg = reg_op(0); return;
    case X86_INS_MOV:
        if (reg_op(0) == reg_rbp && reg_op(1) == reg_rsp && x.operands[0].size == 8) out.kind = Instruction::Kind::mov_rbp_rsp;
        return;
    case X86_INS_ADD:
    case X86_INS_SUB:
        if (reg_op(0) == reg_rsp && x.operands[0].size == 8 && imm_op(1)) {
            out.kind = Instruction::Kind::adjust_rsp;
            out.rsp_delta = insn.id == X86_INS_ADD ? x.operands[1].imm : -x.operands[1].imm;
        }
        return;
    case X86_INS_RET: out.kind = Instruction::Kind::ret; return;
    case X86_INS_CALL:
        out.kind = Instruction::Kind::call;
        if (imm_op(0)) out.target = static_cast<uint64_t>(x.operands[0].imm);
        return;
    case X86_INS_UD2: case X86_INS_INT3: case X86_INS_HLT: out.kind = Instruction::Kind::trap; return;
    case X86_INS_VZEROUPPER: case X86_INS_VZEROALL: out.clears_upper = true; return;
    default: break;
    }
    if (in_group(insn, X86_GRP_JUMP)) {
        if (!imm_op(0)) out.kind = Instruction::Kind::indirect_jump;
        else {
            out.kind = insn.id == X86_INS_JMP ? Instruction::Kind::jump : Instruction::Kind::branch;
            out.target = static_cast<uint64_t>(x.operands[0].imm);
        }
    }
}

// Capstone 4 lacks some AVX512DQ/BW encodings the kernels use (vxorps on
// xmm16-31, vextractf32x8). An EVEX instruction's length follows from its
// prefix, ModRM, SIB and map alone, and no EVEX instruction the kernels emit
// branches, moves rsp or writes a general register, so such an instruction is
// taken as a vector operation on registers: the walk continues past it, its
// text names the opcode. (A store to memory through it would go unchecked by
// the single-step red-zone rule; the kernels' stores are all plain moves.)
std::optional<Instruction> decode_unknown_evex(const uint8_t* code, uint64_t address, size_t max_bytes) {
    if (max_bytes < 6 || code[0] != 0x62) return std::nullopt;
    const unsigned map = code[1] & 3, opcode = code[4], modrm = code[5];
    const unsigned mod = modrm >> 6, rm = modrm & 7;
    size_t size = 6;
    if (mod != 3 && rm == 4) {
        if (max_bytes < 7) return std::nullopt;
        if (mod == 0 && (code[6] & 7) == 5) size += 4;  // SIB without base: disp32
        ++size;
    }
    if (mod == 1) size += 1;
    else if (mod == 2 || (mod == 0 && rm == 5)) size += 4;
    const bool has_imm8 = map == 3 || (map == 1 && ((opcode >= 0x70 && opcode <= 0x73) || opcode == 0xC2 ||
                                                    (opcode >= 0xC4 && opcode <= 0xC6)));
    if (has_imm8) ++size;
    if (size > max_bytes || map == 0) return std::nullopt;
    Instruction out;
    out.address = address;
    out.size = static_cast<unsigned>(size);
    std::ostringstream text;
    text << "(evex map " << map << " opcode 0x" << std::hex << opcode << ": not known to Capstone 4)";
    out.text = text.str();
    out.uses_upper = (code[3] & 0x60) != 0;  // EVEX.L'L: a 256- or 512-bit operation
    return out;
}

// One more of the instruction's memory operands. The array holds all that x86
// can name (two); a third would be a decoder we do not know, and dropping it
// would make the stack count miss accesses without a word.
void add_memory_operand(Instruction& out, const MemoryOperand& m) {
    if (out.memory_count == out.memory.size())
        throw std::runtime_error("Capstone: '" + out.text + "' names more than two memory operands");
    out.memory[out.memory_count++] = m;
}

}  // namespace

const char* gpr_name(int reg) {
    static const char* const names[] = {"rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8",
                                        "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip"};
    return reg >= 0 && reg <= reg_rip ? names[reg] : "?";
}

struct Disassembler::Impl {
    csh handle = 0;
    cs_insn* insn = nullptr;
};

Disassembler::Disassembler() : impl_(std::make_unique<Impl>()) {
    if (cs_open(CS_ARCH_X86, CS_MODE_64, &impl_->handle) != CS_ERR_OK)
        throw std::runtime_error("Capstone: cannot open an x86-64 disassembler");
    cs_option(impl_->handle, CS_OPT_DETAIL, CS_OPT_ON);
    impl_->insn = cs_malloc(impl_->handle);
}

Disassembler::~Disassembler() {
    cs_free(impl_->insn, 1);
    cs_close(&impl_->handle);
}

std::optional<Instruction> Disassembler::decode(uint64_t address, size_t max_bytes) const {
    return decode(reinterpret_cast<const uint8_t*>(address), max_bytes, address);
}

std::optional<Instruction> Disassembler::decode(const uint8_t* bytes, size_t max_bytes, uint64_t address) const {
    const uint8_t* code = bytes;
    size_t left = max_bytes;
    uint64_t at = address;
    cs_insn& insn = *impl_->insn;
    if (!cs_disasm_iter(impl_->handle, &code, &left, &at, &insn)) return decode_unknown_evex(bytes, address, max_bytes);

    Instruction out;
    out.address = insn.address;
    out.size = insn.size;
    out.text = insn.mnemonic;
    if (insn.op_str[0]) out.text += std::string(" ") + insn.op_str;
    classify(insn, out);
    out.nop = insn.id == X86_INS_NOP;

    cs_regs read, written;
    uint8_t n_read = 0, n_written = 0;
    if (cs_regs_access(impl_->handle, &insn, read, &n_read, written, &n_written) == CS_ERR_OK) {
        for (uint8_t i = 0; i < n_written; ++i) {
            const int gpr = gpr_index(static_cast<x86_reg>(written[i]));
            if (gpr >= 0 && gpr < 16) out.gprs_written |= 1u << gpr;
            if (is_wide_vector(static_cast<x86_reg>(written[i]))) out.uses_upper = true;
        }
        for (uint8_t i = 0; i < n_read; ++i)
            if (is_wide_vector(static_cast<x86_reg>(read[i]))) out.uses_upper = true;
    }
    const cs_x86& x = insn.detail->x86;
    for (uint8_t i = 0; i < x.op_count; ++i) {
        const cs_x86_op& op = x.operands[i];
        if (op.type == X86_OP_REG && is_wide_vector(op.reg)) out.uses_upper = true;
        // A push's store is implicit (no memory operand); lea, the long nops
        // (`nop dword [rax]`, Xbyak's padding) and the prefetches name memory
        // they never read or write: a stack count must not depend on what rax holds.
        if (op.type != X86_OP_MEM || names_memory_untouched(insn.id)) continue;
        // fs- and gs-relative memory (thread-local storage) is neither the stack
        // nor where its registers point: no address to compute from them.
        if (op.mem.segment == X86_REG_FS || op.mem.segment == X86_REG_GS) continue;
        const MemoryOperand m{gpr_index(op.mem.base), gpr_index(op.mem.index), op.mem.scale, op.mem.disp, op.size};
        add_memory_operand(out, m);
        if (op.access & CS_AC_WRITE) out.store = m;
    }
    return out;
}

}  // namespace benchfp::jit
