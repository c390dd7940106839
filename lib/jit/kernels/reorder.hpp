#pragma once
// reorder: a batched 2D transpose, dst[b][c][r] = src[b][r][c], f32. With
// batch = N, rows = C, cols = H*W it converts NCHW to NHWC (and rows = H*W,
// cols = C back). 4 x 4 blocks go through registers (loads of 4 consecutive
// floats from 4 rows, shuffles, stores of 4 consecutive floats to 4 rows); the
// edges are copied one element at a time. sse41, avx2 (VEX) and avx512 (EVEX
// encodings of the same 128-bit steps). Where every row starts a cache line,
// avx2 and avx512 take each 16 x 16 tile through registers whole instead (zmm:
// one block of whole-line loads and stores; ymm: four 8 x 8 blocks).
#include "jit/generator.hpp"

#include <cstddef>
#include <memory>

namespace benchfp::jit {

struct ReorderArgs {
    const float* src;
    float* dst;
    size_t batch, rows, cols;
};

std::unique_ptr<Generator> make_reorder_kernel(Isa isa, FramePolicy policy);

}  // namespace benchfp::jit
