#pragma once
// The regression gate's judge, nanosoldier-style: one machine's results against
// its stored baseline, with stated tolerances.
//
//   ratio = current / baseline, on the minimum over repetitions (the estimate
//   least disturbed by load); regression when ratio - tolerance > 1,
//   improvement when ratio + tolerance < 1, invariant otherwise.
//
// Absolute times only gate between machines with the same known fingerprint
// (report/machine.hpp); elsewhere they are reported, not judged. What gates
// everywhere: bytes per iteration (deterministic), ratios measured inside one
// run (hook off / compiled out, pool / glibc, ...) against their stored values
// and their absolute limits, and callgrind instruction counts.
//
// Without a baseline for the machine only the absolute limits gate: never red
// for lack of a baseline, never green for a value a limit needs that is missing.
#include "report/judge/model.hpp"

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace benchfp::report {

// The verdict on one row of a judgement (perf::Verdict is a sample's chain).
// over_limit: the value itself is over its absolute limit, whatever its
// baseline says (a row both over its limit and worse than its baseline beyond
// tolerance is a regression with Row::over_limit set); for a value with a 95%
// interval, the whole interval is over it.
// unresolved: a ratio whose 95% interval straddles its absolute limit, or is
// over it but starts no farther above 1 than its group's A/A control shows
// code placement moving the kernel (judge.cpp): the run shows neither that it
// is within nor that it is over (reported and counted, not failed). Also a
// time regression in a run whose unchanged code (the peers, reported only)
// moved as well: their median over 1.10x their baselines, the row within 2x
// that median (judge.cpp: within_machine_move).
// unconfirmed: a measured value that failed (regression or over its limit) in
// the run, or a time the machine's move excused there, and passed in a re-run
// of its benchmark (confirm()): reported, not failed, since one slow process on
// a shared machine is not a slower build.
enum class RowVerdict { regression, improvement, invariant, not_judged, added, missing, invalid, over_limit, unresolved,
                        unconfirmed };
const char* to_string(RowVerdict v);

struct Row {
    std::string id;    // benchmark, ratio or instruction count
    // "time", "memory", "ratio", "instructions", "footprint" (resident bytes per live
    // object at the workload's peak: reported, judged through the in-run ratios of its rules)
    std::string kind;
    double current = 0, baseline = 0, ratio = 0, tolerance = 0;
    double limit = 0;  // absolute limit (ratio and instruction rows), 0: none
    RowVerdict verdict = RowVerdict::invariant;
    bool over_limit = false;  // current > limit (the verdict is over_limit, or regression when also worse than the baseline)
    std::string note;
    bool fails() const;       // regression, over_limit, missing or invalid
    bool baseline_over_limit() const { return limit > 0 && baseline > limit; }
    double lo = NAN, hi = NAN;  // the current value's 95% interval, where it has one (merged runs: their hull, see note)
    std::string unit;           // where it is not its kind's (a ratio of footprints, a stepped call's counts), else ""
    size_t interval_runs = 0;   // the runs lo and hi come from: 1, a 95% interval; more, the hull of theirs; 0, none
    double target = 0;          // a ratio rule's target (model.hpp: RatioRule): reported, never judged; 0: none
    bool own_variants = false;  // a ratio of a rule between_own_variants (model.hpp)
};

struct Judgement {
    std::vector<Row> rows;
    bool same_machine = false;
    bool has_baseline = true;
    int regressions = 0, improvements = 0;
    int over_limit = 0, missing = 0, invalid = 0;  // rows over their absolute limit (regressions too), missing, invalid
    int unconfirmed = 0;  // failures a re-run did not reproduce (confirm())
    int unresolved = 0;   // values the run could not judge against their limit: said, not failed
    // The families ("alloc") whose machine's move this run measured: enough
    // peer allocators (machine controls) to excuse a time row by (judge.cpp).
    std::set<std::string> machine_measured;
    std::vector<std::string> ratio_rules;  // the in-run ratio rules' names, in results/tolerances.json's order
    bool failed() const;  // any regression, over_limit, missing or invalid row
};

Judgement judge(const RunResults& current, const RunResults& baseline, const Tolerances& tolerances);
// No baseline for this machine: the absolute limits only.
Judgement judge_limits_only(const RunResults& current, const Tolerances& tolerances);

// Whether confirm() judges `row` again by a re-run of its benchmark: a time or
// in-run ratio that failed (regression or over its limit), or a time the
// machine's move excused. scripts/failed_groups.py names these rows' groups for
// ci/gate.sh to re-run: a test (Judge.FailedGroupsReRunsWhatConfirmJudgesAgain)
// holds the script to this rule.
bool judged_again_by_a_rerun(const Row& row);

// Which round of re-runs confirm() applies: ci/gate.sh runs two at most
// (benchfp judge --confirm, then --confirm-again), so a failure first seen in
// the last has no round after it to show it again.
enum class ConfirmRound { first, last };

// A failure must reproduce: each time or ratio row of `run` that fails
// (regression or over its limit) is looked up in `rerun`, the judgement of a
// re-run of the failed benchmarks in a new process against the same baseline.
// Failing there too, it stays failed ("confirmed by a re-run"); within tolerance
// there, or unresolved there, it becomes
// unconfirmed: a failure must show twice; absent there, it stays failed. A time
// row the machine's move left unresolved in the run is judged by its re-run:
// failing there, a regression (which the next round, --confirm-again, must show
// again as any failure); passing there, unconfirmed; unresolved there again, or
// absent, unresolved still. Where it fails in the last round's re-run (no
// round after it to show it again), or in a re-run that measured no machine's
// move for its family (too few peers ran there to excuse anything), it is
// unresolved still too: one failing process is not a regression. Rows the run passed are
// not re-judged (a re-run is a second chance for a failure, never for a pass),
// and deterministic rows (memory, instruction counts) need no second run.
void confirm(Judgement& run, const Judgement& rerun, ConfirmRound round);

}  // namespace benchfp::report
