#pragma once
// How the allocator benchmark programs read a count on their command lines
// (bench_main.hpp's --benchmark_repetitions, alloc_instructions' N).
#include <charconv>
#include <optional>
#include <string_view>
#include <system_error>

namespace benchfp::bench {

// A count as benchfp's own counts are written (harness/option_rules.hpp's
// options, BENCHFP_POOL_RELEASE_BYTES in lib/alloc/pool.cpp, each with its
// own messages): decimal digits alone, no sign, no blank, no leading 0 (010 is
// not read as 10 where a reader could take it for octal), from min to max:
// the count, read once, or nothing where v is not one.
inline std::optional<unsigned long long> count_of(std::string_view v, unsigned long long min, unsigned long long max) {
    unsigned long long n = 0;
    const auto [end, error] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || v[0] < '0' || v[0] > '9' || (v.size() > 1 && v[0] == '0') || error != std::errc() ||
        end != v.data() + v.size() || n < min || n > max)
        return std::nullopt;
    return n;
}

}  // namespace benchfp::bench
