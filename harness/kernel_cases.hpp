#pragma once
// Expansion of `benchfp kernel` options and batch files into concrete cases.
//
// Precedence, weakest first: built-in defaults, the options of an enclosing batch
// line, the options of the line itself, then the options typed on the command
// line, which override every batch line ("run this batch, but on avx2").
// Everything is parsed and validated before any case runs, so bad input stops
// the run (status 2) before it starts.
#include "case_options.hpp"
#include "jit/registry.hpp"
#include "perf/verdict.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchfp::harness {

enum class Mode { corr, perf, unwind, list };
const char* to_string(Mode mode);

struct KernelCase {
    jit::KernelSpec spec;
    Mode mode = Mode::corr;
    std::optional<perf::Verdict> expect;  // unwind: unset means the rule "every sample full"
    std::string problem;
    int duration_ms = 500;
    int min_samples = 200;
    unsigned seed = 1;
    int max_ms_per_prb = 500;
    std::string vs;  // perf: peers to compare with, a list of onednn, copy; or empty
    int threads = 1;
    std::string skip_reason;  // non-empty: the ISA cannot run on this host (or above the cap)
};

// The options and problem that reproduce the case alone.
std::string repro(const KernelCase& c);

std::vector<KernelCase> expand_cases(const CaseOptions& command_line, std::optional<jit::Isa> isa_cap);

}  // namespace benchfp::harness
