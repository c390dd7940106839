#pragma once
// eltwise: dst[i] = f(src[i]) over f32 arrays, f in {relu, exp, gelu_tanh, tanh},
// for sse41, avx2 and avx512, from one source under every frame policy.
#include "jit/generator.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace benchfp::jit {

enum class EltwiseAlg { relu, exp, gelu_tanh, tanh };
inline constexpr EltwiseAlg all_eltwise_algs[] = {EltwiseAlg::relu, EltwiseAlg::exp, EltwiseAlg::gelu_tanh,
                                                  EltwiseAlg::tanh};

const char* to_string(EltwiseAlg alg);
std::optional<EltwiseAlg> parse_eltwise_alg(std::string_view name);

// The kernel's argument block (the one pointer it receives).
struct EltwiseArgs {
    const float* src;
    float* dst;
    size_t len;
};

// Computed in double, rounded once to float.
float eltwise_reference(EltwiseAlg alg, float x);

// The accepted error against the reference: |got - ref| <= rel * |ref| + abs.
//   relu: exact (max is exact).
//   exp: the degree-7 polynomial truncates at 5e-9; range reduction, Horner and
//        scaling add about a dozen roundings: 4 ulp (rel 4.8e-7). Subnormal
//        results round once more: abs = 2 subnormal steps.
//   tanh, gelu_tanh: one division on top of expm1/exp: 8 ulp (rel 9.6e-7).
//        gelu_tanh also rounds 2u = x(c0 + c1 x^2) four times before exp, which
//        multiplies a relative error by |2u|: plus 4 * |2u| ulp (the function
//        is that ill-conditioned in float, e.g. 11 * 4 ulp at x = -4); where E is
//        subnormal its absolute error is multiplied by x: abs = 2 steps * |x|.
//   Without FMA (sse41) each fused step rounds twice: the base bounds double.
struct Tolerance {
    double rel;
    double abs;
};
Tolerance eltwise_tolerance(EltwiseAlg alg, Isa isa, float x);

std::unique_ptr<Generator> make_eltwise_kernel(EltwiseAlg alg, Isa isa, FramePolicy policy);

}  // namespace benchfp::jit
