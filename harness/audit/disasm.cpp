#include "audit/disasm.hpp"

#include <capstone/capstone.h>

#include <memory>

namespace benchfp::harness {

namespace {

// One Capstone handle per call: cheap next to reading the code, and no state to share.
struct Handle {
    csh h = 0;
    bool ok = cs_open(CS_ARCH_X86, CS_MODE_64, &h) == CS_ERR_OK;
    ~Handle() {
        if (ok) cs_close(&h);
    }
};

std::string text_of(const cs_insn& insn) {
    std::string text = insn.mnemonic;
    if (insn.op_str[0]) text += std::string(" ") + insn.op_str;
    return text;
}

// Calls visit(insn, count, i) for every instruction of a linear sweep.
template <typename Visit>
void sweep(const CodeBytes& code, bool detail, Visit&& visit) {
    Handle cs;
    if (!cs.ok || code.bytes.empty()) return;
    cs_option(cs.h, CS_OPT_SKIPDATA, CS_OPT_ON);  // step over data instead of stopping
    if (detail) cs_option(cs.h, CS_OPT_DETAIL, CS_OPT_ON);
    cs_insn* insn = nullptr;
    const size_t n = cs_disasm(cs.h, code.bytes.data(), code.bytes.size(), code.address, 0, &insn);
    for (size_t i = 0; i < n; ++i) visit(cs.h, insn, n, i);
    if (n) cs_free(insn, n);
}

bool writes_rbp(csh h, cs_insn& insn) {
    cs_regs read, written;
    uint8_t nread = 0, nwritten = 0;
    if (cs_regs_access(h, &insn, read, &nread, written, &nwritten) != CS_ERR_OK) return false;
    for (uint8_t i = 0; i < nwritten; ++i)
        if (written[i] == X86_REG_RBP || written[i] == X86_REG_EBP || written[i] == X86_REG_BP ||
            written[i] == X86_REG_BPL)
            return true;
    return false;
}

}  // namespace

std::string instruction_at(const CodeBytes& code, uint64_t addr) {
    if (!code.contains(addr)) return "(code not readable)";
    Handle cs;
    if (!cs.ok) return "(capstone unavailable)";
    cs_insn* insn = nullptr;
    const size_t offset = addr - code.address;
    const size_t n = cs_disasm(cs.h, code.bytes.data() + offset, code.bytes.size() - offset, addr, 1, &insn);
    std::string text = n ? text_of(insn[0]) : "(not decodable)";
    if (n) cs_free(insn, n);
    return text;
}

std::vector<std::pair<uint64_t, uint64_t>> frameless_windows(const CodeBytes& code) {
    std::vector<std::pair<uint64_t, uint64_t>> windows;
    sweep(code, false, [&](csh, const cs_insn* insn, size_t n, size_t i) {
        if (i + 1 >= n) return;
        const std::string a = text_of(insn[i]), b = text_of(insn[i + 1]);
        const uint64_t next_end = insn[i + 1].address + insn[i + 1].size;
        if (a == "push rbp" && b == "mov rbp, rsp") windows.emplace_back(insn[i].address, next_end);
        if ((a == "pop rbp" || a == "leave") && b == "ret") windows.emplace_back(insn[i + 1].address, next_end);
    });
    return windows;
}

std::vector<RbpWrite> rbp_writes(const CodeBytes& code) {
    std::vector<RbpWrite> writes;
    sweep(code, true, [&](csh h, cs_insn* insn, size_t, size_t i) {
        if (writes_rbp(h, insn[i])) writes.push_back({insn[i].address, text_of(insn[i])});
    });
    return writes;
}

}  // namespace benchfp::harness
