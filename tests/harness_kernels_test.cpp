// Every kernel family against its reference on a seeded sweep of random shapes,
// on every ISA the host has and every frame policy: tails of every length, edge
// tiles, padding, and the shapes that spill GPRs.
#include "families/family.hpp"
#include "families/gemm/gemm_workload.hpp"
#include "families/reduce/reduce_reference.hpp"
#include "families/workload.hpp"
#include "kernel/kernel_cases.hpp"
#include "peers/onednn.hpp"
#include "usage_error.hpp"

#include <gtest/gtest.h>

#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <ctime>
#include <limits>
#include <map>
#include <random>
#include <vector>

using namespace benchfp;
using namespace benchfp::harness;

namespace {

std::vector<std::string> family_names_of_table() {
    std::vector<std::string> names;
    for (const Family& family : families()) names.push_back(family.name);
    return names;
}

class KernelSweep : public testing::TestWithParam<std::string> {};

TEST_P(KernelSweep, MatchesTheReferenceOnRandomShapes) {
    const Family* family = find_family(GetParam());
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
                    c.problem = family->random_problem(alg, rng);
                    c.seed = static_cast<unsigned>(rng());
                    c.threads = shape % 3 == 2 ? 2 : 1;
                    const auto workload = family->make_workload(c);
                    const CorrOutcome outcome = workload->check();
                    EXPECT_TRUE(outcome.passed) << repro(c) << ": " << outcome.detail;
                    ++checked;
                }
        }
    EXPECT_GT(checked, 0);
}

INSTANTIATE_TEST_SUITE_P(AllFamilies, KernelSweep, testing::ValuesIn(family_names_of_table()),
                         [](const auto& info) { return info.param; });

TEST(KernelSweep, ConvSpillsUnderFramePolicyAndStillMatches) {
    for (jit::Isa isa : {jit::Isa::avx2, jit::Isa::avx512}) {
        if (!jit::isa_usable(isa, std::nullopt)) continue;
        KernelCase c;
        c.spec = {"conv", "f32", isa, jit::FramePolicy::frame};
        c.problem = "ic5ih6oc21kh3ph1";
        const auto workload = find_family(c.spec.kernel)->make_workload(c);
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
    const auto workload = find_family(c.spec.kernel)->make_workload(c);
    c.spec.frame = jit::FramePolicy::frame;
    EXPECT_EQ(workload->add_variant(c.spec), 1u);
    EXPECT_EQ(workload->kernel(1).policy(), jit::FramePolicy::frame);
    EXPECT_EQ(workload->call(0).jit_caller, "benchfp_call_jit");  // gemm runs through its driver
}

// Runs softmax on rows x cols of src at every usable ISA and policy and hands
// each output to check(isa, got).
template <typename Check>
void softmax_on_every_isa(const std::vector<float>& src, size_t rows, size_t cols, Check check) {
    for (jit::Isa isa : jit::all_isas) {
        if (!jit::isa_usable(isa, std::nullopt)) continue;
        for (jit::FramePolicy policy : jit::all_frame_policies) {
            const auto kernel = jit::make_reduce_kernel(jit::ReduceAlg::softmax, isa, policy);
            std::vector<float> got(src.size(), -7.0f);
            jit::ReduceArgs args{src.data(), got.data(), rows, cols};
            kernel->entry()(&args);
            check(isa, got);
        }
    }
}

// softmax computes e^(x - m) times 2^64 so that outputs below float's normal
// range keep their precision: rows whose spread reaches exp's clamp, on every ISA
// and policy, against the double reference and its bound (2 subnormal steps).
TEST(SoftmaxKernel, OutputsBelowTheNormalRangeMatchTheReference) {
    const std::vector<float> spread = {0.0f,   -1.0f,   -20.0f, -80.0f,  -87.0f,  -87.5f, -88.0f, -90.0f,
                                       -95.0f, -100.0f, -103.0f, -103.9f, -104.5f, -120.0f, -1e30f, 3.0f};
    for (size_t cols : {spread.size(), spread.size() + 3, size_t{67}}) {
        std::vector<float> src(2 * cols);
        for (size_t i = 0; i < src.size(); ++i) src[i] = spread[i % spread.size()] + 0.37f * static_cast<float>(i / 16);
        std::vector<float> want(src.size());
        reduce_reference(jit::ReduceAlg::softmax, src.data(), want.data(), 2, cols);
        softmax_on_every_isa(src, 2, cols, [&](jit::Isa isa, const std::vector<float>& got) {
            for (size_t row = 0; row < 2; ++row) {
                const ReduceRowStats stats = reduce_row_stats(&src[row * cols], cols);
                for (size_t i = row * cols; i < (row + 1) * cols; ++i)
                    ASSERT_LE(std::fabs(got[i] - want[i]),
                              reduce_bound(jit::ReduceAlg::softmax, isa, stats, src[i], want[i]))
                        << jit::to_string(isa) << " cols=" << cols << " x=" << src[i] << " got " << got[i]
                        << " want " << want[i];
            }
        });
    }
}

// An input softmax has no answer for (a NaN, a row of -inf only) is never turned
// into a plausible probability: the NaN's output is NaN, and so is every output
// of the -inf row (inf - inf), as the reference has them.
TEST(SoftmaxKernel, NanAndMinusInfinityRowsGiveNan) {
    const float inf = std::numeric_limits<float>::infinity();
    for (size_t cols : {size_t{3}, size_t{17}, size_t{70}}) {
        std::vector<float> src(2 * cols, -inf);  // row 1: -inf only
        for (size_t i = 0; i < cols; ++i) src[i] = -0.5f * static_cast<float>(i);
        src[cols / 2] = std::numeric_limits<float>::quiet_NaN();
        softmax_on_every_isa(src, 2, cols, [&](jit::Isa isa, const std::vector<float>& got) {
            EXPECT_TRUE(std::isnan(got[cols / 2])) << jit::to_string(isa) << " cols=" << cols << " got "
                                                   << got[cols / 2] << " for the NaN";
            for (size_t i = cols; i < 2 * cols; ++i)
                ASSERT_TRUE(std::isnan(got[i])) << jit::to_string(isa) << " cols=" << cols << " got " << got[i]
                                                << " for a row of -inf";
        });
    }
}


uint64_t cpu_ns(clockid_t clock) {
    timespec t{};
    if (clock_gettime(clock, &t) != 0) return 0;  // the thread has exited
    return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

// The CPU clock of thread `tid` of this process: Linux's clock id ~tid << 3 |
// per-thread | sched, what pthread_getcpuclockid returns for a pthread (OpenMP's
// workers are no pthread_t of ours). /proc's schedstat reads 0 here, and its
// utime counts 10 ms ticks.
uint64_t thread_cpu_ns(long tid) { return cpu_ns(static_cast<clockid_t>((~tid << 3) | 6)); }

// On-CPU nanoseconds of every thread of this process but the caller, by thread id.
std::map<long, uint64_t> other_threads_cpu_ns() {
    std::map<long, uint64_t> ns;
    const long self = syscall(SYS_gettid);
    DIR* dir = opendir("/proc/self/task");
    if (!dir) return ns;
    while (const dirent* entry = readdir(dir)) {
        const long tid = std::atol(entry->d_name);
        if (tid > 0 && tid != self) ns[tid] = thread_cpu_ns(tid);
    }
    closedir(dir);
    return ns;
}

uint64_t this_thread_cpu_ns() { return cpu_ns(CLOCK_THREAD_CPUTIME_ID); }

struct CpuTimes {
    uint64_t own = 0, others = 0;  // ns: the calling thread's, every other thread's
};

// Runs the oneDNN peer of case `c` (after OpenMP was left at 2 threads, as a
// case on 2 threads or OpenMP's default on 2 cores leaves it) for 50 ms of
// this thread's CPU time, and says where the CPU time went.
CpuTimes peer_cpu_times(const KernelCase& c) {
    const auto workload = find_family(c.spec.kernel)->make_workload(c);
    onednn::set_threads(2);
    const auto peer = workload->onednn_peer();
    peer->run();  // creates OpenMP's workers if it is going to
    const auto before = other_threads_cpu_ns();
    const uint64_t start = this_thread_cpu_ns();
    while (this_thread_cpu_ns() - start < 50000000) peer->run();
    CpuTimes t;
    t.own = this_thread_cpu_ns() - start;
    for (const auto& [tid, ns] : other_threads_cpu_ns()) {
        const uint64_t was = before.count(tid) ? before.at(tid) : 0;
        if (ns > was) t.others += ns - was;  // 0: it exited in between
    }
    return t;
}

// A case at --threads=1 compares one of our threads with one of oneDNN's: the
// peer's runs take no CPU time on any other thread (OpenMP's workers). Where
// the time went, not how long it took. oneDNN's softmax, reorder and gemm
// convolution fixed their thread count when their descriptor was created,
// before set_threads ran.
TEST(OnednnPeer, RunsOnTheCasesThreadCountOnly) {
    // The measurement itself: the clock of a thread id reads this thread's
    // time, and a peer on 2 threads shows CPU time on the other one.
    const uint64_t mine = this_thread_cpu_ns(), by_id = thread_cpu_ns(syscall(SYS_gettid));
    ASSERT_GT(by_id, 0u) << "the per-thread CPU clock cannot be read";
    EXPECT_NEAR(double(by_id), double(mine), 1e8);
    KernelCase two;
    two.spec = {"reorder", "transpose", jit::Isa::sse41, jit::FramePolicy::clobber};
    two.problem = "1024x1024";
    two.threads = 2;
    const CpuTimes control = peer_cpu_times(two);
    EXPECT_GT(double(control.others), 0.2 * double(control.own)) << "a 2-thread peer showed no second thread";

    const std::map<std::string, std::string> problem = {{"conv", "mb1ic64ih56oc64kh3ph1"},
                                                        {"gemm", "m256n256k256"},
                                                        {"eltwise", "1048576"},
                                                        {"reduce", "1024x1024"},
                                                        {"reorder", "1024x1024"},
                                                        {"reorder nchw2nhwc", "4x64x64x64"},
                                                        {"reorder nhwc2nchw", "4x64x64x64"}};
    int checked = 0;
    for (const Family& family : families()) {
        if (!family.onednn_peer) continue;
        ASSERT_EQ(problem.count(family.name), 1u) << family.name << ": give it a problem oneDNN would run threaded";
        jit::Isa isa = family.isas.front();
        for (jit::Isa candidate : family.isas)
            if (jit::isa_usable(candidate, std::nullopt)) isa = candidate;
        if (!jit::isa_usable(isa, std::nullopt)) continue;
        for (const std::string& alg : family.algs) {
            KernelCase c;
            c.spec = {family.name, alg, isa, jit::FramePolicy::clobber};
            const std::string key = family.name + " " + alg;
            c.problem = problem.count(key) ? problem.at(key) : problem.at(family.name);
            c.threads = 1;
            const CpuTimes t = peer_cpu_times(c);
            EXPECT_LT(double(t.others), 0.05 * double(t.own)) << key << ": other threads ran " << t.others / 1000000
                                                              << " ms beside " << t.own / 1000000 << " ms";
            ++checked;
        }
    }
    EXPECT_GT(checked, 0);
}

// gemm's B panels at avx512: BENCHFP_GEMM_B_PANELS decides where it is set
// (CliGemm checks that both ways compute right); another value is bad usage.
TEST(GemmBPanels, TheEnvironmentChoosesInPlaceOrCopied) {
    const char* before = std::getenv("BENCHFP_GEMM_B_PANELS");
    const std::string saved = before ? before : "";
    setenv("BENCHFP_GEMM_B_PANELS", "in-place", 1);
    EXPECT_TRUE(gemm_b_panels_in_place());
    setenv("BENCHFP_GEMM_B_PANELS", "copied", 1);
    EXPECT_FALSE(gemm_b_panels_in_place());
    setenv("BENCHFP_GEMM_B_PANELS", "In-Place", 1);
    EXPECT_THROW(gemm_b_panels_in_place(), UsageError);
    if (before) setenv("BENCHFP_GEMM_B_PANELS", saved.c_str(), 1);
    else unsetenv("BENCHFP_GEMM_B_PANELS");
}

}  // namespace
