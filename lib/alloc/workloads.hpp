#pragma once
// The seven allocation workloads, written once over an AllocatorTable: the
// allocation profile (`benchfp alloc profile`) runs them on the pool, the
// regression gate (bench/alloc_gate.cpp) on every variant of the pool and on
// peer allocators, so every figure comes from the same code. Julia's
// BaseBenchmarks alloc group (arrays, strings, structs, grow_array) plus small
// churn with random sizes, binary trees, and producer/consumer threads.
//
// A workload is one iteration, a few dozen to a few hundred allocations, that
// the caller repeats: the gate in timed chunks, the profile `scale` times
// iterations_at_scale_1. The pool paths each exercises (every one by at least
// one workload; tests/alloc_workloads_test.cpp checks it):
//   small_churn        pool_alloc, untyped, 1..512 B, 1024 live
//   strings            pool_alloc, untyped, a string doubled 4 times
//   structs            alloc(size, type): 56 B Particle, 256 live
//   binary_trees       alloc(size, type): 16 B TreeNode, a tree of depth 8
//   producer_consumer  alloc(size, type): 64 B Message, freed by a consumer thread (remote frees)
//   arrays             float arrays of 32 B to 16 KiB: alloc(size, type) up to the
//                      largest class, big_alloc above (Julia's jl_alloc_array split)
//   grow_array         managed_alloc and managed_realloc: a double array doubled from 32 B to 64 KiB
// Frees take the pool's local fast path, free_slow (remote and sampled frees)
// and the big/managed path.
#include "alloc/allocator_table.hpp"

#include <atomic>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace benchfp::alloc::workloads {

// What a workload keeps from one iteration to the next: live blocks, its place
// in its sequence of sizes and slots, a consumer thread. Whatever is still live
// is freed through `owner` (the table it was allocated with) when the state ends.
class AllocWorkloadState {
public:
    explicit AllocWorkloadState(const AllocatorTable& owner) : owner_(&owner) {}
    AllocWorkloadState(const AllocWorkloadState&) = delete;
    AllocWorkloadState& operator=(const AllocWorkloadState&) = delete;
    ~AllocWorkloadState();

    double* count_bytes = nullptr;  // when set, the usable bytes of every block allocated are added here
    size_t at = 0;  // the place in the sequence: the gate's paired chunks each start from the same one
    std::vector<void*> live = std::vector<void*>(1024, nullptr);

    // A single-producer single-consumer ring to the consumer thread, which frees.
    struct Channel {
        static constexpr size_t size = 1024;
        void* slots[size];
        std::atomic<size_t> head{0}, tail{0};
        std::atomic<bool> stop{false};
    } channel;
    std::thread consumer;

    // Called by the workload where its live bytes are greatest, when set (the
    // profile's in-use snapshot, `benchfp alloc profile --inuse-at=peak`).
    std::function<void()> at_peak;

private:
    const AllocatorTable* owner_;
};

struct AllocWorkload {
    const char* name;
    const char* description;  // the allocator paths it takes
    void (*iteration)(const AllocatorTable& allocator, AllocWorkloadState& state);
    int64_t iterations_at_scale_1;  // `benchfp alloc profile --scale=1`: about 10^5 allocations
    // The shortest time to measure it in: long enough to hold its steady state
    // (the gate's timed chunk), and for the profiler's start() to weigh under 0.2%.
    double min_chunk_us = 100;
    // The footprint measurement (alloc/footprint.hpp): how many states run at
    // once, each at its peak when the figure is read, so the live data there is
    // about 4 MiB for every workload (page granularity is then below 0.1% of it),
    // and how many rounds of every state's iteration lead up to that peak;
    // 0 copies: not measured (producer_consumer: see workloads.cpp).
    int footprint_copies = 1;
    int footprint_rounds = 16;
};

std::span<const AllocWorkload> all();
const AllocWorkload* find(std::string_view name);
std::string names();  // "small_churn, structs, ..." for messages

// The moment of a run at which the caller looks at the live objects:
//   peak  in the last iteration, where the workload holds the most live bytes
//         (the full tree, the largest array or string, the full set of slots);
//   end   after the last iteration, before the state frees what is still live:
//         the slots of small_churn and structs, the messages in the ring; nothing
//         for the workloads that free all they allocate in each iteration
//         (strings, arrays, grow_array, binary_trees).
enum class Moment { peak, end };

// Runs w's iterations for `scale` with a state of its own, freed at the end;
// `observe`, when set, is called once, at `moment`.
void run(const AllocWorkload& w, const AllocatorTable& allocator, int scale, Moment moment = Moment::end,
         const std::function<void()>& observe = {});

}  // namespace benchfp::alloc::workloads
