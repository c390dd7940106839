#pragma once
// The check every allocator benchmark program makes first in main() (bench_main.hpp
// has the rest of what their main() shares).
#include "alloc/pool.hpp"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace benchfp::bench {

// BENCHFP_POOL_RELEASE_BYTES, which the pool reads when its first allocation
// makes the arena, where a bad value can only stop the process (SIGABRT):
// checked first thing in main(), before anything allocates from the pool.
inline void exit_on_bad_pool_environment(const char* program) {
    const std::string problem = alloc::release_bytes_from_environment().problem;
    if (problem.empty()) return;
    std::fprintf(stderr, "%s: %s\n", program, problem.c_str());
    std::exit(2);
}

}  // namespace benchfp::bench
