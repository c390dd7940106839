#pragma once
// eltwise: dst[i] = f(src[i]) over f32 arrays, f in {relu, exp}, for avx2 and
// avx512, from one source under every frame policy.
#include "jit/generator.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace benchfp::jit {

enum class EltwiseAlg { relu, exp };
inline constexpr EltwiseAlg all_eltwise_algs[] = {EltwiseAlg::relu, EltwiseAlg::exp};

const char* to_string(EltwiseAlg alg);
std::optional<EltwiseAlg> parse_eltwise_alg(std::string_view name);
std::string known_eltwise_algs();

// The kernel's argument block (the one pointer it receives).
struct EltwiseArgs {
    const float* src;
    float* dst;
    size_t len;
};

float eltwise_reference(EltwiseAlg alg, float x);

// The accepted error of the kernel against the reference:
// |got - ref| <= rel * |ref| + abs.
//   relu: exact (max is exact).
//   exp:  the polynomial (Taylor to degree 7 on |r| <= ln2/2, truncation 5e-9)
//         is far below float rounding; the ~12 rounded operations of range
//         reduction, Horner and scaling stay within 4 ulp (rel 4.8e-7). Results
//         below FLT_MIN are subnormal and rounded once more: abs = 2 * denorm_min.
struct Tolerance {
    double rel;
    double abs;
};
Tolerance eltwise_tolerance(EltwiseAlg alg);

bool eltwise_supports(Isa isa);
std::unique_ptr<Generator> make_eltwise_kernel(EltwiseAlg alg, Isa isa, FramePolicy policy);

}  // namespace benchfp::jit
