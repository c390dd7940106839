// The allocation workloads (lib/alloc/workloads.hpp): which pool path each
// takes (every path by at least one), that an allocator without the optional
// paths does the same work through malloc/free, and that their profiles carry
// each workload's types and its function in every stack.
#include "alloc/pool.hpp"
#include "alloc/profiler.hpp"
#include "alloc/workloads.hpp"
#include "perf/symbols.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <set>
#include <thread>

using namespace benchfp;
using alloc::AllocatorTable;
using alloc::workloads::AllocWorkload;

namespace {

// A table that counts each entry's calls and forwards them to `backing`.
enum Entry { untyped, typed, big, managed, managed_grow, entry_count };
const char* const entry_names[] = {"alloc", "alloc_typed", "big_alloc", "managed_alloc", "managed_realloc"};

struct Tally {
    long calls[entry_count] = {};
    uint64_t requested = 0;       // bytes asked for, on every entry
    long frees = 0, frees_elsewhere = 0;  // frees, and those by a thread other than the workload's
    size_t smallest_big = SIZE_MAX;

    std::set<std::string> entries() const {
        std::set<std::string> out;
        for (int e = 0; e < entry_count; ++e)
            if (calls[e]) out.insert(entry_names[e]);
        return out;
    }
};

const AllocatorTable* backing = nullptr;
std::thread::id workload_thread;
std::atomic<long> calls[entry_count], frees, frees_elsewhere;
std::atomic<uint64_t> requested;
std::atomic<size_t> smallest_big;

void* counted(Entry e, size_t n, void* p) {
    ++calls[e];
    requested += n;
    return p;
}
void* count_alloc(size_t n) { return counted(untyped, n, backing->alloc(n)); }
void* count_typed(size_t n, const alloc::TypeInfo* t) { return counted(typed, n, backing->alloc_typed(n, t)); }
void* count_big(size_t n, const alloc::TypeInfo* t) {
    size_t seen = smallest_big;
    while (n < seen && !smallest_big.compare_exchange_weak(seen, n)) {}
    return counted(big, n, backing->big_alloc(n, t));
}
void* count_managed(size_t n, size_t alignment, const alloc::TypeInfo* t) {
    return counted(managed, n, backing->managed_alloc(n, alignment, t));
}
void* count_grow(void* p, size_t n, const alloc::TypeInfo* t) {
    return counted(managed_grow, n, backing->managed_realloc(p, n, t));
}
void count_free(void* p) {
    ++frees;
    if (std::this_thread::get_id() != workload_thread) ++frees_elsewhere;
    backing->free(p);
}
size_t count_usable_size(void* p) { return backing->usable_size(p); }

// Runs `iterations` of w on `allocator` through a counting table with the same entries.
Tally run_counted(const AllocWorkload& w, const AllocatorTable& allocator, int iterations) {
    backing = &allocator;
    workload_thread = std::this_thread::get_id();
    for (auto& c : calls) c = 0;
    frees = frees_elsewhere = 0;
    requested = 0;
    smallest_big = SIZE_MAX;
    const AllocatorTable table = alloc::with_paths_of(
        allocator, {count_alloc, count_free, count_usable_size, count_typed, count_big, count_managed, count_grow});
    {
        alloc::workloads::AllocWorkloadState state(table);
        for (int i = 0; i < iterations; ++i) w.iteration(table, state);
    }  // frees what is still live, joins the consumer
    Tally t;
    for (int e = 0; e < entry_count; ++e) t.calls[e] = calls[e];
    t.requested = requested, t.frees = frees, t.frees_elsewhere = frees_elsewhere, t.smallest_big = smallest_big;
    return t;
}

size_t malloc_usable(void* p) { return malloc_usable_size(p); }
const AllocatorTable malloc_only{std::malloc, std::free, malloc_usable};

}  // namespace

TEST(AllocWorkloads, EachTakesItsPoolPathsAndTogetherEveryOne) {
    const std::map<std::string, std::set<std::string>> expected = {
        {"small_churn", {"alloc"}},
        {"strings", {"alloc"}},
        {"structs", {"alloc_typed"}},
        {"binary_trees", {"alloc_typed"}},
        {"producer_consumer", {"alloc_typed"}},
        {"arrays", {"alloc_typed", "big_alloc"}},
        {"grow_array", {"managed_alloc", "managed_realloc"}},
    };
    std::set<std::string> taken;
    ASSERT_EQ(alloc::workloads::all().size(), expected.size());
    for (const AllocWorkload& w : alloc::workloads::all()) {
        const Tally t = run_counted(w, alloc::pool_table(), 20);
        EXPECT_EQ(t.entries(), expected.at(w.name)) << w.name;
        taken.merge(t.entries());
        if (t.calls[big]) {
            EXPECT_GT(t.smallest_big, alloc::max_small_size) << w.name << ": big_alloc of a small size";
        }
        const long allocations = t.calls[untyped] + t.calls[typed] + t.calls[big] + t.calls[managed];
        // managed_realloc frees the block it grows: each other allocation is freed through the table.
        EXPECT_EQ(t.frees, allocations) << w.name;
        // Only producer_consumer frees on another thread: the pool's remote free path.
        EXPECT_EQ(t.frees_elsewhere > 0, std::string(w.name) == "producer_consumer") << w.name;
    }
    EXPECT_EQ(taken.size(), size_t{entry_count}) << "a pool path no workload takes";
}

// A peer has only alloc/free: the same workload asks it for the same bytes as
// the pool through all its paths, and frees as many blocks.
TEST(AllocWorkloads, AnAllocatorWithoutTheOptionalPathsDoesTheSameWork) {
    for (const AllocWorkload& w : alloc::workloads::all()) {
        const Tally pool = run_counted(w, alloc::pool_table(), 20);
        const Tally peer = run_counted(w, malloc_only, 20);
        EXPECT_EQ(peer.entries(), std::set<std::string>{"alloc"}) << w.name;
        long pool_blocks = 0;
        for (long c : pool.calls) pool_blocks += c;
        EXPECT_EQ(peer.calls[untyped], pool_blocks) << w.name;
        EXPECT_EQ(peer.requested, pool.requested) << w.name;
        EXPECT_EQ(peer.frees, peer.calls[untyped]) << w.name;
    }
}

// `benchfp alloc profile`'s runs: the workload's types where it knows them,
// and the workload's own function in every sampled stack.
TEST(AllocWorkloads, ProfilesNameTheWorkloadsTypesAndFunctions) {
    const std::map<std::string, std::string> type_suffix = {
        {"small_churn", "unknown"},      {"strings", "unknown"}, {"structs", "::Particle"},
        {"binary_trees", "::TreeNode"},  {"arrays", "float"},    {"grow_array", "double"},
        {"producer_consumer", "::Message"},
    };
    for (const AllocWorkload& w : alloc::workloads::all()) {
        alloc::profiler::clear();
        alloc::profiler::start({alloc::profiler::Sampling::bytes, 1.0, 16 * 1024, 64, 99});
        alloc::workloads::run(w, alloc::pool_table(), 1);
        alloc::profiler::stop();
        const auto profile = alloc::profiler::fetch();
        ASSERT_GT(profile.allocations.size(), 10u) << w.name;
        EXPECT_EQ(profile.frees.size(), profile.allocations.size()) << w.name << ": every block is freed by the end";
        const perf::Symbols symbols;
        for (const auto& r : profile.allocations) {
            const std::string type = perf::demangle(r.type->name.c_str());
            EXPECT_TRUE(type.ends_with(type_suffix.at(w.name))) << w.name << ": " << type;
            const std::string function = std::string("::") + w.name + "(";
            const bool in_workload = std::any_of(r.stack.begin(), r.stack.end(), [&](uintptr_t ret) {
                return symbols.name(ret - 1).find(function) != std::string::npos;
            });
            EXPECT_TRUE(in_workload) << w.name << ": a stack without the workload's function";
            if (!in_workload) break;
        }
    }
    alloc::profiler::clear();
}
