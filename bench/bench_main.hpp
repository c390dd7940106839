#pragma once
// What the allocator benchmark programs' main() share: bad input said as such
// (a message naming it, exit status 2) where the pool or Google Benchmark
// would abort or pass, and their output file written whole or not at all.
#include "pool_environment.hpp"

#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace benchfp::bench {

// Runs the registered benchmarks with Google Benchmark's flags, and says as bad
// input (exit 2) what it would pass with exit 0: an unrecognized argument, a
// --benchmark_filter that matches no benchmark (or is no regular expression:
// it matches none). --benchmark_out=FILE goes to a temporary file beside FILE,
// renamed to FILE once the run ran a benchmark; otherwise, or where the rename
// fails, it is removed and FILE stays as it was (Google Benchmark writes FILE
// in place, and left it empty for a filter matching nothing).
inline int run_benchmarks(int argc, char** argv) {
    constexpr std::string_view out_flag = "--benchmark_out=";
    std::string out, temporary;
    std::vector<std::string> storage(argv, argv + argc);
    for (std::string& arg : storage)
        if (arg.starts_with(out_flag) && arg.size() > out_flag.size()) {
            out = arg.substr(out_flag.size());
            temporary = out + ".tmp." + std::to_string(getpid());
            arg = std::string(out_flag) + temporary;
        }
    if (!temporary.empty()) {  // Google Benchmark exits 1 on a file it cannot open
        std::FILE* probe = std::fopen(temporary.c_str(), "w");
        if (!probe) {
            std::fprintf(stderr, "%s: cannot write %s: %s\n", argv[0], out.c_str(), std::strerror(errno));
            return 2;
        }
        std::fclose(probe);
    }
    std::vector<char*> args;
    for (std::string& arg : storage) args.push_back(arg.data());
    args.push_back(nullptr);
    int count = argc;
    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
    const size_t ran = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::error_code ignored;
    if (ran == 0) {
        std::fprintf(stderr, "%s: no benchmark matches --benchmark_filter (or it is no regular expression)\n", argv[0]);
        if (!temporary.empty()) std::filesystem::remove(temporary, ignored);
        return 2;
    }
    if (temporary.empty()) return 0;
    std::error_code error;
    std::filesystem::rename(temporary, out, error);
    if (error) {
        std::fprintf(stderr, "%s: cannot write %s: %s\n", argv[0], out.c_str(), error.message().c_str());
        std::filesystem::remove(temporary, ignored);
        return 2;
    }
    return 0;
}

}  // namespace benchfp::bench
