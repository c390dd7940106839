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
