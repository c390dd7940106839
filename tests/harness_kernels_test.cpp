// Every kernel family against its reference on a seeded sweep of random shapes,
// on every ISA the host has and every frame policy: tails of every length, edge
// tiles, padding, and the shapes that spill GPRs.
#include "jit/registry.hpp"
#include "kernel_cases.hpp"
#include "workloads/workload.hpp"

#include <gtest/gtest.h>

#include <random>
#include <sstream>

using namespace benchfp;
using namespace benchfp::harness;

namespace {

// A random problem descriptor of a family, small enough to check quickly.
std::string random_problem(const std::string& family, const std::string& alg, std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::ostringstream p;
    if (family == "eltwise") p << pick(1, 300);
    else if (family == "reduce") p << pick(1, 9) << 'x' << pick(1, 70);
    else if (family == "gemm") p << 'm' << pick(1, 40) << 'n' << pick(1, 70) << 'k' << pick(1, 40) << (pick(0, 1) ? "beta0.5" : "");
    else if (family == "conv") {
        const int kh = pick(1, 3), sh = pick(1, 2), dh = pick(0, 1), ph = pick(0, kh - 1);
        p << "mb" << pick(1, 2) << "ic" << pick(1, 9) << "ih" << pick(5, 9) << "iw" << pick(5, 9) << "oc" << pick(1, 40)
          << "kh" << kh << "kw" << pick(1, 3) << "sh" << sh << "sw" << pick(1, 2) << "ph" << ph << "dh" << dh;
    } else if (alg == "transpose") p << pick(1, 3) << 'x' << pick(1, 23) << 'x' << pick(1, 23);
    else p << pick(1, 2) << 'x' << pick(1, 9) << 'x' << pick(1, 7) << 'x' << pick(1, 7);
    return p.str();
}

class KernelSweep : public testing::TestWithParam<std::string> {};

TEST_P(KernelSweep, MatchesTheReferenceOnRandomShapes) {
    const jit::KernelFamily* family = jit::find_kernel_family(GetParam());
    ASSERT_NE(family, nullptr);
    std::mt19937 rng(20261129);
    int checked = 0;
    for (const std::string& alg : family->algs)
        for (jit::Isa isa : jit::all_isas) {
            if (!family->supports(isa) || !jit::isa_usable(isa, std::nullopt)) continue;
            for (jit::FramePolicy policy : jit::all_frame_policies)
                for (int shape = 0; shape < 6; ++shape) {
                    KernelCase c;
                    c.spec = {family->name, alg, isa, policy};
                    c.problem = random_problem(family->name, alg, rng);
                    c.seed = static_cast<unsigned>(rng());
                    c.threads = shape % 3 == 2 ? 2 : 1;
                    const auto workload = make_workload(c);
                    const CorrOutcome outcome = workload->check();
                    EXPECT_TRUE(outcome.passed) << repro(c) << ": " << outcome.detail;
                    ++checked;
                }
        }
    EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(AllFamilies, KernelSweep, testing::Values("eltwise", "reduce", "gemm", "conv", "reorder"),
                         [](const auto& info) { return info.param; });

TEST(KernelSweep, ConvSpillsUnderFramePolicyAndStillMatches) {
    for (jit::Isa isa : {jit::Isa::avx2, jit::Isa::avx512}) {
        if (!jit::isa_usable(isa, std::nullopt)) continue;
        KernelCase c;
        c.spec = {"conv", "f32", isa, jit::FramePolicy::frame};
        c.problem = "ic5ih6oc21kh3ph1";
        const auto workload = make_workload(c);
        EXPECT_GT(workload->kernel().gprs().spilled(), 0);
        EXPECT_FALSE(workload->kernel().gprs().rbp_taken());
        EXPECT_TRUE(workload->check().passed);
    }
}

TEST(KernelSweep, VariantsShareTheDataAndDifferOnlyInPolicy) {
    KernelCase c;
    c.spec = {"gemm", "f32", jit::Isa::avx2, jit::FramePolicy::clobber};
    c.problem = "m20n20k20";
    if (!jit::isa_usable(jit::Isa::avx2, std::nullopt)) GTEST_SKIP() << "no avx2";
    const auto workload = make_workload(c);
    c.spec.frame = jit::FramePolicy::frame;
    EXPECT_EQ(workload->add_variant(c.spec), 1u);
    EXPECT_EQ(workload->kernel(1).policy(), jit::FramePolicy::frame);
    EXPECT_EQ(workload->call(0).jit_caller, "benchfp_call_jit");  // gemm runs through its driver
}

}  // namespace
