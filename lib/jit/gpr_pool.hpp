#pragma once
// Hands out general-purpose registers by role, so no kernel names a GPR itself
// and one kernel source builds under every frame policy (the "resource manager
// for GPRs" oneDNN's kernels lack).
//
// Order: under clobber rbp first (the legacy layout: rbp is an ordinary register,
// so it always carries a kernel value), then caller-saved registers (free), then
// callee-saved ones (the Generator saves and restores them). rsp is never handed
// out, nor rdi, which carries the argument block. When the registers run out, a
// value lives in a stack slot below the saved registers, addressed from rsp, so
// the frame chain (rbp and the return address above it) is never touched.
#include "jit/frame_policy.hpp"

#include <xbyak/xbyak.h>

#include <optional>
#include <string>
#include <vector>

namespace benchfp::jit {

// A kernel value: in a register, or spilled to a stack slot.
class GprValue {
public:
    GprValue() = default;
    explicit GprValue(Xbyak::Reg64 reg) : reg_(reg) {}
    explicit GprValue(int slot) : slot_(slot) {}

    bool spilled() const { return !reg_.has_value(); }
    // The register; throws std::logic_error for a spilled value.
    const Xbyak::Reg64& reg() const;
    // Where the value lives: its register or its slot (qword [rsp + 8*slot]).
    // Usable directly with mov/add/sub/cmp/inc/dec as source or destination.
    const Xbyak::Operand& operand() const;
    int slot() const { return slot_; }

private:
    std::optional<Xbyak::Reg64> reg_;
    int slot_ = -1;
    mutable std::optional<Xbyak::Address> address_;
};

class GprPool {
public:
    explicit GprPool(FramePolicy policy);

    // A register for `role` (a name for reports); a stack slot once none is left.
    GprValue take(const std::string& role);
    // A register that must be one (scratch, pointers used in addressing): throws
    // std::runtime_error when none is left, naming the role.
    Xbyak::Reg64 take_register(const std::string& role);

    struct Grant {
        std::string role;
        GprValue value;
    };
    const std::vector<Grant>& grants() const { return grants_; }

    std::vector<Xbyak::Reg64> registers_taken() const;
    std::vector<Xbyak::Reg64> callee_saved_taken() const;
    int spilled() const { return spill_slots_; }
    // The stack below the saved registers: the spill slots, then the scratch
    // area; rounded to 16, which keeps rsp's alignment as the caller left it.
    size_t spill_bytes() const;

    // A scratch area of `bytes` on the stack, above the spill slots (a kernel's
    // buffer that lives for one call): at [rsp + scratch_offset()].
    void reserve_scratch(size_t bytes);
    size_t scratch_offset() const { return 8 * static_cast<size_t>(spill_slots_); }

    // The Generator seals the pool once the prologue has reserved its stack: a
    // value spilled or scratch reserved after that would not be in the frame the
    // prologue made (and would move the scratch area under code already emitted),
    // so take() (when it would spill) and reserve_scratch() then throw std::logic_error.
    void seal() { sealed_ = true; }
    bool rbp_taken() const;

    // "gprs:5 callee-saved:1 (rbp) spilled:0"
    std::string summary() const;

    static bool is_callee_saved(const Xbyak::Reg64& reg);

private:
    std::vector<Xbyak::Reg64> free_;  // in hand-out order
    std::vector<Grant> grants_;
    int spill_slots_ = 0;
    size_t scratch_bytes_ = 0;
    bool sealed_ = false;
};

}  // namespace benchfp::jit
