#include "kernel/case_options.hpp"

#include "option_rules.hpp"
#include "families/family.hpp"
#include "quoted.hpp"
#include "usage_error.hpp"

#include <algorithm>
#include <sstream>

namespace benchfp::harness {

// The items of option's comma-separated list, empty ones included (a trailing
// comma's too: getline drops it), so that each caller refuses an empty name.
// A name given twice (--frame=frame,frame) is refused: its cases would run and
// count twice.
std::vector<std::string> split_list(const std::string& list, const char* option, const std::string& where) {
    std::vector<std::string> items;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) {
        if (!item.empty() && std::find(items.begin(), items.end(), item) != items.end())
            throw UsageError(where + ": " + option + " names " + quoted_token(item) + " twice");
        items.push_back(item);
    }
    if (items.empty() || list.back() == ',') items.push_back("");
    return items;
}

void CaseOptions::add_to(CLI::App& app) {
    app.add_option("--kernel", kernel, "kernel family (list): " + family_names() + " (see --list)");
    app.add_option("--alg", alg, "algorithm of the family (list), e.g. relu,exp");
    app.add_option("--isa", isa, "ISA (list): sse41, avx2, avx512, or max (default: the highest usable)");
    app.add_option("--frame", frame, "frame policy (list): clobber, preserve, frame (default: frame)");
    app.add_option("--mode", mode,
                   "corr (check against the reference), perf (time it), unwind (sampled chain check), "
                   "list (registers and code, without running), verify (static frame verifier), step (every "
                   "instruction of one call single-stepped), abi (callee-saved and control state, stack rules); a list runs each");
    app.add_option("--expect", expect, "unwind: the verdict every sample must have: full, skipped-caller, broken");
    app.add_option("--duration-ms", duration_ms, "unwind: the kernel's CPU time under the sampler, in ms (default 500; at most 20x that in wall time)")
        ->check(CLI::Range(1, 600000));
    app.add_option("--min-samples", min_samples, "unwind: fewer judged JIT samples is inconclusive (default 200)")
        ->check(CLI::Range(1, 100000000));
    app.add_option("--seed", seed, "seed of the random inputs (default 1)");
    app.add_option("--max-ms-per-prb", max_ms_per_prb, "perf: time budget of one problem (default 500)")
        ->check(CLI::Range(1, 3600000));
    app.add_option("--max-steps", max_steps,
                   "step, abi: the most JIT instructions stepped on one thread; a call longer than that fails "
                   "unjudged, never runs for hours (default 5000000, about 2 minutes)")
        ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
    app.add_option("--vs", vs, "perf: also time peers side by side (list): onednn (same problem), copy (memcpy of the input), "
                   "peak (register-only FMA loop on as many threads)");
    app.add_option("--threads", threads, "threads of the parallel section, the calling thread included (default 1)")
        ->check(CLI::Range(1, 1024));
    app.add_option("--batch", batches,
                   "batch file: one case line per line, '#' comments; options carry to the following lines; {family} in the name stands for every family");
    app.add_flag("--reset", reset, "in a batch file: forget the options carried from the earlier lines");
    app.add_option("problems", problems, "problem descriptors, e.g. 1048576 or 64x1024");
}

CaseOptions CaseOptions::over(const CaseOptions& base) const {
    auto pick = [](const auto& mine, const auto& theirs) { return mine ? mine : theirs; };
    CaseOptions out;
    out.kernel = pick(kernel, base.kernel);
    out.alg = pick(alg, base.alg);
    out.isa = pick(isa, base.isa);
    out.frame = pick(frame, base.frame);
    out.mode = pick(mode, base.mode);
    out.expect = pick(expect, base.expect);
    out.duration_ms = pick(duration_ms, base.duration_ms);
    out.min_samples = pick(min_samples, base.min_samples);
    out.seed = pick(seed, base.seed);
    out.max_ms_per_prb = pick(max_ms_per_prb, base.max_ms_per_prb);
    out.max_steps = pick(max_steps, base.max_steps);
    out.vs = pick(vs, base.vs);
    out.threads = pick(threads, base.threads);
    return out;
}

CaseOptions parse_batch_line(const std::string& line, const std::string& where) {
    std::istringstream words(line.substr(0, line.find('#')));
    std::vector<std::string> tokens;
    for (std::string token; words >> token;) tokens.push_back(token);
    reject_empty_values(tokens, where);
    std::reverse(tokens.begin(), tokens.end());  // CLI11 consumes a vector from the back

    CaseOptions options;
    CLI::App app("batch line");
    app.set_help_flag();
    options.add_to(app);
    apply_option_rules(app);  // --reset=0 read as no --reset, and --reset --reset was taken
    try {
        app.parse(tokens);
    } catch (const CLI::ParseError& e) {
        // CLI11 echoes the tokens: a batch file may hold anything, so cut and escape.
        throw UsageError(where + ": " + escaped(e.what(), 300));
    }
    return options;
}

void reject_empty_values(const std::vector<std::string>& tokens, const std::string& where) {
    for (const std::string& token : tokens) {
        if (!token.starts_with("--")) continue;
        const size_t equals = token.find('=');
        if (equals == std::string::npos || equals < 3) continue;
        // Commas and blanks only are empty too: CLI11 splits "--expect=," into
        // no item, and the option then took the next argument as its value.
        if (token.find_first_not_of(", \t", equals + 1) == std::string::npos)
            throw UsageError(where + ": option " + quoted_token(token) + " has an empty value");
    }
}

}  // namespace benchfp::harness
