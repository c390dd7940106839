// The gemm microkernel called directly, every FMA ISA the host has, every
// policy: a tile of fewer rows (GemmArgs::mr) computes and stores the rows of
// the smallest body that covers them, and leaves the tile's other rows alone.
#include "jit/kernels/gemm.hpp"

#include <gtest/gtest.h>

#include <vector>

using namespace benchfp::jit;

namespace {

class GemmKernelRows : public testing::TestWithParam<std::tuple<Isa, FramePolicy, size_t>> {
protected:
    void SetUp() override {
        std::string why;
        if (!isa_usable(isa(), std::nullopt, &why)) GTEST_SKIP() << why;
    }
    Isa isa() const { return std::get<0>(GetParam()); }
    FramePolicy policy() const { return std::get<1>(GetParam()); }
    size_t nr() const { return std::get<2>(GetParam()); }
};

// The rows a body computes for mr wanted rows: the smallest of its row counts
// (gemm.hpp: 4, 8, 12 at avx512; 2, 4, 6 at avx2) that is at least mr.
size_t body_rows(Isa isa, size_t mr) {
    const size_t step = isa == Isa::avx512 ? 4 : 2;
    return (mr + step - 1) / step * step;
}

TEST_P(GemmKernelRows, StoresTheRowsOfTheBodyThatCoversMr) {
    const GemmTile tile = gemm_tile(isa(), nr());
    ASSERT_EQ(size_t(tile.nr), nr());
    const auto kernel = make_gemm_kernel(isa(), policy());
    constexpr size_t k = 5;
    constexpr float untouched = -7.0f;
    // A: row i is i + 1 at every k step; B: column j is j + 1 at every k step.
    std::vector<float> a(k * tile.mr), b(k * tile.nr);
    for (size_t p = 0; p < k; ++p) {
        for (int i = 0; i < tile.mr; ++i) a[p * tile.mr + i] = float(i + 1);
        for (int j = 0; j < tile.nr; ++j) b[p * tile.nr + j] = float(j + 1);
    }
    for (size_t mr = 1; mr <= size_t(tile.mr); ++mr) {
        std::vector<float> c(size_t(tile.mr) * tile.nr, untouched);
        GemmArgs args{a.data(), b.data(), c.data(), size_t(tile.nr) * 4, k, 0.0f, size_t(tile.nr) * 4,
                      size_t(tile.nr), mr};
        kernel->entry()(&args);
        const size_t rows = body_rows(isa(), mr);
        for (size_t i = 0; i < size_t(tile.mr); ++i)
            for (size_t j = 0; j < size_t(tile.nr); ++j) {
                const float want = i < rows ? float(k * (i + 1) * (j + 1)) : untouched;
                ASSERT_EQ(c[i * tile.nr + j], want) << "mr " << mr << ": row " << i << " column " << j;
            }
    }
}

std::string param_name(const testing::TestParamInfo<std::tuple<Isa, FramePolicy, size_t>>& info) {
    return std::string(to_string(std::get<0>(info.param))) + "_" + to_string(std::get<1>(info.param)) + "_nr" +
           std::to_string(std::get<2>(info.param));
}

// Every tile width of each ISA: avx2 16 columns, avx512 32 and 16 (where N <= 16).
std::vector<std::tuple<Isa, FramePolicy, size_t>> tiles() {
    std::vector<std::tuple<Isa, FramePolicy, size_t>> out;
    for (FramePolicy policy : all_frame_policies) {
        out.emplace_back(Isa::avx2, policy, 16);
        out.emplace_back(Isa::avx512, policy, 32);
        out.emplace_back(Isa::avx512, policy, 16);
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(FmaIsasAllPolicies, GemmKernelRows, testing::ValuesIn(tiles()), param_name);

}  // namespace
