// Counts what the profiler hook costs in instructions: run under
//   valgrind --tool=callgrind build/bench/benchfp_alloc_instructions VARIANT N
// with VARIANT compiled-out, hook-off or sampled-512k (byte sampling at 512 KiB)
// (scripts/alloc_hook_instructions.sh does it for each and prints the differences
// per allocation). Instructions, unlike time, do not drift with machine load.
#include "alloc/pool.hpp"
#include "alloc/profiler.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    const char* variant = argc == 3 ? argv[1] : "";
    const bool compiled_out = std::strcmp(variant, "compiled-out") == 0;
    const bool sampled = std::strcmp(variant, "sampled-512k") == 0;
    if (!compiled_out && !sampled && std::strcmp(variant, "hook-off") != 0) {
        std::fprintf(stderr, "usage: %s compiled-out|hook-off|sampled-512k N\n", argv[0]);
        return 2;
    }
    const long n = std::atol(argv[2]);
    // The profiler's per-thread set-up and start() happen in every variant and
    // also when N = 0, so the differences are the allocations' alone.
    benchfp::alloc::profiler::start({benchfp::alloc::profiler::Sampling::all});
    benchfp::alloc::free(benchfp::alloc::pool_alloc(48));
    benchfp::alloc::profiler::stop();
    benchfp::alloc::profiler::clear();
    benchfp::alloc::profiler::start({benchfp::alloc::profiler::Sampling::bytes, 1.0, 512 * 1024, 64, 1});
    if (!sampled) benchfp::alloc::profiler::stop();
    void* keep[16] = {};
    for (long i = 0; i < n; ++i) {
        void*& slot = keep[i & 15];
        if (slot) benchfp::alloc::free(slot);
        slot = compiled_out ? benchfp::alloc::pool_alloc_unprofiled(48) : benchfp::alloc::pool_alloc(48);
    }
    for (void* p : keep) benchfp::alloc::free(p);
    benchfp::alloc::profiler::stop();  // no fetch(): its sort by timestamps would make the count vary
    return 0;
}
