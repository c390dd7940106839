#pragma once
// reorder: a batched 2D transpose, dst[b][c][r] = src[b][r][c], f32. With
// batch = N, rows = C, cols = H*W it converts NCHW to NHWC (and rows = H*W,
// cols = C back). 4 x 4 blocks go through registers (loads of 4 consecutive
// floats from 4 rows, shuffles, stores of 4 consecutive floats to 4 rows); the
// edges are copied one element at a time. sse41, avx2 (VEX) and avx512 (EVEX
// encodings of the same 128-bit steps). Where every row starts a cache line,
// each 16 x 16 tile goes whole instead, storing each dst line whole: avx512 and
// avx2 through registers (zmm: one block of whole-line loads and stores; ymm:
// four 8 x 8 blocks), sse41 through a 1 KiB scratch area on the stack (16 4 x 4
// blocks into it, then each dst line from it in four 16-byte stores in a row).
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
