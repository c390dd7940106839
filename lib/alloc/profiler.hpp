#pragma once
// The allocation profiler: every allocation path calls into it only through
// the hook in pool.hpp, which while stopped costs one nop (the hooked
// entries' count sites) and nothing else (they pop from alloc_heap, which is
// then this thread's heap); start() rewrites the sites to count the sample
// gap, stop() back to the nop (count_site.hpp).
//
// Sampling (Go's mprof, tcmalloc, jemalloc; Julia's sample_rate):
//   all          every allocation;
//   probability  each allocation with probability p (weight 1/p): the
//                allocations between two samples are counted down from a
//                geometric draw, one per sample, so the hook decides without
//                a draw per allocation (the same cost as byte sampling);
//   bytes        one sample per `mean_bytes` allocated on average: the bytes to
//                the next sample are drawn from an exponential distribution, so
//                every byte has the same chance whatever the allocation sizes;
//                an allocation of s bytes that is sampled stands for
//                1 / (1 - exp(-s / mean)) allocations (the unbiased weight).
// Stacks are return addresses walked through frame pointers from the
// allocation site, bounded by the thread's stack and checked for alignment and
// upward progress, so a broken chain ends the walk instead of faulting.
// Records go to per-thread buffers (per-thread random state too): no global
// lock on the recording path.
#include "alloc/type_info.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace benchfp::alloc::profiler {

enum class Sampling { all, probability, bytes };

struct Options {
    Sampling sampling = Sampling::bytes;
    double probability = 1.0;       // for Sampling::probability
    size_t mean_bytes = 512 * 1024; // for Sampling::bytes
    int max_depth = 64;
    uint64_t seed = 0;              // 0: from the clock
};

struct AllocationRecord {
    const TypeInfo* type;
    size_t requested, allocated;
    std::vector<uintptr_t> stack;  // return addresses, innermost first
    uint32_t thread;
    uint64_t time_ns;
    uintptr_t address;
    double weight;  // allocations this sample stands for
};

struct FreeRecord {
    uintptr_t address;
    uint32_t thread;
    size_t allocation;  // index of the sampled allocation freed, in Profile::allocations
};

struct Profile {
    Options options;
    std::vector<AllocationRecord> allocations;
    std::vector<FreeRecord> frees;  // frees of sampled objects: allocations - frees = in use
    uint64_t dropped_frames = 0;    // stack walks cut at max_depth
};

void start(const Options& options);
void stop();
// Why the last start() could not rewrite the hooked entries' count sites
// (alloc/count_site.hpp), so that its sampling counts on the slower path
// (pool.hpp: +16 instructions per allocation where the sites take +2), or
// empty. A harness that times sampling says so beside its figures.
std::string count_sites_refusal();
// The same as one sentence for a harness's stderr, or empty: the one wording
// `benchfp alloc profile` and benchfp_alloc_gate print.
std::string count_sites_warning();
// Everything recorded since the last clear (may be called while running).
Profile fetch();
void clear();

// Where a thread inside the profiler's slow path (record_slow) can be held by
// a test while another thread runs start() or stop() (the races between them,
// tests/alloc_profiler_test.cpp): called there when set, with where it is.
// Null otherwise: one load and a not-taken branch, in the slow path only.
// Read atomically: set and clear it with __atomic_store_n.
enum class RacePoint {
    session_read,  // sample_weight has read the session and its options, and not armed yet
    found_stopped,  // the caller found the profiler stopped; the hook is not stopped yet
};
extern void (*race_point)(RacePoint);

}  // namespace benchfp::alloc::profiler
