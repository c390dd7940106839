#include "jit/vector_generator.hpp"

#include <bit>
#include <stdexcept>

namespace benchfp::jit {

using namespace Xbyak::util;

namespace {
constexpr int constant_slot_bytes = 64;  // a full zmm: every ISA reads a whole vector
}

template <typename Vmm>
Xbyak::Address VectorGenerator<Vmm>::cst(float value) {
    return cst_bits(std::bit_cast<uint32_t>(value));
}

template <typename Vmm>
Xbyak::Address VectorGenerator<Vmm>::cst_bits(uint32_t bits) {
    return ptr[rip + constants_[bits]];
}

template <typename Vmm>
void VectorGenerator<Vmm>::generate_data() {
    if (uses_lane_indices_) {
        align(constant_slot_bytes);
        L(lane_indices_);
        for (int lane = 0; lane < 16; ++lane) dd(lane);
    }
    for (auto& [bits, label] : constants_) {
        align(constant_slot_bytes);  // SSE memory operands must be 16-byte aligned
        L(label);
        for (int lane = 0; lane < constant_slot_bytes / 4; ++lane) dd(bits);
    }
}

template <typename Vmm>
template <typename SseOp, typename AvxOp>
void VectorGenerator<Vmm>::binary(SseOp sse, AvxOp avx, const Vmm& d, const Vmm& a, const Xbyak::Operand& b,
                                  bool commutative) {
    if constexpr (!is_sse) {
        avx(d, a, b);
    } else {
        if (b.isREG() && b.getIdx() == d.getIdx() && d.getIdx() != a.getIdx()) {
            if (!commutative) throw std::logic_error("SSE form of a non-commutative op with d == b");
            sse(d, a);
            return;
        }
        if (d.getIdx() != a.getIdx()) movaps(d, a);
        sse(d, b);
    }
}

#define BENCHFP_UNI_BINARY(name, sse_op, avx_op, commutative)                                        \
    template <typename Vmm>                                                                          \
    void VectorGenerator<Vmm>::name(const Vmm& d, const Vmm& a, const Xbyak::Operand& b) {           \
        binary([this](const Vmm& x, const Xbyak::Operand& y) { sse_op(x, y); },                      \
               [this](const Vmm& x, const Vmm& y, const Xbyak::Operand& z) { avx_op(x, y, z); }, d, a, \
               b, commutative);                                                                      \
    }
BENCHFP_UNI_BINARY(uni_add, addps, vaddps, true)
BENCHFP_UNI_BINARY(uni_sub, subps, vsubps, false)
BENCHFP_UNI_BINARY(uni_mul, mulps, vmulps, true)
BENCHFP_UNI_BINARY(uni_div, divps, vdivps, false)
BENCHFP_UNI_BINARY(uni_max, maxps, vmaxps, false)
BENCHFP_UNI_BINARY(uni_min, minps, vminps, false)
BENCHFP_UNI_BINARY(uni_paddd, paddd, vpaddd, true)
BENCHFP_UNI_BINARY(uni_psubd, psubd, vpsubd, false)
#undef BENCHFP_UNI_BINARY

template <typename Vmm>
void VectorGenerator<Vmm>::uni_xor(const Vmm& d, const Vmm& a, const Xbyak::Operand& b) {
    if constexpr (is_avx512)
        vpxord(d, a, b);  // vxorps on zmm needs avx512dq; vpxord is avx512f
    else
        binary([this](const Vmm& x, const Xbyak::Operand& y) { xorps(x, y); },
               [this](const Vmm& x, const Vmm& y, const Xbyak::Operand& z) { vxorps(x, y, z); }, d, a, b, true);
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_mov(const Vmm& d, const Vmm& a) {
    if (d.getIdx() == a.getIdx()) return;
    if constexpr (is_sse) movaps(d, a);
    else vmovaps(d, a);
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_pslld(const Vmm& d, const Vmm& a, int bits) {
    if constexpr (is_sse) {
        uni_mov(d, a);
        pslld(d, bits);
    } else {
        vpslld(d, a, bits);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_psrad(const Vmm& d, const Vmm& a, int bits) {
    if constexpr (is_sse) {
        uni_mov(d, a);
        psrad(d, bits);
    } else {
        vpsrad(d, a, bits);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_cvtps2dq(const Vmm& d, const Vmm& a) {
    if constexpr (is_sse) cvtps2dq(d, a);
    else vcvtps2dq(d, a);
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_round_nearest(const Vmm& d, const Vmm& a) {
    // imm 0: round to nearest even, whatever MXCSR says.
    if constexpr (is_sse) roundps(d, a, 0);
    else if constexpr (is_avx512) vrndscaleps(d, a, 0);
    else vroundps(d, a, 0);
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_zero(const Vmm& d) {
    uni_xor(d, d, d);
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_zero_where_below(const std::vector<Vmm>& targets, const Vmm& a,
                                                const Xbyak::Operand& bound, const Vmm& mask) {
    constexpr uint8_t not_less = 5;  // NLT_US: a >= bound, or unordered (a NaN stays)
    if constexpr (is_avx512) {
        vcmpps(k2, a, bound, not_less);  // k1 is the tail's
        for (const Vmm& t : targets) vmovaps(t | k2 | T_z, t);
    } else if constexpr (is_sse) {
        uni_mov(mask, a);
        cmpps(mask, bound, not_less);
        for (const Vmm& t : targets) andps(t, mask);
    } else {
        vcmpps(mask, a, bound, not_less);
        for (const Vmm& t : targets) vandps(t, t, mask);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_fmadd231(const Vmm& acc, const Vmm& a, const Xbyak::Operand& b, const Vmm& tmp) {
    if constexpr (is_sse) {
        uni_mul(tmp, a, b);
        addps(acc, tmp);
    } else {
        vfmadd231ps(acc, a, b);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_fnmadd231(const Vmm& acc, const Vmm& a, const Xbyak::Operand& b, const Vmm& tmp) {
    if constexpr (is_sse) {
        uni_mul(tmp, a, b);
        subps(acc, tmp);
    } else {
        vfnmadd231ps(acc, a, b);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_fmadd213(const Vmm& d, const Vmm& a, const Xbyak::Operand& b) {
    if constexpr (is_sse) {
        mulps(d, a);
        addps(d, b);
    } else {
        vfmadd213ps(d, a, b);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_load(const Vmm& d, const Xbyak::Address& src) {
    if constexpr (is_sse) movups(d, src);
    else vmovups(d, src);
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_store(const Xbyak::Address& dst, const Vmm& v) {
    if constexpr (is_sse) movups(dst, v);
    else vmovups(dst, v);
}

template <typename Vmm>
void VectorGenerator<Vmm>::uni_broadcast(const Vmm& d, const Xbyak::Address& scalar) {
    if constexpr (is_sse) {
        movss(d, scalar);
        shufps(d, d, 0);
    } else {
        vbroadcastss(d, scalar);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::broadcast_lane0(const Vmm& d, const Vmm& s) {
    if constexpr (is_sse) {
        uni_mov(d, s);
        shufps(d, d, 0);
    } else {
        vbroadcastss(d, Xbyak::Xmm(s.getIdx()));
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::store_lane0(const Xbyak::Address& dst, const Vmm& v) {
    if constexpr (is_sse) movss(dst, v);
    else vmovss(dst, Xbyak::Xmm(v.getIdx()));
}

template <typename Vmm>
void VectorGenerator<Vmm>::horizontal(Reduce op, const Vmm& v, const Vmm& tmp) {
    const Xbyak::Xmm vx(v.getIdx()), tx(tmp.getIdx());
    auto combine = [&](const Xbyak::Xmm& d, const Xbyak::Xmm& s) {
        if constexpr (is_sse) {
            if (op == Reduce::add) addps(d, s);
            else maxps(d, s);
        } else {
            if (op == Reduce::add) vaddps(d, d, s);
            else vmaxps(d, d, s);
        }
    };
    if constexpr (is_avx512) {
        vextractf32x8(Xbyak::Ymm(tmp.getIdx()), v, 1);
        if (op == Reduce::add) vaddps(Xbyak::Ymm(v.getIdx()), Xbyak::Ymm(v.getIdx()), Xbyak::Ymm(tmp.getIdx()));
        else vmaxps(Xbyak::Ymm(v.getIdx()), Xbyak::Ymm(v.getIdx()), Xbyak::Ymm(tmp.getIdx()));
    }
    if constexpr (!is_sse) {
        vextractf128(tx, Xbyak::Ymm(v.getIdx()), 1);
        combine(vx, tx);
        vmovhlps(tx, tx, vx);
        combine(vx, tx);
        vshufps(tx, vx, vx, 1);
        combine(vx, tx);
    } else {
        movhlps(tx, vx);
        combine(vx, tx);
        movaps(tx, vx);
        shufps(tx, tx, 1);
        combine(vx, tx);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::prepare_tail(const Xbyak::Reg64& count, const Vmm& mask_reg) {
    // Lane i is active when count > i: compare a broadcast count with the lane indices.
    tail_mask_ = mask_reg;
    if constexpr (is_avx512) {
        vpbroadcastd(mask_reg, count.cvt32());
        vpcmpgtd(k1, mask_reg, ptr[rip + lane_indices_]);
    } else if constexpr (!is_sse) {
        vmovd(Xbyak::Xmm(mask_reg.getIdx()), count.cvt32());
        vpbroadcastd(mask_reg, Xbyak::Xmm(mask_reg.getIdx()));
        vpcmpgtd(mask_reg, mask_reg, ptr[rip + lane_indices_]);
    }
    uses_lane_indices_ = true;
}

template <typename Vmm>
void VectorGenerator<Vmm>::load_tail(const Vmm& d, const Xbyak::Address& src, const Vmm* fill) {
    if constexpr (is_avx512) {
        if (fill) {
            vmovaps(d, *fill);
            vmovups(d | k1, src);
        } else {
            vmovups(d | k1 | T_z, src);
        }
    } else if constexpr (!is_sse) {
        vmaskmovps(d, tail_mask_, src);
        if (fill) vblendvps(d, *fill, d, tail_mask_);
    } else {
        movss(d, src);
        if (fill) blendps(d, *fill, 0b1110);
    }
}

template <typename Vmm>
void VectorGenerator<Vmm>::store_tail(const Xbyak::Address& dst, const Vmm& v) {
    if constexpr (is_avx512) vmovups(dst | k1, v);
    else if constexpr (!is_sse) vmaskmovps(dst, tail_mask_, v);
    else movss(dst, v);
}

template <typename Vmm>
void VectorGenerator<Vmm>::add_any_register_alike(const Xbyak::Reg64& r, int32_t imm) {
    if (imm >= -128 && imm <= 127) return add(r, imm);  // 83 /0 ib: one length for every register
    db(0x48 | (r.getIdx() >> 3));                         // REX.W, and REX.B for r8-r15
    db(0x81);                                             // 81 /0 id: add r/m64, imm32
    db(0xc0 | (r.getIdx() & 7));                          // ModRM: register direct, /0
    dd(static_cast<uint32_t>(imm));
}

template <typename Vmm>
void VectorGenerator<Vmm>::stream_loop(const Xbyak::Reg64& len, const std::vector<Xbyak::Reg64>& pointers, int unroll,
                                       const std::function<void(int n, bool tail)>& body, const Vmm& mask_reg) {
    auto advance = [&](int elements) {
        for (const auto& p : pointers) add_any_register_alike(p, elements * 4);
        sub(len, elements);
    };
    Xbyak::Label unrolled, single, tail, done;
    loop_head(unrolled);
    if (unroll > 1) {
        cmp(len, unroll * width);
        jl(single, T_NEAR);
        body(unroll, false);
        advance(unroll * width);
        jmp(unrolled, T_NEAR);
    }
    loop_head(single);
    cmp(len, width);
    jl(tail, T_NEAR);
    body(1, false);
    advance(width);
    jmp(single, T_NEAR);
    if constexpr (is_sse) loop_head(tail);  // a loop of single elements; elsewhere one masked pass
    else L(tail);
    cmp(len, 0);
    jle(done, T_NEAR);
    if constexpr (is_sse) {  // one element at a time
        body(1, true);
        advance(1);
        jmp(tail, T_NEAR);
    } else {
        prepare_tail(len, mask_reg);
        body(1, true);
    }
    L(done);
}

template <typename Vmm>
void VectorGenerator<Vmm>::unrolled_or_one_vector(int unroll,
                                                  const std::function<void(Xbyak::Label& one_vector)>& to_one_vector,
                                                  const std::function<void(int vectors)>& loop) {
    Xbyak::Label one_vector, done;
    to_one_vector(one_vector);
    loop(unroll);
    jmp(done, T_NEAR);
    L(one_vector);
    loop(1);
    L(done);
}

template class VectorGenerator<Xbyak::Xmm>;
template class VectorGenerator<Xbyak::Ymm>;
template class VectorGenerator<Xbyak::Zmm>;

}  // namespace benchfp::jit
