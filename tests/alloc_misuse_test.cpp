// Misuse of the pool (lib/alloc/pool.hpp's header says which build detects
// what): each case must abort with a message that names the misuse, the
// pointer, and its page and class where it has them. The checked build
// (-DBENCHFP_POOL_CHECKED=ON, scripts/test.sh's sanitizer builds) runs them
// all; the normal build skips the ones only the checked build detects.
#include "alloc/pool.hpp"
#include "alloc/pool_check.hpp"
#include "alloc/profiler.hpp"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

using namespace benchfp;

namespace {

class PoolMisuseDeathTest : public testing::Test {
protected:
    // Each case runs in a freshly started process: the tests before it started threads.
    void SetUp() override { GTEST_FLAG_SET(death_test_style, "threadsafe"); }
};

// For a misuse only the checked build detects; why_not says why the normal build does not.
#define SKIP_UNLESS_CHECKED(misuse, why_not)                                                             \
    if (!alloc::pool_checked) {                                                                          \
        GTEST_SKIP() << misuse << " is detected only in the checked build (-DBENCHFP_POOL_CHECKED=ON): " \
                     << why_not;                                                                         \
    }

constexpr const char* fast_path_checks_nothing = "the normal build's free fast path checks nothing";

const std::string pointer = "0x[0-9a-f]+";
const std::string page_and_class = " \\(page " + pointer + ", class 48 B\\)";

// An object of class 48 B that another thread allocated (and exited): freeing
// it here takes free_slow, the remote free. This thread has a heap of its own.
char* from_another_thread() {
    alloc::free(alloc::pool_alloc(8));
    void* p = nullptr;
    std::thread([&p] { p = alloc::pool_alloc(48); }).join();
    return static_cast<char*>(p);
}

}  // namespace

TEST_F(PoolMisuseDeathTest, DoubleFreeByTheOwningThread) {
    SKIP_UNLESS_CHECKED("a double free by the owning thread", fast_path_checks_nothing);
    EXPECT_DEATH(
        {
            void* p = alloc::pool_alloc(48);
            alloc::free(p);
            alloc::free(p);
        },
        "benchfp pool: double free of " + pointer + page_and_class);
}

TEST_F(PoolMisuseDeathTest, DoubleFreeByAnotherThread) {
    EXPECT_DEATH(
        {
            char* p = from_another_thread();
            alloc::free(p);
            alloc::free(p);
        },
        "benchfp pool: double free of " + pointer + page_and_class);
}

// The second free comes after the first went onto the owner's remote list in a
// batch of 32 (pool.cpp, RemoteBatch), and is not the newest of the next batch:
// found when that batch is pushed over it, where it would have linked the list
// into a loop.
TEST_F(PoolMisuseDeathTest, DoubleFreeByAnotherThreadAcrossABatch) {
    EXPECT_DEATH(
        {
            alloc::free(alloc::pool_alloc(8));  // first: this thread's own heap (it would adopt the other's)
            std::vector<char*> objects(33);
            std::thread([&objects] {
                for (char*& p : objects) p = static_cast<char*>(alloc::pool_alloc(48));
            }).join();
            for (int i = 0; i < 32; ++i) alloc::free(objects[i]);  // the 32nd pushes all 32, itself at the head
            alloc::free(objects[31]);
            alloc::free(objects[32]);
            alloc::trim(0);  // pushes the batch of two
        },
        "benchfp pool: double free of " + pointer + page_and_class);
}

// A sampled object moved to a big block (sampled_block): its second free, even
// on its own thread, finds the header wiped.
TEST_F(PoolMisuseDeathTest, DoubleFreeOfASampledObject) {
    EXPECT_DEATH(
        {
            alloc::profiler::start({alloc::profiler::Sampling::all});
            void* p = alloc::pool_alloc(48);
            alloc::profiler::stop();
            alloc::free(p);
            alloc::free(p);
        },
        "benchfp pool: invalid free of " + pointer + ": not a (live )?block of this allocator");
}

TEST_F(PoolMisuseDeathTest, InteriorPointerByTheOwningThread) {
    SKIP_UNLESS_CHECKED("an interior pointer freed by the owning thread", fast_path_checks_nothing);
    EXPECT_DEATH(alloc::free(static_cast<char*>(alloc::pool_alloc(48)) + 16),
                 "benchfp pool: invalid free of " + pointer + page_and_class +
                     ": not the start of an object: 16 B into the one at " + pointer);
}

TEST_F(PoolMisuseDeathTest, InteriorPointerByAnotherThread) {
    EXPECT_DEATH(alloc::free(from_another_thread() + 24),
                 "benchfp pool: invalid free of " + pointer + page_and_class +
                     ": not the start of an object: 24 B into the one at " + pointer);
}

TEST_F(PoolMisuseDeathTest, PointerIntoAPageNeverHandedOut) {
    EXPECT_DEATH(
        {
            alloc::free(alloc::pool_alloc(48));  // the arena exists, this thread has a heap
            const uintptr_t last_page = alloc::detail::arena_base + alloc::detail::arena_size - alloc::page_size;
            alloc::free(reinterpret_cast<void*>(last_page + 1024));
        },
        "benchfp pool: invalid free of " + pointer + " \\(page " + pointer + "\\): the page was never handed out");
}

// A thread that has no heap yet (no_heap) gets the same message: the fast
// path's owner compare cannot match a page nobody owns.
TEST_F(PoolMisuseDeathTest, PointerIntoAPageNeverHandedOutFromAThreadWithoutAHeap) {
    EXPECT_DEATH(
        {
            alloc::free(alloc::pool_alloc(48));  // the arena exists
            const uintptr_t last_page = alloc::detail::arena_base + alloc::detail::arena_size - alloc::page_size;
            std::thread([&] { alloc::free(reinterpret_cast<void*>(last_page + 2048)); }).join();
        },
        "benchfp pool: invalid free of " + pointer + " \\(page " + pointer + "\\): the page was never handed out");
}

TEST_F(PoolMisuseDeathTest, PointerNotFromThePool) {
    alignas(64) static char not_a_block[1024];
    EXPECT_DEATH(alloc::free(not_a_block + 512),
                 "benchfp pool: invalid free of " + pointer + ": not a (live )?block of this allocator");
}

// The normal build finds the header wiped (the block is not handed out again in between).
TEST_F(PoolMisuseDeathTest, BigBlockFreedTwice) {
    EXPECT_DEATH(
        {
            void* p = alloc::big_alloc(100000);
            alloc::free(p);
            alloc::free(p);
        },
        "benchfp pool: invalid free of " + pointer + ": not a (live )?block of this allocator");
}

// A page class's header is apart, found from the payload's page: a pointer
// into the block, on a page boundary or not, names no header (8 and 63 bytes
// in, the page's entry is the block's own).
TEST_F(PoolMisuseDeathTest, InteriorPointersOfAPageClassBlock) {
    char* p = static_cast<char*>(alloc::big_alloc(16384));
    for (size_t offset : {size_t{8}, size_t{63}, size_t{64}, size_t{4096}})
        EXPECT_DEATH(alloc::free(p + offset),
                     "benchfp pool: invalid free of " + pointer + ": not a (live )?block of this allocator")
            << offset;
    alloc::free(p);
}

TEST_F(PoolMisuseDeathTest, ManagedBlockFreedTwiceByAnotherThread) {
    EXPECT_DEATH(
        {
            void* p = alloc::managed_alloc(100);
            alloc::free(p);
            std::thread([p] { alloc::free(p); }).join();
        },
        "benchfp pool: invalid free of " + pointer + ": not a (live )?block of this allocator");
}

// The checks reject misuse only: a block freed and allocated again may be freed again.
TEST(PoolMisuse, AFreedBlockAllocatedAgainIsLive) {
    void* p = alloc::pool_alloc(48);
    alloc::free(p);
    void* q = alloc::pool_alloc(48);
    ASSERT_EQ(q, p) << "the freed block was not handed out again: the test shows nothing";
    alloc::free(q);
    void* big = alloc::big_alloc(100000);
    alloc::free(big);
    alloc::free(alloc::big_alloc(100000));
}

// The pointer checks divide page offsets by class sizes with a multiply: exact
// for every offset in a page and every class.
TEST(PoolMisuse, ClassDivisionIsExactForEveryPageOffset) {
    for (unsigned c = 0; c < alloc::class_count; ++c)
        for (uint32_t n = 0; n < alloc::page_size; ++n)
            ASSERT_EQ(alloc::detail::divide_by_class(n, c), n / alloc::class_sizes[c]) << n << " / " << alloc::class_sizes[c];
}
