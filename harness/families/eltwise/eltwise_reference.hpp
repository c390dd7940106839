#pragma once
// eltwise's reference and the error it accepts from the kernels.
#include "jit/kernels/eltwise.hpp"

namespace benchfp::harness {

// Computed in double, rounded once to float.
float eltwise_reference(jit::EltwiseAlg alg, float x);

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
Tolerance eltwise_tolerance(jit::EltwiseAlg alg, jit::Isa isa, float x);

}  // namespace benchfp::harness
