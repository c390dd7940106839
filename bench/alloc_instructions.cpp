// Counts what the profiler hook costs in instructions: run under
//   valgrind --tool=callgrind build/bench/benchfp_alloc_instructions <compiled-out|hook-off> N
// (scripts/alloc_hook_instructions.sh does it for both and prints the difference
// per allocation). Instructions, unlike time, do not drift with machine load.
#include "alloc/pool.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    if (argc != 3 || (std::strcmp(argv[1], "compiled-out") != 0 && std::strcmp(argv[1], "hook-off") != 0)) {
        std::fprintf(stderr, "usage: %s compiled-out|hook-off N\n", argv[0]);
        return 2;
    }
    const bool hook = std::strcmp(argv[1], "hook-off") == 0;
    const long n = std::atol(argv[2]);
    void* keep[16] = {};
    for (long i = 0; i < n; ++i) {
        void*& slot = keep[i & 15];
        if (slot) benchfp::alloc::free(slot);
        slot = hook ? benchfp::alloc::pool_alloc(48) : benchfp::alloc::pool_alloc_unprofiled(48);
    }
    for (void* p : keep) benchfp::alloc::free(p);
    return 0;
}
