#include "jit/gpr_pool.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace benchfp::jit {

using namespace Xbyak::util;

const Xbyak::Reg64& GprValue::reg() const {
    if (!reg_) throw std::logic_error("GPR value in stack slot " + std::to_string(slot_) + " used as a register");
    return *reg_;
}

const Xbyak::Operand& GprValue::operand() const {
    if (reg_) return *reg_;
    if (!address_) address_ = qword[rsp + 8 * slot_];
    return *address_;
}

GprPool::GprPool(FramePolicy policy) {
    if (policy == FramePolicy::clobber) free_.push_back(rbp);
    for (const Xbyak::Reg64& r : {rax, rcx, rdx, rsi, r8, r9, r10, r11, rbx, r12, r13, r14, r15})
        free_.push_back(r);
}

GprValue GprPool::take(const std::string& role) {
    GprValue value;
    if (free_.empty()) {
        if (sealed_) throw std::logic_error("GPR pool: '" + role + "' spilled after the prologue reserved the stack");
        value = GprValue(spill_slots_++);
    } else {
        value = GprValue(free_.front());
        free_.erase(free_.begin());
    }
    grants_.push_back({role, value});
    return value;
}

Xbyak::Reg64 GprPool::take_register(const std::string& role) {
    if (free_.empty()) throw std::runtime_error("GPR pool exhausted: no register left for '" + role + "'");
    return take(role).reg();
}

std::vector<Xbyak::Reg64> GprPool::registers_taken() const {
    std::vector<Xbyak::Reg64> out;
    for (const Grant& g : grants_)
        if (!g.value.spilled()) out.push_back(g.value.reg());
    return out;
}

std::vector<Xbyak::Reg64> GprPool::callee_saved_taken() const {
    std::vector<Xbyak::Reg64> out;
    for (const Xbyak::Reg64& r : registers_taken())
        if (is_callee_saved(r)) out.push_back(r);
    return out;
}

size_t GprPool::spill_bytes() const {
    return (8 * static_cast<size_t>(spill_slots_) + scratch_bytes_ + 15) & ~size_t{15};
}

void GprPool::reserve_scratch(size_t bytes) {
    if (sealed_) throw std::logic_error("GPR pool: scratch reserved after the prologue reserved the stack");
    scratch_bytes_ += bytes;
}

bool GprPool::is_callee_saved(const Xbyak::Reg64& reg) {
    return reg == rbx || reg == rbp || reg == r12 || reg == r13 || reg == r14 || reg == r15;
}

bool GprPool::rbp_taken() const {
    const auto regs = registers_taken();
    return std::find(regs.begin(), regs.end(), rbp) != regs.end();
}

std::string GprPool::summary() const {
    std::ostringstream out;
    const auto saved = callee_saved_taken();
    out << "gprs:" << registers_taken().size() << " callee-saved:" << saved.size();
    if (!saved.empty()) {
        out << " (";
        for (size_t i = 0; i < saved.size(); ++i) out << (i ? "," : "") << saved[i].toString();
        out << ')';
    }
    out << " spilled:" << spill_slots_;
    return out.str();
}

}  // namespace benchfp::jit
