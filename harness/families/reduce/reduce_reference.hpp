#pragma once
// reduce's references and the error it accepts from the kernels.
#include "jit/kernels/reduce.hpp"

#include <cstddef>

namespace benchfp::harness {

// References in double, rounded once.
void reduce_reference(jit::ReduceAlg alg, const float* src, float* dst, size_t rows, size_t cols);

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
double reduce_bound(jit::ReduceAlg alg, jit::Isa isa, const ReduceRowStats& row, float x, float want);

}  // namespace benchfp::harness
