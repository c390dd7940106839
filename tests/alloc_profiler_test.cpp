// The allocation profiler: one record per allocation on every path, types where
// known, stacks with the callers in order, frees of sampled objects, and the
// sampling statistics.
#include "alloc/pool.hpp"
#include "alloc/profiler.hpp"
#include "perf/symbols.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <csignal>
#include <cstring>
#include <pthread.h>
#include <thread>
#include <vector>

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
            EXPECT_EQ(perf::demangle(r.type->name.c_str()), want_type[path]) << "path " << path;
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
    // Stopped, frees of sampled objects are still recorded: the in-use profile stays true.
    for (int i = 60; i < 100; ++i) alloc::free(blocks[i]);
    EXPECT_EQ(alloc::profiler::fetch().frees.size(), 100u);
    // Sampled objects live on sampled pages (their frees take the slow path), others do not.
    for (void* p : blocks) EXPECT_TRUE(alloc::detail::page_of(p)->owner_word & alloc::detail::sampled_page);
    void* unsampled = alloc::pool_alloc(64);
    EXPECT_FALSE(alloc::detail::page_of(unsampled)->owner_word & alloc::detail::sampled_page);
    alloc::free(unsampled);
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

// The allocations between two samples are counted down from a geometric draw
// (one per sample), not tested one by one: the gaps must still be those of
// independent trials with probability p. A fixed or a uniform gap of the same
// mean fails the variance check.
TEST(Profiler, ProbabilitySamplingGapsAreGeometric) {
    constexpr int n = 1000000;
    constexpr double p = 0.01;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::probability, p, 0, 8, 4242});
    std::vector<double> gaps;
    int last = -1;
    for (int i = 0; i < n; ++i) {
        void* q = alloc::pool_alloc(24);
        if (alloc::detail::page_of(q)->owner_word & alloc::detail::sampled_page) {  // moved: sampled
            gaps.push_back(i - last);
            last = i;
        }
        alloc::free(q);
    }
    alloc::profiler::stop();
    ASSERT_GT(gaps.size(), 9000u);
    const double k = static_cast<double>(gaps.size());
    double mean = 0, var = 0;
    for (double g : gaps) mean += g / k;
    for (double g : gaps) var += (g - mean) * (g - mean) / (k - 1);
    // Trials until a success: mean 1/p, variance (1 - p)/p^2.
    const double expected_var = (1 - p) / (p * p);
    EXPECT_NEAR(mean, 1 / p, 5 * std::sqrt(expected_var / k));
    // The sample variance of a geometric variable: its own standard error is
    // about sqrt((mu4 - sigma^4) / k), mu4 ~ 9 sigma^4 here.
    EXPECT_NEAR(var / expected_var, 1.0, 5 * std::sqrt(8.0 / k));
    // P(gap == 1) = p: the allocation right after a sample is a trial too.
    const double ones = static_cast<double>(std::count(gaps.begin(), gaps.end(), 1.0));
    EXPECT_NEAR(ones / k, p, 5 * std::sqrt(p * (1 - p) / k));
}

// While stopped the hook only reads: it writes nothing on the hot path (its
// count stays as it was) and calls nothing; the small entries pop from this
// thread's heap's lists themselves. Sampling, they look at no_heap's, always empty.
TEST(Profiler, TheStoppedHookWritesNothing) {
    alloc::profiler::start({Sampling::bytes, 1.0, 4096});
    alloc::free(alloc::pool_alloc(16));
    EXPECT_EQ(alloc::detail::alloc_heap, &alloc::detail::no_heap);
    alloc::profiler::stop();
    EXPECT_EQ(alloc::detail::hook_state, alloc::detail::hook_stopped);
    alloc::free(alloc::pool_alloc(16));  // points the entries at the heap
    EXPECT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
    const int64_t count = alloc::detail::sample_countdown;
    for (int i = 0; i < 100000; ++i) alloc::free(alloc::pool_alloc(1 + i % 2000));
    EXPECT_EQ(alloc::detail::sample_countdown, count);
    EXPECT_EQ(alloc::detail::hook_state, alloc::detail::hook_stopped);
    EXPECT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
}

// start() on another thread turns this thread's hook on: its next small
// allocation is counted (here, with every allocation recorded, recorded).
TEST(Profiler, StartFromAnotherThreadTurnsTheSmallEntriesHookOn) {
    for (int i = 0; i < 2; ++i) alloc::free(alloc::pool_alloc(24));  // registers this thread, then points its entries at its heap
    ASSERT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
    alloc::profiler::clear();
    std::thread([] { alloc::profiler::start({Sampling::all}); }).join();
    void* p = alloc::pool_alloc(24);
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    alloc::free(p);
    ASSERT_EQ(profile.allocations.size(), 1u);
    EXPECT_EQ(profile.allocations[0].requested, 24u);
}

// The big and managed entries' hook is alloc_heap too: while the profiler
// samples, every one of their allocations reaches it, even with a block on its
// class's list; stopped, a thread that allocates only big blocks points its
// alloc_heap back at its heap, and they are not recorded.
TEST(Profiler, BigAndManagedEntriesSeeTheHookThroughAllocHeap) {
    std::thread([] {
        for (int i = 0; i < 2; ++i) alloc::free(alloc::big_alloc(5000));  // registers the thread, then points its alloc_heap at its heap
        ASSERT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
        alloc::profiler::clear();
        alloc::profiler::start({Sampling::all});
        EXPECT_EQ(alloc::detail::alloc_heap, &alloc::detail::no_heap);
        for (int i = 0; i < 3; ++i) alloc::free(alloc::big_alloc(5000));
        alloc::free(alloc::managed_alloc(6000));
        alloc::profiler::stop();
        for (int i = 0; i < 2; ++i) alloc::free(alloc::big_alloc(5000));
        EXPECT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
        const auto profile = alloc::profiler::fetch();
        ASSERT_EQ(profile.allocations.size(), 4u);
        EXPECT_EQ(profile.allocations[3].requested, 6000u);
    }).join();
}

// start() and stop() from one thread while another allocates (the race the
// sequentially consistent pair in alloc_small_stopped is for; ThreadSanitizer
// runs it too): after the last start() returns, the other thread's next
// allocation is recorded, and after the last stop() its entries go back to
// its own heap.
TEST(Profiler, StartAndStopRacingWithAnAllocatingThreadLoseNoPoke) {
    std::atomic<int> phase{0};
    std::atomic<bool> back_on_heap{false};
    std::thread worker([&] {
        // 1000 bytes among them: the class's list is not empty when it counts below.
        for (int i = 0; phase.load(std::memory_order_acquire) == 0; ++i)
            alloc::free(alloc::pool_alloc(i % 2 ? 1000 : 16 + i % 64));
        alloc::free(alloc::pool_alloc(1000));  // the profiler records every allocation now
        phase.store(2, std::memory_order_release);
        while (phase.load(std::memory_order_acquire) != 3) std::this_thread::yield();
        for (int i = 0; i < 2; ++i) alloc::free(alloc::pool_alloc(1000));
        back_on_heap = alloc::detail::alloc_heap == alloc::detail::this_thread_heap;
    });
    for (int k = 0; k < 300; ++k) {
        alloc::profiler::start({Sampling::bytes, 1.0, 1 << 20});
        alloc::profiler::stop();
    }
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    phase.store(1, std::memory_order_release);
    while (phase.load(std::memory_order_acquire) != 2) std::this_thread::yield();
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    phase.store(3, std::memory_order_release);
    worker.join();
    EXPECT_TRUE(std::any_of(profile.allocations.begin(), profile.allocations.end(),
                            [](const auto& a) { return a.requested == 1000; }));
    EXPECT_TRUE(back_on_heap);
}

// A thread stopped inside record_slow, between its read of the session and
// its arm included, while stop() and start() run (a vCPU the hypervisor takes
// away, or a preemption, does this; here a signal handler that waits, where
// the signal found the thread in record_slow): its first allocation after
// start() returns is still recorded. The handler lets the thread go on
// elsewhere, and the signal is sent again.
namespace {
std::atomic<uintptr_t> stall_begin{0}, stall_end{0};  // record_slow's code
std::atomic<bool> stall_handled{false}, stall_entered{false}, stall_release{false};
void stall_in_record_slow(int, siginfo_t*, void* context) {
    const greg_t* registers = static_cast<ucontext_t*>(context)->uc_mcontext.gregs;
    const auto in_record_slow = [](uintptr_t at) { return at >= stall_begin.load() && at < stall_end.load(); };
    // In record_slow, or in a leaf it calls (libm's log(), between the session's read and the arm).
    if (in_record_slow(static_cast<uintptr_t>(registers[REG_RIP])) ||
        in_record_slow(*reinterpret_cast<const uintptr_t*>(registers[REG_RSP]))) {
        stall_entered.store(true);
        while (!stall_release.load()) __builtin_ia32_pause();
    }
    stall_handled.store(true);
}
}  // namespace

TEST(Profiler, AThreadStoppedInRecordSlowWhileStartRunsRecordsItsNextAllocation) {
    const perf::Symbols symbols;
    const auto begin = reinterpret_cast<uintptr_t>(&alloc::detail::record_slow);
    const std::string name = symbols.name(begin);
    ASSERT_NE(name.find("record_slow"), std::string::npos) << name;
    uintptr_t end = begin;
    while (symbols.name(end) == name) ++end;
    stall_begin = begin;
    stall_end = end;
    struct sigaction action = {}, previous = {};
    action.sa_sigaction = stall_in_record_slow;
    action.sa_flags = SA_SIGINFO;
    ASSERT_EQ(sigaction(SIGUSR1, &action, &previous), 0);
#if defined(__SANITIZE_THREAD__)
    constexpr int rounds = 10;  // its signals wait for an intercepted call: none stops in record_slow
#else
    constexpr int rounds = 1500;  // about 1 in 100 stops the thread between its read and its arm
#endif
    int missed = 0, stalled = 0;
    for (int round = 0; round < rounds; ++round) {
        std::atomic<int> phase{0};
        std::thread worker([&] {
            for (int i = 0; phase.load(std::memory_order_acquire) <= 1; ++i) {
                alloc::free(alloc::pool_alloc(i % 2 ? 1000 : 16 + i % 64));
                if (i == 0) phase.store(1, std::memory_order_release);
            }
            alloc::free(alloc::pool_alloc(999));  // recorded: every allocation is; no other is of 999 bytes
            phase.store(3, std::memory_order_release);
        });
        while (phase.load(std::memory_order_acquire) != 1) std::this_thread::yield();
        stall_entered = false;
        stall_release = false;
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        while (!stall_entered.load() && std::chrono::steady_clock::now() < give_up) {
            alloc::profiler::start({Sampling::bytes, 1.0, 4096});  // record_slow about every 8th allocation
            stall_handled = false;
            pthread_kill(worker.native_handle(), SIGUSR1);
            while (!stall_handled.load() && !stall_entered.load() && std::chrono::steady_clock::now() < give_up)
                __builtin_ia32_pause();
            alloc::profiler::stop();
        }
        stalled += stall_entered.load();
        alloc::profiler::start({Sampling::all});
        phase.store(2, std::memory_order_release);
        stall_release = true;
        while (phase.load(std::memory_order_acquire) != 3) std::this_thread::yield();
        alloc::profiler::stop();
        const auto profile = alloc::profiler::fetch();
        worker.join();
        alloc::profiler::clear();
        missed += std::none_of(profile.allocations.begin(), profile.allocations.end(),
                               [](const auto& a) { return a.requested == 999; });
    }
    ASSERT_EQ(sigaction(SIGUSR1, &previous, nullptr), 0);
    EXPECT_EQ(missed, 0) << "of " << rounds << " rounds, " << stalled << " with the thread stopped in record_slow";
#if !defined(__SANITIZE_THREAD__)
    EXPECT_GT(stalled, rounds / 2);
#endif
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

// start() reaches threads that allocated before it (their hook is poked),
// and threads born after it record from their first allocation.
TEST(Profiler, StartReachesRunningAndNewThreads) {
    std::atomic<int> phase{0};
    std::vector<void*> early_blocks, late_blocks;
    std::thread early([&] {
        alloc::free(alloc::pool_alloc(32));  // known to the profiler, its hook stopped
        phase = 1;
        while (phase != 2) std::this_thread::yield();
        for (int i = 0; i < 10; ++i) early_blocks.push_back(alloc::pool_alloc(32));
    });
    while (phase != 1) std::this_thread::yield();
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    phase = 2;
    early.join();
    std::thread late([&] {
        for (int i = 0; i < 7; ++i) late_blocks.push_back(alloc::pool_alloc(32));
    });
    late.join();
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    EXPECT_EQ(profile.allocations.size(), 17u);
    for (void* p : early_blocks) alloc::free(p);
    for (void* p : late_blocks) alloc::free(p);
}

// A sampled object freed by another thread: the free is recorded and the block
// goes back to its sampled page's heap, from where it is handed out again.
TEST(Profiler, CrossThreadFreeOfASampledObjectIsRecordedAndTheBlockReused) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* p = alloc::pool_alloc(96);
    std::memset(p, 0xab, 96);
    std::thread([p] { alloc::free(p); }).join();
    void* q = nullptr;
    for (int i = 0; i < 1000 && q != p; ++i) q = alloc::pool_alloc(96);  // leaked on purpose if not p
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.frees.size(), 1u);
    EXPECT_EQ(profile.frees[0].address, reinterpret_cast<uintptr_t>(p));
    EXPECT_EQ(q, p) << "the remotely freed sampled block was not handed out again";
    alloc::free(q);
}

// Big blocks: a sampled one's free is recorded; one allocated while stopped is not.
TEST(Profiler, OnlySampledBigBlocksReachTheProfilerWhenFreed) {
    void* unsampled = alloc::big_alloc(50000);
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* sampled = alloc::big_alloc(50000);
    alloc::profiler::stop();
    alloc::free(unsampled);
    alloc::free(sampled);
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.allocations.size(), 1u);
    ASSERT_EQ(profile.frees.size(), 1u);
    EXPECT_EQ(profile.frees[0].address, reinterpret_cast<uintptr_t>(sampled));
}

// A free names the very record it frees, even when the address was sampled
// again after it: two allocations at one address, two frees, one each.
TEST(Profiler, FreesPairWithTheirOwnRecordWhenAnAddressIsReused) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* first = alloc::pool_alloc(64);
    alloc::free(first);
    void* second = alloc::pool_alloc(64);
    void* keep = alloc::pool_alloc(64);  // sampled, still live: no free names it
    alloc::free(second);
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.allocations.size(), 3u);
    ASSERT_EQ(profile.frees.size(), 2u);
    EXPECT_EQ(second, first) << "the freed sampled block was not reused: the test shows nothing";
    EXPECT_EQ(profile.frees[0].allocation, 0u);
    EXPECT_EQ(profile.frees[1].allocation, 1u);
    EXPECT_EQ(profile.allocations[2].address, reinterpret_cast<uintptr_t>(keep));
    alloc::free(keep);
}
