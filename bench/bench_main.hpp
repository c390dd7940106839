#pragma once
// What the allocator benchmark programs' main() share: bad input said as such
// (a message naming it, exit status 2) where the pool or Google Benchmark
// would abort or pass, and their output file written whole or not at all.
#include "counts.hpp"
#include "pool_environment.hpp"
#include "report/file.hpp"

#include <benchmark/benchmark.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace benchfp::bench {

namespace detail {

// Repetitions: 1 to 1000 (the scripts take 3 to 7). Google Benchmark takes an
// int, but 2^31 - 1 runs for years: a count beyond any real use is a mistyped one.
inline constexpr unsigned long long max_repetitions = 1000;
inline bool is_repetitions(std::string_view v) { return bench::count_of(v, 1, max_repetitions).has_value(); }
// Seconds: a finite number from 0 to 60 per benchmark (the scripts take 0.05 to
// 0.1; a double in Google Benchmark 1.7, Debian 12's). nan, inf or 1e300 runs
// each benchmark to Google Benchmark's cap of 10^9 iterations: days for the
// gate's workloads.
inline constexpr double max_seconds = 60;
inline bool is_seconds(std::string_view v) {
    double x = 0;
    const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), x);
    return !v.empty() && error == std::errc() && end == v.data() + v.size() && std::isfinite(x) && x >= 0 &&
           x <= max_seconds;
}
inline bool is_one_of(std::string_view v, std::initializer_list<std::string_view> words) {
    return std::find(words.begin(), words.end(), v) != words.end();
}
// The words Google Benchmark reads as true or false; it reads any other word as true.
inline bool is_boolean(std::string_view v) {
    std::string lower(v);
    std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
    return is_one_of(lower, {"true", "false", "yes", "no", "on", "off", "1", "0", "t", "f", "y", "n"});
}

// A Google Benchmark flag this checks: its values, and what a valid one is.
struct FlagRule {
    std::string_view flag;
    bool (*valid)(std::string_view);
    const char* expected;
};

// The flags whose bad values Google Benchmark would abort on, pass with exit 0
// or not finish: a negative --benchmark_repetitions aborts it
// (std::length_error), 0 or none runs nothing and exits 0, a
// --benchmark_min_time of nan or inf runs for days, an unknown format or time
// unit prints the usage and exits 0, a boolean flag takes any word for true,
// --benchmark_format=csv aborts on the gate's counters, and
// --benchmark_perf_counters runs without counters and exits 0. Every value of
// these is checked, those Google Benchmark would refuse too (a count that is no
// integer: one message for both); flags it does not know are left to it (exit 2).
inline constexpr FlagRule benchmark_flag_rules[] = {
    {"--benchmark_repetitions", is_repetitions, "a count from 1 to 1000 (digits, no leading 0)"},
    {"--benchmark_min_time", is_seconds, "seconds: a finite number from 0 to 60"},
    {"--benchmark_min_warmup_time", is_seconds, "seconds: a finite number from 0 to 60"},
    // Not csv: the gate's benchmarks carry different counters, and Google
    // Benchmark 1.7.1's CSV writer aborts on a counter one run lacks.
    {"--benchmark_format", [](std::string_view v) { return is_one_of(v, {"console", "json"}); }, "console or json"},
    // JSON only: the file is checked whole as JSON before it replaces --benchmark_out's (run_benchmarks).
    {"--benchmark_out_format", [](std::string_view v) { return v == "json"; },
     "json (the only format whose file is checked whole before it is written)"},
    // Debian 12's Google Benchmark is built without libpfm: it says the
    // counters are not supported, counts nothing and exits 0. Empty: none, its default.
    {"--benchmark_perf_counters", [](std::string_view v) { return v.empty(); },
     "available: this Google Benchmark is built without libpfm and would count nothing"},
    {"--benchmark_time_unit", [](std::string_view v) { return is_one_of(v, {"", "ns", "us", "ms", "s"}); },
     "ns, us, ms or s"},
    {"--benchmark_color", [](std::string_view v) { return v == "auto" || is_boolean(v); }, "auto, true or false"},
    {"--benchmark_list_tests", is_boolean, "true or false"},
    {"--benchmark_enable_random_interleaving", is_boolean, "true or false"},
    {"--benchmark_report_aggregates_only", is_boolean, "true or false"},
    {"--benchmark_display_aggregates_only", is_boolean, "true or false"},
    {"--benchmark_counters_tabular", is_boolean, "true or false"},
};

// The environment variable Google Benchmark reads a flag's default from
// ("--benchmark_min_time": BENCHMARK_MIN_TIME).
inline std::string environment_name(std::string_view flag) {
    std::string name(flag.substr(2));
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
    return name;
}

}  // namespace detail

// What is wrong with a Google Benchmark flag's value (detail::benchmark_flag_rules), or "".
inline std::string bad_benchmark_flag(std::string_view arg) {
    const size_t equals = arg.find('=');
    if (equals == std::string_view::npos) return "";  // a bare boolean flag, or one Google Benchmark refuses
    const std::string_view flag = arg.substr(0, equals), value = arg.substr(equals + 1);
    for (const detail::FlagRule& rule : detail::benchmark_flag_rules)
        if (flag == rule.flag && !rule.valid(value))
            return std::string(flag) + "='" + std::string(value) + "' is not " + rule.expected;
    return "";
}

// Whether the arguments give `flag` (as "--flag=value", or bare).
inline bool gives_flag(const std::vector<std::string>& args, std::string_view flag) {
    return std::any_of(args.begin(), args.end(), [&](const std::string& arg) {
        return arg == flag || (arg.starts_with(flag) && arg.size() > flag.size() && arg[flag.size()] == '=');
    });
}

// What is wrong with the environment Google Benchmark reads its flags' defaults
// from (BENCHMARK_REPETITIONS=0 ran nothing and passed, BENCHMARK_MIN_TIME=nan
// never ended), or "": the same rules as the flags', for each flag the
// arguments do not give themselves (a flag overrides its default); and
// BENCHMARK_OUT, whose file Google Benchmark would write in place, unchecked,
// is refused where --benchmark_out does not override it.
inline std::string bad_benchmark_environment(const std::vector<std::string>& args) {
    if (const char* out = std::getenv("BENCHMARK_OUT"); out && *out && !gives_flag(args, "--benchmark_out"))
        return "BENCHMARK_OUT='" + std::string(out) +
               "' is set: Google Benchmark would write that file in place, unchecked; give --benchmark_out=FILE instead";
    for (const detail::FlagRule& rule : detail::benchmark_flag_rules) {
        const std::string name = detail::environment_name(rule.flag);
        const char* value = std::getenv(name.c_str());
        if (value && !gives_flag(args, rule.flag) && !rule.valid(value))
            return name + "='" + value + "' (Google Benchmark's default for " + std::string(rule.flag) + ") is not " +
                   rule.expected;
    }
    return "";
}

namespace detail {

// The temporary file Google Benchmark writes --benchmark_out into. A static
// buffer: the signal handler below reads it.
inline char temporary_path[4096] = "";

inline void remove_temporary_and_reraise(int signal_number) {
    if (temporary_path[0]) unlink(temporary_path);
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
}

// Made by mkstemp (a name of its own: never a file or link another process
// placed), and removed on every way out of run_benchmarks, SIGINT and SIGTERM
// included (Ctrl-C left /tmp/benchfp_bench_out.<pid>.json behind).
class TemporaryOut {
public:
    // Throws std::runtime_error where no temporary file can be made (TMPDIR
    // names no directory: that aborted the program, SIGABRT, before any check).
    TemporaryOut() {
        std::error_code error;
        const std::filesystem::path dir = std::filesystem::temp_directory_path(error);
        if (error) throw std::runtime_error("no directory for a temporary file (TMPDIR?): " + error.message());
        const std::string pattern = (dir / "benchfp_bench_out.XXXXXX").string();
        if (pattern.size() >= sizeof(temporary_path)) throw std::runtime_error("the temporary directory's path is too long");
        std::memcpy(temporary_path, pattern.c_str(), pattern.size() + 1);
        const int fd = mkstemp(temporary_path);
        if (fd < 0) {
            const std::string why = std::strerror(errno);
            temporary_path[0] = 0;
            throw std::runtime_error("cannot make a temporary file in " + dir.string() + ": " + why);
        }
        close(fd);
        std::signal(SIGINT, remove_temporary_and_reraise);
        std::signal(SIGTERM, remove_temporary_and_reraise);
    }
    ~TemporaryOut() {
        std::signal(SIGINT, SIG_DFL);
        std::signal(SIGTERM, SIG_DFL);
        unlink(temporary_path);
        temporary_path[0] = 0;
    }
    TemporaryOut(const TemporaryOut&) = delete;
    TemporaryOut& operator=(const TemporaryOut&) = delete;
    std::string path() const { return temporary_path; }
    std::string text() const {
        std::ifstream written{temporary_path, std::ios::binary};
        return {std::istreambuf_iterator<char>(written), {}};
    }
};

}  // namespace detail

// Runs the registered benchmarks with Google Benchmark's flags, and says as bad
// input (exit 2) what it would pass with exit 0, abort on or never finish: a
// flag's value bad_benchmark_flag refuses (or its environment variable's,
// bad_benchmark_environment), an unrecognized argument, a --benchmark_filter
// (or BENCHMARK_FILTER) that matches no benchmark (or is no regular
// expression: it matches none). Google Benchmark writes --benchmark_out=FILE
// in place and checks no write (a filter matching nothing left FILE empty,
// exit 0), so it writes a temporary file of its own instead (TemporaryOut),
// and FILE is written from it through report::write_file (atomic, links
// written through, devices in place) once the run ran a benchmark and the
// file is whole JSON; otherwise FILE stays as it was, and a FILE asked for and
// not written (--benchmark_list_tests runs nothing) is exit 2.
inline int run_benchmarks(int argc, char** argv) {
    constexpr std::string_view out_flag = "--benchmark_out=";
    std::vector<std::string> storage(argv, argv + argc);
    const std::vector<std::string> args(storage.begin() + 1, storage.end());
    std::vector<std::string> problems = {bad_benchmark_environment(args)};
    for (const std::string& arg : args) problems.push_back(bad_benchmark_flag(arg));
    for (const std::string& bad : problems)
        if (!bad.empty()) {
            std::fprintf(stderr, "%s: %s\n", argv[0], bad.c_str());
            return 2;
        }
    std::string out;  // the last --benchmark_out's, as Google Benchmark reads it: empty asks for no file
    for (const std::string& arg : args)
        if (arg.starts_with(out_flag)) out = arg.substr(out_flag.size());
    std::optional<detail::TemporaryOut> temporary;
    if (!out.empty()) {  // before the run, not after it (Google Benchmark exits 1 on a file it cannot open)
        try {
            report::check_writable(out);
            temporary.emplace();
        } catch (const std::runtime_error& e) {
            std::fprintf(stderr, "%s: --benchmark_out: %s\n", argv[0], e.what());
            return 2;
        }
        for (std::string& arg : storage)
            if (arg.starts_with(out_flag)) arg = std::string(out_flag) + temporary->path();
    }
    std::vector<char*> pointers;
    for (std::string& arg : storage) pointers.push_back(arg.data());
    pointers.push_back(nullptr);
    int count = argc;
    benchmark::Initialize(&count, pointers.data());
    if (benchmark::ReportUnrecognizedArguments(count, pointers.data())) return 2;
    const size_t ran = benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    if (ran == 0) {
        const char* filter = std::getenv("BENCHMARK_FILTER");
        const std::string which = filter && !gives_flag(args, "--benchmark_filter")
                                      ? "BENCHMARK_FILTER='" + std::string(filter) + "' (its default)"
                                      : "--benchmark_filter";
        std::fprintf(stderr, "%s: no benchmark matches %s (or it is no regular expression)\n", argv[0], which.c_str());
        return 2;
    }
    if (out.empty()) return 0;
    const std::string text = temporary->text();
    if (text.empty()) {
        std::fprintf(stderr, "%s: --benchmark_out: no results were written (--benchmark_list_tests runs none)\n", argv[0]);
        return 2;
    }
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
