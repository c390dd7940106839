#include "families/reduce/reduce_reference.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

namespace benchfp::harness {

void reduce_reference(jit::ReduceAlg alg, const float* src, float* dst, size_t rows, size_t cols) {
    for (size_t r = 0; r < rows; ++r) {
        const float* x = src + r * cols;
        switch (alg) {
        case jit::ReduceAlg::sum: {
            double s = 0;
            for (size_t c = 0; c < cols; ++c) s += x[c];
            dst[r] = static_cast<float>(s);
            break;
        }
        case jit::ReduceAlg::max: dst[r] = *std::max_element(x, x + cols); break;
        case jit::ReduceAlg::softmax: {
            const double m = *std::max_element(x, x + cols);
            double s = 0;
            for (size_t c = 0; c < cols; ++c) s += std::exp(x[c] - m);
            for (size_t c = 0; c < cols; ++c) dst[r * cols + c] = static_cast<float>(std::exp(x[c] - m) / s);
            break;
        }
        }
    }
}

ReduceRowStats reduce_row_stats(const float* row, size_t cols) {
    ReduceRowStats stats{*std::max_element(row, row + cols), 0.0, cols};
    for (size_t c = 0; c < cols; ++c) stats.magnitude += std::fabs(row[c]);
    return stats;
}

double reduce_bound(jit::ReduceAlg alg, jit::Isa isa, const ReduceRowStats& row, float x, float want) {
    constexpr double ulp = 0x1p-24;  // unit roundoff
    const double summation = std::ceil(row.cols / 4.0) + 4;
    switch (alg) {
    case jit::ReduceAlg::max: return 0.0;
    case jit::ReduceAlg::sum: return summation * ulp * row.magnitude;
    case jit::ReduceAlg::softmax: {
        const double exp_ulps = isa == jit::Isa::sse41 ? 16 : 8;  // 4 (8) ulp of 2^-23 in units of 2^-24
        const double rel = (2 * exp_ulps + std::fabs(x - row.max) + summation + 6) * ulp;
        return rel * std::fabs(want) + 2.0 * std::numeric_limits<float>::denorm_min();
    }
    }
    return 0.0;
}

}  // namespace benchfp::harness
