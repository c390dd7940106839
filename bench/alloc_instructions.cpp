// Counts what the profiler hook costs in instructions: run under
//   valgrind --tool=callgrind build/bench/benchfp_alloc_instructions VARIANT N
// with VARIANT compiled-out, hook-off or sampled-512k (byte sampling at 512 KiB)
// (scripts/alloc_hook_instructions.sh does it for each and prints the differences
// per allocation), or record-all (every allocation sampled: less compiled-out,
// what a sample and its free cost); compiled-out-big and hook-off-big count
// big blocks instead (grow_array's: see big_churn). Instructions, unlike time,
// do not drift with machine load.
#include "alloc/pool.hpp"
#include "alloc/profiler.hpp"
#include "counts.hpp"
#include "pool_environment.hpp"

#include <cstdio>
#include <cstring>

namespace {

// N allocations of 48 bytes through Alloc, each freeing the one 16 before it.
// One loop per entry, not one loop that selects the entry: that select is in
// the loop, and how the compiler lays it out changed the difference by 1.000
// instructions per allocation (+1.000 for the stopped hook, where it is +0.000)
// when unrelated code in main() changed.
template <void* (*Alloc)(size_t)>
[[gnu::noinline]] void churn(long n) {
    void* keep[16] = {};
    for (long i = 0; i < n; ++i) {
        void*& slot = keep[i & 15];
        if (slot) benchfp::alloc::free(slot);
        slot = Alloc(48);
    }
    for (void* p : keep) benchfp::alloc::free(p);
}

// N rounds of grow_array's blocks without its copies: 32 B to 64 KiB by
// doubling, at big_alloc's alignment through managed_alloc (hooked or not),
// each freed once the next is taken: 12 big allocations and frees a round,
// 5 of them of page classes.
template <void* (*Managed)(size_t, size_t)>
[[gnu::noinline]] void big_churn(long n) {
    for (long i = 0; i < n; ++i) {
        void* p = Managed(32, 64);
        for (size_t size = 64; size <= 65536; size *= 2) {
            void* next = Managed(size, 64);
            benchfp::alloc::free(p);
            p = next;
        }
        benchfp::alloc::free(p);
    }
}
void* managed_hooked(size_t size, size_t alignment) { return benchfp::alloc::managed_alloc(size, alignment); }

}  // namespace

int main(int argc, char** argv) {
    const char* variant = argc == 3 ? argv[1] : "";
    const bool big = std::strcmp(variant, "compiled-out-big") == 0 || std::strcmp(variant, "hook-off-big") == 0;
    const bool compiled_out = std::strcmp(variant, big ? "compiled-out-big" : "compiled-out") == 0;
    const bool sampled = std::strcmp(variant, "sampled-512k") == 0;
    const bool record_all = std::strcmp(variant, "record-all") == 0;
    if (!big && !compiled_out && !sampled && !record_all && std::strcmp(variant, "hook-off") != 0) {
        std::fprintf(stderr, "usage: %s compiled-out|hook-off|sampled-512k|record-all|compiled-out-big|hook-off-big N\n",
                     argv[0]);
        return 2;
    }
    benchfp::bench::exit_on_bad_pool_environment(argv[0]);
    // N: a count up to 10^9 (the script takes 10^6; callgrind runs about 10^7
    // a second, so 10^9 is about 100 s); anything else is bad input, not a
    // count of 0 (atol's) or a run of a day.
    const auto count = benchfp::bench::count_of(argv[2], 0, 1'000'000'000);
    if (!count) {
        std::fprintf(stderr, "%s: N '%s' is not a count from 0 to 10^9 (digits, no leading 0)\n", argv[0], argv[2]);
        return 2;
    }
    const long n = static_cast<long>(*count);
    // The profiler's per-thread set-up and start() happen in every variant and
    // also when N = 0, so the differences are the allocations' alone.
    benchfp::alloc::profiler::start({benchfp::alloc::profiler::Sampling::all});
    benchfp::alloc::free(benchfp::alloc::pool_alloc(48));
    benchfp::alloc::profiler::stop();
    benchfp::alloc::profiler::clear();
    if (record_all) benchfp::alloc::profiler::start({benchfp::alloc::profiler::Sampling::all});
    else benchfp::alloc::profiler::start({benchfp::alloc::profiler::Sampling::bytes, 1.0, 512 * 1024, 64, 1});
    if (!sampled && !record_all) benchfp::alloc::profiler::stop();
    if (big && compiled_out) big_churn<benchfp::alloc::managed_alloc_unprofiled>(n);
    else if (big) big_churn<managed_hooked>(n);
    else if (compiled_out) churn<benchfp::alloc::pool_alloc_unprofiled>(n);
    else churn<benchfp::alloc::pool_alloc>(n);
    benchfp::alloc::profiler::stop();  // no fetch(): its sort by timestamps would make the count vary
    return 0;
}
