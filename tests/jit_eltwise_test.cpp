// The eltwise kernel in every policy: results against the reference for every
// tail length, what each policy really emits, W^X, and callee-saved registers.
#include "callee_saved_probe.hpp"
#include "jit/kernels/eltwise.hpp"
#include "families/eltwise/eltwise_reference.hpp"
#include "families/family.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

using namespace benchfp::jit;
using benchfp::harness::eltwise_reference;
using benchfp::harness::eltwise_tolerance;
using benchfp::harness::Tolerance;

namespace {

struct Params {
    Isa isa;
    EltwiseAlg alg;
    FramePolicy policy;
};

void PrintTo(const Params& p, std::ostream* os) {
    *os << to_string(p.isa) << '/' << to_string(p.alg) << '/' << to_string(p.policy);
}

std::string param_name(const testing::TestParamInfo<Params>& info) {
    return std::string(to_string(info.param.isa)) + "_" + to_string(info.param.alg) + "_" +
           to_string(info.param.policy);
}

std::vector<Params> params_for(std::vector<EltwiseAlg> algs) {
    std::vector<Params> out;
    for (Isa isa : all_isas)
        for (EltwiseAlg alg : algs)
            for (FramePolicy policy : all_frame_policies) out.push_back({isa, alg, policy});
    return out;
}

class EltwiseKernelTest : public testing::TestWithParam<Params> {
protected:
    void SetUp() override {
        std::string why;
        if (!isa_usable(GetParam().isa, std::nullopt, &why)) GTEST_SKIP() << why;
        kernel_ = make_eltwise_kernel(GetParam().alg, GetParam().isa, GetParam().policy);
    }

    // Runs the kernel on n elements (inside a larger buffer, to catch writes past the end).
    void expect_matches_reference(size_t n, unsigned seed) {
        constexpr size_t guard = 64;
        std::mt19937 rng(seed);
        std::uniform_real_distribution<float> dist(-30.0f, 30.0f);
        std::vector<float> src(n), dst(n + guard, -7.0f);
        for (float& v : src) v = dist(rng);
        EltwiseArgs args{src.data(), dst.data(), n};
        kernel_->entry()(&args);
        for (size_t i = 0; i < n; ++i) {
            const float want = eltwise_reference(GetParam().alg, src[i]);
            const Tolerance tol = eltwise_tolerance(GetParam().alg, GetParam().isa, src[i]);
            ASSERT_LE(std::fabs(dst[i] - want), tol.rel * std::fabs(want) + tol.abs)
                << "n=" << n << " i=" << i << " x=" << src[i] << " got " << dst[i] << " want " << want;
        }
        for (size_t i = n; i < n + guard; ++i) ASSERT_EQ(dst[i], -7.0f) << "wrote past the end at " << i;
    }

    std::unique_ptr<Generator> kernel_;
};

TEST_P(EltwiseKernelTest, MatchesReferenceForEveryTailLength) {
    // Up to two unrolled blocks plus every remainder: covers the unrolled loop, the
    // single-vector loop and every masked tail of both vector widths.
    for (size_t n = 0; n <= 2 * 4 * 16 + 16; ++n) expect_matches_reference(n, static_cast<unsigned>(n));
    expect_matches_reference(100003, 42);
}

class EltwiseExpTest : public EltwiseKernelTest {};

TEST_P(EltwiseExpTest, CoversClampsAndSubnormals) {
    std::vector<float> src = {-200.0f, -104.0f, -103.5f, -100.0f, -90.0f, -87.5f, -87.33f, -50.0f, -1e-30f,
                              0.0f,    1e-30f,  1.0f,    50.0f,   88.0f,  88.72f, 88.73f,  89.0f,  200.0f};
    std::vector<float> dst(src.size());
    EltwiseArgs args{src.data(), dst.data(), src.size()};
    kernel_->entry()(&args);
    for (size_t i = 0; i < src.size(); ++i) {
        const Tolerance tol = eltwise_tolerance(EltwiseAlg::exp, GetParam().isa, src[i]);
        const float want = std::exp(src[i]);
        if (std::isinf(want)) {
            EXPECT_TRUE(std::isinf(dst[i])) << "x=" << src[i];
        } else {
            EXPECT_LE(std::fabs(dst[i] - want), tol.rel * std::fabs(want) + tol.abs)
                << "x=" << src[i] << " got " << dst[i] << " want " << want;
        }
    }
}

TEST_P(EltwiseKernelTest, PolicyDecidesThePrologueAndRbp) {
    const auto* code = reinterpret_cast<const uint8_t*>(kernel_->layout().begin);
    const bool frame_prologue = code[0] == 0x55 && code[1] == 0x48 && code[2] == 0x89 && code[3] == 0xe5;
    EXPECT_EQ(frame_prologue, GetParam().policy == FramePolicy::frame) << "push rbp; mov rbp, rsp";
    EXPECT_EQ(kernel_->gprs().rbp_taken(), GetParam().policy == FramePolicy::clobber);
    if (GetParam().policy == FramePolicy::clobber) {
        // rbp carries the element count, which the loop counts down: it is data, not a frame.
        EXPECT_EQ(kernel_->gprs().grants().front().role, "len");
        EXPECT_EQ(kernel_->gprs().grants().front().value.reg(), Xbyak::util::rbp);
    }
    const auto& layout = kernel_->layout();
    EXPECT_LT(layout.prologue_end, layout.epilogue_begin);
    EXPECT_LT(layout.epilogue_begin, layout.size);
}

TEST_P(EltwiseKernelTest, RestoresEveryCalleeSavedRegister) {
    std::vector<float> src(1000, 1.5f), dst(1000);
    EltwiseArgs args{src.data(), dst.data(), src.size()};
    const benchfp::test::CalleeSavedProbe probe;
    EXPECT_EQ(probe.run(kernel_->entry(), &args), 0u);
    EXPECT_FLOAT_EQ(dst[999], eltwise_reference(GetParam().alg, 1.5f));
}

TEST_P(EltwiseKernelTest, CodeIsReadExecuteNeverWritable) {
    const uintptr_t begin = kernel_->layout().begin;
    std::ifstream maps("/proc/self/maps");
    for (std::string line; std::getline(maps, line);) {
        std::istringstream in(line);
        std::string range, perms;
        in >> range >> perms;
        const uintptr_t lo = std::stoull(range.substr(0, range.find('-')), nullptr, 16);
        const uintptr_t hi = std::stoull(range.substr(range.find('-') + 1), nullptr, 16);
        if (begin >= lo && begin < hi) {
            EXPECT_EQ(perms.substr(0, 3), "r-x") << line;
            return;
        }
    }
    FAIL() << "kernel code not found in /proc/self/maps";
}

TEST_P(EltwiseKernelTest, NamesItsCodeRange) {
    EXPECT_EQ(kernel_->layout().name, kernel_->name());
    EXPECT_EQ(kernel_->layout().begin, reinterpret_cast<uintptr_t>(kernel_->entry()));
    EXPECT_GT(kernel_->layout().size, kernel_->layout().epilogue_begin);
}

INSTANTIATE_TEST_SUITE_P(AllIsasAlgsPolicies, EltwiseKernelTest,
                         testing::ValuesIn(params_for({all_eltwise_algs[0], all_eltwise_algs[1]})), param_name);
INSTANTIATE_TEST_SUITE_P(AllIsasPolicies, EltwiseExpTest, testing::ValuesIn(params_for({EltwiseAlg::exp})),
                         param_name);

TEST(FamilyTable, RejectsUnknownAlgFamilyAndIsa) {
    using benchfp::harness::build_kernel;
    EXPECT_THROW(build_kernel({"eltwise", "sigmoid", Isa::avx2, FramePolicy::frame}), std::invalid_argument);
    EXPECT_THROW(build_kernel({"nosuch", "relu", Isa::avx2, FramePolicy::frame}), std::invalid_argument);
    EXPECT_THROW(build_kernel({"gemm", "f32", Isa::sse41, FramePolicy::frame}), std::invalid_argument);
}

}  // namespace
