#include "audit/disasm.hpp"

#include "jit/disassembly.hpp"

namespace benchfp::harness {

namespace {

// Calls visit(previous, current) for every instruction of a linear sweep
// (previous is null for the first and after undecodable bytes). Bytes that do
// not decode are data in the code stream: the sweep steps over one and goes
// on, as Capstone's SKIPDATA would.
template <typename Visit>
void sweep(const CodeBytes& code, Visit&& visit) {
    const jit::Disassembler disassembler;
    std::optional<jit::Instruction> previous;
    for (size_t offset = 0; offset < code.bytes.size();) {
        std::optional<jit::Instruction> insn =
            disassembler.decode(code.bytes.data() + offset, code.bytes.size() - offset, code.address + offset);
        if (!insn || insn->size == 0) {
            previous.reset();
            ++offset;
            continue;
        }
        visit(previous ? &*previous : nullptr, *insn);
        offset += insn->size;
        previous = std::move(insn);
    }
}

}  // namespace

std::string instruction_at(const CodeBytes& code, uint64_t addr) {
    if (!code.contains(addr)) return "(code not readable)";
    const size_t offset = addr - code.address;
    const std::optional<jit::Instruction> insn =
        jit::Disassembler().decode(code.bytes.data() + offset, code.bytes.size() - offset, addr);
    return insn ? insn->text : "(not decodable)";
}

std::vector<std::pair<uint64_t, uint64_t>> frameless_windows(const CodeBytes& code) {
    using Kind = jit::Instruction::Kind;
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    sweep(code, [&](const jit::Instruction* a, const jit::Instruction& b) {
        if (!a) return;
        const uint64_t end = b.address + b.size;
        if (a->kind == Kind::push && a->reg == jit::reg_rbp && b.kind == Kind::mov_rbp_rsp)
            windows.emplace_back(a->address, end);
        const bool unlinked = (a->kind == Kind::pop && a->reg == jit::reg_rbp) || a->text == "leave";
        if (unlinked && b.kind == Kind::ret) windows.emplace_back(b.address, end);
    });
    return windows;
}

std::vector<RbpWrite> rbp_writes(const CodeBytes& code) {
    std::vector<RbpWrite> writes;
    sweep(code, [&](const jit::Instruction*, const jit::Instruction& insn) {
        if (insn.writes(jit::reg_rbp)) writes.push_back({insn.address, insn.text});
    });
    return writes;
}

}  // namespace benchfp::harness
