#include "alloc/profiler.hpp"

#include "alloc/owner_lock.hpp"
#include "alloc/pool.hpp"

#include <pthread.h>
#include <x86intrin.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <memory>
#include <mutex>
#include <numeric>
#include <atomic>
#include <unordered_map>

namespace benchfp::alloc {

namespace {

using profiler::Options;
using profiler::Sampling;

// The options of the current session. Threads that sample read them while
// start() may write them (a start() while threads sample, the profiler running
// or just stopped): a sequence lock over atomic words, so that a reader gets
// one session's options whole. One writer at a time (start()).
class SessionOptions {
public:
    void store(const Options& o) {
        const uint64_t s = sequence_.load(std::memory_order_relaxed);
        sequence_.store(s + 1, std::memory_order_relaxed);
        std::atomic_thread_fence(std::memory_order_release);
        sampling_.store(o.sampling, std::memory_order_relaxed);
        probability_.store(o.probability, std::memory_order_relaxed);
        mean_bytes_.store(o.mean_bytes, std::memory_order_relaxed);
        max_depth_.store(o.max_depth, std::memory_order_relaxed);
        seed_.store(o.seed, std::memory_order_relaxed);
        sequence_.store(s + 2, std::memory_order_release);
    }
    Options load() const {
        for (;;) {
            const uint64_t s = sequence_.load(std::memory_order_acquire);
            Options o;
            o.sampling = sampling_.load(std::memory_order_relaxed);
            o.probability = probability_.load(std::memory_order_relaxed);
            o.mean_bytes = mean_bytes_.load(std::memory_order_relaxed);
            o.max_depth = max_depth_.load(std::memory_order_relaxed);
            o.seed = seed_.load(std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_acquire);
            if (!(s & 1) && sequence_.load(std::memory_order_relaxed) == s) return o;
            __builtin_ia32_pause();
        }
    }

private:
    std::atomic<uint64_t> sequence_{0};  // odd while store() writes
    std::atomic<Sampling> sampling_{Options{}.sampling};
    std::atomic<double> probability_{Options{}.probability};
    std::atomic<size_t> mean_bytes_{Options{}.mean_bytes};
    std::atomic<int> max_depth_{Options{}.max_depth};
    std::atomic<uint64_t> seed_{Options{}.seed};
};
SessionOptions current_options;

uint64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

// Records carry TSC ticks (a few cycles to read, where clock_gettime costs tens of
// nanoseconds under a hypervisor); fetch() maps them to steady-clock nanoseconds
// with the two points taken at start() and at fetch().
uint64_t ticks() { return __rdtsc(); }
struct ClockPoint {
    uint64_t tick, ns;
};
ClockPoint clock_at_start{0, 0};
ClockPoint clock_now() { return {ticks(), now_ns()}; }

// A record in a thread's buffer: its frames live in the buffer's flat frame
// array, so recording allocates nothing per record.
struct RawRecord {
    const TypeInfo* type;
    size_t requested, allocated;
    uint32_t first_frame, depth;
    uint64_t time_ns;  // TSC ticks until fetch() converts them
    uintptr_t address;
    double weight;  // or, byte-sampled, minus the mean interval: fetch() computes the weight
};

struct ThreadBuffer;

// The free of a sampled allocation, in the buffer of the thread that freed it:
// which record it frees, in which thread's buffer, as of which of its clear()s
// (the block's note, which a clear() since the sample makes stale).
struct RawFree {
    uintptr_t address;
    const ThreadBuffer* allocated_in;
    uint32_t record, generation;
};

struct ThreadBuffer {
    // The owner thread's side (recording) costs no locked instruction; fetch()
    // and clear() take the other.
    OwnerLock lock;
    std::vector<RawRecord> records;
    std::vector<uintptr_t> frames;
    std::vector<RawFree> frees;  // of sampled blocks, by this thread
    uint32_t tid = 0;
    uint32_t generation = 0;  // clear()s so far: a note of an earlier one names a record gone
    uint64_t dropped_frames = 0;
};

// Buffers outlive their threads: fetch() still sees what an exited thread recorded.
std::mutex buffers_mutex;
std::vector<std::shared_ptr<ThreadBuffer>> buffers;
struct ThreadState;
std::vector<ThreadState*> live_threads;  // under buffers_mutex: start() pokes their hooks

// Incremented by every start(): a thread whose countdown was armed for an older
// session arms it again (a fresh exponential draw for byte sampling).
std::atomic<uint64_t> session{0};

struct ThreadState {
    std::shared_ptr<ThreadBuffer> buffer;
    uint64_t* state = &detail::hook_state;  // this thread's hook: start() and stop() set it
    detail::Heap** heap = &detail::alloc_heap;  // start() points it away from the thread's heap
    detail::Heap** managed_heap = &detail::managed_alloc_heap;  // and this
    uint64_t armed_session = 0;
    uint64_t rng = 0;  // xorshift64*
    // geometric_gap's constants for the probability they were computed for: a
    // log1p and two divisions per sample otherwise (153 of the 608 instructions
    // record_slow took per probability sample, callgrind, 2026-12-06).
    // NaN until the first: it equals no probability, p = 0 included.
    double gap_probability = std::numeric_limits<double>::quiet_NaN(), gap_scale = 0, gap_weight = 0;
    uintptr_t stack_lo = 0, stack_hi = 0;
    bool recording = false;  // re-entrancy guard: the profiler's own allocations are not profiled

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
        live_threads.push_back(this);
    }
    ~ThreadState() {
        std::lock_guard lock(buffers_mutex);
        std::erase(live_threads, this);
    }

    double uniform() {  // in (0, 1)
        if (!rng) {
            const uint64_t seed = current_options.load().seed;
            rng = ((seed ? seed : now_ns()) ^ (uint64_t{buffer->tid} << 32)) | 1;
        }
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

// Holds this thread where a test asked (profiler::race_point), if one did.
void at_race_point(profiler::RacePoint point) {
    if (auto* hold = __atomic_load_n(&profiler::race_point, __ATOMIC_RELAXED)) hold(point);
}

// Turns on the hook of the thread whose words these are, in `state`
// (hook_poked: poke() and start(); see pool.hpp). Written
// atomically, as start() pokes other threads: the state, then the small
// entries' lists pointed at no_heap's (always empty), both sequentially
// consistent: record_slow and start() order the state against the session,
// alloc_small_not_counting (pool.cpp) and stays_stopped against the
// profiler's switch.
void turn_on(uint64_t* state, detail::Heap** heap, detail::Heap** managed_heap, uint64_t state_value) {
    __atomic_store_n(state, state_value, __ATOMIC_SEQ_CST);
    __atomic_store_n(heap, &detail::no_heap, __ATOMIC_SEQ_CST);
    __atomic_store_n(managed_heap, &detail::no_heap, __ATOMIC_SEQ_CST);
}
// Stores `value` into one of the owner's hook words (sequentially consistent)
// unless the word holds it already (arm).
template <typename T>
void store_if_changed(T* word, T value) {
    if (__atomic_load_n(word, __ATOMIC_RELAXED) != value) __atomic_store_n(word, value, __ATOMIC_SEQ_CST);
}
// Pokes this thread's hook: its next allocation calls record_slow, which arms it.
void poke() { turn_on(&detail::hook_state, &detail::alloc_heap, &detail::managed_alloc_heap, detail::hook_poked); }
// Arms this thread's hook: `state` (hook_bytes or hook_allocations) calls
// record_slow once more than `left` of its unit have passed. The count is a
// plain store: only its owner writes it (a poke writes no count), so the
// hook's plain read-modify-write of it undoes no other thread's write. Where
// the small entries' count sites count in this unit (start()), they count
// this thread's allocations themselves: its small entries pop from its heap,
// pointed at last, so that a poke after this store (start()'s, or this
// thread's own in record_slow) points them away again. Should the sites be
// turned off meanwhile (stop()), the entries pop uncounted, as a stopped
// thread's do.
// A word that already holds its value is not stored again: a sequentially
// consistent store is a locked instruction (xchg), and arm took four per
// sample (turn_on's three and the sites' heap), where a thread that samples on
// in one unit changes none of its words. Others write a thread's words only
// with hook_poked, hook_stopped and no_heap, and only the owner points a heap
// word at its heap: where the owner's read finds the value it would store, a
// poke's or stop()'s different value can only come later in that word's
// order, and stands. Where the owner stores, over a poke's or stop()'s value
// too, its sequentially consistent store precedes record_slow's loads of the
// session and of the switch as before (the Dekker pairs there: the thread
// pokes or stops itself); where it does not, it has no store to undo anything.
void arm(uint64_t state, int64_t left) {
    detail::sample_countdown = left;
    detail::Heap* const heap = __atomic_load_n(&detail::sites_count_state, __ATOMIC_SEQ_CST) == state
                                   ? detail::this_thread_heap
                                   : &detail::no_heap;
    store_if_changed(&detail::hook_state, state);
    store_if_changed(&detail::managed_alloc_heap, &detail::no_heap);
    store_if_changed(&detail::alloc_heap, heap);
}

// Allocations to let pass before the next sampled one when each is sampled with
// probability p: geometric, P(k) = (1 - p)^k p, drawn by inversion once per
// sample (the count the hook decrements), instead of a uniform draw per allocation.
int64_t geometric_gap(ThreadState& t, double p) {
    if (p != t.gap_probability) {
        t.gap_probability = p;
        t.gap_scale = p < 1.0 ? 1.0 / std::log1p(-p) : 0.0;  // p = 0: -inf, every gap 2^62
        t.gap_weight = 1.0 / p;
    }
    if (p >= 1.0) return 0;
    return static_cast<int64_t>(std::min(std::floor(std::log(t.uniform()) * t.gap_scale), 0x1p62));
}

// Called when the thread's count went negative, or its hook was poked, with
// an allocation of `size` bytes while the profiler runs: re-arms the count and returns the
// allocation's weight, 0 if it is not sampled, minus the mean interval if it is
// byte-sampled (its weight needs an exp(): fetch() computes it). The first call
// of a session (after start()'s poke) is not the end of a drawn gap: there the
// allocation is the first of one. `options` are the session's, read once for
// the caller too (its stack depth).
double sample_weight(ThreadState& t, size_t size, Options& options) {
    const uint64_t current = session.load(std::memory_order_acquire);
    const bool first_of_session =
        t.armed_session != current || __atomic_load_n(&detail::hook_state, __ATOMIC_RELAXED) == detail::hook_poked;
    t.armed_session = current;
    options = current_options.load();
    at_race_point(profiler::RacePoint::session_read);
    switch (options.sampling) {
    case Sampling::all:
        arm(detail::hook_allocations, 0);
        return 1.0;
    case Sampling::probability: {
        const double p = options.probability;
        const int64_t gap = geometric_gap(t, p);
        if (first_of_session && gap > 0) {  // this allocation is the gap's first
            arm(detail::hook_allocations, gap - 1);
            return 0.0;
        }
        arm(detail::hook_allocations, first_of_session ? geometric_gap(t, p) : gap);
        return t.gap_weight;
    }
    case Sampling::bytes:
        break;
    }
    const double mean = static_cast<double>(options.mean_bytes);
    const auto next_gap = [&] { return static_cast<int64_t>(std::min(t.exponential(mean), 0x1p62)); };
    if (first_of_session) {  // the first gap starts before this allocation
        const int64_t left = next_gap() - static_cast<int64_t>(size);
        arm(detail::hook_bytes, left);
        if (left >= 0) return 0.0;
    }
    arm(detail::hook_bytes, next_gap());
    return -mean;
}

// The profiler is stopped: this thread's hook stops counting, unless start()
// ran meanwhile. The sequentially consistent store and load pair with start()'s
// (Dekker): either this thread sees the profiler on (false: the store below
// may have undone start()'s poke, and the caller must arm the hook again), or
// start() pokes this thread's hook after the store.
bool stays_stopped() {
    at_race_point(profiler::RacePoint::found_stopped);
    // The count sites, until stop() turns them off, count on: not to below
    // zero again (each allocation would come back here).
    detail::sample_countdown = INT64_MAX;
    __atomic_store_n(&detail::hook_state, detail::hook_stopped, __ATOMIC_SEQ_CST);
    return !__atomic_load_n(&profiler_enabled, __ATOMIC_SEQ_CST);
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
        // stack_hi - at < 16 once at < stack_hi, not at + 16 > stack_hi, which wraps
        // for a frame pointer within 16 of 2^64 (rbp holding data in a caller
        // compiled without frame pointers, or a JIT kernel's).
        if ((at & 7) != 0 || at < t.stack_lo || at >= t.stack_hi || t.stack_hi - at < 16) break;
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

void* record_slow(void* p, size_t requested, const TypeInfo* type) {
    ThreadState& t = thread_state();  // on a thread's first allocation: registers it for start()'s poke
    if (!profiler_on() && stays_stopped()) return p;
    if (t.recording) {
        // An allocation of the profiler's own, were it to allocate from the pool:
        // not recorded. Poked again, as it may have found the profiler stopped
        // and undone a start()'s poke.
        poke();
        return p;
    }
    Options options;
    const double weight = sample_weight(t, requested, options);
    // A start() since sample_weight read the session may have poked this thread
    // before the arm there, which then overwrote the poke with the old session's
    // state and count (a byte gap where the new session records every
    // allocation: the next allocations went unrecorded; tests/alloc_profiler_test.cpp
    // holds a thread here). arm's sequentially consistent stores and this
    // load pair with start()'s increment of the session (Dekker): either the
    // poke lands after the arm, or the new session is seen here and the thread
    // pokes itself.
    if (session.load(std::memory_order_seq_cst) != t.armed_session) poke();
    // A stop() since profiler_on() above may have stopped this hook before
    // sample_weight armed it again: with arm's store, this load pairs with
    // stop()'s store (Dekker), so either stop()'s store lands after the arm or
    // the profiler is seen stopped here and the hook stops itself (where arm
    // found its state unchanged it stored nothing that could undo stop()'s).
    // Unless a start() ran meanwhile, whose poke that undid (stays_stopped
    // finds the profiler on): the thread pokes itself, and looks again. This
    // allocation is still recorded.
    while (!__atomic_load_n(&profiler_enabled, __ATOMIC_SEQ_CST) && !stays_stopped()) poke();
    if (weight == 0.0) return p;
    const size_t allocated = usable_size(p);  // of its class: a sampled block is at least as large
    p = sampled_block(p);
    t.recording = true;
    ThreadBuffer& b = *t.buffer;
    {
        OwnerLock::Owner lock(b.lock);
        const auto first = static_cast<uint32_t>(b.frames.size());
        const uint32_t depth = capture_stack(t, b.frames, options.max_depth, b.dropped_frames);
        sample_note(p) = {&b, static_cast<uint32_t>(b.records.size()), b.generation};
        b.records.push_back({type ? type : &unknown_type, requested, allocated, first, depth, ticks(),
                             reinterpret_cast<uintptr_t>(p), weight});
    }
    t.recording = false;
    return p;
}

// Recorded whether or not the profiler still runs: the in-use profile stays
// true after stop().
void record_free_slow(void* p, const SampleNote& note) {
    ThreadBuffer& b = *thread_state().buffer;
    OwnerLock::Owner lock(b.lock);
    b.frees.push_back({reinterpret_cast<uintptr_t>(p), static_cast<const ThreadBuffer*>(note.buffer), note.record,
                       note.generation});
}

}  // namespace detail

namespace profiler {

void (*race_point)(RacePoint) = nullptr;  // read and written atomically (at_race_point)

namespace {
std::string sites_refusal;  // under buffers_mutex: start()'s, for count_sites_refusal()
}  // namespace

// start() and stop() each run whole under buffers_mutex: a stop() whose
// switch came before a start()'s and whose stores of hook_stopped after its
// pokes left the profiler on with every hook stopped, for good.
void start(const Options& options) {
    OwnerLock::prepare();  // before the first sample: the buffers' owners then take no exchange
    std::lock_guard lock(buffers_mutex);
    current_options.store(options);
    clock_at_start = clock_now();
    // The small entries' count sites count in this session's unit, before the
    // session and the pokes: a thread that arms for it (arm) reads
    // sites_count_state after it read the session. Where they cannot
    // (detail::count_sites_problem), the entries count on their unpatched path.
    // sites_count_state says stopped first, as stop() does, so that while the
    // sites change nothing relies on them (a start() that replaces a running
    // session: its threads keep counting, in the old unit or the new, until
    // the pokes below; an allocation meanwhile may be counted twice, or
    // in the other unit, once).
    const bool bytes = options.sampling == Sampling::bytes;
    __atomic_store_n(&detail::sites_count_state, detail::hook_stopped, __ATOMIC_SEQ_CST);
    const bool counting = detail::set_count_sites(bytes ? detail::CountUnit::bytes : detail::CountUnit::allocations,
                                                  &detail::sample_countdown);
    sites_refusal = counting ? "" : detail::count_sites_problem();
    __atomic_store_n(&detail::sites_count_state,
                     counting ? (bytes ? detail::hook_bytes : detail::hook_allocations) : detail::hook_stopped,
                     __ATOMIC_SEQ_CST);
    session.fetch_add(1, std::memory_order_seq_cst);  // before the pokes: see record_slow
    __atomic_store_n(&profiler_enabled, true, __ATOMIC_SEQ_CST);
    // Every known thread's next allocation arms its count for this session;
    // threads not known yet do so on their first allocation (pool.cpp). The
    // state (`poked`), then the lists (turn_on), which turn it on (after
    // profiler_enabled: see stays_stopped): a stopped thread's next allocation
    // reaches record_slow, never counts on from an earlier session. A thread
    // that arms meanwhile either keeps its own arm for this session or finds
    // `poked` and arms afresh; one that arms for the session before pokes
    // itself (record_slow).
    for (ThreadState* t : live_threads) turn_on(t->state, t->heap, t->managed_heap, detail::hook_poked);
    poke();
}

void stop() {
    std::lock_guard lock(buffers_mutex);
    __atomic_store_n(&profiler_enabled, false, __ATOMIC_SEQ_CST);
    // Every known thread's hook stops counting now; one inside record_slow
    // that arms again after this finds the profiler stopped there and stops
    // itself; one inside its hook counts once more.
    // Sequentially consistent, as arm()'s store of the state, so that a thread
    // arming in record_slow either sees profiler_enabled false or is stopped here.
    // The thread's small entries keep looking at no_heap's lists (or, armed
    // while the count sites counted, at its heap's) until its next allocation
    // points them at its heap (alloc_small_not_counting): only the owner does that.
    for (ThreadState* t : live_threads) __atomic_store_n(t->state, detail::hook_stopped, __ATOMIC_SEQ_CST);
    // Then the small entries' count sites back to their nop. A thread that counts
    // meanwhile and goes below zero finds the profiler stopped in record_slow.
    __atomic_store_n(&detail::sites_count_state, detail::hook_stopped, __ATOMIC_SEQ_CST);
    detail::set_count_sites(detail::CountUnit::off, &detail::sample_countdown);
}

std::string count_sites_refusal() {
    std::lock_guard lock(buffers_mutex);
    return sites_refusal;
}

std::string count_sites_warning() {
    const std::string why = count_sites_refusal();
    return why.empty() ? why
                       : "the allocator's count sites were refused: " + why + "; sampling counts on the slower path";
}

Profile fetch() {
    Profile profile;
    profile.options = current_options.load();
    const ClockPoint at_fetch = clock_now();
    const double ns_per_tick = at_fetch.tick > clock_at_start.tick
                                   ? double(at_fetch.ns - clock_at_start.ns) / double(at_fetch.tick - clock_at_start.tick)
                                   : 0.0;
    auto to_ns = [&](uint64_t tick) {
        return clock_at_start.ns + static_cast<uint64_t>(double(int64_t(tick - clock_at_start.tick)) * ns_per_tick);
    };
    std::vector<std::shared_ptr<ThreadBuffer>> all;
    {
        std::lock_guard lock(buffers_mutex);
        all = buffers;
    }
    // Records of buffer b are allocations [first, first + count) before the sort by time.
    struct Span {
        size_t first, count;
        uint32_t generation;
    };
    std::unordered_map<const ThreadBuffer*, Span> spans;
    struct Free {
        RawFree raw;
        uint32_t thread;
    };
    std::vector<Free> frees;
    for (const auto& b : all) {
        OwnerLock::Other lock(b->lock);
        spans[b.get()] = {profile.allocations.size(), b->records.size(), b->generation};
        for (const RawFree& f : b->frees) frees.push_back({f, b->tid});
        for (const RawRecord& r : b->records) {
            // A byte-sampled allocation of s bytes stands for 1 / (1 - exp(-s / mean)) allocations.
            const double weight =
                r.weight < 0 ? -1.0 / std::expm1(static_cast<double>(r.requested) / r.weight) : r.weight;
            AllocationRecord record{r.type, r.requested, r.allocated, {}, b->tid, to_ns(r.time_ns), r.address, weight};
            record.stack.assign(b->frames.begin() + r.first_frame, b->frames.begin() + r.first_frame + r.depth);
            profile.allocations.push_back(std::move(record));
        }
        profile.dropped_frames += b->dropped_frames;
    }
    std::vector<size_t> order(profile.allocations.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return profile.allocations[a].time_ns < profile.allocations[b].time_ns;
    });
    std::vector<size_t> position(order.size());
    std::vector<AllocationRecord> by_time;
    by_time.reserve(order.size());
    for (size_t i = 0; i < order.size(); ++i) {
        position[order[i]] = i;
        by_time.push_back(std::move(profile.allocations[order[i]]));
    }
    profile.allocations = std::move(by_time);
    // Each free names its record; one of a record this fetch did not read is
    // left for the next, one of a record a clear() removed is dropped.
    for (const auto& [f, thread] : frees) {
        const auto span = spans.find(f.allocated_in);
        if (span == spans.end() || f.generation != span->second.generation || f.record >= span->second.count)
            continue;
        profile.frees.push_back({f.address, thread, position[span->second.first + f.record]});
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
        OwnerLock::Other lock(b->lock);
        b->records.clear();
        b->frames.clear();
        b->frees.clear();
        ++b->generation;
        b->dropped_frames = 0;
    }
}

}  // namespace profiler

}  // namespace benchfp::alloc
