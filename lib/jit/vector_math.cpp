#include "jit/vector_math.hpp"

#include <iterator>

namespace benchfp::jit {

namespace {
constexpr float log2e = 1.44269504088896341f;
constexpr float ln2_hi = 0.693359375f;      // 0x3f318000: 9 significant bits, so k * ln2_hi is exact
constexpr float ln2_lo = -2.12194440e-4f;   // ln2 - ln2_hi
constexpr float exp_clamp_lo = -104.0f;     // exp rounds to 0 below -103.97
// expm1 is -1 in float from -17.4 down; above -87.3 (k >= -126) 2^k is a
// normal float, so one scale builds it.
constexpr float expm1_clamp_lo = -87.0f;
// h(r) = (e^r - 1) / r on |r| <= ln2/2, degree 5, highest first: a Chebyshev fit
// (scripts/exp_polynomial.py) whose float coefficients were then moved by a few
// ulps to the smallest largest error. Largest relative error over 4001 points,
// evaluated in double against mpmath: h 1.81e-8, 1 + r*h(r) 6.6e-9; float's half
// ulp is 5.96e-8. The degree-7 Taylor polynomial of e^r it replaces: 1.76e-8 and
// 7.3e-9, for 14 arithmetic instructions where this takes 7 with FMA (12 without).
// exp_times_2_64's clamp: softmax's x - m is above 0 only as NaN (a NaN input,
// inf - inf), which min() turns into the clamp. At 44.4, k = 64 and the scale
// 2^(k + 64) has exponent field 255: +inf, so the row's sum is inf and such an
// output NaN, as with plain exp (whose clamp at 89 overflows to inf).
constexpr float exp_times_2_64_clamp_hi = 44.4f;
constexpr float h_coefficients[] = {0x1.6d42c2p-10f, 0x1.123db8p-7f, 0x1.5554c2p-5f, 0x1.55549p-3f, 0.5f, 1.0f};
}  // namespace

template <typename Vmm>
void VectorMath<Vmm>::exp_core(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u,
                               float clamp_hi, Tail tail) {
    const size_t n = x.size();
    const float clamp_lo = tail == Tail::expm1 ? expm1_clamp_lo : exp_clamp_lo;
    for (size_t i = 0; i < n; ++i) this->uni_min(x[i], x[i], this->cst(clamp_hi));
    for (size_t i = 0; i < n; ++i) this->uni_max(x[i], x[i], this->cst(clamp_lo));
    for (size_t i = 0; i < n; ++i) this->uni_mul(t[i], x[i], this->cst(log2e));
    for (size_t i = 0; i < n; ++i) this->uni_round_nearest(t[i], t[i]);                        // k
    for (size_t i = 0; i < n; ++i) this->uni_fnmadd231(x[i], t[i], this->cst(ln2_hi), u[i]);
    for (size_t i = 0; i < n; ++i) this->uni_fnmadd231(x[i], t[i], this->cst(ln2_lo), u[i]);  // r
    // Horner: u = h(r), then e^r = 1 + r*h(r) (exp) or r*h(r) (expm1).
    for (size_t i = 0; i < n; ++i) this->uni_mul(u[i], x[i], this->cst(h_coefficients[0]));
    for (size_t i = 0; i < n; ++i) this->uni_add(u[i], u[i], this->cst(h_coefficients[1]));
    for (size_t c = 2; c < std::size(h_coefficients); ++c)
        for (size_t i = 0; i < n; ++i) this->uni_fmadd213(u[i], x[i], this->cst(h_coefficients[c]));
    if (tail != Tail::expm1) {
        for (size_t i = 0; i < n; ++i) this->uni_fmadd213(u[i], x[i], this->cst(1.0f));
        if (tail == Tail::exp) {
            scale_by_exp2(x, u, t);
            return;
        }
        // k + 64 is in [-86, 64] for x in [-104, 0]: one normal scale (+inf at the
        // clamp above 0).
        exp2_normal(t, 64);
        for (size_t i = 0; i < n; ++i) this->uni_mul(x[i], u[i], t[i]);
        return;
    }
    // expm1 = 2^k * (r*h) + (2^k - 1): 2^k - 1 is exact for small k, so there is
    // no cancellation near 0. k >= -126 here: 2^k is one normal float.
    for (size_t i = 0; i < n; ++i) this->uni_mul(u[i], u[i], x[i]);
    exp2_normal(t, 0);
    for (size_t i = 0; i < n; ++i) this->uni_mul(u[i], u[i], t[i]);
    for (size_t i = 0; i < n; ++i) this->uni_sub(x[i], t[i], this->cst(1.0f));
    for (size_t i = 0; i < n; ++i) this->uni_add(x[i], x[i], u[i]);
}

template <typename Vmm>
void VectorMath<Vmm>::exp2_normal(const std::vector<Vmm>& k, int extra) {
    for (const Vmm& v : k) this->uni_cvtps2dq(v, v);
    exp2_from_int(k, extra);
}

template <typename Vmm>
void VectorMath<Vmm>::exp2_from_int(const std::vector<Vmm>& k, int extra) {
    for (const Vmm& v : k) this->uni_paddd(v, v, this->cst_bits(127 + extra));
    for (const Vmm& v : k) this->uni_pslld(v, v, 23);
}

template <typename Vmm>
void VectorMath<Vmm>::scale_by_exp2(const std::vector<Vmm>& x, const std::vector<Vmm>& u, const std::vector<Vmm>& k) {
    const size_t n = x.size();
    if constexpr (Base::is_avx512) {
        // vscalefps rounds once, subnormal results included, and overflows to inf.
        for (size_t i = 0; i < n; ++i) this->vscalefps(x[i], u[i], k[i]);
        return;
    }
    // k in [-151, 129] leaves the exponent range of one float, so 2^k is applied
    // as 2^(k/2) (in x) times 2^(k - k/2) (in k): subnormal results round once.
    for (size_t i = 0; i < n; ++i) this->uni_cvtps2dq(k[i], k[i]);
    for (size_t i = 0; i < n; ++i) this->uni_psrad(x[i], k[i], 1);
    for (size_t i = 0; i < n; ++i) this->uni_psubd(k[i], k[i], x[i]);
    exp2_from_int(x, 0);
    exp2_from_int(k, 0);
    for (size_t i = 0; i < n; ++i) this->uni_mul(u[i], u[i], x[i]);
    for (size_t i = 0; i < n; ++i) this->uni_mul(x[i], u[i], k[i]);
}

template <typename Vmm>
void VectorMath<Vmm>::exp(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u,
                          float clamp_hi) {
    exp_core(x, t, u, clamp_hi, Tail::exp);
}

template <typename Vmm>
void VectorMath<Vmm>::exp_times_2_64(const std::vector<Vmm>& x, const std::vector<Vmm>& t,
                                     const std::vector<Vmm>& u) {
    exp_core(x, t, u, exp_times_2_64_clamp_hi, Tail::exp_times_2_64);
}

template <typename Vmm>
void VectorMath<Vmm>::expm1(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u) {
    exp_core(x, t, u, 88.0f, Tail::expm1);
}

template <typename Vmm>
void VectorMath<Vmm>::tanh(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u) {
    for (const Vmm& v : x) this->uni_add(v, v, v);
    expm1(x, t, u);  // clamps 2x to 88: tanh is 1 in float from x = 9.01 on
    for (size_t i = 0; i < x.size(); ++i) this->uni_add(t[i], x[i], this->cst(2.0f));
    for (size_t i = 0; i < x.size(); ++i) this->uni_div(x[i], x[i], t[i]);
}

template <typename Vmm>
void VectorMath<Vmm>::gelu_tanh(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u,
                                const std::vector<Vmm>& s) {
    constexpr float two_sqrt_2_over_pi = 1.5957691216057308f;
    const size_t n = x.size();
    for (size_t i = 0; i < n; ++i) this->uni_mov(s[i], x[i]);
    for (size_t i = 0; i < n; ++i) this->uni_mul(t[i], x[i], x[i]);
    for (size_t i = 0; i < n; ++i) this->uni_mul(t[i], t[i], this->cst(0.044715f * two_sqrt_2_over_pi));
    for (size_t i = 0; i < n; ++i) this->uni_add(t[i], t[i], this->cst(two_sqrt_2_over_pi));
    for (size_t i = 0; i < n; ++i) this->uni_mul(x[i], x[i], t[i]);  // 2u
    // Below 2u = -104 (exp's own clamp) the result x * e^2u is under |x| * 7e-46:
    // 0 in float but for a few subnormal steps, so those lanes are zeroed (x and
    // 2u both: E = 1, result 0) instead of computed through subnormal
    // intermediates, which cost a microcode assist per instruction on some CPUs
    // (on the AMD EPYC Zen 4 guest, gelu_tanh on [-20, 20] took 53 ms at sse41
    // and 20 ms on [-4, 4]). The largest error stays the clamp's, |x| * e^-104.
    // Zeroed lanes give +0 where the exact result is a tiny negative (-0 in
    // float), and x = -inf gives 0, gelu's limit there (it gave NaN); a NaN
    // lane is kept (NLT is true for unordered) and stays NaN.
    for (size_t i = 0; i < n; ++i) this->uni_zero_where_below({x[i], s[i]}, x[i], this->cst(exp_clamp_lo), t[i]);
    exp(x, t, u, 88.0f);  // E; at 88, E / (E + 1) is 1 in float, and E + 1 stays finite
    for (size_t i = 0; i < n; ++i) this->uni_add(t[i], x[i], this->cst(1.0f));
    for (size_t i = 0; i < n; ++i) this->uni_div(x[i], x[i], t[i]);
    for (size_t i = 0; i < n; ++i) this->uni_mul(x[i], x[i], s[i]);
}

template class VectorMath<Xbyak::Xmm>;
template class VectorMath<Xbyak::Ymm>;
template class VectorMath<Xbyak::Zmm>;

}  // namespace benchfp::jit
