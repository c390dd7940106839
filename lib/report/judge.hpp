#pragma once
// The regression gate's judge, nanosoldier-style: benchmark results (Google
// Benchmark JSON) against a stored baseline, with stated tolerances.
//
//   ratio = current / baseline, on the minimum over repetitions (the estimate
//   least disturbed by load); regression when ratio - tolerance > 1,
//   improvement when ratio + tolerance < 1, invariant otherwise.
//
// Absolute times only gate between machines with the same fingerprint (CPU
// model, ISA, cores); elsewhere they are reported, not judged. What gates
// everywhere: bytes per iteration (deterministic), ratios measured inside one
// run (hook off / compiled out, pool / glibc, ...) against their stored values
// and their absolute limits, and callgrind instruction counts.
#include <nlohmann/json.hpp>

#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace benchfp::report {

// Bad input file: the message names the file and the problem. Exit status 2.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// How every number in a report is written: `digits` after the point, "NaN" for NaN.
std::string fixed(double v, int digits = 3);
// The middle value (the mean of the two middle ones for an even count); NaN for none.
double median(std::vector<double> values);

struct Fingerprint {
    std::string cpu, isa;
    int cores = 0;
    bool operator==(const Fingerprint&) const = default;
    std::string describe() const;
};

struct Measurement {
    double min_ns = 0;                 // per iteration, minimum over repetitions
    double bytes_per_iteration = -1;   // < 0: not reported
    int repetitions = 0;
    // Time ratios to another variant of the group measured in pairs of chunks
    // (counter ratio_to_<variant>), one per repetition: by that variant.
    std::map<std::string, std::vector<double>> paired_ratios;
};

// One run's results, or a stored baseline (the same model).
struct RunResults {
    std::string source;  // file it was read from
    Fingerprint fingerprint;
    std::string date, commit;
    std::map<std::string, Measurement> benchmarks;   // "alloc/structs/compiled_out"
    std::map<std::string, double> ratios;            // in-run ratios, by id
    std::map<std::string, double> instructions;      // per operation, by id (callgrind)
};

// A ratio measured inside one run: numerator variant over denominator variant,
// for every group that has both; limit: the largest value that passes.
struct RatioRule {
    std::string name, numerator, denominator;
    double limit = 0;  // 0: no absolute limit
    std::vector<std::string> groups;  // empty: every group
    double tolerance = 0;             // against the stored ratio; 0: Tolerances::ratio
};

struct Tolerances {
    double time = 0.05, memory = 0.01, ratio = 0.05, instructions = 0.01;
    std::map<std::string, double> time_by_group, memory_by_group;  // overrides
    // Variants or groups whose own time and memory are reported, not judged:
    // the peer allocators, whose changes are not this project's (their ratios
    // to the pool gate), and groups too unsteady on the machine to judge.
    std::vector<std::string> reported_only;
    std::vector<RatioRule> ratio_rules;
    std::map<std::string, double> instruction_limits;  // absolute: per-operation counts, by id
};

// Either kind of run: Google Benchmark JSON, or benchfp's own results
// (benchfp kernel --mode=perf --json=FILE: a benchmark per perf case,
// "kernel/<kernel>/<alg>/<isa>/<problem>/<frame>", its minimum time per call).
RunResults read_run(const std::string& path);
// Several runs of the same suites (interleaved runs of one build): the minimum
// over all of them per benchmark. Throws InputError when their machines differ.
RunResults merge_runs(const std::vector<RunResults>& runs);
RunResults read_baseline(const std::string& path);
void write_baseline(const std::string& path, const RunResults& results);
Tolerances read_tolerances(const std::string& path);
// Adds the in-run ratios of the rules to results.ratios: from the medians of
// paired measurements where the suite made them (directly, inverted, or
// through a chain of pairings), else the ratio of the minimum times.
void compute_ratios(RunResults& results, const Tolerances& tolerances);
// "alloc/structs/off" -> group "alloc/structs", variant "off".
std::pair<std::string, std::string> split_benchmark_name(const std::string& name);

enum class Verdict { regression, improvement, invariant, not_judged, added, missing, invalid };
const char* to_string(Verdict v);

struct Row {
    std::string id;    // benchmark, ratio or instruction count
    std::string kind;  // "time", "memory", "ratio", "instructions"
    double current = 0, baseline = 0, ratio = 0, tolerance = 0;
    double limit = 0;  // absolute limit (ratio and instruction rows), 0: none
    Verdict verdict = Verdict::invariant;
    std::string note;
};

struct Judgement {
    std::vector<Row> rows;
    bool same_machine = false;
    int regressions = 0, improvements = 0;
    bool failed() const;  // any regression, missing or invalid row
};

Judgement judge(const RunResults& current, const RunResults& baseline, const Tolerances& tolerances);

// Renderers: Markdown (for a pull request), JSON, and one self-contained HTML
// page with an inline SVG chart of every ratio against its tolerance band.
struct ReportContext {
    std::string commit, baseline_label, date, current_path, baseline_path;
};
std::string render_markdown(const Judgement& j, const RunResults& current, const RunResults& baseline,
                            const ReportContext& context);
nlohmann::json render_json(const Judgement& j, const RunResults& current, const RunResults& baseline,
                           const ReportContext& context);
std::string render_html(const Judgement& j, const RunResults& current, const RunResults& baseline,
                        const ReportContext& context);

}  // namespace benchfp::report
