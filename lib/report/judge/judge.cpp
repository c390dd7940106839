#include "report/judge/judge.hpp"

#include "report/judge/stats.hpp"
#include "report/stepped_cost.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cmath>
#include <set>

namespace benchfp::report {

const char* to_string(RowVerdict v) {
    switch (v) {
    case RowVerdict::regression: return "regression";
    case RowVerdict::improvement: return "improvement";
    case RowVerdict::invariant: return "invariant";
    case RowVerdict::not_judged: return "not judged";
    case RowVerdict::added: return "new";
    case RowVerdict::missing: return "missing";
    case RowVerdict::invalid: return "invalid";
    case RowVerdict::over_limit: return "over limit";
    case RowVerdict::unresolved: return "unresolved";
    case RowVerdict::unconfirmed: return "unconfirmed";
    }
    return "?";
}

bool Row::fails() const {
    return verdict == RowVerdict::regression || verdict == RowVerdict::over_limit || verdict == RowVerdict::missing ||
           verdict == RowVerdict::invalid;
}

bool Judgement::failed() const {
    return std::any_of(rows.begin(), rows.end(), [](const Row& r) { return r.fails(); });
}

// A key names a group exactly; or, ending in '/', every group under it
// ("kernel/": one tolerance for every kernel perf case, whose groups are named
// by their problems); or, with a '*', every group it matches, each '*' within
// one path segment ("kernel/reduce/*/*/4096x4096": that problem of every alg
// and ISA).
bool names_group(const std::string& key, const std::string& group) {
    if (key == group) return true;
    if (key.find('*') != std::string::npos) return ::fnmatch(key.c_str(), group.c_str(), FNM_PATHNAME) == 0;
    return key.ends_with('/') && group.starts_with(key);
}

bool reported_only(const Tolerances& t, const std::string& variant_or_group) {
    return std::any_of(t.reported_only.begin(), t.reported_only.end(),
                       [&](const std::string& key) { return names_group(key, variant_or_group); });
}

bool machine_control(const Tolerances& t, const std::string& variant) {
    return std::find(t.machine_controls.begin(), t.machine_controls.end(), variant) != t.machine_controls.end();
}

bool between_own_variants(const Tolerances& t, const RatioRule& rule) {
    return rule.metric == RatioMetric::time && !machine_control(t, rule.numerator) &&
           !machine_control(t, rule.denominator);
}

namespace {

RowVerdict by_tolerance(double ratio, double tolerance) {
    if (!std::isfinite(ratio) || ratio <= 0) return RowVerdict::invalid;
    if (ratio - tolerance > 1) return RowVerdict::regression;
    if (ratio + tolerance < 1) return RowVerdict::improvement;
    return RowVerdict::invariant;
}

// The override of the group: exact first, else the longest prefix key.
double group_tolerance(const std::map<std::string, double>& overrides, const std::string& group, double fallback) {
    if (const auto it = overrides.find(group); it != overrides.end()) return it->second;
    size_t best = 0;
    for (const auto& [key, tolerance] : overrides)
        if (names_group(key, group) && key.size() > best) best = key.size(), fallback = tolerance;
    return fallback;
}

template <typename Map>
const typename Map::mapped_type* find_in(const Map& map, const std::string& key) {
    const auto it = map.find(key);
    return it == map.end() ? nullptr : &it->second;
}

// A value against its absolute limit. One measured with a 95% interval meets
// the limit when the whole interval is within it, exceeds it when the whole
// interval is over it (lo > limit: the excess is shown, not merely possible),
// and is unresolved in between: the run was too noisy or too short to tell,
// which is said and never passed off as either (benchdnn's and nanosoldier's
// convention: a verdict only where the measurement supports one). A
// regression against the baseline stays one.
void judge_limit(Row& row, double current, const Interval* interval) {
    const std::string text =
        interval ? interval_text(*interval) + " " : "";
    if (interval ? interval->lo > row.limit : !(current <= row.limit)) {
        row.over_limit = true;
        if (row.verdict != RowVerdict::regression) row.verdict = RowVerdict::over_limit;
        row.note = text + "over the limit " + fixed(row.limit);
    } else if (interval && interval->hi > row.limit && row.verdict != RowVerdict::regression) {
        row.verdict = RowVerdict::unresolved;
        row.note = text + "straddles the limit " + fixed(row.limit);
    }
}

// A value judged against its baseline and, when it has one, an absolute limit
// (with the value's interval when it has one).
Row judged(const std::string& id, const std::string& kind, const double* current, const double* baseline,
           double tolerance, double limit, const Interval* interval = nullptr) {
    Row row;
    row.id = id;
    row.kind = kind;
    row.current = current ? *current : NAN;
    row.baseline = baseline ? *baseline : NAN;
    row.ratio = NAN;
    row.tolerance = tolerance;
    row.limit = limit;
    if (!current) {
        row.verdict = RowVerdict::missing;
        row.note = "in the baseline, not in this run";
        return row;
    }
    if (baseline) {
        row.ratio = *current / *baseline;
        row.verdict = by_tolerance(row.ratio, tolerance);
    } else {
        row.verdict = std::isfinite(*current) ? RowVerdict::added : RowVerdict::invalid;
        row.note = "no baseline";
    }
    if (interval) row.lo = interval->lo, row.hi = interval->hi, row.interval_runs = interval->runs;
    if (limit > 0 && row.verdict != RowVerdict::invalid) judge_limit(row, *current, interval);
    return row;
}

template <typename Map>
std::set<std::string> keys_of(const Map& a, const Map& b) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a) keys.insert(k);
    for (const auto& [k, v] : b) keys.insert(k);
    return keys;
}

void report_without_verdict(Row& row, const std::string& why) {
    if (row.verdict != RowVerdict::regression && row.verdict != RowVerdict::improvement &&
        row.verdict != RowVerdict::added && row.verdict != RowVerdict::over_limit &&
        row.verdict != RowVerdict::unresolved)
        return;
    row.over_limit = false;
    row.verdict = RowVerdict::not_judged;
    row.note = why;
}

const RatioRule* rule_of(const Tolerances& t, const std::string& id) {
    const auto rule = std::find_if(t.ratio_rules.begin(), t.ratio_rules.end(), [&](const RatioRule& r) {
        return id.size() > r.name.size() && id.ends_with(": " + r.name);
    });
    return rule == t.ratio_rules.end() ? nullptr : &*rule;
}

void judge_benchmarks(Judgement& j, const RunResults& current, const RunResults& baseline, const Tolerances& t) {
    for (const std::string& name : keys_of(current.benchmarks, baseline.benchmarks)) {
        const Measurement* cm = find_in(current.benchmarks, name);
        const Measurement* bm = find_in(baseline.benchmarks, name);
        const auto [group, variant] = split_benchmark_name(name);
        const size_t first_row = j.rows.size();
        j.rows.push_back(judged(name, "time", cm ? &cm->min_ns : nullptr, bm ? &bm->min_ns : nullptr,
                                group_tolerance(t.time_by_group, group, t.time), 0));
        Row& time = j.rows.back();
        if (cm && bm && !j.same_machine && time.verdict != RowVerdict::invalid) {
            time.verdict = RowVerdict::not_judged;
            time.note = "machine differs from the baseline's or is unknown: absolute time reported, not judged";
        }
        if (cm && bm && cm->bytes_per_iteration >= 0 && bm->bytes_per_iteration >= 0) {
            // Equal zero byte counts are equal: ratio 1.
            const double cb = cm->bytes_per_iteration + 1e-300, bb = bm->bytes_per_iteration + 1e-300;
            j.rows.push_back(judged(name, "memory", &cb, &bb, group_tolerance(t.memory_by_group, group, t.memory), 0));
            j.rows.back().current = cm->bytes_per_iteration;
            j.rows.back().baseline = bm->bytes_per_iteration;
        }
        if (cm && cm->resident_bytes_per_live_object >= 0) {
            // Shown, not judged against the baseline: the in-run footprint rules judge it (pool / mimalloc).
            j.rows.push_back(judged(name, "footprint", &cm->resident_bytes_per_live_object, nullptr, 0, 0));
            j.rows.back().verdict = RowVerdict::not_judged;
            j.rows.back().note = "resident bytes per live object at the workload's peak: reported; the in-run "
                                 "footprint ratios judge it";
        }
        if (reported_only(t, variant) || reported_only(t, group))
            for (size_t i = first_row; i < j.rows.size(); ++i)
                report_without_verdict(j.rows[i], "reported, not judged (results/tolerances.json: reported_only)");
    }
}

// How far code placement alone moved a kernel in a run, as its A/A control (the
// same kernel at another code address, paired the same way) shows it; 0 where
// it does not. Only a resolved A/A shows a move: its interval excludes 1, and
// the move is its median's distance from 1, in either direction (a copy can run
// faster than the reference as well as slower: 0.935 [0.905, 0.959] on reduce
// sum avx2 256x256, a 1.6 us call, in a CI of unchanged code that failed the
// row at 1.024 [1.0078, 1.0422]). An A/A whose interval holds 1 is noise, not
// a move, and shows none: a quick gate's intervals are the range of 8 pairs and
// reach 5-25% from 1 (an excuse by the interval's ends would pass nearly any
// cost). And no move is more than max_placement_move: a cost beyond it is the
// policy's to answer for (a lost register in an inner loop), whatever the A/A says.
constexpr double max_placement_move = 0.10;

double placement_move(const Control& aa) {
    if (!aa.interval || !std::isfinite(aa.interval->lo) || !std::isfinite(aa.interval->hi) || !std::isfinite(aa.ratio))
        return 0;
    if (aa.interval->lo <= 1 && aa.interval->hi >= 1) return 0;
    return std::min(std::abs(aa.ratio - 1), max_placement_move);
}

// The first run whose own interval is no farther above 1 than its own A/A
// control shows placement moving the kernel (lo - 1 <= move); none: nullptr.
const PairedRecord* run_within_placement_noise(const std::vector<PairedRecord>& records) {
    for (const PairedRecord& record : records) {
        const double move = record.aa ? placement_move(*record.aa) : 0;
        if (record.interval && move > 0 && record.interval->lo - 1 <= move) return &record;
    }
    return nullptr;
}

// A cost shown over the limit, where one of its runs is no farther above 1
// than that run's A/A control shows code placement alone moving this kernel,
// is not shown to be the policy's: unresolved rather than failed, as that run
// alone would be. Merged runs are over the limit only where every run's
// interval is (their hull's lo), and are failed only where no run is excused
// by its own control: a move one run showed never excuses another run's cost.
// The run is named where the results hold more than one (merged files, or a
// file holding the group twice), as the Markdown A/A column names each.
void within_placement_noise(Row& row, const Interval& hull, const std::vector<PairedRecord>* records,
                            const RunResults& current) {
    if (row.verdict != RowVerdict::over_limit || !records) return;
    const PairedRecord* excused = run_within_placement_noise(*records);
    if (!excused) return;
    const double move = placement_move(*excused->aa);
    const bool several_runs = one_of_several_runs(*excused, current);
    const std::string which = several_runs ? ", but the run of " + excused->run() + " reads 95% interval " +
                                                 bracketed(*excused->interval) + ", whose lower end is"
                                           : ", but";
    row.over_limit = false;
    row.verdict = RowVerdict::unresolved;
    row.note = interval_text(hull) + " over the limit" + which + " no farther above 1 than placement alone moves "
               "this kernel: " + (several_runs ? "that run's" : "its") + " A/A control reads " +
               fixed(excused->aa->ratio, 4) + " " + bracketed(*excused->aa->interval) + ", " + fixed(100 * move, 1) +
               "% from 1";
}

// A whole process can run slower than the one that recorded the baseline: on
// this shared 2-vCPU guest, for minutes at a time, every allocator of one
// suite process, the peers as much as the pool, read 1.3-2.1x their baselines
// (gate of 0e109b7, 2026-12-03: arrays glibc 1.43, tcmalloc 2.11, pool off
// 1.89; the same build's next process 0.9-1.05), and a CI of unchanged code
// failed on it. The peers are code this project does not change, so their
// move is the machine's. Where the peers of a family (results/tolerances.json:
// machine_controls, the variants glibc, jemalloc, mimalloc and tcmalloc)
// read a median more than machine_move_threshold over their baselines, a
// time row's regression within max_machine_move_multiple times that median is
// not shown to be the build's: unresolved, said and counted, not failed. The
// move is not uniform across workloads (1.3-2.1x above), so the row's ratio
// is not divided by it; a row over twice the peers' median ratio (a pool
// routed to glibc reads 3.7x on arrays) still fails. Known weaknesses (issue
// 14's gate): the bound jumps from 1 + tolerance to 2 x 1.10 as the median
// passes 1.10; and the peers run the project's own workload loops, so a
// slower harness moves them with the pool. An excused row is re-run as a failure
// is (scripts/failed_groups.py) and judged by its re-run (confirm()).
constexpr double machine_move_threshold = 0.10;
constexpr double max_machine_move_multiple = 2.0;
constexpr size_t min_machine_controls = 3;

struct MachineMove {
    double median = 0;
    size_t controls = 0;
};

// The family of a group: its first path segment ("alloc" of "alloc/arrays").
std::string family_of(const std::string& group) { return group.substr(0, group.find('/')); }
// The family of a time row's benchmark ("alloc" of "alloc/arrays/off").
std::string family_of_row(const Row& row) { return family_of(split_benchmark_name(row.id).first); }

// A time row of unchanged code: a machine control's, in a group that is
// judged (a reported-only group, producer/consumer's, moves by whether its two
// threads get a core each, which is not the machine's move for one thread).
bool is_control(const Row& row, const std::string& group, const std::string& variant, const Tolerances& t) {
    return row.kind == "time" && std::isfinite(row.ratio) && row.ratio > 0 && !reported_only(t, group) &&
           machine_control(t, variant);
}

// min_machine_controls counts distinct allocators, not rows: glibc alone over
// every workload is one allocator's move, not the machine's.
std::map<std::string, MachineMove> machine_moves(const Judgement& j, const Tolerances& t) {
    std::map<std::string, std::vector<double>> ratios;
    std::map<std::string, std::set<std::string>> allocators;
    for (const Row& row : j.rows) {
        const auto [group, variant] = split_benchmark_name(row.id);
        if (!is_control(row, group, variant, t)) continue;
        ratios[family_of(group)].push_back(row.ratio);
        allocators[family_of(group)].insert(variant);
    }
    std::map<std::string, MachineMove> moves;
    for (auto& [family, values] : ratios)
        if (allocators[family].size() >= min_machine_controls) moves[family] = {median(values), values.size()};
    return moves;
}

void within_machine_move(Judgement& j, const Tolerances& t) {
    if (!j.same_machine) return;  // times are not judged across machines
    const std::map<std::string, MachineMove> moves = machine_moves(j, t);
    for (const auto& [family, move] : moves) j.machine_measured.insert(family);
    for (Row& row : j.rows) {
        if (row.kind != "time" || row.verdict != RowVerdict::regression) continue;
        const MachineMove* move = find_in(moves, family_of_row(row));
        if (!move || !(move->median > 1 + machine_move_threshold) || row.ratio > max_machine_move_multiple * move->median)
            continue;
        row.verdict = RowVerdict::unresolved;
        row.note = "the machine moved: the unchanged code of this run (" + std::to_string(move->controls) +
                   " peer rows) read a median " + fixed(move->median) + " x their baselines, and this row's " +
                   fixed(row.ratio) + " is within " + fixed(max_machine_move_multiple, 0) +
                   " times that median: not shown to be the build's";
    }
}

// What a ratio row takes from its rule besides the verdict: its unit where it
// is not its kind's (a footprint rule's), the rule's target, and whether it
// divides two of this project's own variants.
void from_rule(Row& row, const RatioRule* rule, const Tolerances& t) {
    row.unit = rule && rule->metric == RatioMetric::resident_bytes_per_live_object
                   ? "ratio (resident bytes per live object over the same, in one run)"
                   : "";
    row.target = rule ? rule->target : 0;
    row.own_variants = rule && between_own_variants(t, *rule);
}

void judge_ratios(Judgement& j, const RunResults& current, const RunResults& baseline, const Tolerances& t) {
    for (const RatioRule& rule : t.ratio_rules) j.ratio_rules.push_back(rule.name);
    for (const std::string& id : keys_of(current.ratios, baseline.ratios)) {
        const RatioRule* rule = rule_of(t, id);
        const std::string group = ratio_group(id);
        const Interval* interval = find_in(current.ratio_intervals, id);
        const double limit = rule ? rule->limit : 0;
        const bool unjudgeable = limit > 0 && rule->limit_needs_interval && !interval && find_in(current.ratios, id);
        j.rows.push_back(judged(id, "ratio", find_in(current.ratios, id), find_in(baseline.ratios, id),
                                rule && rule->tolerance > 0 ? rule->tolerance : t.ratio, unjudgeable ? 0 : limit,
                                interval));
        from_rule(j.rows.back(), rule, t);
        if (interval && rule && rule->limit_needs_interval)
            within_placement_noise(j.rows.back(), *interval, find_in(current.ratio_records, id), current);
        if (unjudgeable) {
            Row& row = j.rows.back();
            row.limit = limit;
            if (!row.fails() && row.verdict != RowVerdict::not_judged) {
                row.verdict = RowVerdict::unresolved;
                row.note = "no interval (too few pairs): not judged against the limit " + fixed(limit);
            }
        }
        if (reported_only(t, group) || (rule && reported_only(t, rule->name)))
            report_without_verdict(j.rows.back(), "reported, not judged (results/tolerances.json: reported_only)");
    }
}

// A count with an absolute limit is a difference of two counts (the stopped
// hook's instructions: hooked minus compiled out), whose best value is 0: its
// ratio to its baseline says nothing (0 / 0 read as an invalid value), so its
// limit alone judges it, with its baseline shown beside it. The counts it is
// the difference of are judged against their baselines.
// An instruction count's row, in its own unit where it is a stepped call's
// ("": the kind's, callgrind's instructions per operation).
Row instructions_row(const std::string& id, const double* current, const double* baseline, double tolerance, double limit) {
    Row row = judged(id, "instructions", current, baseline, tolerance, limit);
    row.unit = stepped_count_unit(id);
    return row;
}

void judge_instructions(Judgement& j, const RunResults& current, const RunResults& baseline, const Tolerances& t) {
    for (const std::string& id : keys_of(current.instructions, baseline.instructions)) {
        const double* limit = find_in(t.instruction_limits, id);
        const double* base = find_in(baseline.instructions, id);
        if (!limit || *limit <= 0) {  // 0: no limit (model.hpp)
            j.rows.push_back(instructions_row(id, find_in(current.instructions, id), base, t.instructions, 0));
            continue;
        }
        Row row = instructions_row(id, find_in(current.instructions, id), nullptr, t.instructions, *limit);
        if (base) {
            row.baseline = *base;
            if (row.verdict == RowVerdict::added) row.verdict = RowVerdict::invariant, row.note = "judged by its limit";
        }
        j.rows.push_back(row);
    }
}

void count(Judgement& j) {
    j.regressions = j.improvements = j.over_limit = j.missing = j.invalid = j.unconfirmed = j.unresolved = 0;
    for (const Row& r : j.rows) {
        j.regressions += r.verdict == RowVerdict::regression;
        j.improvements += r.verdict == RowVerdict::improvement;
        j.over_limit += r.over_limit;
        j.missing += r.verdict == RowVerdict::missing;
        j.invalid += r.verdict == RowVerdict::invalid;
        j.unconfirmed += r.verdict == RowVerdict::unconfirmed;
        j.unresolved += r.verdict == RowVerdict::unresolved;
    }
}

// What the limits need and the run lacks, with no baseline to say it: a ratio
// whose rule names its groups, in a group the run has; an instruction limit,
// when the run has callgrind's counts at all (the stepped counts of --cases
// are no sign of them).
RunResults expected_by_limits(const RunResults& current, const Tolerances& t) {
    RunResults expected;
    std::set<std::string> groups;
    for (const auto& [name, m] : current.benchmarks) groups.insert(split_benchmark_name(name).first);
    for (const RatioRule& rule : t.ratio_rules)
        if (rule.limit > 0)
            for (const std::string& group : rule.groups)
                if (groups.count(group)) expected.ratios[group + ": " + rule.name] = rule.limit;
    if (std::any_of(current.instructions.begin(), current.instructions.end(),
                    [](const auto& count) { return !is_stepped_count(count.first); }))
        for (const auto& [id, limit] : t.instruction_limits) expected.instructions[id] = limit;
    return expected;
}

}  // namespace

Judgement judge(const RunResults& current, const RunResults& baseline, const Tolerances& t) {
    Judgement j;
    j.same_machine = same_machine(current.fingerprint, baseline.fingerprint);
    judge_benchmarks(j, current, baseline, t);
    within_machine_move(j, t);
    judge_ratios(j, current, baseline, t);
    judge_instructions(j, current, baseline, t);
    count(j);
    return j;
}

Judgement judge_limits_only(const RunResults& current, const Tolerances& t) {
    Judgement j;
    j.has_baseline = false;
    const RunResults expected = expected_by_limits(current, t);
    const RunResults none;
    judge_benchmarks(j, current, none, t);
    judge_ratios(j, current, none, t);
    judge_instructions(j, current, none, t);
    for (Row& r : j.rows) {
        if (r.verdict != RowVerdict::added) continue;
        r.verdict = r.limit > 0 ? RowVerdict::invariant : RowVerdict::not_judged;
        r.note = r.limit > 0 ? "within its limit (no baseline for this machine)"
                             : "no baseline for this machine: reported, not judged";
    }
    for (const auto& [id, limit] : expected.ratios)
        if (!current.ratios.count(id)) {
            j.rows.push_back(judged(id, "ratio", nullptr, &limit, t.ratio, limit));
            from_rule(j.rows.back(), rule_of(t, id), t);
        }
    for (const auto& [id, limit] : expected.instructions)
        if (!current.instructions.count(id)) j.rows.push_back(instructions_row(id, nullptr, &limit, t.instructions, limit));
    for (Row& r : j.rows) {
        if (r.verdict != RowVerdict::missing) continue;
        r.note = "its limit needs it, and this run does not have it";
        r.baseline = NAN;  // judged() was handed the limit as the "baseline" that names the row
    }
    count(j);
    return j;
}

namespace {

// What a row measured, for the notes of a re-run: "1.679 x the baseline" (a
// time), "1.031 [1.012, 1.050] (1.020 x the baseline)" (an in-run ratio).
std::string measured(const Row& r) {
    if (r.kind == "time") return fixed(r.ratio) + " x the baseline";
    std::string text = fixed(r.current);
    if (std::isfinite(r.lo)) text += " " + bracketed(Interval{r.lo, r.hi});
    if (std::isfinite(r.ratio)) text += " (" + fixed(r.ratio) + " x the baseline)";
    return text;
}

void append_note(Row& row, const std::string& text) { row.note += (row.note.empty() ? "" : "; ") + text; }

// The row of `rerun` that measured `row` again, if any.
const Row* measured_again(const Row& row, const Judgement& rerun) {
    const auto again = std::find_if(rerun.rows.begin(), rerun.rows.end(), [&](const Row& r) {
        return r.id == row.id && r.kind == row.kind && r.verdict != RowVerdict::missing;
    });
    return again == rerun.rows.end() ? nullptr : &*again;
}

// A time row the machine's move excused in the run (within_machine_move makes
// the only unresolved time rows: times have no absolute limit), re-run in a
// new process: failing there, it is a regression the next round must confirm
// as any other; within there, not the build's (unconfirmed); unresolved there
// too (the machine moved again), or not re-run, it stays unresolved. Failing
// where nothing can show it again (the last round), or where the re-run could
// not have excused it (its family's peers too few there to measure the
// machine), it stays unresolved too: one failing process is not a regression.
void resolve_excused(Row& row, const Row* again, const Judgement& rerun, ConfirmRound round) {
    if (!again) return append_note(row, "not re-run");
    if (again->verdict == RowVerdict::unresolved)
        return append_note(row, "unresolved again in a re-run: " + measured(*again));
    const std::string run_text = measured(row) + " in the run (excused there: " + row.note + "), ";
    if (!again->fails()) {
        row.verdict = RowVerdict::unconfirmed;
        row.note = run_text + measured(*again) + " in a re-run, " + to_string(again->verdict) + ": not the build's";
        return;
    }
    if (round == ConfirmRound::last)
        return append_note(row, measured(*again) + " in the last re-run, with no round after it to show it again");
    if (!rerun.machine_measured.count(family_of_row(row)))
        return append_note(row, measured(*again) + " in a re-run with too few peers to measure the machine by (" +
                                    std::to_string(min_machine_controls) + " needed)");
    row.verdict = RowVerdict::regression;
    row.note = run_text + measured(*again) + " in a re-run, where the machine did not excuse it: a regression";
}

bool excused_by_the_machine(const Row& row) { return row.kind == "time" && row.verdict == RowVerdict::unresolved; }

}  // namespace

bool judged_again_by_a_rerun(const Row& row) {
    const bool measured_failure = row.verdict == RowVerdict::regression || row.verdict == RowVerdict::over_limit;
    return excused_by_the_machine(row) || (measured_failure && (row.kind == "time" || row.kind == "ratio"));
}

void confirm(Judgement& run, const Judgement& rerun, ConfirmRound round) {
    for (Row& row : run.rows) {
        if (!judged_again_by_a_rerun(row)) continue;
        const Row* again = measured_again(row, rerun);
        if (excused_by_the_machine(row)) {
            resolve_excused(row, again, rerun, round);
            continue;
        }
        if (!again) {
            append_note(row, "not re-run");
        } else if (again->fails()) {
            append_note(row, "confirmed by a re-run: " + measured(*again));
        } else {
            // Within, or unresolved there (a ratio straddling its limit or within
            // its A/A's move; a time within the machine's move): the failure did
            // not show again, which is what a failure must do here.
            const std::string how = again->verdict == RowVerdict::unresolved ? "unresolved (" + again->note + ")"
                                                                             : to_string(again->verdict);
            row.verdict = RowVerdict::unconfirmed;
            row.over_limit = false;
            row.note = measured(row) + " in the run, " + measured(*again) + " in a re-run, " + how + ": not confirmed";
        }
    }
    count(run);
}

}  // namespace benchfp::report
