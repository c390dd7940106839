#include "kernel/kernel_cases.hpp"

#include "families/family.hpp"
#include "usage_error.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>

namespace benchfp::harness {

namespace {

constexpr int max_batch_depth = 16;

std::vector<std::string> split_list(const std::string& list) {
    std::vector<std::string> items;
    std::stringstream in(list);
    for (std::string item; std::getline(in, item, ',');) items.push_back(item);
    if (items.empty()) items.push_back("");
    return items;
}

std::optional<perf::Verdict> parse_expect(const std::string& name) {
    for (perf::Verdict v : {perf::Verdict::full, perf::Verdict::skipped_caller, perf::Verdict::broken})
        if (name == perf::to_string(v)) return v;
    return std::nullopt;
}

std::filesystem::path find_batch_file(const std::string& name, const std::string& where) {
    // Relative to the working directory first, then to the source tree, so that
    // build/benchfp finds cases/ from wherever it is started.
    for (const std::filesystem::path& candidate :
         {std::filesystem::path(name), std::filesystem::path(BENCHFP_SOURCE_DIR) / name})
        if (std::filesystem::is_regular_file(candidate)) return candidate;
    throw UsageError(where + ": cannot open batch file '" + name + "'");
}

class Expander {
public:
    Expander(const CaseOptions& command_line, std::optional<jit::Isa> cap) : cli_(command_line), cap_(cap) {}

    std::vector<KernelCase> run() {
        expand(cli_, "command line", 0);
        if (cases_.empty()) throw UsageError("no problem to run: give a problem (e.g. 1048576) or --batch=FILE");
        return std::move(cases_);
    }

private:
    void expand(const CaseOptions& state, const std::string& where, int depth) {
        for (const std::string& batch : state.batches) read_batch(batch, state, where, depth);
        for (const std::string& problem : state.problems) add_cases(cli_.over(state), problem, where);
    }

    void read_batch(const std::string& name, const CaseOptions& state, const std::string& where, int depth) {
        if (depth >= max_batch_depth)
            throw UsageError(where + ": batch files nested more than " + std::to_string(max_batch_depth) + " deep");
        const auto path = find_batch_file(name, where);
        std::ifstream file(path);
        std::string line;
        for (int number = 1; std::getline(file, line); ++number) {
            const std::string line_where = name + ":" + std::to_string(number);
            CaseOptions parsed = parse_batch_line(line, line_where);
            CaseOptions merged = parsed.over(state);
            merged.batches = parsed.batches;
            merged.problems = parsed.problems;
            expand(merged, line_where, depth + 1);
        }
    }

    // One case per element of the cartesian product of the list options.
    void add_cases(const CaseOptions& o, const std::string& problem, const std::string& where) {
        for (const std::string& mode_name : split_list(o.mode.value_or("corr")))
            add_cases(o, parse_mode(mode_name, where), problem, where);
    }

    void add_cases(const CaseOptions& o, Mode mode, const std::string& problem, const std::string& where) {
        const Peers peers = parse_peers(o.vs.value_or(""), where);
        std::optional<perf::Verdict> expect;
        if (o.expect) {
            expect = parse_expect(*o.expect);
            if (!expect)
                throw UsageError(where + ": unknown --expect value '" + *o.expect +
                                 "' (known: full, skipped-caller, broken)");
        }
        for (const std::string& kernel : split_list(o.kernel.value_or("eltwise"))) {
            const Family* family = find_family(kernel);
            if (!family)
                throw UsageError(where + ": unknown kernel '" + kernel + "' (known: " + family_names() + ")");
            for (const std::string& alg : split_list(o.alg.value_or(family->algs.front()))) {
                if (!family->has_alg(alg)) throw UsageError(where + ": unknown alg '" + alg + "' for " + kernel);
                for (const std::string& isa_name : split_list(o.isa.value_or("max")))
                    for (const std::string& frame_name : split_list(o.frame.value_or("frame"))) {
                        KernelCase c;
                        c.spec.kernel = kernel;
                        c.spec.alg = alg;
                        c.spec.frame = parse_frame(frame_name, where);
                        resolve_isa(c, *family, isa_name, where);
                        c.mode = mode;
                        c.expect = expect;
                        c.problem = problem;
                        c.duration_ms = o.duration_ms.value_or(c.duration_ms);
                        c.min_samples = o.min_samples.value_or(c.min_samples);
                        c.seed = o.seed.value_or(c.seed);
                        c.max_ms_per_prb = o.max_ms_per_prb.value_or(c.max_ms_per_prb);
                        c.vs = peers;
                        c.threads = o.threads.value_or(c.threads);
                        family->validate(alg, problem, where);
                        cases_.push_back(std::move(c));
                    }
            }
        }
    }

    static Mode parse_mode(const std::string& name, const std::string& where) {
        for (Mode mode : all_modes)
            if (name == to_string(mode)) return mode;
        std::string known;
        for (Mode mode : all_modes) known += (known.empty() ? "" : ", ") + std::string(to_string(mode));
        throw UsageError(where + ": unknown --mode '" + name + "' (known: " + known + ")");
    }

    static Peers parse_peers(const std::string& list, const std::string& where) {
        Peers peers;
        if (list.empty()) return peers;
        for (const std::string& peer : split_list(list)) {
            bool* flag = peer == "onednn" ? &peers.onednn : peer == "copy" ? &peers.copy : peer == "peak" ? &peers.peak : nullptr;
            if (!flag) throw UsageError(where + ": unknown --vs '" + peer + "' (known: onednn, copy, peak)");
            *flag = true;
        }
        return peers;
    }

    static jit::FramePolicy parse_frame(const std::string& name, const std::string& where) {
        if (auto policy = jit::parse_frame_policy(name)) return *policy;
        throw UsageError(where + ": unknown --frame '" + name + "' (known: " + jit::known_frame_policies() + ")");
    }

    // "max" is the highest ISA the family implements that this host may run.
    void resolve_isa(KernelCase& c, const Family& family, const std::string& name,
                     const std::string& where) const {
        if (name == "max") {
            for (auto it = std::rbegin(jit::all_isas); it != std::rend(jit::all_isas); ++it)
                if (family.supports(*it) && jit::isa_usable(*it, cap_)) {
                    c.spec.isa = *it;
                    return;
                }
            c.spec.isa = jit::Isa::avx2;
            c.skip_reason = "no ISA usable here that " + family.name + " implements";
            return;
        }
        const auto isa = jit::parse_isa(name);
        if (!isa) throw UsageError(where + ": unknown ISA '" + name + "' (known: " + jit::known_isas() + ", max)");
        c.spec.isa = *isa;
        if (!family.supports(*isa))
            c.skip_reason = family.name + " has no " + name + " implementation";
        else
            jit::isa_usable(*isa, cap_, &c.skip_reason);
    }

    const CaseOptions& cli_;
    std::optional<jit::Isa> cap_;
    std::vector<KernelCase> cases_;
};

}  // namespace

std::string repro(const KernelCase& c) {
    std::ostringstream out;
    out << "--mode=" << to_string(c.mode) << " --kernel=" << c.spec.kernel << " --alg=" << c.spec.alg
        << " --isa=" << jit::to_string(c.spec.isa) << " --frame=" << jit::to_string(c.spec.frame);
    switch (c.mode) {
    case Mode::unwind:
        if (c.expect) out << " --expect=" << perf::to_string(*c.expect);
        out << " --duration-ms=" << c.duration_ms;
        break;
    case Mode::perf:
        out << " --max-ms-per-prb=" << c.max_ms_per_prb;
        if (c.vs.any()) out << " --vs=" << c.vs.list();
        break;
    case Mode::corr: out << " --seed=" << c.seed; break;
    case Mode::list:
    case Mode::verify:
    case Mode::step:
    case Mode::abi: break;
    }
    if (c.threads != 1) out << " --threads=" << c.threads;
    out << ' ' << c.problem;
    return out.str();
}

std::vector<KernelCase> expand_cases(const CaseOptions& command_line, std::optional<jit::Isa> isa_cap) {
    return Expander(command_line, isa_cap).run();
}

}  // namespace benchfp::harness
