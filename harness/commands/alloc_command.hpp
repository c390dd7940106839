#pragma once
// `benchfp alloc profile`: a named workload under the allocation profiler,
// written as pprof (and optionally folded stacks and a JSON summary).
#include <CLI/CLI.hpp>

#include <optional>
#include <string>

namespace benchfp::harness {

struct AllocProfileOptions {
    std::string workload;
    std::optional<size_t> sample_bytes;
    std::optional<double> sample_rate;
    bool all = false;
    int max_depth = 64;
    int scale = 1;
    std::string out, folded, json;
    std::string folded_unit = "bytes";
    std::string inuse_at = "peak";  // when the in-use sample types are taken (alloc::workloads::Moment)

    void add_to(CLI::App& app);
};

// Runs it; returns the exit status (2 for bad input, with a message).
int run_alloc_profile(const AllocProfileOptions& options);

}  // namespace benchfp::harness
