#include "abi_probe.hpp"

#include <xbyak/xbyak.h>

#include <cstddef>
#include <sstream>

namespace benchfp::harness::abi {

namespace {

// void trampoline(Probe* probe). Its own frame is a full one (push rbp; mov rbp,
// rsp); rbp then holds a canary during the call, so nothing may unwind through
// it while a probed kernel runs.
class Trampoline : public Xbyak::CodeGenerator {
public:
    Trampoline() : Xbyak::CodeGenerator(4096, Xbyak::DontSetProtectRWE) {
        using namespace Xbyak::util;
        const Xbyak::Reg64 saved[] = {rbx, r12, r13, r14, r15};
        const Xbyak::Reg64 probed[] = {rbx, rbp, r12, r13, r14, r15};
        push(rbp);
        mov(rbp, rsp);
        for (const auto& r : saved) push(r);
        sub(rsp, 8);  // entry 8 mod 16, +6 pushes +8: the call below is 16-byte aligned
        mov(ptr[rsp], rdi);
        stmxcsr(ptr[rdi + offsetof(Probe, mxcsr_before)]);
        fnstcw(ptr[rdi + offsetof(Probe, fcw_before)]);
        mov(ptr[rdi + offsetof(Probe, rsp_before)], rsp);
        for (int i = 0; i < 6; ++i) mov(probed[i], ptr[rdi + offsetof(Probe, canary) + 8 * i]);
        mov(rax, ptr[rdi + offsetof(Probe, fn)]);
        mov(rdi, ptr[rdi + offsetof(Probe, args)]);
        call(rax);
        mov(rax, ptr[rsp]);
        mov(ptr[rax + offsetof(Probe, rsp_after)], rsp);
        for (int i = 0; i < 6; ++i) mov(ptr[rax + offsetof(Probe, after) + 8 * i], probed[i]);
        pushf();
        pop(rcx);
        mov(ptr[rax + offsetof(Probe, flags_after)], rcx);
        stmxcsr(ptr[rax + offsetof(Probe, mxcsr_after)]);
        fnstcw(ptr[rax + offsetof(Probe, fcw_after)]);
        add(rsp, 8);
        for (int i = 4; i >= 0; --i) pop(saved[i]);
        pop(rbp);
        ret();
        ready();
        setProtectModeRE();  // W^X, as the kernels
    }
};

const Trampoline& trampoline() {
    static const Trampoline code;
    return code;
}

std::string hex(uint64_t v) {
    std::ostringstream out;
    out << "0x" << std::hex << v;
    return out.str();
}

}  // namespace

std::string Probe::mismatches() const {
    static const char* const names[] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};
    std::string out;
    auto add = [&](const std::string& what) { out += (out.empty() ? "" : ", ") + what; };
    for (int i = 0; i < 6; ++i)
        if (after[i] != canary[i]) add(std::string(names[i]) + " " + hex(canary[i]) + " -> " + hex(after[i]));
    if (rsp_after != rsp_before) add("rsp " + hex(rsp_before) + " -> " + hex(rsp_after));
    if (flags_after & 0x400) add("direction flag left set");
    if (mxcsr_after != mxcsr_before) add("MXCSR " + hex(mxcsr_before) + " -> " + hex(mxcsr_after));
    if (fcw_after != fcw_before) add("x87 control word " + hex(fcw_before) + " -> " + hex(fcw_after));
    return out;
}

void probe_call(Probe& probe, jit::KernelFn fn, const void* args, uint64_t seed) {
    probe.fn = fn;
    probe.args = args;
    for (int i = 0; i < 6; ++i) probe.canary[i] = 0xC0FFEE0000000000ull ^ (seed * 0x9E3779B97F4A7C15ull) ^ (uint64_t(i) << 8);
    reinterpret_cast<void (*)(Probe*)>(const_cast<uint8_t*>(trampoline().getCode()))(&probe);
}

}  // namespace benchfp::harness::abi
