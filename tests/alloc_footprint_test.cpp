// The footprint measurement (alloc/footprint.hpp) measures something real:
// the live objects it counts are the workload's, more of them hold more
// resident bytes, the figure is at least the objects' own bytes and not
// absurdly more, and a measuring child that dies is an error, never a figure.
// Not among the sanitizer runs (scripts/test.sh): shadow memory is resident too.
#include "alloc/footprint.hpp"

#include "alloc/allocator_table.hpp"
#include "alloc/workloads.hpp"

#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdlib>
#include <string>

using namespace benchfp::alloc;

namespace {

const workloads::AllocWorkload& workload(const char* name) {
    const workloads::AllocWorkload* w = workloads::find(name);
    if (!w) throw std::runtime_error(std::string("no workload ") + name);
    return *w;
}

size_t glibc_usable(void* p) { return malloc_usable_size(p); }
const AllocatorTable glibc{std::malloc, std::free, glibc_usable};

}  // namespace

// binary_trees holds 511 nodes of 16 B at its peak, structs 256 Particles of 56 B.
TEST(AllocFootprint, CountsTheWorkloadsLiveObjectsAtThePeak) {
    const footprint::Figure trees = footprint::measure(workload("binary_trees"), pool_table_unprofiled(), 8, 2);
    EXPECT_EQ(trees.live_objects, 511.0 * 8);
    const footprint::Figure structs = footprint::measure(workload("structs"), pool_table(), 4, 8);
    EXPECT_EQ(structs.live_objects, 256.0 * 4);
}

TEST(AllocFootprint, MoreLiveObjectsHoldMoreResidentBytes) {
    const auto& trees = workload("binary_trees");
    const footprint::Figure few = footprint::measure(trees, pool_table_unprofiled(), 64, 2);
    const footprint::Figure many = footprint::measure(trees, pool_table_unprofiled(), 512, 2);
    ASSERT_EQ(many.live_objects, 8 * few.live_objects);
    // 8x the nodes (128 KiB more than 8 times 16 B each at least): more than 4x the pages.
    EXPECT_GT(many.resident_bytes, 4 * few.resident_bytes) << few.resident_bytes << " -> " << many.resident_bytes;
    EXPECT_GE(many.resident_bytes, 511.0 * 512 * 16);
}

// At the gate's scale the pool's figure is at least the live object's own size
// (the measurement writes every block it hands out) and within a few times it:
// 16 B tree nodes, 56 B structs, 16 KiB arrays.
TEST(AllocFootprint, PoolFigureIsWithinSaneBounds) {
    struct Expected {
        const char* workload;
        double at_least, at_most;
    };
    for (const Expected& e : {Expected{"binary_trees", 16, 64}, Expected{"structs", 56, 160},
                              Expected{"arrays", 16384, 3 * 16384}}) {
        const footprint::Figure f = footprint::measure(workload(e.workload), pool_table_unprofiled());
        EXPECT_GE(f.per_live_object(), e.at_least) << e.workload;
        EXPECT_LT(f.per_live_object(), e.at_most) << e.workload;
    }
}

// A peer is measured the same way: glibc keeps a 16 B header word per 56 B struct (a 64 B chunk).
TEST(AllocFootprint, GlibcFigureIsMeasuredToo) {
    const footprint::Figure f = footprint::measure(workload("structs"), glibc);
    EXPECT_EQ(f.live_objects, 256.0 * workload("structs").footprint_copies);
    EXPECT_GE(f.per_live_object(), 0.9 * 64);
    EXPECT_LT(f.per_live_object(), 160);
}

namespace {
void* crashing_alloc(size_t) { std::abort(); }
}  // namespace

TEST(AllocFootprint, AChildThatDiesIsAnError) {
    const AllocatorTable broken{crashing_alloc, std::free, glibc_usable};
    try {
        footprint::measure(workload("structs"), broken, 1, 1);
        FAIL() << "a figure from a child that aborted";
    } catch (const footprint::Error& e) {
        EXPECT_NE(std::string(e.what()).find("signal 6"), std::string::npos) << e.what();
    }
}

// The gate's measurements come from a zygote forked before anything ran: what
// the process does to an allocator afterwards does not move a figure. (A child
// forked from the process itself reuses, and so counts, the pages that earlier
// work left half full: glibc's strings figure moved from 524288 to 454656
// bytes that way, where the zygote's stays within 8 KiB.)
TEST(AllocFootprint, ZygoteFiguresDoNotDependOnWhatRanBefore) {
    footprint::Zygote zygote;
    const auto& strings = workload("strings");
    const footprint::Figure first = zygote.measure(strings, glibc);
    // glibc's heap left with free chunks all over (small_churn's 1..512 B blocks, freed at its end).
    workloads::run(workload("small_churn"), glibc, 4);
    const footprint::Figure again = zygote.measure(strings, glibc);
    EXPECT_EQ(again.live_objects, first.live_objects);
    EXPECT_NEAR(again.resident_bytes, first.resident_bytes, 2 * 4096) << first.resident_bytes << " then " << again.resident_bytes;
}
