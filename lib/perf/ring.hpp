#pragma once
// Parsing of the perf ring buffer: records laid out by the kernel in a
// power-of-two data area, possibly split by the wrap-around. Pure functions
// over bytes, so the tests can feed synthetic buffers.
#include <cstddef>
#include <cstdint>
#include <vector>

namespace benchfp::perf {

// One PERF_RECORD_SAMPLE with PERF_SAMPLE_IP | TID | TIME | CALLCHAIN.
struct Sample {
    uint64_t ip = 0;
    uint32_t pid = 0, tid = 0;
    uint64_t time = 0;
    // User-space callchain, innermost first: chain[0] is the sampled IP, then return
    // addresses. PERF_CONTEXT_* markers are removed; kernel frames are not kept.
    std::vector<uint64_t> chain;
};

struct RingStats {
    uint64_t samples = 0;
    uint64_t lost = 0;        // samples the kernel dropped (sum of PERF_RECORD_LOST.lost)
    uint64_t lost_records = 0;
    uint64_t throttled = 0;   // PERF_RECORD_THROTTLE records
    uint64_t unthrottled = 0;
    uint64_t other = 0;       // record types we do not interpret (counted, not dropped silently)
};

// Reads every complete record in [tail, head) of the data area (size a power of
// two, positions are free-running byte counters as in perf_event_mmap_page).
// Appends samples and updates stats; returns the new tail (== head).
uint64_t parse_ring(const uint8_t* data, uint64_t size, uint64_t tail, uint64_t head,
                    std::vector<Sample>& out, RingStats& stats);

// Decodes one sample record's body (after the perf_event_header).
Sample decode_sample(const uint8_t* body, size_t body_size);

}  // namespace benchfp::perf
