#pragma once
// Base of every kernel. The frame policy decides the prologue and epilogue;
// kernels emit only their body (asmjit's FuncFrame idea: the frame is data,
// separate from the code that emits the body).
//
// Life of a kernel: the derived constructor takes its registers from gprs();
// build() then emits prologue (saving the callee-saved registers handed out),
// body, epilogue and data, makes the code read+execute (W^X: never writable and
// executable at once), records where the code is (layout()) and, unless turned
// off, verifies every path of the emitted code (verify(): a kernel that breaks
// its frame policy's rules never gets built).
#include "jit/code_regions.hpp"
#include "jit/frame_policy.hpp"
#include "jit/gpr_pool.hpp"
#include "jit/isa.hpp"
#include "jit/verifier.hpp"

#include <xbyak/xbyak.h>

#include <optional>
#include <string>
#include <vector>

namespace benchfp::jit {

// While alive, every kernel built on this thread starts `bytes` into its code
// buffer, behind int3 filler: the same instructions at another address and
// another alignment within cache lines and fetch blocks. Perf mode builds every
// timed kernel at several such placements, and its A/A control times copies
// against the original, which shows the noise floor that code placement alone
// puts on a ratio. Restores the previous value.
class ScopedEntryPadding {
public:
    explicit ScopedEntryPadding(size_t bytes);
    ~ScopedEntryPadding();
    ScopedEntryPadding(const ScopedEntryPadding&) = delete;
    ScopedEntryPadding& operator=(const ScopedEntryPadding&) = delete;

private:
    size_t previous_;
};

// Every kernel has this signature: one pointer to its argument block.
using KernelFn = void (*)(const void* args);

class Generator : public Xbyak::CodeGenerator {
public:
    Generator(std::string name, Isa isa, FramePolicy policy);
    ~Generator() override;
    Generator(const Generator&) = delete;
    Generator& operator=(const Generator&) = delete;

    void build();
    KernelFn entry() const;

    const std::string& name() const { return name_; }
    Isa isa() const { return isa_; }
    FramePolicy policy() const { return policy_; }
    const GprPool& gprs() const { return pool_; }
    // Where the code is and where the frame policy holds (offsets from begin).
    const CodeRegionInfo& layout() const { return layout_; }
    // Where each loop_head() bound its label (offsets from begin), in order.
    const std::vector<size_t>& loop_heads() const { return loop_heads_; }
    // What the static frame verifier found (jit/verifier.hpp); null when
    // verification was off (set_verify_on_build(false), --no-verify) at build().
    const Verification* verification() const { return verification_ ? &*verification_ : nullptr; }

protected:
    virtual void generate_body() = 0;
    virtual void generate_data() {}  // constants and tables, after the epilogue

    // The kernel calls this once its arguments are in their registers. Until then
    // rbp still holds the caller's frame under every policy, so the prologue
    // window, where a sample's chain is one frame short by nature, ends here.
    // Under clobber the first value the pool hands out is rbp: it must hold
    // kernel data by this point, or samples right after it still see a frame.
    void setup_done();

    // Binds a label a backward jump returns to, at a 64-byte boundary (NOPs
    // before it run once per loop entry). The loop's code then sits at the same
    // offsets within its cache lines (the op cache's 64-byte windows) under
    // every policy and at any entry padding: a prologue a few bytes longer does
    // not move the loop, so a policy's measured cost is the policy's, not a
    // placement's (unaligned, preserve and clobber, one body, measured 1.014
    // apart on reorder nchw2nhwc avx2, and the A/A control 0.992).
    void loop_head(Xbyak::Label& head);

    GprPool& pool() { return pool_; }
    // Writes `from` back to a value (a no-op when it is that register).
    void store(const GprValue& value, const Xbyak::Reg64& from);
    const Xbyak::Reg64 abi_param = Xbyak::util::rdi;

private:
    void emit_prologue();
    void emit_epilogue();

    std::string name_;
    Isa isa_;
    FramePolicy policy_;
    GprPool pool_;
    CodeRegionInfo layout_;
    bool setup_marked_ = false;
    size_t padding_ = 0;  // filler bytes before the entry (ScopedEntryPadding)
    std::vector<size_t> loop_heads_;
    std::optional<Verification> verification_;
};

}  // namespace benchfp::jit
