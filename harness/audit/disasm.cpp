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
    Handle cs;
    if (!cs.ok || code.bytes.empty()) return windows;
    cs_option(cs.h, CS_OPT_SKIPDATA, CS_OPT_ON);  // step over data instead of stopping
    cs_insn* insn = nullptr;
    const size_t n = cs_disasm(cs.h, code.bytes.data(), code.bytes.size(), code.address, 0, &insn);
    for (size_t i = 0; i + 1 < n; ++i) {
        const std::string a = text_of(insn[i]), b = text_of(insn[i + 1]);
        const uint64_t next_end = insn[i + 1].address + insn[i + 1].size;
        if (a == "push rbp" && b == "mov rbp, rsp") windows.emplace_back(insn[i].address, next_end);
        if ((a == "pop rbp" || a == "leave") && b == "ret") windows.emplace_back(insn[i + 1].address, next_end);
    }
    if (n) cs_free(insn, n);
    return windows;
}

}  // namespace benchfp::harness
