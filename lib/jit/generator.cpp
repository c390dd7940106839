#include "jit/generator.hpp"

#include <atomic>
#include <stdexcept>
#include <string>

namespace benchfp::jit {

using namespace Xbyak::util;

namespace {
constexpr size_t max_code_size = 64 * 1024;
std::atomic<CodeObserver> code_observer{nullptr};
thread_local size_t entry_padding = 0;
}

ScopedEntryPadding::ScopedEntryPadding(size_t bytes) : previous_(entry_padding) {
    if (bytes >= max_code_size / 2) throw std::invalid_argument("entry padding of " + std::to_string(bytes) + " bytes");
    entry_padding = bytes;
}

ScopedEntryPadding::~ScopedEntryPadding() { entry_padding = previous_; }

Generator::Generator(std::string name, Isa isa, FramePolicy policy)
    : Xbyak::CodeGenerator(max_code_size, Xbyak::DontSetProtectRWE),  // RW while emitting, RX after
      name_(std::move(name)), isa_(isa), policy_(policy), pool_(policy) {}

Generator::~Generator() = default;

void Generator::emit_prologue() {
    if (policy_ == FramePolicy::frame) {
        push(rbp);
        mov(rbp, rsp);
    }
    for (const Xbyak::Reg64& reg : pool_.callee_saved_taken()) push(reg);
    if (pool_.spill_bytes()) sub(rsp, static_cast<uint32_t>(pool_.spill_bytes()));
}

void Generator::emit_epilogue() {
    layout_.epilogue_begin = getSize() - padding_;
    if (isa_ >= Isa::avx2) vzeroupper();  // no AVX-SSE transition penalty in the caller
    if (pool_.spill_bytes()) add(rsp, static_cast<uint32_t>(pool_.spill_bytes()));
    const auto saved = pool_.callee_saved_taken();
    for (auto it = saved.rbegin(); it != saved.rend(); ++it) pop(*it);
    if (policy_ == FramePolicy::frame) pop(rbp);
    ret();
}

void Generator::store(const GprValue& value, const Xbyak::Reg64& from) {
    if (value.spilled() || value.reg() != from) mov(value.operand(), from);
}

void Generator::loop_head(Xbyak::Label& head) {
    align(64);
    L(head);
    loop_heads_.push_back(getSize() - padding_);
#ifdef BENCHFP_INJECT_FRAME_COST
    // The gate's end-to-end check only (-DBENCHFP_INJECT_FRAME_COST=N): a frame
    // kernel that pays for its policy at every loop iteration, N dependent
    // instructions that leave every register and flag as they were (lea r, [r]
    // keeps r; rax: caller-saved, so no policy or ABI check minds it).
    if (policy_ == FramePolicy::frame)
        for (int i = 0; i < BENCHFP_INJECT_FRAME_COST; ++i) lea(rax, ptr[rax]);
#endif
}

void Generator::setup_done() {
    layout_.prologue_end = getSize() - padding_;
    setup_marked_ = true;
#ifdef BENCHFP_INJECT_RBP_WRITE
    // The gate's end-to-end check only (-DBENCHFP_INJECT_RBP_WRITE=ON): a frame
    // kernel whose body overwrites its frame pointer, as a careless edit would.
    if (policy_ == FramePolicy::frame) xor_(Xbyak::util::ebp, Xbyak::util::ebp);
#endif
}

void Generator::build() {
    if (layout_.begin) throw std::logic_error("kernel " + name_ + " built twice");
    if (policy_ != FramePolicy::clobber && pool_.rbp_taken())
        throw std::logic_error("kernel " + name_ + ": rbp handed out under " + to_string(policy_));
    padding_ = entry_padding;
    for (size_t i = 0; i < padding_; ++i) db(0xCC);  // int3: never executed, traps if it were
    emit_prologue();
    pool_.seal();  // the prologue's frame is made: no spill or scratch after it
    generate_body();
    if (!setup_marked_) throw std::logic_error("kernel " + name_ + " never called setup_done()");
    emit_epilogue();
    generate_data();
    ready();             // all labels resolved
    setProtectModeRE();  // W^X: the pages go from RW to RX, never RWX
    layout_.name = name_;
    layout_.begin = reinterpret_cast<uintptr_t>(getCode()) + padding_;
    layout_.size = getSize() - padding_;
    if (verify_on_build()) {
        verification_ = verify(layout_, policy_);
        if (!verification_->passed()) throw VerifyError(verification_->failure);
    }
    // Announced only once verified: a profiler never names code that failed its checks.
    if (auto observer = code_observer.load(std::memory_order_acquire)) observer(layout_);
}

void set_code_observer(CodeObserver observer) { code_observer.store(observer, std::memory_order_release); }

KernelFn Generator::entry() const {
    if (!layout_.begin) throw std::logic_error("kernel " + name_ + " called before build()");
    return reinterpret_cast<KernelFn>(layout_.begin);
}

}  // namespace benchfp::jit
