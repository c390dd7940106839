#pragma once
// Calls a kernel with canaries in every callee-saved register (rbx, rbp,
// r12-r15) and reports which of them the kernel did not restore.
#include "jit/generator.hpp"

#include <xbyak/xbyak.h>

#include <cstdint>

namespace benchfp::test {

class CalleeSavedProbe : public Xbyak::CodeGenerator {
public:
    static constexpr const char* names[] = {"rbx", "rbp", "r12", "r13", "r14", "r15"};

    CalleeSavedProbe() : Xbyak::CodeGenerator(4096, Xbyak::DontSetProtectRWE) {
        using namespace Xbyak::util;
        const Xbyak::Reg64 saved[] = {rbx, rbp, r12, r13, r14, r15};
        for (const auto& r : saved) push(r);
        sub(rsp, 8);  // entry rsp = 8 mod 16; 6 pushes + 8 realign it for the call
        mov(rax, rdi);  // the kernel
        mov(rdi, rsi);  // its argument block
        for (int i = 0; i < 6; ++i) mov(saved[i], canary(i));
        call(rax);
        xor_(eax, eax);
        for (int i = 0; i < 6; ++i) {
            Xbyak::Label intact;
            mov(rcx, canary(i));
            cmp(saved[i], rcx);
            je(intact);
            or_(eax, 1 << i);
            L(intact);
        }
        add(rsp, 8);
        for (int i = 5; i >= 0; --i) pop(saved[i]);
        ret();
        ready();
        setProtectModeRE();
    }

    // Bit i set: register names[i] came back changed.
    uint32_t run(jit::KernelFn kernel, const void* args) const {
        return getCode<uint32_t (*)(jit::KernelFn, const void*)>()(kernel, args);
    }

private:
    static uint64_t canary(int i) { return 0x5a5a000000000000ull + 0x1111111111ull * (i + 1); }
};

}  // namespace benchfp::test
