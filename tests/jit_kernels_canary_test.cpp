// Every kernel family, every ISA the host has, every policy: called from a
// trampoline that fills rbx, rbp and r12-r15 with canaries, the kernel returns
// them all intact, including the ones the pool handed out and the spill-heavy
// conv kernel.
#include "callee_saved_probe.hpp"
#include "jit/kernels/conv.hpp"
#include "jit/kernels/eltwise.hpp"
#include "jit/kernels/gemm.hpp"
#include "jit/kernels/reduce.hpp"
#include "jit/kernels/reorder.hpp"

#include <gtest/gtest.h>

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

// gemm and conv exist for avx2 and avx512 only.
class CanariesFma : public Canaries {};

TEST_P(CanariesFma, Gemm) {
    const GemmTile tile = gemm_tile(isa());
    const GemmArgs args{buf.a.data(), buf.b.data(), buf.c.data(), size_t(tile.nr) * 4, 9, 0.5f,
                        size_t(tile.nr) * 4, size_t(tile.nr), size_t(tile.mr)};
    expect_restored(*make_gemm_kernel(isa(), policy()), &args);
}

TEST_P(CanariesFma, ConvWithSpills) {
    ConvArgs args{buf.a.data(), buf.b.data(), buf.c.data(), 5, 5, 3, 21, 5, 3, 3, 1, 1, 1, 1, 1, 1, 0, 5, 0, 0};
    conv_set_interior(args);
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
