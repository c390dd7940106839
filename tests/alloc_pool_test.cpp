// The pool allocator: every path, alignment, reuse, cross-thread frees, heap
// hand-over, and a randomized alloc/free sequence checking every byte of every
// live object against its pattern.
#include "alloc/pool.hpp"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
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
