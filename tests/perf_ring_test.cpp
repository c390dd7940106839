// Ring-buffer parsing on synthetic rings: wrap-around, LOST, THROTTLE, context markers.
#include "perf/error.hpp"
#include "perf/ring.hpp"

#include <gtest/gtest.h>
#include <linux/perf_event.h>

#include <cstring>
#include <vector>

using namespace benchfp::perf;

namespace {

// A ring of `size` bytes that records are written into at a free-running position.
struct SyntheticRing {
    explicit SyntheticRing(uint64_t size, uint64_t start) : data(size), head(start), tail(start) {}

    void write_bytes(const void* src, size_t len) {
        const auto* bytes = static_cast<const uint8_t*>(src);
        for (size_t i = 0; i < len; ++i) data[(head + i) % data.size()] = bytes[i];
        head += len;
    }
    void record(uint32_t type, const std::vector<uint64_t>& words) {
        perf_event_header header{type, 0, static_cast<uint16_t>(sizeof(perf_event_header) + 8 * words.size())};
        write_bytes(&header, sizeof header);
        write_bytes(words.data(), 8 * words.size());
    }
    void sample(uint64_t ip, uint32_t pid, uint32_t tid, uint64_t time, const std::vector<uint64_t>& chain) {
        std::vector<uint64_t> words = {ip, (uint64_t{tid} << 32) | pid, time, chain.size()};
        words.insert(words.end(), chain.begin(), chain.end());
        record(PERF_RECORD_SAMPLE, words);
    }
    uint64_t parse(std::vector<Sample>& out, RingStats& stats) {
        tail = parse_ring(data.data(), data.size(), tail, head, out, stats);
        return tail;
    }

    std::vector<uint8_t> data;
    uint64_t head, tail;
};

constexpr uint64_t user = static_cast<uint64_t>(PERF_CONTEXT_USER);
constexpr uint64_t kernel = static_cast<uint64_t>(PERF_CONTEXT_KERNEL);

}  // namespace

TEST(PerfRing, DecodesASampleAndDropsTheContextMarker) {
    SyntheticRing ring(256, 0);
    ring.sample(0x1000, 7, 8, 99, {user, 0x1000, 0x2000, 0x3000});
    std::vector<Sample> samples;
    RingStats stats;
    EXPECT_EQ(ring.parse(samples, stats), ring.head);
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(samples[0].ip, 0x1000u);
    EXPECT_EQ(samples[0].pid, 7u);
    EXPECT_EQ(samples[0].tid, 8u);
    EXPECT_EQ(samples[0].time, 99u);
    EXPECT_EQ(samples[0].chain, (std::vector<uint64_t>{0x1000, 0x2000, 0x3000}));
    EXPECT_EQ(stats.samples, 1u);
}

TEST(PerfRing, KeepsOnlyTheUserPartOfAMixedChain) {
    SyntheticRing ring(256, 0);
    ring.sample(0x1000, 1, 1, 1, {kernel, 0xffffffff81000000, 0xffffffff81000010, user, 0x1000, 0x2000});
    std::vector<Sample> samples;
    RingStats stats;
    ring.parse(samples, stats);
    ASSERT_EQ(samples.size(), 1u);
    EXPECT_EQ(samples[0].chain, (std::vector<uint64_t>{0x1000, 0x2000}));
}

TEST(PerfRing, JoinsRecordsSplitByTheWrapAround) {
    // Every start offset puts some record's header or body across the end of the ring.
    for (uint64_t start = 0; start < 128; start += 8) {
        SyntheticRing ring(128, 1000 * 128 + start);  // positions are free-running, far past the size
        std::vector<Sample> samples;
        RingStats stats;
        for (int round = 0; round < 5; ++round) {
            ring.sample(0x100 + round, 1, 2, round, {user, 0x100u + round, 0x200, 0x300});
            ring.parse(samples, stats);
        }
        ASSERT_EQ(samples.size(), 5u) << "start " << start;
        for (int round = 0; round < 5; ++round) {
            EXPECT_EQ(samples[round].ip, 0x100u + round);
            EXPECT_EQ(samples[round].chain, (std::vector<uint64_t>{0x100u + round, 0x200, 0x300}));
        }
    }
}

TEST(PerfRing, CountsLostThrottleAndUnknownRecords) {
    SyntheticRing ring(512, 40);
    ring.sample(0x1, 1, 1, 1, {user, 0x1});
    ring.record(PERF_RECORD_LOST, {/*id*/ 5, /*lost*/ 17});
    ring.record(PERF_RECORD_THROTTLE, {1, 5, 5});
    ring.record(PERF_RECORD_UNTHROTTLE, {2, 5, 5});
    ring.record(PERF_RECORD_LOST, {5, 3});
    ring.record(PERF_RECORD_READ, {0, 0});  // not interpreted
    ring.sample(0x2, 1, 1, 2, {user, 0x2});
    std::vector<Sample> samples;
    RingStats stats;
    ring.parse(samples, stats);
    EXPECT_EQ(samples.size(), 2u);
    EXPECT_EQ(stats.lost, 20u);
    EXPECT_EQ(stats.lost_records, 2u);
    EXPECT_EQ(stats.throttled, 1u);
    EXPECT_EQ(stats.unthrottled, 1u);
    EXPECT_EQ(stats.other, 1u);
}

TEST(PerfRing, RejectsACorruptRecordInsteadOfLooping) {
    SyntheticRing ring(256, 0);
    perf_event_header zero{PERF_RECORD_SAMPLE, 0, 0};
    ring.write_bytes(&zero, sizeof zero);
    ring.write_bytes("\0\0\0\0\0\0\0\0", 8);
    std::vector<Sample> samples;
    RingStats stats;
    EXPECT_THROW(ring.parse(samples, stats), Error);
}

TEST(PerfRing, RejectsACallchainLongerThanItsRecord) {
    const std::vector<uint64_t> body = {0x1, 0x100000001, 3, /*nr*/ 1000, user};
    EXPECT_THROW(decode_sample(reinterpret_cast<const uint8_t*>(body.data()), body.size() * 8), Error);
}

TEST(PerfRing, DecodesUserRegistersAfterTheChain) {
    SyntheticRing ring(256, 0);
    // ip, pid|tid, time, nr, chain..., abi, bp, sp, ip (user_regs_mask order)
    ring.record(PERF_RECORD_SAMPLE, {0x10, (uint64_t{2} << 32) | 1, 5, 2, user, 0x10, PERF_SAMPLE_REGS_ABI_64,
                                     0xb0, 0x5a, 0x10});
    ring.record(PERF_RECORD_SAMPLE, {0x20, (uint64_t{2} << 32) | 1, 6, 1, 0x20, PERF_SAMPLE_REGS_ABI_NONE});
    RingRecords records;
    RingStats stats;
    parse_ring(ring.data.data(), ring.data.size(), 0, ring.head, records, stats, true);
    ASSERT_EQ(records.samples.size(), 2u);
    EXPECT_TRUE(records.samples[0].has_regs);
    EXPECT_EQ(records.samples[0].regs.bp, 0xb0u);
    EXPECT_EQ(records.samples[0].regs.sp, 0x5au);
    EXPECT_EQ(records.samples[0].regs.ip, 0x10u);
    EXPECT_FALSE(records.samples[1].has_regs);  // no user context at that sample
}

TEST(PerfRing, DecodesMmap2ForkAndCommRecords) {
    SyntheticRing ring(512, 100);
    // MMAP2: pid|tid, addr, len, pgoff, maj|min, ino, ino_generation, prot|flags, "//anon\0\0"
    uint64_t name;
    std::memcpy(&name, "//anon\0", 8);
    ring.record(PERF_RECORD_MMAP2, {(uint64_t{4} << 32) | 3, 0x7000, 0x1000, 0, 0, 0, 0, 0x4 /*PROT_EXEC*/, name});
    ring.record(PERF_RECORD_FORK, {(uint64_t{3} << 32) | 3, (uint64_t{4} << 32) | 9, 77});
    std::memcpy(&name, "worker\0", 8);
    ring.record(PERF_RECORD_COMM, {(uint64_t{9} << 32) | 3, name});
    RingRecords records;
    RingStats stats;
    parse_ring(ring.data.data(), ring.data.size(), 100, ring.head, records, stats);
    ASSERT_EQ(records.mmaps.size(), 1u);
    EXPECT_EQ(records.mmaps[0].pid, 3u);
    EXPECT_EQ(records.mmaps[0].addr, 0x7000u);
    EXPECT_EQ(records.mmaps[0].len, 0x1000u);
    EXPECT_EQ(records.mmaps[0].prot, 4u);
    EXPECT_EQ(records.mmaps[0].filename, "//anon");
    ASSERT_EQ(records.tasks.size(), 2u);
    EXPECT_EQ(records.tasks[0].kind, TaskRecord::fork);
    EXPECT_EQ(records.tasks[0].tid, 9u);
    EXPECT_EQ(records.tasks[1].kind, TaskRecord::rename);
    EXPECT_EQ(records.tasks[1].comm, "worker");
    EXPECT_EQ(stats.other, 0u);
}
