// The allocation profiler: one record per allocation on every path, types where
// known, stacks with the callers in order, frees of sampled objects, and the
// sampling statistics.
#include "alloc/pool.hpp"
#include "alloc/profiler.hpp"
#include "perf/symbols.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

using namespace benchfp;
using alloc::profiler::Sampling;

namespace {

struct Point {
    double x, y, z;
};

alloc::profiler::Profile record_all(const std::function<void()>& work) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    work();
    alloc::profiler::stop();
    return alloc::profiler::fetch();
}

}  // namespace

// The callers a record's stack must show, in order: allocate <- outer.
extern "C" [[gnu::noinline]] void* profiler_test_allocate(int path) {
    void* p = nullptr;
    switch (path) {
    case 0: p = alloc::pool_alloc(40); break;
    case 1: p = alloc::alloc(40, &alloc::type_of<Point>()); break;
    case 2: p = alloc::alloc_typed<Point>(); break;
    case 3: p = alloc::big_alloc(10000, &alloc::type_of<Point>()); break;
    case 4: p = alloc::managed_alloc(100); break;
    }
    asm volatile("" ::: "memory");  // not a tail call: this frame stays
    return p;
}
extern "C" [[gnu::noinline]] void* profiler_test_outer(int path) {
    void* p = profiler_test_allocate(path);
    asm volatile("" ::: "memory");
    return p;
}

TEST(Profiler, EveryPathRecordsExactlyOnceWithItsTypeAndStack) {
    const char* want_type[] = {"unknown", "(anonymous namespace)::Point", "(anonymous namespace)::Point",
                               "(anonymous namespace)::Point", "unknown"};
    perf::Symbols symbols;
    for (int path = 0; path < 5; ++path) {
        std::vector<void*> blocks;
        const auto profile = record_all([&] {
            for (int i = 0; i < 10; ++i) blocks.push_back(profiler_test_outer(path));
        });
        ASSERT_EQ(profile.allocations.size(), 10u) << "path " << path;
        for (const auto& r : profile.allocations) {
            EXPECT_EQ(r.type->name, want_type[path]) << "path " << path;
            std::vector<std::string> names;
            for (uintptr_t ret : r.stack) {
                // GCC moves the unlikely branch (the hook's call) into "<function>.cold".
                std::string name = symbols.name(ret - 1);
                if (name.ends_with(".cold")) name.resize(name.size() - 5);
                names.push_back(name);
            }
            const auto inner = std::find(names.begin(), names.end(), "profiler_test_allocate");
            std::string chain;
            for (const auto& n : names) chain += n + " <- ";
            ASSERT_NE(inner, names.end()) << "path " << path << ": " << chain;
            ASSERT_NE(inner + 1, names.end());
            EXPECT_EQ(*(inner + 1), "profiler_test_outer") << "path " << path;
            EXPECT_GE(r.allocated, r.requested);
        }
        for (void* p : blocks) alloc::free(p);
    }
}

TEST(Profiler, FreesOfSampledObjectsGiveTheInUseProfile) {
    std::vector<void*> blocks;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    for (int i = 0; i < 100; ++i) blocks.push_back(alloc::pool_alloc(64));
    for (int i = 0; i < 60; ++i) alloc::free(blocks[i]);
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    EXPECT_EQ(profile.allocations.size(), 100u);
    EXPECT_EQ(profile.frees.size(), 60u);
    for (int i = 60; i < 100; ++i) alloc::free(blocks[i]);  // profiler stopped: not recorded
    EXPECT_EQ(alloc::profiler::fetch().frees.size(), 60u);
}

TEST(Profiler, NothingIsRecordedWhileStopped) {
    alloc::profiler::clear();
    void* p = alloc::pool_alloc(32);
    alloc::free(p);
    EXPECT_TRUE(alloc::profiler::fetch().allocations.empty());
}

TEST(Profiler, ProbabilitySamplingWithinFiveSigma) {
    constexpr int n = 1000000;
    constexpr double p = 0.01;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::probability, p, 0, 8, 12345});
    for (int i = 0; i < n; ++i) alloc::free(alloc::pool_alloc(24));
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    const double sigma = std::sqrt(n * p * (1 - p));
    EXPECT_NEAR(static_cast<double>(profile.allocations.size()), n * p, 5 * sigma);
    for (const auto& r : profile.allocations) EXPECT_DOUBLE_EQ(r.weight, 1 / p);
}

TEST(Profiler, ByteSamplingTotalsAreUnbiased) {
    // About total/mean samples; the estimate's relative standard deviation is
    // about 1/sqrt(samples): 5 sigma of that is the bound.
    constexpr size_t mean = 64 * 1024;
    std::mt19937 rng(7);
    double true_bytes = 0;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::bytes, 1.0, mean, 8, 777});
    for (int i = 0; i < 1000000; ++i) {
        const size_t size = 16 + rng() % 2000;
        true_bytes += size;
        alloc::free(alloc::pool_alloc(size));
    }
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    double estimated_bytes = 0, estimated_count = 0;
    for (const auto& r : profile.allocations) {
        estimated_bytes += r.weight * r.requested;
        estimated_count += r.weight;
    }
    const double samples = true_bytes / mean;
    const double bound = 5 / std::sqrt(samples);
    EXPECT_NEAR(static_cast<double>(profile.allocations.size()), samples, 5 * std::sqrt(samples));
    EXPECT_NEAR(estimated_bytes / true_bytes, 1.0, bound);
    EXPECT_NEAR(estimated_count / 1e6, 1.0, bound);
}
