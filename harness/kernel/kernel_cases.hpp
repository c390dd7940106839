#pragma once
// Expansion of `benchfp kernel` options and batch files into concrete cases.
//
// Precedence, weakest first: built-in defaults, the options of an enclosing batch
// line, the options of the line itself, then the options typed on the command
// line, which override every batch line ("run this batch, but on avx2").
// Everything is parsed and validated before any case runs, so bad input stops
// the run (status 2) before it starts.
#include "families/kernel_case.hpp"
#include "kernel/case_options.hpp"

#include <optional>
#include <string>
#include <vector>

namespace benchfp::harness {

// The options and problem that reproduce the case alone: the mode's own knobs,
// every other knob that differs from its default, and `run_options` (the
// run-wide ones that differ from theirs: --freq, --event, --max-isa, ...).
std::string repro(const KernelCase& c, const std::string& run_options = "");

struct ExpandLimits {
    // More cases is a mistake (nested batches multiply): refused during the
    // expansion, before it takes minutes. --max-cases raises it.
    size_t max_cases = 100000;
    // Cases whose buffers need more (Family::bytes_needed) are refused; unset: no check.
    std::optional<double> memory_bytes;
};

// batch_files, when given, gets every batch file read, nested ones and
// {family}'s included (as found: a run's outputs must not replace one).
std::vector<KernelCase> expand_cases(const CaseOptions& command_line, std::optional<jit::Isa> isa_cap,
                                     const ExpandLimits& limits = {}, std::vector<std::string>* batch_files = nullptr);

}  // namespace benchfp::harness
