#pragma once
// Hands out general-purpose registers by role, so no kernel names a GPR itself
// and one kernel source builds under every frame policy.
#include "jit/frame_policy.hpp"

#include <xbyak/xbyak.h>

#include <string>
#include <vector>

namespace benchfp::jit {

class GprPool {
public:
    explicit GprPool(FramePolicy policy);

    // A register for `role` (a name for reports). Throws std::runtime_error when
    // the pool is exhausted.
    Xbyak::Reg64 take(const std::string& role);

    struct Grant {
        std::string role;
        Xbyak::Reg64 reg;
    };
    const std::vector<Grant>& grants() const { return grants_; }

    // Callee-saved registers handed out: the Generator saves and restores them.
    std::vector<Xbyak::Reg64> callee_saved_taken() const;
    bool rbp_taken() const;

    static bool is_callee_saved(const Xbyak::Reg64& reg);

private:
    std::vector<Xbyak::Reg64> free_;  // in hand-out order
    std::vector<Grant> grants_;
};

}  // namespace benchfp::jit
