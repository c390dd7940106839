// Every kernel family, every ISA the host has, every policy: called from a
// trampoline that fills rbx, rbp and r12-r15 with canaries, the kernel returns
// them all intact, including the ones the pool handed out and the spill-heavy
// conv kernel. Beside them, the gemm microkernel's bodies for fewer rows.
#include "callee_saved_probe.hpp"
#include "jit/kernels/conv.hpp"
#include "jit/kernels/eltwise.hpp"
#include "jit/kernels/gemm.hpp"
#include "jit/kernels/reduce.hpp"
#include "jit/kernels/reorder.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace benchfp::jit;

namespace {

struct Buffers {
    std::vector<float> a = std::vector<float>(4096, 0.5f), b = std::vector<float>(4096, 0.25f),
                       c = std::vector<float>(4096, 1.0f);
};

void expect_restored(const Generator& kernel, const void* args) {
    const benchfp::test::CalleeSavedProbe probe;
    EXPECT_EQ(probe.run(kernel.entry(), args), 0u) << kernel.name() << " (" << kernel.gprs().summary() << ")";
}

class Canaries : public testing::TestWithParam<std::tuple<Isa, FramePolicy>> {
protected:
    void SetUp() override {
        std::string why;
        if (!isa_usable(isa(), std::nullopt, &why)) GTEST_SKIP() << why;
    }
    Isa isa() const { return std::get<0>(GetParam()); }
    FramePolicy policy() const { return std::get<1>(GetParam()); }
    Buffers buf;
};

TEST_P(Canaries, Eltwise) {
    const EltwiseArgs args{buf.a.data(), buf.c.data(), 999};
    for (EltwiseAlg alg : all_eltwise_algs) expect_restored(*make_eltwise_kernel(alg, isa(), policy()), &args);
}

TEST_P(Canaries, Reduce) {
    const ReduceArgs args{buf.a.data(), buf.c.data(), 7, 33};
    for (ReduceAlg alg : all_reduce_algs) expect_restored(*make_reduce_kernel(alg, isa(), policy()), &args);
}

TEST_P(Canaries, Reorder) {
    const ReorderArgs args{buf.a.data(), buf.c.data(), 2, 13, 7};
    expect_restored(*make_reorder_kernel(isa(), policy()), &args);
}

// Line-aligned rows: whole tiles (sse41's through a scratch area on the stack,
// just below the saved registers the canaries watch).
TEST_P(Canaries, ReorderWholeTiles) {
    constexpr size_t rows = 16, cols = 32;
    struct Free {
        void operator()(float* p) const { std::free(p); }
    };
    const std::unique_ptr<float, Free> src(static_cast<float*>(std::aligned_alloc(64, rows * cols * 4)));
    const std::unique_ptr<float, Free> dst(static_cast<float*>(std::aligned_alloc(64, rows * cols * 4)));
    for (size_t i = 0; i < rows * cols; ++i) src.get()[i] = float(i);
    const ReorderArgs args{src.get(), dst.get(), 1, rows, cols};
    expect_restored(*make_reorder_kernel(isa(), policy()), &args);
    for (size_t r = 0; r < rows; ++r)
        for (size_t c = 0; c < cols; ++c) ASSERT_EQ(dst.get()[c * rows + r], float(r * cols + c)) << r << ", " << c;
}

// gemm and conv exist for avx2 and avx512 only.
class CanariesFma : public Canaries {};

TEST_P(CanariesFma, Gemm) {
    const GemmTile tile = gemm_tile(isa());
    const GemmArgs args{buf.a.data(), buf.b.data(), buf.c.data(), size_t(tile.nr) * 4, 9, 0.5f,
                        size_t(tile.nr) * 4, size_t(tile.nr), size_t(tile.mr), 0};
    expect_restored(*make_gemm_kernel(isa(), policy()), &args);
}

// The rows a gemm body computes for mr wanted rows: the smallest of its row
// counts (gemm.hpp: 4, 8, 12, 16 at avx512; 2, 4, 6 at avx2) that is at least mr.
size_t gemm_body_rows(Isa isa, size_t mr) {
    const size_t step = isa == Isa::avx512 ? 4 : 2;
    return (mr + step - 1) / step * step;
}

// Not a canary: called directly, a tile of fewer rows (GemmArgs::mr) computes
// and stores the rows of the smallest body that covers them and leaves the
// tile's other rows alone, at every tile width of the ISA.
TEST_P(CanariesFma, GemmBodiesStoreExactlyTheirRows) {
    const auto kernel = make_gemm_kernel(isa(), policy());
    constexpr size_t k = 5;
    constexpr float untouched = -7.0f;
    for (size_t n : {size_t{64}, size_t{16}}) {  // the wide tile, and avx512's narrow one
        const GemmTile tile = gemm_tile(isa(), SIZE_MAX, n);
        // A: row i is i + 1 at every k step; B: column j is j + 1 at every k step.
        std::vector<float> a(k * tile.mr), b(k * tile.nr);
        for (size_t p = 0; p < k; ++p) {
            for (int i = 0; i < tile.mr; ++i) a[p * tile.mr + i] = float(i + 1);
            for (int j = 0; j < tile.nr; ++j) b[p * tile.nr + j] = float(j + 1);
        }
        for (size_t mr = 1; mr <= size_t(tile.mr); ++mr) {
            std::vector<float> c(size_t(tile.mr) * tile.nr, untouched);
            const GemmArgs args{a.data(), b.data(), c.data(), size_t(tile.nr) * 4, k, 0.0f, size_t(tile.nr) * 4,
                                size_t(tile.nr), mr, 0};
            kernel->entry()(&args);
            const size_t rows = gemm_body_rows(isa(), mr);
            for (size_t i = 0; i < size_t(tile.mr); ++i)
                for (size_t j = 0; j < size_t(tile.nr); ++j)
                    ASSERT_EQ(c[i * tile.nr + j], i < rows ? float(k * (i + 1) * (j + 1)) : untouched)
                        << "nr " << tile.nr << " mr " << mr << ": row " << i << " column " << j;
        }
    }
}

// A read in place (GemmArgs::lda): a full panel, rows lda bytes apart (padded),
// of every tile that reads it so: the 16-column one (avx512: 16 rows in two
// passes of 8) and, at avx512, the 12 x 32 one (one pass). k = 9 covers the
// unrolled loop and the single-step tail. A[i][p] = (i + 1)(p + 1) and
// B[p][j] = j + 1 make every element exact and tell rows and k steps apart.
TEST_P(CanariesFma, GemmReadsAInPlace) {
    std::vector<GemmTile> tiles{gemm_tile(isa(), SIZE_MAX, 16)};
    if (gemm_tile(isa()).nr != tiles[0].nr) tiles.push_back(gemm_tile(isa()));
    for (const GemmTile& tile : tiles) {
        SCOPED_TRACE(std::to_string(tile.mr) + " x " + std::to_string(tile.nr));
        constexpr size_t k = 9, lda = k + 3;
        std::vector<float> a(tile.mr * lda, -1.0f), b(k * tile.nr), c(size_t(tile.mr) * tile.nr, -7.0f);
        for (size_t i = 0; i < size_t(tile.mr); ++i)
            for (size_t p = 0; p < k; ++p) a[i * lda + p] = float((i + 1) * (p + 1));
        for (size_t p = 0; p < k; ++p)
            for (int j = 0; j < tile.nr; ++j) b[p * tile.nr + j] = float(j + 1);
        const GemmArgs args{a.data(), b.data(), c.data(), size_t(tile.nr) * 4, k, 0.0f, size_t(tile.nr) * 4,
                            size_t(tile.nr), size_t(tile.mr), lda * 4};
        expect_restored(*make_gemm_kernel(isa(), policy()), &args);
        for (size_t i = 0; i < size_t(tile.mr); ++i)
            for (size_t j = 0; j < size_t(tile.nr); ++j)
                ASSERT_EQ(c[i * tile.nr + j], float((i + 1) * (j + 1) * k * (k + 1) / 2)) << "row " << i << " column " << j;
    }
}

TEST_P(CanariesFma, ConvWithSpills) {
    ConvArgs args{buf.a.data(), buf.b.data(), buf.c.data(), 5, 5, 3, 21, 5, 3, 3, 1, 1, 1, 1, 1, 1, 0, 5, 0, 0};
    conv_set_blocks(args);
    const auto kernel = make_conv_kernel(isa(), policy());
    EXPECT_GT(kernel->gprs().spilled(), 0);
    expect_restored(*kernel, &args);
}

std::string param_name(const testing::TestParamInfo<std::tuple<Isa, FramePolicy>>& info) {
    return std::string(to_string(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(AllIsasPolicies, Canaries,
                         testing::Combine(testing::ValuesIn(all_isas), testing::ValuesIn(all_frame_policies)),
                         param_name);
INSTANTIATE_TEST_SUITE_P(FmaIsasAllPolicies, CanariesFma,
                         testing::Combine(testing::Values(Isa::avx2, Isa::avx512), testing::ValuesIn(all_frame_policies)),
                         param_name);

}  // namespace
