#include "jit/gpr_pool.hpp"

#include <algorithm>
#include <stdexcept>

namespace benchfp::jit {

using namespace Xbyak::util;

GprPool::GprPool(FramePolicy policy) {
    // rdi carries the kernel's argument block and rsp the stack: never handed out.
    // Under clobber, rbp comes first, as in kernels written for the legacy layout
    // that take it as an ordinary register: rbp then always carries a kernel value.
    if (policy == FramePolicy::clobber) free_.push_back(rbp);
    // Caller-saved first (free to use), then callee-saved (cost a push and a pop).
    for (const Xbyak::Reg64& r : {rax, rcx, rdx, rsi, r8, r9, r10, r11, rbx, r12, r13, r14, r15})
        free_.push_back(r);
}

Xbyak::Reg64 GprPool::take(const std::string& role) {
    if (free_.empty())
        throw std::runtime_error("GPR pool exhausted: no register left for '" + role + "'");
    Xbyak::Reg64 reg = free_.front();
    free_.erase(free_.begin());
    grants_.push_back({role, reg});
    return reg;
}

bool GprPool::is_callee_saved(const Xbyak::Reg64& reg) {
    return reg == rbx || reg == rbp || reg == r12 || reg == r13 || reg == r14 || reg == r15;
}

std::vector<Xbyak::Reg64> GprPool::callee_saved_taken() const {
    std::vector<Xbyak::Reg64> out;
    for (const Grant& g : grants_)
        if (is_callee_saved(g.reg)) out.push_back(g.reg);
    return out;
}

bool GprPool::rbp_taken() const {
    return std::any_of(grants_.begin(), grants_.end(), [](const Grant& g) { return g.reg == rbp; });
}

}  // namespace benchfp::jit
