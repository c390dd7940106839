#pragma once
// reduce: over the last axis of a rows x cols f32 matrix, sum and max (dst has
// one value per row), and softmax built on them (dst has the matrix's shape):
// for sse41, avx2 and avx512, from one source under every frame policy.
#include "jit/generator.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

namespace benchfp::jit {

enum class ReduceAlg { sum, max, softmax };
inline constexpr ReduceAlg all_reduce_algs[] = {ReduceAlg::sum, ReduceAlg::max, ReduceAlg::softmax};

const char* to_string(ReduceAlg alg);
std::optional<ReduceAlg> parse_reduce_alg(std::string_view name);

struct ReduceArgs {
    const float* src;
    float* dst;
    size_t rows;
    size_t cols;
};

// References in double, rounded once.
void reduce_reference(ReduceAlg alg, const float* src, float* dst, size_t rows, size_t cols);

// Accepted error of an output of a row (x: its input, for softmax):
//   max: exact.
//   sum: summation with at least 4 partial sums: (ceil(cols/4) + 4) ulp of sum|x|.
//   softmax: e = exp(x - m) (4 ulp, 8 without FMA, plus |x - m| ulp for rounding
//            x - m), the sum as above relative to itself (all terms positive),
//            and the division: (2 exp + |x - m| + ceil(cols/4) + 6) ulp, plus
//            2 subnormal steps.
struct ReduceRowStats {
    double max, magnitude;  // max and sum of |x| over the row
    size_t cols;
};
ReduceRowStats reduce_row_stats(const float* row, size_t cols);
double reduce_bound(ReduceAlg alg, Isa isa, const ReduceRowStats& row, float x, float want);

std::unique_ptr<Generator> make_reduce_kernel(ReduceAlg alg, Isa isa, FramePolicy policy);

}  // namespace benchfp::jit
