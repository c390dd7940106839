#pragma once
// Generator for kernels written once over a vector register type: Xmm (sse41),
// Ymm (avx2) or Zmm (avx512). The uni_* operations emit the form each ISA has
// (two-operand SSE with a copy, three-operand VEX/EVEX, FMA or mul+add), named
// constants live in the code's data section, and tails are handled with a mask
// (avx2, avx512) or one element at a time (sse41).
#include "jit/generator.hpp"

#include <memory>

#include <cstdint>
#include <functional>
#include <map>
#include <type_traits>
#include <vector>

namespace benchfp::jit {

template <typename Vmm>
class VectorGenerator : public Generator {
public:
    static constexpr bool is_sse = std::is_same_v<Vmm, Xbyak::Xmm>;
    static constexpr bool is_avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
    static constexpr int width = is_sse ? 4 : is_avx512 ? 16 : 8;  // floats per vector
    static constexpr int vector_bytes = width * 4;
    static constexpr int vreg_count = is_avx512 ? 32 : 16;

    static constexpr Isa isa_of() { return is_sse ? Isa::sse41 : is_avx512 ? Isa::avx512 : Isa::avx2; }
    // A kernel's code region name, "<kernel>_<isa>_<policy>" (gemm_avx512_frame):
    // what unwind chains and --mode=list show.
    static std::string kernel_name(const std::string& kernel, FramePolicy policy) {
        return kernel + "_" + to_string(isa_of()) + "_" + to_string(policy);
    }

protected:
    VectorGenerator(const std::string& name, FramePolicy policy) : Generator(name, isa_of(), policy) {}

    // A 64-byte constant slot (every lane = value), emitted once per value.
    Xbyak::Address cst(float value);
    Xbyak::Address cst_bits(uint32_t bits);
    void generate_data() override;

    // d = a op b. For SSE, d may be a (or b for commutative ops).
    void uni_mov(const Vmm& d, const Vmm& a);
    void uni_add(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_sub(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_mul(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_div(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_max(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_min(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_xor(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_paddd(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_psubd(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_pslld(const Vmm& d, const Vmm& a, int bits);
    void uni_psrad(const Vmm& d, const Vmm& a, int bits);
    void uni_cvtps2dq(const Vmm& d, const Vmm& a);
    void uni_round_nearest(const Vmm& d, const Vmm& a);
    void uni_zero(const Vmm& d);
    // Zero the lanes of every target where `a` < bound (a NaN lane is kept), by
    // one mask taken before any target changes, so `a` may be a target. `mask`:
    // scratch (AVX-512 masks with k2 instead).
    void uni_zero_where_below(const std::vector<Vmm>& targets, const Vmm& a, const Xbyak::Operand& bound,
                              const Vmm& mask);
    // acc += a * b; acc -= a * b (SSE: through tmp, two roundings).
    void uni_fmadd231(const Vmm& acc, const Vmm& a, const Xbyak::Operand& b, const Vmm& tmp);
    void uni_fnmadd231(const Vmm& acc, const Vmm& a, const Xbyak::Operand& b, const Vmm& tmp);
    // d = d * a + b, a Horner step (SSE: mul then add, two roundings).
    void uni_fmadd213(const Vmm& d, const Vmm& a, const Xbyak::Operand& b);
    void uni_load(const Vmm& d, const Xbyak::Address& src);
    void uni_store(const Xbyak::Address& dst, const Vmm& v);
    void uni_broadcast(const Vmm& d, const Xbyak::Address& scalar);

    // d = s[0] in every lane.
    void broadcast_lane0(const Vmm& d, const Vmm& s);
    // [dst] = lane 0 of v.
    void store_lane0(const Xbyak::Address& dst, const Vmm& v);

    // Reduces every lane of v into lane 0 with add or max (tmp is clobbered).
    enum class Reduce { add, max };
    void horizontal(Reduce op, const Vmm& v, const Vmm& tmp);

    // Partial vectors: prepare_tail(count, mask_reg) once, then load_tail/store_tail.
    // On sse41 the tail is one element; elsewhere `count` lanes are active (k1 on
    // avx512, mask_reg on avx2). `fill`, when given, fills the inactive lanes.
    void prepare_tail(const Xbyak::Reg64& count, const Vmm& mask_reg);
    void load_tail(const Vmm& d, const Xbyak::Address& src, const Vmm* fill = nullptr);
    void store_tail(const Xbyak::Address& dst, const Vmm& v);

    // Emits loop(unroll), then loop(1), and before them the per-call choice:
    // to_one_vector(label) emits the tests that jump to label for loop(1)
    // (stream_floats.hpp says why a kernel has both).
    void unrolled_or_one_vector(int unroll, const std::function<void(Xbyak::Label& one_vector)>& to_one_vector,
                                const std::function<void(int vectors)>& loop);

    // Emits the loop every streaming kernel has over `len` floats: `unroll`
    // vectors per pass, then single vectors, then the tail. `pointers` advance by
    // the bytes consumed; body(n, tail) emits the work for n vectors at the
    // current pointers (tail: one partial vector, through load_tail/store_tail).
    // len is consumed (ends at 0 or below).
    void stream_loop(const Xbyak::Reg64& len, const std::vector<Xbyak::Reg64>& pointers, int unroll,
                     const std::function<void(int n, bool tail)>& body, const Vmm& mask_reg);

private:
    // add r, imm in an encoding of the same length for every register. Xbyak
    // gives rax a form of its own for an imm32 (REX.W 05 id, a byte shorter
    // than REX.W 81 /0 id), so a cursor in rax under clobber, whose pool
    // hands registers out one place later than preserve's, made the loop a
    // byte shorter than under the other policies, and moved what follows in
    // its cache lines (tests/jit_policy_layout_test.cpp). lea has one length
    // too, but reduce sum avx512 4096x4096 read 0.91-1.06x oneDNN with it and
    // 0.98-1.13x with add, 5 processes of each in turn on the Zen 4 guest.
    void add_any_register_alike(const Xbyak::Reg64& r, int32_t imm);

    // SSE: d = a; d op= b (or d op= a when d is b and op commutes). VEX/EVEX: d = a op b.
    template <typename SseOp, typename AvxOp>
    void binary(SseOp sse, AvxOp avx, const Vmm& d, const Vmm& a, const Xbyak::Operand& b, bool commutative);

    std::map<uint32_t, Xbyak::Label> constants_;
    Xbyak::Label lane_indices_;
    bool uses_lane_indices_ = false;
    Vmm tail_mask_;
};

extern template class VectorGenerator<Xbyak::Xmm>;
extern template class VectorGenerator<Xbyak::Ymm>;
extern template class VectorGenerator<Xbyak::Zmm>;

// Builds a kernel class template for the vector type of `isa`.
template <template <typename> class Kernel, typename... Args>
std::unique_ptr<Generator> make_for_isa(Isa isa, Args&&... args) {
    std::unique_ptr<Generator> kernel;
    switch (isa) {
    case Isa::sse41: kernel = std::make_unique<Kernel<Xbyak::Xmm>>(std::forward<Args>(args)...); break;
    case Isa::avx2: kernel = std::make_unique<Kernel<Xbyak::Ymm>>(std::forward<Args>(args)...); break;
    case Isa::avx512: kernel = std::make_unique<Kernel<Xbyak::Zmm>>(std::forward<Args>(args)...); break;
    }
    kernel->build();
    return kernel;
}

}  // namespace benchfp::jit
