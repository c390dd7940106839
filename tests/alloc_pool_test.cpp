// The pool allocator: every path, alignment, reuse, cross-thread frees, heap
// hand-over, and a randomized alloc/free sequence checking every byte of every
// live object against its pattern. The big blocks' classes: every class, its
// alignment, cross-thread frees, and memory given back to the OS past the threshold.
#include "alloc/pool.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <random>
#include <set>
#include <thread>
#include <unordered_map>
#include <vector>

using namespace benchfp;

namespace {

uint8_t pattern_byte(uint64_t id, size_t i) { return static_cast<uint8_t>((id * 131 + i * 7) ^ (id >> 8)); }
void fill(void* p, size_t size, uint64_t id) {
    auto* b = static_cast<uint8_t*>(p);
    for (size_t i = 0; i < size; ++i) b[i] = pattern_byte(id, i);
}
bool intact(const void* p, size_t size, uint64_t id) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < size; ++i)
        if (b[i] != pattern_byte(id, i)) return false;
    return true;
}

}  // namespace

TEST(Pool, EverySmallSizeGetsItsClassAlignedAndReused) {
    for (size_t size = 1; size <= alloc::max_small_size; size += (size < 64 ? 1 : 37)) {
        void* p = alloc::pool_alloc(size);
        ASSERT_NE(p, nullptr);
        EXPECT_GE(alloc::usable_size(p), size);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (size <= 8 ? 8 : 16), 0u) << size;
        fill(p, size, size);
        EXPECT_TRUE(intact(p, size, size));
        alloc::free(p);
        EXPECT_EQ(alloc::pool_alloc(size), p) << "a freed object is the next one of its class";
        alloc::free(p);
    }
}

TEST(Pool, EverySmallSizeTakesTheSmallestClassThatHoldsIt) {
    for (size_t size = 1; size <= alloc::max_small_size; ++size) {
        const unsigned c = alloc::size_class_of(size);
        ASSERT_LT(c, alloc::class_count) << size;
        EXPECT_GE(alloc::class_sizes[c], size) << size;
        if (c > 0) {
            EXPECT_LT(alloc::class_sizes[c - 1], size) << size;
        }
    }
}

TEST(Pool, BigAndManagedBlocks) {
    void* big = alloc::big_alloc(100000);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(big) % 64, 0u);
    EXPECT_EQ(alloc::usable_size(big), 100000u);
    fill(big, 100000, 1);
    void* via_pool = alloc::pool_alloc(5000);  // above the largest class: the big path
    EXPECT_EQ(alloc::usable_size(via_pool), 5000u);
    void* managed = alloc::managed_alloc(100, 4096);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(managed) % 4096, 0u);
    fill(managed, 100, 2);
    managed = alloc::managed_realloc(managed, 1 << 20);  // grows, keeps the content
    EXPECT_TRUE(intact(managed, 100, 2));
    EXPECT_EQ(reinterpret_cast<uintptr_t>(managed) % 4096, 0u);
    EXPECT_TRUE(intact(big, 100000, 1));
    alloc::free(big);
    alloc::free(via_pool);
    alloc::free(managed);
    alloc::free(nullptr);
}

TEST(Pool, RandomizedSequenceKeepsEveryLiveByte) {
    std::mt19937_64 rng(42);
    std::unordered_map<void*, std::pair<size_t, uint64_t>> live;
    std::vector<void*> order;
    uint64_t next_id = 1;
    for (int op = 0; op < 200000; ++op) {
        if (order.empty() || rng() % 100 < 55) {
            const unsigned kind = rng() % 20;
            const size_t size = kind == 0 ? 2033 + rng() % 20000 : 1 + rng() % alloc::max_small_size;
            void* p = kind == 1 ? alloc::managed_alloc(size) : alloc::pool_alloc(size);
            ASSERT_EQ(live.count(p), 0u) << "a live block was handed out twice";
            fill(p, size, next_id);
            live[p] = {size, next_id++};
            order.push_back(p);
        } else {
            const size_t at = rng() % order.size();
            void* p = order[at];
            order[at] = order.back();
            order.pop_back();
            const auto [size, id] = live.at(p);
            ASSERT_TRUE(intact(p, size, id)) << "object " << id << " of " << size << " bytes was overwritten";
            live.erase(p);
            alloc::free(p);
        }
    }
    for (void* p : order) {
        const auto [size, id] = live.at(p);
        ASSERT_TRUE(intact(p, size, id));
        alloc::free(p);
    }
}

TEST(Pool, CrossThreadFreesAndHeapHandOver) {
    // Producers allocate and hand objects to a consumer that frees them (remote
    // frees); producers come and go, so heaps of exited threads are adopted.
    struct Item {
        void* p;
        size_t size;
        uint64_t id;
    };
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Item> queue;
    bool done = false;
    std::atomic<int> corrupt{0};
    std::thread consumer([&] {
        while (true) {
            std::unique_lock lock(mutex);
            ready.wait(lock, [&] { return done || !queue.empty(); });
            if (queue.empty()) return;
            const Item item = queue.front();
            queue.pop_front();
            lock.unlock();
            if (!intact(item.p, item.size, item.id)) ++corrupt;
            alloc::free(item.p);
        }
    });
    const auto before = alloc::pool_stats();
    for (int round = 0; round < 6; ++round) {
        std::vector<std::thread> producers;
        for (int t = 0; t < 3; ++t)
            producers.emplace_back([&, t, round] {
                std::mt19937 rng(round * 10 + t);
                std::vector<Item> own;
                for (int i = 0; i < 5000; ++i) {
                    const size_t size = 1 + rng() % 600;
                    const uint64_t id = (uint64_t(round) << 40) | (uint64_t(t) << 32) | i;
                    void* p = alloc::pool_alloc(size);
                    fill(p, size, id);
                    if (i % 2) {
                        std::lock_guard lock(mutex);
                        queue.push_back({p, size, id});
                        ready.notify_one();
                    } else {
                        own.push_back({p, size, id});
                    }
                }
                for (const Item& item : own) {  // local frees
                    if (!intact(item.p, item.size, item.id)) ++corrupt;
                    alloc::free(item.p);
                }
            });
        for (auto& t : producers) t.join();
    }
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    ready.notify_one();
    consumer.join();
    EXPECT_EQ(corrupt.load(), 0);
    const auto after = alloc::pool_stats();
    EXPECT_GT(after.adopted_heaps, before.adopted_heaps) << "heaps of exited threads are handed over";
    EXPECT_LE(after.heaps - before.heaps, 6u) << "not one heap per thread ever started";
}

namespace {

// Every class's largest payload, and one byte more than the class below holds.
std::vector<size_t> big_class_sizes() {
    std::vector<size_t> sizes;
    for (unsigned c = 0; c < alloc::big_class_count; ++c) {
        sizes.push_back(alloc::big_class_payload(c));
        if (c) sizes.push_back(alloc::big_class_payload(c - 1) + 1);
    }
    return sizes;
}

}  // namespace

TEST(PoolBig, ClassOfEveryPayloadIsTheSmallestThatHoldsIt) {
    for (size_t n = 1; n <= alloc::max_big_class_payload; ++n) {
        const unsigned c = alloc::big_class_of(n);
        ASSERT_GE(alloc::big_class_payload(c), n);
        if (c) {
            ASSERT_LT(alloc::big_class_payload(c - 1), n) << n;
        }
        ASSERT_LT(alloc::big_class_payload(c), n + n / 4 + alloc::big_min_payload) << "waste bound, at " << n;
    }
}

// Three live blocks of each class (consecutive slots of one chunk), every byte
// written and read back, alignment and usable size checked; managed blocks at
// alignments from 8 B to 64 KiB. Big blocks come from the big reservation, never the arena.
TEST(PoolBig, EveryClassRoundTripsAtEveryAlignment) {
    uint64_t id = 0;
    for (size_t alignment : {size_t{8}, size_t{16}, size_t{64}, size_t{4096}, size_t{65536}}) {
        for (size_t size : big_class_sizes()) {
            void* blocks[3];
            for (void*& p : blocks) {
                p = alignment == 64 && size > alloc::max_small_size ? alloc::big_alloc(size)
                                                                     : alloc::managed_alloc(size, alignment);
                ASSERT_NE(p, nullptr);
                EXPECT_FALSE(alloc::detail::in_arena(p)) << size;
                EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % std::max<size_t>(alignment, 64), 0u)
                    << size << " B at alignment " << alignment;
                EXPECT_GE(alloc::usable_size(p), size);
                fill(p, size, ++id);
            }
            for (int k = 0; k < 3; ++k) {
                EXPECT_TRUE(intact(blocks[k], size, id - 2 + k)) << size << " B at alignment " << alignment;
                alloc::free(blocks[k]);
            }
        }
    }
    void* p = alloc::big_alloc(alloc::max_big_class_payload - 64);  // the largest class (64 B of alignment room)
    EXPECT_TRUE(alloc::detail::in_big_region(p));
    alloc::free(p);
    p = alloc::big_alloc(alloc::max_big_class_payload + 1);  // a mapping of its own
    EXPECT_FALSE(alloc::detail::in_big_region(p));
    fill(p, alloc::max_big_class_payload + 1, 7);
    EXPECT_TRUE(intact(p, alloc::max_big_class_payload + 1, 7));
    alloc::free(p);
}

// The page classes (whole OS pages of payload: 4, 8, 12, 16 KiB and every
// class from 20 KiB) hand out page-aligned payloads, their headers apart, so a
// block's whole payload is its slot: a neighbour starts right after it.
TEST(PoolBig, PageClassesArePageAlignedAndTheirSlotsArePayloadsOnly) {
    for (size_t size : {size_t{4096}, size_t{8192}, size_t{12288}, size_t{16384}, size_t{20480}, size_t{65536},
                        alloc::max_big_class_payload}) {
        std::vector<void*> blocks;
        for (int k = 0; k < 40; ++k) {
            void* p = alloc::big_alloc(size);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u) << size;
            EXPECT_EQ(alloc::usable_size(p), size);
            fill(p, size, static_cast<uint64_t>(k));
            blocks.push_back(p);
        }
        std::vector<uintptr_t> at;
        for (void* p : blocks) at.push_back(reinterpret_cast<uintptr_t>(p));
        std::sort(at.begin(), at.end());
        size_t adjacent = 0;
        for (size_t k = 1; k < at.size(); ++k) adjacent += at[k] - at[k - 1] == size;
        EXPECT_GT(adjacent, 0u) << size << " B: no two blocks side by side (a header in line between them?)";
        for (size_t k = 0; k < blocks.size(); ++k) {
            EXPECT_TRUE(intact(blocks[k], size, k)) << size;
            alloc::free(blocks[k]);
        }
    }
}

// A page class's free and pop touch only its header entry, never the
// payload: a block freed and handed out again keeps every byte.
TEST(PoolBig, APageClassBlockFreedAndTakenAgainKeepsItsBytes) {
    void* p = alloc::big_alloc(16384);
    fill(p, 16384, 41);
    alloc::free(p);
    void* q = alloc::big_alloc(16384);
    ASSERT_EQ(q, p) << "the freed block was not handed out again: the test shows nothing";
    EXPECT_TRUE(intact(q, 16384, 41));
    alloc::free(q);
}

// A page class's block aligned above a page starts inside its slot: its free
// must put the slot back, not the payload's page, so that the next blocks of
// the class, handed out whole, leave their live neighbours intact.
TEST(PoolBig, APageClassBlockAlignedAboveAPageGivesBackItsWholeSlot) {
    // 20 KiB at 64 KiB alignment takes the 96 KiB class (room for the
    // alignment): its slots, 96 KiB apart, start at 0 or 32 KiB modulo 64 KiB,
    // so some of these payloads start 32 KiB into their slots.
    constexpr size_t size = 20480, alignment = 65536, slot = 98304;
    std::vector<void*> aligned, neighbours, again;
    for (int k = 0; k < 4; ++k) {
        aligned.push_back(alloc::managed_alloc(size, alignment));
        ASSERT_EQ(reinterpret_cast<uintptr_t>(aligned.back()) % alignment, 0u);
        neighbours.push_back(alloc::big_alloc(slot));
        fill(neighbours.back(), slot, 100 + k);
    }
    for (void* p : aligned) alloc::free(p);
    for (int k = 0; k < 4; ++k) {
        again.push_back(alloc::big_alloc(slot));
        fill(again.back(), slot, 200 + k);
    }
    for (int k = 0; k < 4; ++k) EXPECT_TRUE(intact(neighbours[k], slot, 100 + k)) << k;
    for (int k = 0; k < 4; ++k) EXPECT_TRUE(intact(again[k], slot, 200 + k)) << k;
    for (void* p : neighbours) alloc::free(p);
    for (void* p : again) alloc::free(p);
}

// A class's free slots keep their headers for the next allocation (only its
// magic, size and sampled flag are written again), so a slot freed from a
// block that a larger alignment placed apart must go back with a header at the
// default placement: the default block then taken from it has the slot's own
// size, grows, and goes back to the same list; in an in-line class and in a
// page class. A slot whose default spot never held a header shows a missing
// rewrite (one that held a default header before reads the same as the rewrite
// would): ctest runs each test in a process of its own, so the slots taken
// here are new ones.
TEST(PoolBig, ASlotFreedAtALargerAlignmentServesTheDefaultOneWhole) {
    for (const auto& [size, alignment] : {std::pair{size_t{1500}, size_t{256}}, std::pair{size_t{12288}, size_t{8192}}}) {
        const unsigned c = alloc::big_class_of(size + alignment - 64);
        const size_t whole = alloc::big_class_payload(c);  // its class's payload at the default alignment
        ASSERT_EQ(alloc::big_class_of(whole), c);
        // A slot whose aligned payload did not start where the default one does
        // (held: the next try takes another slot).
        std::vector<void*> held;
        void *p = nullptr, *q = nullptr;
        for (int attempt = 0; attempt < 16 && p == q; ++attempt) {
            if (q) held.push_back(q);
            p = alloc::managed_alloc(size, alignment);
            ASSERT_EQ(reinterpret_cast<uintptr_t>(p) % alignment, 0u);
            alloc::free(p);
            q = alloc::big_alloc(whole);
            ASSERT_TRUE(q <= p && static_cast<char*>(p) - static_cast<char*>(q) < static_cast<ptrdiff_t>(alignment))
                << whole << " B: not the slot just freed, the test shows nothing";
        }
        ASSERT_NE(p, q) << whole << " B: every aligned payload started at its slot's default one";
        EXPECT_EQ(alloc::usable_size(q), whole);
        fill(q, whole, 60);
        void* grown = alloc::managed_realloc(q, 2 * whole);
        EXPECT_TRUE(intact(grown, whole, 60)) << whole;
        EXPECT_EQ(reinterpret_cast<uintptr_t>(grown) % 64, 0u);
        void* again = alloc::big_alloc(whole);  // the realloc freed q's slot: back on its class's list
        EXPECT_EQ(again, q) << whole << " B: the slot did not go back to its class's list";
        alloc::free(again);
        alloc::free(grown);
        for (void* h : held) alloc::free(h);
    }
}

TEST(PoolBig, ManagedReallocGrowthKeepsContents) {
    void* p = alloc::managed_alloc(32, 256);
    fill(p, 32, 5);
    for (size_t size = 32; size < (size_t{4} << 20); size *= 2) {  // through every class, then mappings
        ASSERT_TRUE(intact(p, size, 5)) << size;
        p = alloc::managed_realloc(p, 2 * size);
        EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u) << "the alignment is kept";
        fill(p, 2 * size, 5);
    }
    alloc::free(p);
}

// Big blocks allocated by threads that exit and freed here (remote frees, to
// heaps waiting for adoption), and blocks freed by another live thread, then
// allocated again by their owner: every byte intact, no block handed out twice.
TEST(PoolBig, CrossThreadFreesComeBackToTheOwner) {
    constexpr int count = 64;
    std::vector<void*> blocks(count);
    std::thread([&] {
        for (int i = 0; i < count; ++i) fill(blocks[i] = alloc::big_alloc(3000 + 997 * i), 3000 + 997 * i, i);
    }).join();
    for (int i = 0; i < count; ++i) {
        ASSERT_TRUE(intact(blocks[i], 3000 + 997 * i, i));
        alloc::free(blocks[i]);
    }
    for (int round = 0; round < 3; ++round) {
        for (int i = 0; i < count; ++i) fill(blocks[i] = alloc::big_alloc(5000), 5000, i);
        std::thread([&] {
            for (int i = 0; i < count; ++i) {
                EXPECT_TRUE(intact(blocks[i], 5000, i));
                alloc::free(blocks[i]);
            }
        }).join();
    }
    std::vector<void*> again(count);
    for (int i = 0; i < count; ++i) fill(again[i] = alloc::big_alloc(5000), 5000, 1000 + i);
    for (int i = 0; i < count; ++i) {
        EXPECT_TRUE(intact(again[i], 5000, 1000 + i)) << "a block was handed out twice";
        alloc::free(again[i]);
    }
}

namespace {

// How many of the OS pages wholly inside [p, p + size) are resident.
size_t resident_pages(const void* p, size_t size) {
    const uintptr_t os_page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t from = (reinterpret_cast<uintptr_t>(p) + os_page - 1) & ~(os_page - 1);
    const uintptr_t to = (reinterpret_cast<uintptr_t>(p) + size) & ~(os_page - 1);
    std::vector<unsigned char> in_core((to - from) / os_page);
    if (mincore(reinterpret_cast<void*>(from), to - from, in_core.data()) != 0) ADD_FAILURE() << "mincore failed";
    size_t resident = 0;
    for (unsigned char page : in_core) resident += page & 1;
    return resident;
}

// Frees `count` touched blocks of `size` bytes under `threshold`; returns how
// many of their pages stay resident, with the stats' released bytes.
std::pair<size_t, size_t> resident_after_freeing(size_t threshold, int count, size_t size) {
    const size_t saved = alloc::big_release_threshold();
    alloc::set_big_release_threshold(threshold);
    std::vector<void*> blocks(count);
    for (void*& p : blocks) std::memset(p = alloc::big_alloc(size), 1, size);
    size_t touched = 0;
    for (void* p : blocks) touched += resident_pages(p, size);
    EXPECT_GT(touched, 0u) << "the blocks were never resident: the test shows nothing";
    const size_t released_before = alloc::pool_stats().released_bytes;
    for (void* p : blocks) alloc::free(p);
    size_t resident = 0;
    for (void* p : blocks) resident += resident_pages(p, size);  // the freed ranges: readable, reserved
    const size_t released = alloc::pool_stats().released_bytes - released_before;
    // Reused after their release: zero pages fault in, writable.
    for (void*& p : blocks) std::memset(p = alloc::big_alloc(size), 2, size);
    for (void* p : blocks) alloc::free(p);
    alloc::set_big_release_threshold(saved);
    return {resident, released};
}

}  // namespace

// A heap keeps its free big blocks resident up to the threshold, and gives the
// bodies back to the OS past it: mincore sees the pages go.
TEST(PoolBig, FreedBlocksPastTheThresholdLeaveMemory) {
    constexpr int count = 16;
    constexpr size_t size = 256 << 10;  // 4 MiB in all
    const auto [kept, none_released] = resident_after_freeing(size_t{64} << 20, count, size);
    EXPECT_GE(kept, count * (size / 4096 - 1)) << "under the threshold the freed blocks stay resident";
    EXPECT_EQ(none_released, 0u);
    const auto [left, released] = resident_after_freeing(size_t{512} << 10, count, size);
    // Released down to half the threshold once past it: at most the
    // threshold's worth stays (two blocks, whose slots are their 256 KiB payloads).
    EXPECT_LE(left, (size_t{512} << 10) / 4096) << "pages of freed blocks still resident past the threshold";
    EXPECT_GE(released, (count - 2) * (size - 4096)) << "PoolStats::released_bytes";
}

namespace {

// The pool page p lies in.
uintptr_t page_address(const void* p) { return reinterpret_cast<uintptr_t>(alloc::detail::page_of(p)); }

// The distinct pool pages of `objects`.
std::set<uintptr_t> pages_of(const std::vector<void*>& objects) {
    std::set<uintptr_t> pages;
    for (void* p : objects) pages.insert(page_address(p));
    return pages;
}

// On a thread of its own (a heap with nothing else on it): fills `count`
// objects of 64 B, keeps every `live_every`-th, frees the rest, and trims
// keeping `keep_bytes`. Says what trim returned, which pages stayed resident,
// and whether the kept objects kept their bytes and new objects reuse pages.
struct TrimOutcome {
    size_t released = 0, released_pages_stat = 0;
    size_t resident_freed_pages = 0, freed_pages = 0;  // pages with no live object: resident after trim / all
    size_t resident_live_pages = 0, live_pages = 0;
    bool live_intact = true;
    size_t new_arena_pages = 0;  // taken from the arena by refilling as many objects after trim
};

TrimOutcome fill_free_trim(size_t count, size_t live_every, size_t keep_bytes) {
    TrimOutcome out;
    std::thread([&] {
        std::vector<void*> live, freed;
        for (size_t i = 0; i < count; ++i) {
            void* p = alloc::pool_alloc(64);
            std::memset(p, int(i % 251), 64);
            (i % live_every == 0 ? live : freed).push_back(p);
        }
        const auto live_pages = pages_of(live);
        std::set<uintptr_t> freed_pages;
        for (uintptr_t page : pages_of(freed))
            if (!live_pages.count(page)) freed_pages.insert(page);
        for (void* p : freed) alloc::free(p);
        const size_t stat_before = alloc::pool_stats().released_pages;
        out.released = alloc::trim(keep_bytes);
        out.released_pages_stat = alloc::pool_stats().released_pages - stat_before;
        for (uintptr_t page : freed_pages) out.resident_freed_pages += resident_pages(reinterpret_cast<void*>(page), alloc::page_size) > 0;
        for (uintptr_t page : live_pages) out.resident_live_pages += resident_pages(reinterpret_cast<void*>(page), alloc::page_size) > 0;
        out.freed_pages = freed_pages.size();
        out.live_pages = live_pages.size();
        for (size_t i = 0; i < live.size(); ++i) {
            const auto* bytes = static_cast<const unsigned char*>(live[i]);
            for (size_t b = 0; b < 64; ++b) out.live_intact = out.live_intact && bytes[b] == (i * live_every) % 251;
        }
        const size_t arena_before = alloc::pool_stats().pages;
        std::vector<void*> again(freed.size());
        for (void*& p : again) std::memset(p = alloc::pool_alloc(64), 7, 64);  // zero pages fault in, writable
        out.new_arena_pages = alloc::pool_stats().pages - arena_before;
        for (void* p : again) alloc::free(p);
        for (void* p : live) alloc::free(p);
    }).join();
    return out;
}

}  // namespace

// Small pages go back to the OS on trim(): every page whose objects are all
// free leaves memory (mincore), pages with a live object stay with their bytes,
// and the next allocations reuse the released pages before the arena's.
TEST(PoolTrim, WhollyFreePagesLeaveMemoryAndComeBack) {
    const TrimOutcome t = fill_free_trim(40000, 8000, 0);  // about 160 pages, 5 of them with a live object
    ASSERT_GT(t.freed_pages, 100u);
    EXPECT_EQ(t.live_pages, 5u);
    // All but the page the class is carving (it holds uncarved objects) leave.
    EXPECT_LE(t.resident_freed_pages, 1u) << "of " << t.freed_pages << " wholly free pages";
    EXPECT_GE(t.released, (t.freed_pages - 1) * alloc::page_size);
    EXPECT_EQ(t.released_pages_stat * alloc::page_size, t.released) << "PoolStats::released_pages";
    EXPECT_EQ(t.resident_live_pages, t.live_pages) << "a page with a live object was released";
    EXPECT_TRUE(t.live_intact);
    EXPECT_EQ(t.new_arena_pages, 0u) << "the refill took new pages while released ones waited";
}

// trim(keep_bytes) keeps that many bytes of wholly free pages resident.
TEST(PoolTrim, KeepsWhatItIsAskedToKeep) {
    const TrimOutcome all = fill_free_trim(40000, 40000, 0);
    const TrimOutcome kept = fill_free_trim(40000, 40000, 10 * alloc::page_size);
    EXPECT_EQ(kept.released + 10 * alloc::page_size, all.released);
    EXPECT_GE(kept.resident_freed_pages, 10u);
}

// An owner thread allocates `count` objects of 64 B, `free_remotely` frees
// them all from another thread, then the owner trims: it must release every
// page they lie in but one (the page its class is carving).
void expect_every_page_but_one_released(size_t count, const std::function<void(std::vector<void*>&)>& free_remotely) {
    std::vector<void*> objects(count);
    size_t released = 0;
    std::mutex m;
    std::condition_variable cv;
    bool allocated = false, freed = false;
    std::thread owner([&] {
        for (void*& p : objects) std::memset(p = alloc::pool_alloc(64), 1, 64);
        std::unique_lock lock(m);
        allocated = true;
        cv.notify_all();
        cv.wait(lock, [&] { return freed; });
        released = alloc::trim(0);
    });
    {
        std::unique_lock lock(m);
        cv.wait(lock, [&] { return allocated; });
        free_remotely(objects);
        freed = true;
        cv.notify_all();
    }
    owner.join();
    EXPECT_GE(released, (pages_of(objects).size() - 1) * alloc::page_size);
}

// The objects one page at a time in turn (the first of every page, then the
// second, ...): the last 31 freed lie in 31 pages. 19999 frees are 624 batches
// of 32 and 31 held back (pool.cpp, RemoteBatch): were those never pushed, 31
// pages would not be wholly free when their owner trims.
void free_page_by_page(std::vector<void*>& objects) {
    std::map<uintptr_t, std::vector<void*>> by_page;
    for (void* p : objects) by_page[page_address(p)].push_back(p);
    for (size_t k = 0;; ++k) {
        bool any = false;
        for (auto& [page, in_page] : by_page)
            if (k < in_page.size()) {
                alloc::free(in_page[k]);
                any = true;
            }
        if (!any) return;
    }
}

// A thread that frees other heaps' objects and exits pushes the frees it held back.
TEST(PoolTrim, RemoteFreesHeldBackReachTheOwnerAtTheFreeingThreadsExit) {
    expect_every_page_but_one_released(
        19999, [](std::vector<void*>& o) { std::thread([&] { free_page_by_page(o); }).join(); });
}

// A thread's trim() pushes the frees it holds back of other heaps' objects, whose owners then see them.
TEST(PoolTrim, RemoteFreesHeldBackReachTheOwnerAtTheFreeingThreadsTrim) {
    expect_every_page_but_one_released(19999, [](std::vector<void*>& o) {
        free_page_by_page(o);
        alloc::trim(0);
    });
}

// A free for another class (or owner) pushes the frees held back before it.
TEST(PoolTrim, RemoteFreesHeldBackReachTheOwnerAtAFreeOfAnotherClass) {
    void* other = nullptr;  // 128 B, of a heap neither thread below has
    std::thread([&] { other = alloc::pool_alloc(128); }).join();
    expect_every_page_but_one_released(19999, [&](std::vector<void*>& o) {
        free_page_by_page(o);
        alloc::free(other);
    });
}

// Objects freed by another thread are taken back before the count: their pages leave too.
// (20000 frees are 625 whole batches: this thread holds none back.)
TEST(PoolTrim, RemoteFreesAreCounted) {
    // About 80 pages of 64 B objects.
    expect_every_page_but_one_released(20000, [](std::vector<void*>& o) {
        for (void* p : o) alloc::free(p);
    });
}
