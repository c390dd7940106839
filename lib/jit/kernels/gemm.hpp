#pragma once
// gemm microkernels: C[MR x NR] = A_panel * B_panel (+ beta * C) over k, for a
// row-major C, with A packed in MR-row panels and B either packed in NR-column
// panels or read in place with its row stride (skinny M, where B is used too few
// times to repay a packing pass); the packing and cache blocking are the
// driver's, harness/families/gemm/.
// Register-blocked: MR x NR/width accumulators, K unrolled, prefetch ahead.
// A tile can also read A in place (GemmArgs::lda): avx2's 6 x 16 one (the
// driver uses it at every N), avx512's 16 x 16 one, for a B of one panel
// (computing its 16 rows in two passes of 8 over k), and avx512's 12 x 32
// one, for a B of up to two panels.
// avx2: 6 x 16; avx512: 12 x 32, or 16 x 16 where N or M is 16 or less (one
// zmm per row: a 32-column tile would compute as many columns as there are,
// and with A packed, 16 rows read a B that is used once, by all of them, in
// one pass).
#include "jit/generator.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace benchfp::jit {

struct GemmTile {
    int mr, nr;
};
// The tile shape of the microkernel for an ISA (avx2, avx512) and a gemm of m rows, n columns.
GemmTile gemm_tile(Isa isa, size_t m = SIZE_MAX, size_t n = SIZE_MAX);

struct GemmArgs {
    const float* a;   // packed: k steps of the tile's mr floats (16 or 12 at avx512, 6 at avx2),
                      // whatever mr below is
    const float* b;   // k steps of nr floats, ldb bytes apart
    float* c;         // the tile's first element
    size_t ldc;       // row stride of c, in bytes
    size_t k;         // > 0
    float beta;       // c = acc + beta * c; beta == 0 does not read c
    size_t ldb;       // bytes from one k step of b to the next: nr * 4 for a packed
                      // panel, the row stride of B when the driver reads B in place
    size_t nr;        // the tile's columns, gemm_tile(isa, m, n).nr: at avx512, 16 takes the
                      // one-vector-per-row path (16-row panels), anything else the
                      // two-vector one (12-row panels)
    size_t mr;        // rows of C wanted, 1..the tile's mr: the kernel computes and stores
                      // the smallest row count it has a body for (avx512: 4, 8, 12 and,
                      // at nr 16, 16; avx2: 2, 4, 6) that covers them, from the same
                      // full-height panel a (A in place: the full height only)
    size_t lda;       // 0: a is a packed panel. Else a is the tile's first element of A in
                      // place, rows lda bytes apart: a full panel only (mr the panel's
                      // height), where a packing pass would not repay itself (the
                      // driver's a_read_in_place says where)
};

bool gemm_supports(Isa isa);
std::unique_ptr<Generator> make_gemm_kernel(Isa isa, FramePolicy policy);

// A register-only FMA loop: the machine's FMA peak for the ISA, measured in the
// same run as a kernel. One call runs `iterations` passes of `fma_per_pass()` FMAs.
struct FmaPeakArgs {
    size_t iterations;
};
std::unique_ptr<Generator> make_fma_peak_kernel(Isa isa);
double fma_peak_flops_per_iteration(Isa isa);

}  // namespace benchfp::jit
