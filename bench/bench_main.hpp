#pragma once
// What the allocator benchmark programs' main() share: bad input said as such
// (a message naming it, exit status 2) where the pool or Google Benchmark
// would abort or pass, and their output file written whole or not at all.
#include "pool_environment.hpp"
#include "report/file.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace benchfp::bench {

// Runs the registered benchmarks with Google Benchmark's flags, and says as bad
// input (exit 2) what it would pass with exit 0: an unrecognized argument, a
// --benchmark_filter that matches no benchmark (or is no regular expression:
// it matches none). Google Benchmark writes --benchmark_out=FILE in place and
// checks no write (a filter matching nothing left FILE empty, exit 0), so it
// writes a temporary file of its own instead, and FILE is written from it
// through report::write_file (atomic, links written through, devices in place)
// once the run ran a benchmark and the file is whole JSON; otherwise FILE stays
// as it was.
inline int run_benchmarks(int argc, char** argv) {
    constexpr std::string_view out_flag = "--benchmark_out=";
    std::string out;
    const std::string temporary =
        (std::filesystem::temp_directory_path() / ("benchfp_bench_out." + std::to_string(getpid()) + ".json")).string();
    std::vector<std::string> storage(argv, argv + argc);
    for (std::string& arg : storage)
        if (arg.starts_with(out_flag) && arg.size() > out_flag.size()) {
            out = arg.substr(out_flag.size());
            arg = std::string(out_flag) + temporary;
        }
    if (!out.empty()) {  // before the run, not after it (Google Benchmark exits 1 on a file it cannot open)
        try {
            report::check_writable(out);
        } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "%s: --benchmark_out: %s\n", argv[0], e.what());
            return 2;
        }
    }
    std::vector<char*> args;
    for (std::string& arg : storage) args.push_back(arg.data());
    args.push_back(nullptr);
    int count = argc;
    benchmark::Initialize(&count, args.data());
    if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 2;
    const size_t ran = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    std::string text;
    if (std::ifstream written{temporary, std::ios::binary}) text.assign(std::istreambuf_iterator<char>(written), {});
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    if (ran == 0) {
        std::fprintf(stderr, "%s: no benchmark matches --benchmark_filter (or it is no regular expression)\n", argv[0]);
        return 2;
    }
    if (out.empty() || text.empty()) return 0;  // no file asked for, or none written (--benchmark_list_tests)
    if (!nlohmann::json::accept(text)) {
        std::fprintf(stderr, "%s: --benchmark_out: the results written were not whole JSON (a full disk?)\n", argv[0]);
        return 2;
    }
    try {
        report::write_file(out, text);
    } catch (const std::runtime_error& e) {
        std::fprintf(stderr, "%s: --benchmark_out: %s\n", argv[0], e.what());
        return 2;
    }
    return 0;
}

}  // namespace benchfp::bench
