#pragma once
// What the judge works on: one run's results (or a stored baseline: the same
// model) and the tolerances with the in-run ratio rules.
#include "report/json_input.hpp"
#include "report/machine.hpp"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace benchfp::report {

// A paired ratio's 95% interval (judge/stats.hpp: median_interval), or where
// runs were merged, the hull of theirs (`runs` of them): wider than a 95%
// interval, and said so in notes (interval_text).
struct Interval {
    double lo = 0, hi = 0;
    size_t runs = 1;
};

// The A/A control of a kernel perf group: the reference kernel at another
// code address over itself, paired: the noise floor beside its frame costs.
struct Control {
    double ratio = 0;
    std::optional<Interval> interval;
};

// What one run's record of a paired case holds beside its ratio: the ratio's
// 95% interval, where the run gave one, and its group's A/A control in that
// run. benchfp's record of a case carries both, so every run of a case (merged
// files, or one file holding it twice) keeps its own control beside its own
// interval: a cost is excused only by the move its own run showed
// (judge.cpp: within_placement_noise), never by another run's.
struct PairedRecord {
    std::optional<Interval> interval;
    std::optional<Control> aa;
    // Which run it is: its file, and where the file holds the case's group
    // more than once, which run of it (1, 2, ...; 0 where it holds one), the
    // same on every policy's record of that run (read.cpp: runs_in_file).
    std::string file;
    int run_in_file = 0;
    // As notes and reports name the run: "a.json", "b.json, run 2".
    std::string run() const { return run_in_file ? file + ", run " + std::to_string(run_in_file) : file; }
};

struct Measurement {
    double min_ns = 0;                 // per iteration, minimum over repetitions
    double bytes_per_iteration = -1;   // < 0: not reported
    int repetitions = 0;
    // Time ratios to another variant of the group measured in pairs of chunks
    // (counter ratio_to_<variant>), one per repetition: by that variant.
    std::map<std::string, std::vector<double>> paired_ratios;
    // What each run's record says beside each such ratio (benchfp kernel
    // --mode=perf's records; none from a Google Benchmark file), one per
    // entry of paired_ratios, in the same order: by that variant.
    std::map<std::string, std::vector<PairedRecord>> paired_records;
    // What the allocator holds at the workload's peak over its live objects
    // then (counter resident_bytes_per_live_object, lib/alloc/footprint.hpp); < 0: not reported.
    double resident_bytes_per_live_object = -1;
};

// One run's results, or a stored baseline (the same model).
struct RunResults {
    std::string source;  // file(s) it was read from
    Fingerprint fingerprint;
    std::string date, commit;
    std::string time_from;  // which statistic min_ns holds: "iterations" or Google Benchmark's aggregate used
    // What built it, where the file says (benchfp --version's fields; a Google
    // Benchmark file: its compiler and Google Benchmark's version): Version Info.
    nlohmann::json build = nlohmann::json::object();
    std::map<std::string, Measurement> benchmarks;   // "alloc/structs/compiled_out"
    std::map<std::string, double> ratios;            // in-run ratios, by id
    std::map<std::string, Interval> ratio_intervals; // 95% intervals of in-run ratios that have one, by id
    // The records behind an in-run ratio paired directly (each run's interval
    // and A/A control, judge/stats.hpp: compute_ratios), by id.
    std::map<std::string, std::vector<PairedRecord>> ratio_records;
    std::map<std::string, double> instructions;      // per operation, by id (callgrind's, and stepped calls')
};

// What an in-run ratio divides: the variants' times (the default), or their
// resident bytes per live object at the workload's peak ("metric" in
// results/tolerances.json: "time", "resident_bytes_per_live_object").
enum class RatioMetric { time, resident_bytes_per_live_object };

// A ratio measured inside one run: numerator variant over denominator variant,
// for every group that has both; limit: the largest value that passes.
struct RatioRule {
    std::string name, numerator, denominator;
    // 0: no absolute limit. A ratio with an interval fails only when the whole
    // interval is over the limit (lo > limit: shown to exceed it); one whose
    // interval straddles the limit is unresolved (reported, not failed).
    double limit = 0;
    std::vector<std::string> groups;  // empty: every group
    double tolerance = 0;             // against the stored ratio; 0: Tolerances::ratio
    // The limit is judged only on a value with an interval (a paired
    // measurement of enough pairs): a bare median of a few pairs can neither
    // show a 0.5% excess nor rule it out, so such a row is unresolved.
    bool limit_needs_interval = false;
    RatioMetric metric = RatioMetric::time;
    // The value an issue asks of the ratio where the gate judges a looser limit
    // or none (the stopped hook's time: its limit is its instruction count):
    // reported per row, met or not, never judged, so that a report says how
    // far a target is whatever the verdict. Below the limit; only on a rule
    // between_own_variants. 0: none.
    double target = 0;
};

struct Tolerances {
    double time = 0.05, memory = 0.01, ratio = 0.05, instructions = 0.01;
    std::map<std::string, double> time_by_group, memory_by_group;  // overrides
    // Variants or groups whose own time and memory are reported, not judged:
    // the peer allocators, whose changes are not this project's (their ratios
    // to the pool gate), and groups too unsteady on the machine to judge; and
    // ratio rules, by name, whose rows are reported only (the pool over each
    // peer on every workload: a peer's own speed moves between processes).
    std::vector<std::string> reported_only;
    // Variants whose code this project does not change (the peer allocators):
    // their times over their baselines in one run are the machine's move
    // (judge.cpp: within_machine_move). Empty: no time row is excused.
    std::vector<std::string> machine_controls;
    std::vector<RatioRule> ratio_rules;
    std::map<std::string, double> instruction_limits;  // absolute: per-operation counts, by id
};

// Whether a tolerance key names `group` (judge.cpp: exactly, every group under
// it when it ends in '/', or by '*' standing for one path segment).
bool names_group(const std::string& key, const std::string& group);
// Whether a variant or group is reported, not judged (a key of t.reported_only names it).
bool reported_only(const Tolerances& t, const std::string& variant_or_group);
// Whether a variant is code this project does not change (t.machine_controls: a peer allocator).
bool machine_control(const Tolerances& t, const std::string& variant);
// Whether a rule divides the times of two variants of this project's own code
// (neither a machine control): the rules the report's Profiler cost table
// shows, and the only ones a target may be set on.
bool between_own_variants(const Tolerances& t, const RatioRule& rule);

// The ranges every reader checks (a value outside is bad input, exit 2): no
// stored number can mask every regression (min_ns 1e308) or be a subnormal.
namespace ranges {
inline constexpr Range time_ns{1e-6, 1e12};       // 1 fs to 1000 s per iteration
inline constexpr Range bytes{0, 1e15};
inline constexpr Range ratio{1e-9, 1e9};
inline constexpr Range instructions{0, 1e12};
inline constexpr Range tolerance{0, 100};         // 0% to 10000%
inline constexpr Range limit{0, 1e12};            // 0: none
inline constexpr Range repetitions{0, 1e9};
}  // namespace ranges

}  // namespace benchfp::report
