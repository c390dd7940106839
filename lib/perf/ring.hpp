#pragma once
// Parsing of the perf ring buffer: records laid out by the kernel in a
// power-of-two data area, possibly split by the wrap-around. Pure functions
// over bytes, so the tests can feed synthetic buffers.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace benchfp::perf {

// The user-space registers a sample may carry (PERF_SAMPLE_REGS_USER with
// user_regs_mask below): what the frame-pointer walk started from.
struct UserRegs {
    uint64_t bp = 0, sp = 0, ip = 0;
};
// PERF_REG_X86_BP, _SP, _IP: bits 6, 7, 8; the kernel writes them in bit order.
inline constexpr uint64_t user_regs_mask = (1ull << 6) | (1ull << 7) | (1ull << 8);

// One PERF_RECORD_SAMPLE with PERF_SAMPLE_IP | TID | TIME | CALLCHAIN, and
// REGS_USER (user_regs_mask) when the sampler asks for it.
struct Sample {
    uint64_t ip = 0;
    uint32_t pid = 0, tid = 0;
    uint64_t time = 0;
    // User-space callchain, innermost first: chain[0] is the sampled IP, then return
    // addresses. PERF_CONTEXT_* markers are removed; kernel frames are not kept.
    std::vector<uint64_t> chain;
    bool has_regs = false;  // false when not asked for, or the sample hit no user context
    UserRegs regs;
};

// PERF_RECORD_MMAP2 (and MMAP): an executable mapping made while sampling. An
// anonymous one (filename "//anon", or empty) is where a JIT puts its code.
struct MmapRecord {
    uint32_t pid = 0, tid = 0;
    uint64_t addr = 0, len = 0, pgoff = 0;
    uint32_t prot = 0;  // MMAP2 only; 0 for MMAP
    std::string filename;
};

// PERF_RECORD_FORK / EXIT / COMM: threads born, gone, or renamed while sampling.
struct TaskRecord {
    enum Kind { fork, exit, rename } kind = fork;
    uint32_t pid = 0, tid = 0;
    std::string comm;  // rename (PERF_RECORD_COMM) only
};

// Everything parse_ring collects. Samples only, unless the sampler asked for
// mmap/task records (SamplerOptions::track_tasks).
struct RingRecords {
    std::vector<Sample> samples;
    std::vector<MmapRecord> mmaps;
    std::vector<TaskRecord> tasks;
};

struct RingStats {
    uint64_t samples = 0;
    uint64_t lost = 0;        // samples the kernel dropped (sum of PERF_RECORD_LOST.lost)
    uint64_t lost_records = 0;
    uint64_t throttled = 0;   // PERF_RECORD_THROTTLE records
    uint64_t unthrottled = 0;
    uint64_t other = 0;       // record types we do not interpret (counted, not dropped silently)

    RingStats& operator+=(const RingStats& o) {  // several rings (threads, CPUs) as one
        samples += o.samples, lost += o.lost, lost_records += o.lost_records;
        throttled += o.throttled, unthrottled += o.unthrottled, other += o.other;
        return *this;
    }
};

// Reads every complete record in [tail, head) of the data area (size a power of
// two, positions are free-running byte counters as in perf_event_mmap_page).
// Appends samples and updates stats; returns the new tail (== head).
// `with_regs`: samples carry REGS_USER with user_regs_mask.
uint64_t parse_ring(const uint8_t* data, uint64_t size, uint64_t tail, uint64_t head,
                    RingRecords& out, RingStats& stats, bool with_regs = false);
uint64_t parse_ring(const uint8_t* data, uint64_t size, uint64_t tail, uint64_t head,
                    std::vector<Sample>& out, RingStats& stats);

// Decodes one sample record's body (after the perf_event_header).
Sample decode_sample(const uint8_t* body, size_t body_size, bool with_regs = false);

}  // namespace benchfp::perf
