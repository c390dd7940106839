#include "alloc/profiler.hpp"

#include "alloc/pool.hpp"

#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <mutex>
#include <unordered_map>

namespace benchfp::alloc {

namespace {

using profiler::Options;
using profiler::Sampling;

Options current_options;

uint64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// A record in a thread's buffer: its frames live in the buffer's flat frame
// array, so recording allocates nothing per record.
struct RawRecord {
    const TypeInfo* type;
    size_t requested, allocated;
    uint32_t first_frame, depth;
    uint64_t time_ns;
    uintptr_t address;
    double weight;
};

struct RawFree {
    uintptr_t address;
    uint64_t time_ns;
};

struct ThreadBuffer {
    std::mutex mutex;  // the owner thread and fetch(): never contended while recording
    std::vector<RawRecord> records;
    std::vector<uintptr_t> frames;
    std::vector<RawFree> frees;
    uint32_t tid = 0;
    uint64_t dropped_frames = 0;
};

// Buffers outlive their threads: fetch() still sees what an exited thread recorded.
std::mutex buffers_mutex;
std::vector<std::shared_ptr<ThreadBuffer>> buffers;

struct ThreadState {
    std::shared_ptr<ThreadBuffer> buffer;
    uint64_t rng = 0;          // xorshift64*
    double bytes_to_next = 0;  // byte sampling countdown
    uintptr_t stack_lo = 0, stack_hi = 0;
    bool recording = false;    // re-entrancy guard: the profiler's own allocations are not profiled

    ThreadState() {
        buffer = std::make_shared<ThreadBuffer>();
        buffer->tid = static_cast<uint32_t>(syscall(SYS_gettid));
        pthread_attr_t attr;
        if (pthread_getattr_np(pthread_self(), &attr) == 0) {
            void* addr;
            size_t size;
            pthread_attr_getstack(&attr, &addr, &size);
            stack_lo = reinterpret_cast<uintptr_t>(addr);
            stack_hi = stack_lo + size;
            pthread_attr_destroy(&attr);
        }
        std::lock_guard lock(buffers_mutex);
        buffers.push_back(buffer);
    }

    double uniform() {  // in (0, 1)
        if (!rng) rng = ((current_options.seed ? current_options.seed : now_ns()) ^ (uint64_t{buffer->tid} << 32)) | 1;
        rng ^= rng >> 12;
        rng ^= rng << 25;
        rng ^= rng >> 27;
        return ((rng * 0x2545F4914F6CDD1Dull) >> 11) * 0x1.0p-53 + 0x1.0p-54;
    }
    double exponential(double mean) { return -std::log(uniform()) * mean; }
};

ThreadState& thread_state() {
    thread_local ThreadState state;
    return state;
}

// The sampled objects still alive, for frees: sharded so threads rarely meet.
struct Shard {
    std::mutex mutex;
    std::unordered_map<uintptr_t, std::pair<ThreadBuffer*, uint32_t>> live;  // -> owning buffer, record index
};
constexpr size_t shard_count = 64;
Shard shards[shard_count];
Shard& shard_of(uintptr_t address) { return shards[(address >> 4) % shard_count]; }

// Decides whether this allocation is sampled; returns its weight, 0 if not.
double sample_weight(ThreadState& t, size_t size) {
    switch (current_options.sampling) {
    case Sampling::all: return 1.0;
    case Sampling::probability:
        return t.uniform() < current_options.probability ? 1.0 / current_options.probability : 0.0;
    case Sampling::bytes: {
        const double mean = static_cast<double>(current_options.mean_bytes);
        if (t.bytes_to_next <= 0) t.bytes_to_next = t.exponential(mean);  // first use on this thread
        t.bytes_to_next -= static_cast<double>(size);
        if (t.bytes_to_next > 0) return 0.0;
        t.bytes_to_next = t.exponential(mean);
        return 1.0 / (1.0 - std::exp(-static_cast<double>(size) / mean));
    }
    }
    return 0.0;
}

// Walks frame pointers from the recorder's own frame (inlined into it), so the
// first address is the return into the allocation entry point: [fp] = caller's fp,
// [fp + 8] = return address. Stops at a frame outside the stack, misaligned, or
// not above the previous one.
[[gnu::always_inline]] inline uint32_t capture_stack(ThreadState& t, std::vector<uintptr_t>& frames, int max_depth, uint64_t& dropped) {
    auto* fp = static_cast<uintptr_t*>(__builtin_frame_address(0));
    uint32_t depth = 0;
    while (fp) {
        const auto at = reinterpret_cast<uintptr_t>(fp);
        if ((at & 7) != 0 || at < t.stack_lo || at + 16 > t.stack_hi) break;
        const uintptr_t ret = fp[1];
        if (!ret) break;
        if (static_cast<int>(depth) == max_depth) {
            ++dropped;
            break;
        }
        frames.push_back(ret);
        ++depth;
        auto* next = reinterpret_cast<uintptr_t*>(fp[0]);
        if (next <= fp) break;
        fp = next;
    }
    return depth;
}

}  // namespace

namespace detail {

void record_slow(void* p, size_t requested, size_t allocated, const TypeInfo* type) {
    ThreadState& t = thread_state();
    if (t.recording || !profiler_enabled.load(std::memory_order_relaxed)) return;
    const double weight = sample_weight(t, requested);
    if (weight == 0.0) return;
    t.recording = true;
    ThreadBuffer& b = *t.buffer;
    uint32_t index;
    {
        std::lock_guard lock(b.mutex);
        const auto first = static_cast<uint32_t>(b.frames.size());
        const uint32_t depth = capture_stack(t, b.frames, current_options.max_depth, b.dropped_frames);
        index = static_cast<uint32_t>(b.records.size());
        b.records.push_back({type ? type : &unknown_type, requested, allocated, first, depth, now_ns(),
                             reinterpret_cast<uintptr_t>(p), weight});
    }
    Shard& s = shard_of(reinterpret_cast<uintptr_t>(p));
    {
        std::lock_guard lock(s.mutex);
        s.live[reinterpret_cast<uintptr_t>(p)] = {&b, index};
    }
    t.recording = false;
}

void record_free_slow(void* p) {
    ThreadState& t = thread_state();
    if (t.recording) return;
    Shard& s = shard_of(reinterpret_cast<uintptr_t>(p));
    {
        std::lock_guard lock(s.mutex);
        const auto it = s.live.find(reinterpret_cast<uintptr_t>(p));
        if (it == s.live.end()) return;  // not sampled
        s.live.erase(it);
    }
    t.recording = true;
    {
        std::lock_guard lock(t.buffer->mutex);
        t.buffer->frees.push_back({reinterpret_cast<uintptr_t>(p), now_ns()});
    }
    t.recording = false;
}

}  // namespace detail

namespace profiler {

void start(const Options& options) {
    current_options = options;
    profiler_enabled.store(true, std::memory_order_release);
}

void stop() { profiler_enabled.store(false, std::memory_order_release); }

bool running() { return profiler_enabled.load(std::memory_order_acquire); }

Profile fetch() {
    Profile profile;
    profile.options = current_options;
    std::unordered_map<uintptr_t, size_t> latest;  // address -> index of its latest sampled allocation
    std::vector<std::shared_ptr<ThreadBuffer>> all;
    {
        std::lock_guard lock(buffers_mutex);
        all = buffers;
    }
    struct TimedFree {
        RawFree free;
        uint32_t tid;
    };
    std::vector<TimedFree> frees;
    for (const auto& b : all) {
        std::lock_guard lock(b->mutex);
        for (const RawRecord& r : b->records) {
            AllocationRecord record{r.type, r.requested, r.allocated, {}, b->tid, r.time_ns, r.address, r.weight};
            record.stack.assign(b->frames.begin() + r.first_frame, b->frames.begin() + r.first_frame + r.depth);
            profile.allocations.push_back(std::move(record));
        }
        for (const RawFree& f : b->frees) frees.push_back({f, b->tid});
        profile.dropped_frames += b->dropped_frames;
    }
    // Pair each free with the latest sampled allocation of its address before it.
    std::sort(profile.allocations.begin(), profile.allocations.end(),
              [](const auto& a, const auto& b) { return a.time_ns < b.time_ns; });
    std::sort(frees.begin(), frees.end(), [](const auto& a, const auto& b) { return a.free.time_ns < b.free.time_ns; });
    size_t next = 0;
    for (const TimedFree& f : frees) {
        while (next < profile.allocations.size() && profile.allocations[next].time_ns <= f.free.time_ns)
            latest[profile.allocations[next].address] = next, ++next;
        const auto it = latest.find(f.free.address);
        if (it == latest.end()) continue;
        profile.frees.push_back({f.free.address, f.tid, f.free.time_ns, it->second});
        latest.erase(it);
    }
    return profile;
}

void clear() {
    std::vector<std::shared_ptr<ThreadBuffer>> all;
    {
        std::lock_guard lock(buffers_mutex);
        all = buffers;
    }
    for (const auto& b : all) {
        std::lock_guard lock(b->mutex);
        b->records.clear();
        b->frames.clear();
        b->frees.clear();
        b->dropped_frames = 0;
    }
    for (Shard& s : shards) {
        std::lock_guard lock(s.mutex);
        s.live.clear();
    }
}

}  // namespace profiler

}  // namespace benchfp::alloc
