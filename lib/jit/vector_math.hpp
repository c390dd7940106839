#pragma once
// Vector math shared by the kernels (eltwise, softmax): exp, expm1, tanh and
// gelu_tanh on n vectors at once, each step emitted for all n before the next so
// the n dependency chains overlap.
//
// exp(x) = 2^k * e^r, k = round(x / ln2), r = x - k*ln2 with ln2 split in a short
// high part (exact when multiplied by k) and the rest (Cody-Waite), |r| <= ln2/2.
// e^r = 1 + r*h(r), h a degree-5 polynomial fitted on that interval (relative
// error 6.6e-9, far under float rounding; its derivation is at the coefficients).
// 2^k is applied so that subnormal results round once and large ones overflow to
// inf like expf (vscalefps on AVX-512; two halves of k elsewhere). expm1 keeps
// e^r - 1 = r*h(r) without the constant term, so it has no cancellation near 0.
#include "jit/vector_generator.hpp"

#include <vector>

namespace benchfp::jit {

template <typename Vmm>
class VectorMath : public VectorGenerator<Vmm> {
protected:
    using Base = VectorGenerator<Vmm>;
    using Base::Base;

    // Registers a function needs per vector (the value itself included).
    static constexpr int exp_registers = 3;
    static constexpr int tanh_registers = 3;
    static constexpr int gelu_registers = 4;

    // x[i] <- exp(x[i]); t, u: scratch. Inputs above clamp_hi give exp(clamp_hi).
    void exp(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u,
             float clamp_hi = 89.0f);
    // x[i] <- exp(x[i]) * 2^64 for x[i] <= 0; NaN gives +inf. Where
    // exp would be subnormal (x < -87.3) this is a normal float, so one scale
    // builds it and it keeps full precision: for softmax, whose normalisation
    // cancels the factor (its sum stays below 2^126 up to 2^62 elements).
    void exp_times_2_64(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u);
    // x[i] <- expm1(x[i]) for x <= 88.
    void expm1(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u);
    // x <- tanh(x) = e / (e + 2), e = expm1(2x): no cancellation at either end.
    void tanh(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u);
    // x <- gelu_tanh(x) = 0.5x(1 + tanh(u)) = x * E / (E + 1), E = exp(2u),
    // u = sqrt(2/pi) (x + 0.044715 x^3): no cancellation for large negative x.
    void gelu_tanh(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u,
                   const std::vector<Vmm>& s);

private:
    enum class Tail { exp, exp_times_2_64, expm1 };
    void exp_core(const std::vector<Vmm>& x, const std::vector<Vmm>& t, const std::vector<Vmm>& u, float clamp_hi,
                  Tail tail);
    // k[i] <- 2^(k[i] + extra), k[i] an integral float with k + extra in [-126, 127].
    void exp2_normal(const std::vector<Vmm>& k, int extra);
    // The same from k[i] already converted to int32: its biased exponent, shifted into place.
    void exp2_from_int(const std::vector<Vmm>& k, int extra);
    // x[i] <- u[i] * 2^k[i], k[i] an integral float in [-151, 129]; u and k are clobbered.
    void scale_by_exp2(const std::vector<Vmm>& x, const std::vector<Vmm>& u, const std::vector<Vmm>& k);
};

extern template class VectorMath<Xbyak::Xmm>;
extern template class VectorMath<Xbyak::Ymm>;
extern template class VectorMath<Xbyak::Zmm>;

}  // namespace benchfp::jit
