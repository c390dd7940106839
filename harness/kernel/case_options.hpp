#pragma once
// Options of `benchfp kernel` that describe cases. The same set is accepted on the
// command line and on every line of a batch file, parsed by the same CLI11 code.
#include <CLI/CLI.hpp>

#include <optional>
#include <string>
#include <vector>

namespace benchfp::harness {

struct CaseOptions {
    // Settings: unset means "inherit". Lists are comma-separated (benchdnn style).
    std::optional<std::string> kernel, alg, isa, frame, mode, expect, vs;
    std::optional<int> duration_ms, min_samples, max_ms_per_prb, threads;
    std::optional<unsigned> seed;
    std::optional<int64_t> max_steps;
    // Work: batch files to expand and problems to run, in that order.
    std::vector<std::string> batches;
    std::vector<std::string> problems;
    // Batch files: forget the options carried from the earlier lines of this file.
    bool reset = false;

    void add_to(CLI::App& app);
    // The settings of *this where set, the others from `base`; no work is copied.
    CaseOptions over(const CaseOptions& base) const;
};

// The items of option's comma-separated list (--isa=sse41,avx2), empty ones
// included, so that each caller refuses an empty name; a name given twice
// throws UsageError prefixed with `where`.
std::vector<std::string> split_list(const std::string& list, const char* option, const std::string& where);

// Parses one batch-file line (comments after '#' removed) with the same options.
// Throws UsageError prefixed with `where` ("file:line").
CaseOptions parse_batch_line(const std::string& line, const std::string& where);

// Throws UsageError for a token "--name=" with nothing after the '=', or only
// commas and blanks ("--expect=,"): CLI11 would take the next argument as its
// value, silently shifting the rest.
void reject_empty_values(const std::vector<std::string>& tokens, const std::string& where);

}  // namespace benchfp::harness
