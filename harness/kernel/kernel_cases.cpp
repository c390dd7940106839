#include "kernel/kernel_cases.hpp"

#include "families/family.hpp"
#include "quoted.hpp"
#include "source_tree.hpp"
#include "usage_error.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace benchfp::harness {

namespace {

constexpr int max_batch_depth = 16;

// Each list option where it is written (the command line, or a batch line),
// so that an item given twice is blamed on its source, not on a batch line
// the command line overrides.
void check_lists(const CaseOptions& o, const std::string& where) {
    const std::pair<const char*, const std::optional<std::string>*> lists[] = {
        {"--kernel", &o.kernel}, {"--alg", &o.alg}, {"--isa", &o.isa},
        {"--frame", &o.frame},   {"--mode", &o.mode}, {"--vs", &o.vs}};
    for (const auto& [option, value] : lists)
        if (*value) split_list(**value, option, where);
}

std::optional<perf::Verdict> parse_expect(const std::string& name) {
    for (perf::Verdict v : {perf::Verdict::full, perf::Verdict::skipped_caller, perf::Verdict::broken})
        if (name == perf::to_string(v)) return v;
    return std::nullopt;
}

std::filesystem::path find_batch_file(const std::string& name, const std::string& where) {
    if (auto path = locate_stored(name, StoredKind::regular_file)) return *path;
    // Why: judged where the name points here, else in the source tree.
    std::error_code error;
    std::filesystem::file_status status = std::filesystem::status(name, error);
    if (!std::filesystem::exists(status) && std::filesystem::path(name).is_relative())
        status = std::filesystem::status(std::filesystem::path(BENCHFP_SOURCE_DIR) / name, error);
    const std::string why =
        std::filesystem::exists(status) ? "not a regular file"
        : error && error != std::errc::no_such_file_or_directory
            ? error.message()
            : "not found here or in the source tree " + std::string(BENCHFP_SOURCE_DIR);
    throw UsageError(where + ": cannot open batch file " + quoted_token(name) + ": " + why);
}

// A batch file parsed once, however often it is included: nested batches
// multiply their lines, and CLI11 is not free.
struct BatchLine {
    CaseOptions options;
    std::string where;  // "file:line"
};

constexpr size_t max_batch_line_bytes = 1 << 20;

std::vector<BatchLine> read_batch_lines(const std::filesystem::path& path, const std::string& name) {
    std::ifstream file(path);
    // An unreadable batch is an error, never an empty one: its cases would vanish from a green run.
    if (!file) throw UsageError("cannot read batch file " + quoted_token(name) + ": " + std::strerror(errno));
    std::vector<BatchLine> lines;
    std::string line;
    for (int number = 1; std::getline(file, line); ++number) {
        if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 byte-order mark
        const std::string where = name + ":" + std::to_string(number);
        // Parsed, a line's tokens take about 20 times its bytes: a line of 3.5
        // million problems took 413 MB before the case limit refused it.
        if (line.size() > max_batch_line_bytes)
            throw UsageError(where + ": a line of " + std::to_string(line.size()) + " bytes; the most is " +
                             std::to_string(max_batch_line_bytes) + " (put the problems on several lines)");
        lines.push_back({parse_batch_line(line, where), where});
        check_lists(lines.back().options, where);
    }
    if (file.bad()) throw UsageError("error while reading batch file " + quoted_token(name));
    return lines;
}

std::string gib(double bytes) {
    std::ostringstream out;
    out.precision(3);
    out << bytes / double(1 << 30) << " GiB";
    return out.str();
}

class Expander {
public:
    Expander(const CaseOptions& command_line, std::optional<jit::Isa> cap, const ExpandLimits& limits)
        : cli_(command_line), cap_(cap), limits_(limits) {}

    std::vector<KernelCase> run(std::vector<std::string>* batch_files) {
        check_lists(cli_, "command line");
        expand(cli_, "command line", 0);
        if (cases_.empty()) throw UsageError("no problem to run: give a problem (e.g. 1048576) or --batch=FILE");
        if (batch_files)
            for (const auto& [path, lines] : files_) batch_files->push_back(path);
        return std::move(cases_);
    }

private:
    void expand(const CaseOptions& state, const std::string& where, int depth) {
        for (const std::string& batch : state.batches)
            for (const std::string& name : per_family(batch)) read_batch(name, state, where, depth);
        for (const std::string& problem : state.problems) add_cases(cli_.over(state), problem, where);
    }

    // "{family}" in a batch name stands for every family of the table, in its
    // order: cases/default and cases/unwind name no family, so a new family's
    // batch files join the default suite without a line there.
    static std::vector<std::string> per_family(const std::string& batch) {
        static const std::string token = "{family}";
        const size_t at = batch.find(token);
        if (at == std::string::npos) return {batch};
        std::vector<std::string> names;
        for (const Family& family : families())
            names.push_back(std::string(batch).replace(at, token.size(), family.name));
        return names;
    }

    // Options on a line carry to the following lines of the same file until
    // --reset (benchdnn's convention), over the options of the including line.
    void read_batch(const std::string& name, const CaseOptions& state, const std::string& where, int depth) {
        if (depth >= max_batch_depth)
            throw UsageError(where + ": batch files nested more than " + std::to_string(max_batch_depth) + " deep");
        const auto path = find_batch_file(name, where);
        auto [cached, fresh] = files_.try_emplace(path.string());
        if (fresh) cached->second = read_batch_lines(path, name);
        const size_t cases_before = cases_.size();
        CaseOptions carried;
        for (const BatchLine& line : cached->second) {
            // Lines without problems cost nothing each, but nested batches multiply them too.
            if (++lines_expanded_ > 10 * limits_.max_cases) throw too_many(line.where, "batch lines");
            if (line.options.reset) carried = CaseOptions{};
            carried = line.options.over(carried);
            CaseOptions merged = carried.over(state);
            merged.batches = line.options.batches;
            merged.problems = line.options.problems;
            expand(merged, line.where, depth + 1);
        }
        // A batch of comments only (or an empty file) is a mistake, not a suite
        // that passed: its cases would be missing from a green run.
        if (cases_.size() == cases_before)
            throw UsageError(where + ": batch file " + quoted_token(name) + " names no problem to run");
    }

    UsageError too_many(const std::string& where, const std::string& what) const {
        return UsageError(where + ": more than " + std::to_string(limits_.max_cases) + " cases (" + what +
                          " expanded so far); nested batches multiply: raise the cap with --max-cases=N");
    }

    // One case per element of the cartesian product of the list options.
    void add_cases(const CaseOptions& o, const std::string& problem, const std::string& where) {
        for (const std::string& mode_name : split_list(o.mode.value_or("corr"), "--mode", where))
            add_cases(o, parse_mode(mode_name, where), problem, where);
    }

    void add_cases(const CaseOptions& o, Mode mode, const std::string& problem, const std::string& where) {
        const Peers peers = parse_peers(o.vs.value_or(""), where);
        std::optional<perf::Verdict> expect;
        if (o.expect) {
            expect = parse_expect(*o.expect);
            if (!expect)
                throw UsageError(where + ": unknown --expect value " + quoted_token(*o.expect) +
                                 " (known: full, skipped-caller, broken)");
        }
        for (const std::string& kernel : split_list(o.kernel.value_or("eltwise"), "--kernel", where)) {
            const Family* family = find_family(kernel);
            if (!family)
                throw UsageError(where + ": unknown kernel " + quoted_token(kernel) + " (known: " + family_names() + ")");
            for (const std::string& alg : split_list(o.alg.value_or(family->algs.front()), "--alg", where)) {
                if (!family->has_alg(alg)) throw UsageError(where + ": unknown alg " + quoted_token(alg) + " for " + kernel);
                family->validate(alg, problem, where);
                const std::vector<std::string> isa_names = split_list(o.isa.value_or("max"), "--isa", where);
                check_max_is_not_named(*family, isa_names, where);
                for (const std::string& isa_name : isa_names)
                    for (const std::string& frame_name : split_list(o.frame.value_or("frame"), "--frame", where)) {
                        if (cases_.size() >= limits_.max_cases) throw too_many(where, "cases");
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
                        c.max_steps = o.max_steps.value_or(c.max_steps);
                        c.vs = peers;
                        c.threads = o.threads.value_or(c.threads);
                        check_peak_peer(c, where);
                        check_memory(c, *family, where);
                        cases_.push_back(std::move(c));
                    }
            }
        }
    }

    // "max" beside the ISA it stands for here (--isa=max,avx512) names one ISA
    // twice: its cases would run and count twice.
    void check_max_is_not_named(const Family& family, const std::vector<std::string>& names,
                                const std::string& where) const {
        if (std::find(names.begin(), names.end(), "max") == names.end()) return;
        KernelCase probe;
        resolve_isa(probe, family, "max", where);
        if (!probe.skip_reason.empty()) return;
        const std::string isa = jit::to_string(probe.spec.isa);
        if (std::find(names.begin(), names.end(), isa) != names.end())
            throw UsageError(where + ": --isa names " + quoted_token(isa) + " twice: 'max' is " + isa + " here");
    }

    // The FMA peak loop exists from avx2 on (FMA came with it): there is no sse41 peak to compare with.
    static void check_peak_peer(const KernelCase& c, const std::string& where) {
        if (c.mode == Mode::perf && c.vs.peak && c.spec.isa == jit::Isa::sse41 && c.skip_reason.empty())
            throw UsageError(where + ": --vs=peak needs avx2 or avx512: the FMA peak loop has no sse41 form "
                                     "(FMA came with avx2); drop peak for --isa=sse41");
    }

    // Before anything is allocated: what cannot fit is bad input, not a std::bad_alloc mid-run.
    void check_memory(const KernelCase& c, const Family& family, const std::string& where) const {
        if (c.mode == Mode::list || !limits_.memory_bytes || !family.bytes_needed) return;
        const double needed = family.bytes_needed(c);
        if (needed > *limits_.memory_bytes)
            throw UsageError(where + ": problem " + quoted_token(c.problem) + " (" + c.spec.kernel + " " +
                             to_string(c.mode) + ") needs " + gib(needed) + " of memory; " +
                             gib(*limits_.memory_bytes) + " is available (MemAvailable, /proc/meminfo)");
    }
    static Mode parse_mode(const std::string& name, const std::string& where) {
        for (Mode mode : all_modes)
            if (name == to_string(mode)) return mode;
        std::string known;
        for (Mode mode : all_modes) known += (known.empty() ? "" : ", ") + std::string(to_string(mode));
        throw UsageError(where + ": unknown --mode " + quoted_token(name) + " (known: " + known + ")");
    }

    static Peers parse_peers(const std::string& list, const std::string& where) {
        Peers peers;
        if (list.empty()) return peers;
        for (const std::string& peer : split_list(list, "--vs", where)) {
            bool* flag = peer == "onednn" ? &peers.onednn : peer == "copy" ? &peers.copy : peer == "peak" ? &peers.peak : nullptr;
            if (!flag) throw UsageError(where + ": unknown --vs " + quoted_token(peer) + " (known: onednn, copy, peak)");
            *flag = true;
        }
        return peers;
    }

    static jit::FramePolicy parse_frame(const std::string& name, const std::string& where) {
        if (auto policy = jit::parse_frame_policy(name)) return *policy;
        throw UsageError(where + ": unknown --frame " + quoted_token(name) + " (known: " + jit::known_frame_policies() + ")");
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
        if (!isa) throw UsageError(where + ": unknown ISA " + quoted_token(name) + " (known: " + jit::known_isas() + ", max)");
        c.spec.isa = *isa;
        c.isa_explicit = cli_.isa.has_value();  // named on the command line, not by a batch's matrix
        if (!family.supports(*isa))
            c.skip_reason = family.name + " has no " + name + " implementation";
        else
            jit::isa_usable(*isa, cap_, &c.skip_reason);
    }

    const CaseOptions& cli_;
    std::optional<jit::Isa> cap_;
    ExpandLimits limits_;
    std::vector<KernelCase> cases_;
    std::map<std::string, std::vector<BatchLine>> files_;  // by path: each file parsed once
    size_t lines_expanded_ = 0;
};

}  // namespace

std::string repro(const KernelCase& c, const std::string& run_options) {
    const KernelCase defaults;
    std::ostringstream out;
    out << "--mode=" << to_string(c.mode) << " --kernel=" << c.spec.kernel << " --alg=" << c.spec.alg
        << " --isa=" << jit::to_string(c.spec.isa) << " --frame=" << jit::to_string(c.spec.frame);
    // The knobs of the case's mode: the main one always (the line says what was
    // measured), the others where not default; the seed (every mode fills data) too.
    if ((c.mode == Mode::step || c.mode == Mode::abi) && c.expect) out << " --expect=" << perf::to_string(*c.expect);
    if ((c.mode == Mode::step || c.mode == Mode::abi) && c.max_steps != defaults.max_steps)
        out << " --max-steps=" << c.max_steps;
    if (c.mode == Mode::unwind) {
        if (c.expect) out << " --expect=" << perf::to_string(*c.expect);
        out << " --duration-ms=" << c.duration_ms;
        if (c.min_samples != defaults.min_samples) out << " --min-samples=" << c.min_samples;
    }
    if (c.mode == Mode::perf) {
        out << " --max-ms-per-prb=" << c.max_ms_per_prb;
        if (c.vs.any()) out << " --vs=" << c.vs.list();
    }
    if (c.mode == Mode::corr || c.seed != defaults.seed) out << " --seed=" << c.seed;
    if (c.threads != defaults.threads) out << " --threads=" << c.threads;
    out << run_options << ' ' << c.problem;
    return out.str();
}

std::vector<KernelCase> expand_cases(const CaseOptions& command_line, std::optional<jit::Isa> isa_cap,
                                     const ExpandLimits& limits, std::vector<std::string>* batch_files) {
    return Expander(command_line, isa_cap, limits).run(batch_files);
}

}  // namespace benchfp::harness
