#include "jit/kernels/eltwise.hpp"

#include "jit/enum_names.hpp"

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <vector>

namespace benchfp::jit {

using namespace Xbyak::util;

const char* to_string(EltwiseAlg alg) {
    switch (alg) {
    case EltwiseAlg::relu: return "relu";
    case EltwiseAlg::exp: return "exp";
    }
    return "?";
}

std::optional<EltwiseAlg> parse_eltwise_alg(std::string_view name) { return parse_name(name, all_eltwise_algs); }
std::string known_eltwise_algs() { return join_names(all_eltwise_algs); }

float eltwise_reference(EltwiseAlg alg, float x) {
    switch (alg) {
    case EltwiseAlg::relu: return x > 0.0f ? x : 0.0f;
    case EltwiseAlg::exp: return std::exp(x);
    }
    return std::numeric_limits<float>::quiet_NaN();
}

Tolerance eltwise_tolerance(EltwiseAlg alg) {
    switch (alg) {
    case EltwiseAlg::relu: return {0.0, 0.0};
    case EltwiseAlg::exp: return {4.8e-7, 2.0 * std::numeric_limits<float>::denorm_min()};
    }
    return {0.0, 0.0};
}

bool eltwise_supports(Isa isa) { return isa == Isa::avx2 || isa == Isa::avx512; }

namespace {

// exp(x) = 2^n * e^r with n = round(x / ln2), r = x - n*ln2 (Cody-Waite: ln2 split
// in a short high part, exact when multiplied by n, and the rest). 2^n is applied
// as 2^(n/2) * 2^(n - n/2) so that n in [-150, 128] never leaves the exponent
// range: subnormal results round once, large ones overflow to inf like expf.
enum Constant : int {
    c_clamp_hi,  // 89: exp overflows to inf from 88.73 on; keeps n <= 129
    c_clamp_lo,  // -104: exp rounds to 0 below -103.97; keeps n >= -151
    c_log2e,
    c_ln2_hi,
    c_ln2_lo,
    c_poly_7, c_poly_6, c_poly_5, c_poly_4, c_poly_3, c_poly_2, c_poly_1, c_poly_0,  // 1/k!
    c_exponent_bias,  // int32 127
    constant_count,
};

std::vector<uint32_t> constant_bits() {
    std::vector<uint32_t> bits(constant_count);
    auto f = [](float v) { return std::bit_cast<uint32_t>(v); };
    bits[c_clamp_hi] = f(89.0f);
    bits[c_clamp_lo] = f(-104.0f);
    bits[c_log2e] = f(1.44269504088896341f);
    bits[c_ln2_hi] = f(0.693359375f);          // 0x3f318000: 9 significant bits
    bits[c_ln2_lo] = f(-2.12194440e-4f);       // ln2 - ln2_hi
    double factorial = 1.0;
    for (int k = 0; k <= 7; ++k) {
        if (k > 0) factorial *= k;
        bits[c_poly_0 - k] = f(static_cast<float>(1.0 / factorial));
    }
    bits[c_exponent_bias] = 127;
    return bits;
}

template <typename Vmm>
class EltwiseKernel final : public Generator {
    static constexpr bool is_avx512 = std::is_same_v<Vmm, Xbyak::Zmm>;
    static constexpr int width = is_avx512 ? 16 : 8;  // floats per vector
    static constexpr int unroll = 4;
    static constexpr int slot_bytes = 64;              // one constant, as a full zmm

public:
    EltwiseKernel(EltwiseAlg alg, Isa isa, FramePolicy policy)
        : Generator(std::string("eltwise_") + to_string(alg) + "_" + to_string(isa) + "_" + to_string(policy), isa,
                    policy),
          alg_(alg),
          reg_src_(pool().take("src")),
          reg_dst_(pool().take("dst")),
          reg_len_(pool().take("len")),
          reg_mask_(pool().take("tail mask address")) {}

private:
    // Vector registers: x holds the data, t and u are scratch; 4 of each.
    static Vmm x(int i) { return Vmm(i); }
    static Vmm t(int i) { return Vmm(unroll + i); }
    static Vmm u(int i) { return Vmm(2 * unroll + i); }
    static Vmm zero() { return Vmm(3 * unroll); }
    static Vmm tail_mask() { return Vmm(3 * unroll + 1); }

    Xbyak::Address constant(Constant c) { return ptr[rip + constants_ + c * slot_bytes]; }

    void round_nearest(const Vmm& v) {
        if constexpr (is_avx512)
            vrndscaleps(v, v, 0);  // imm 0: round to nearest even, scale 2^0
        else
            vroundps(v, v, 0);
    }

    void compute(int n) {
        if (alg_ == EltwiseAlg::relu) {
            for (int i = 0; i < n; ++i) vmaxps(x(i), x(i), zero());
            return;
        }
        // Each step is emitted for all n vectors before the next: n independent chains.
        for (int i = 0; i < n; ++i) vminps(x(i), x(i), constant(c_clamp_hi));
        for (int i = 0; i < n; ++i) vmaxps(x(i), x(i), constant(c_clamp_lo));
        for (int i = 0; i < n; ++i) vmulps(t(i), x(i), constant(c_log2e));
        for (int i = 0; i < n; ++i) round_nearest(t(i));                         // n
        for (int i = 0; i < n; ++i) vfnmadd231ps(x(i), t(i), constant(c_ln2_hi));
        for (int i = 0; i < n; ++i) vfnmadd231ps(x(i), t(i), constant(c_ln2_lo));  // r
        for (int i = 0; i < n; ++i) vmovups(u(i), constant(c_poly_7));
        for (int c = c_poly_6; c <= c_poly_0; ++c)
            for (int i = 0; i < n; ++i) vfmadd213ps(u(i), x(i), constant(static_cast<Constant>(c)));  // e^r
        for (int i = 0; i < n; ++i) vcvtps2dq(t(i), t(i));
        for (int i = 0; i < n; ++i) vpsrad(x(i), t(i), 1);   // n/2
        for (int i = 0; i < n; ++i) vpsubd(t(i), t(i), x(i));  // n - n/2
        for (int i = 0; i < n; ++i) {
            for (const Vmm& half : {x(i), t(i)}) {  // 2^half as bits: (half + 127) << 23
                vpaddd(half, half, constant(c_exponent_bias));
                vpslld(half, half, 23);
            }
        }
        for (int i = 0; i < n; ++i) vmulps(u(i), u(i), x(i));
        for (int i = 0; i < n; ++i) vmulps(x(i), u(i), t(i));
    }

    // Processes `count` full vectors per pass while at least that many elements remain.
    void full_vector_loop(int count) {
        Xbyak::Label loop, done;
        L(loop);
        cmp(reg_len_, count * width);
        jb(done, T_NEAR);
        for (int i = 0; i < count; ++i) vmovups(x(i), ptr[reg_src_ + i * width * 4]);
        compute(count);
        for (int i = 0; i < count; ++i) vmovups(ptr[reg_dst_ + i * width * 4], x(i));
        add(reg_src_, count * width * 4);
        add(reg_dst_, count * width * 4);
        sub(reg_len_, count * width);
        jmp(loop, T_NEAR);
        L(done);
    }

    // The last len % width elements, through a mask loaded from the table at
    // mask_middle - len*4: len all-ones lanes, then zero lanes.
    void tail() {
        Xbyak::Label done;
        test(reg_len_, reg_len_);
        jz(done, T_NEAR);
        lea(reg_mask_, ptr[rip + mask_middle_]);
        neg(reg_len_);
        lea(reg_mask_, ptr[reg_mask_ + reg_len_ * 4]);
        vmovups(tail_mask(), ptr[reg_mask_]);
        if constexpr (is_avx512) {
            vpmovd2m(k1, tail_mask());
            vmovups(x(0) | k1 | T_z, ptr[reg_src_]);
            compute(1);
            vmovups(ptr[reg_dst_] | k1, x(0));
        } else {
            vmaskmovps(x(0), tail_mask(), ptr[reg_src_]);
            compute(1);
            vmaskmovps(ptr[reg_dst_], tail_mask(), x(0));
        }
        L(done);
    }

    void generate_body() override {
        mov(reg_src_, ptr[abi_param + offsetof(EltwiseArgs, src)]);
        mov(reg_dst_, ptr[abi_param + offsetof(EltwiseArgs, dst)]);
        mov(reg_len_, ptr[abi_param + offsetof(EltwiseArgs, len)]);
        setup_done();
        if (alg_ == EltwiseAlg::relu) vxorps(zero(), zero(), zero());
        full_vector_loop(unroll);
        full_vector_loop(1);
        tail();
    }

    void generate_data() override {
        align(slot_bytes);
        L(constants_);
        for (uint32_t bits : constant_bits())
            for (int lane = 0; lane < slot_bytes / 4; ++lane) dd(bits);
        for (int lane = 0; lane < width; ++lane) dd(0xffffffffu);
        L(mask_middle_);
        for (int lane = 0; lane < width; ++lane) dd(0);
    }

    EltwiseAlg alg_;
    Xbyak::Reg64 reg_src_, reg_dst_, reg_len_, reg_mask_;
    Xbyak::Label constants_, mask_middle_;
};

}  // namespace

std::unique_ptr<Generator> make_eltwise_kernel(EltwiseAlg alg, Isa isa, FramePolicy policy) {
    std::unique_ptr<Generator> kernel;
    switch (isa) {
    case Isa::avx512: kernel = std::make_unique<EltwiseKernel<Xbyak::Zmm>>(alg, isa, policy); break;
    case Isa::avx2: kernel = std::make_unique<EltwiseKernel<Xbyak::Ymm>>(alg, isa, policy); break;
    default: throw std::invalid_argument(std::string("eltwise has no ") + to_string(isa) + " implementation");
    }
    kernel->build();
    return kernel;
}

}  // namespace benchfp::jit
