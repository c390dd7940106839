#include "families/eltwise/eltwise_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace benchfp::harness {

float eltwise_reference(jit::EltwiseAlg alg, float xf) {
    const double x = xf;
    switch (alg) {
    case jit::EltwiseAlg::relu: return xf > 0.0f ? xf : 0.0f;
    case jit::EltwiseAlg::exp: return static_cast<float>(std::exp(x));
    case jit::EltwiseAlg::tanh: return static_cast<float>(std::tanh(x));
    case jit::EltwiseAlg::gelu_tanh: {
        // x * sigmoid(2u): the form without cancellation for large negative x.
        const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
        return static_cast<float>(x / (1.0 + std::exp(-2.0 * u)));
    }
    }
    return std::numeric_limits<float>::quiet_NaN();
}

Tolerance eltwise_tolerance(jit::EltwiseAlg alg, jit::Isa isa, float x) {
    constexpr double ulp = 0x1p-23;
    const double subnormal = 2.0 * std::numeric_limits<float>::denorm_min();
    const double no_fma = isa == jit::Isa::sse41 ? 2.0 : 1.0;
    switch (alg) {
    case jit::EltwiseAlg::relu: return {0.0, 0.0};
    case jit::EltwiseAlg::exp: return {no_fma * 4 * ulp, subnormal};
    case jit::EltwiseAlg::tanh: return {no_fma * 8 * ulp, subnormal};
    case jit::EltwiseAlg::gelu_tanh: {
        const double two_u = 2.0 * std::sqrt(2.0 / M_PI) * (x + 0.044715 * double(x) * x * x);
        // E may be subnormal (absolute error of a subnormal step), then it is multiplied by x.
        return {no_fma * 8 * ulp + 4 * std::fabs(two_u) * ulp, subnormal * std::max(1.0f, std::fabs(x))};
    }
    }
    return {0.0, 0.0};
}

}  // namespace benchfp::harness
