// Perf mode's paired measurement on synthetic timings (no clock: every figure
// here is deterministic), the order-statistic interval behind it, and how the
// judge turns an interval into a verdict against a limit.
#include "kernel/perf_measure.hpp"
#include "report/judge.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <optional>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <utility>

using namespace benchfp;
using harness::measure_paired;
using harness::PairedOptions;
using report::median_interval;

namespace {

// Chunk times of a machine whose speed drifts by up to 8% over tens of chunks
// (a shared, loaded host) with +-0.3% jitter per chunk; variant v's calls take
// `factor[v]` times the reference's. Seeded: the same run every time.
struct SyntheticMachine {
    explicit SyntheticMachine(std::vector<double> factors) : factor(std::move(factors)) {}
    std::vector<double> factor;
    double jitter = 0.003, wander = 0.08;
    std::mt19937 rng{42};
    std::vector<size_t> order;  // the variants in the order they were timed
    double operator()(size_t v, long calls) {
        order.push_back(v);
        std::uniform_real_distribution<double> u(-1, 1);
        const double drift = std::sin(0.05 * order.size());
        const double load = 1 + wander * drift * drift;
        return calls * 0.1 * factor[v] * load * (1 + jitter * u(rng));
    }
};

}  // namespace

TEST(MedianInterval, OrderStatisticRanks) {
    EXPECT_TRUE(std::isnan(median_interval({1, 2, 3, 4, 5}).lo));  // 5 values: no 95% interval
    EXPECT_EQ(median_interval({1, 2, 3, 4, 5}).half_width(), INFINITY);
    const auto six = median_interval({6, 1, 5, 2, 4, 3});  // P(B = 0) = 1/64 <= 2.5%: the extremes
    EXPECT_EQ(six.lo, 1);
    EXPECT_EQ(six.hi, 6);
    EXPECT_EQ(six.median, 3.5);
    std::vector<double> hundred(100);
    std::iota(hundred.begin(), hundred.end(), 1.0);
    std::shuffle(hundred.begin(), hundred.end(), std::mt19937(7));
    const auto m = median_interval(hundred);  // the tables' ranks for n = 100: 40 and 61
    EXPECT_EQ(m.lo, 40);
    EXPECT_EQ(m.hi, 61);
    EXPECT_EQ(m.n, 100u);
    EXPECT_NEAR(m.half_width(), 10.5 / 50.5, 1e-12);
}

TEST(PairedMeasurement, KnownOnePercentSlowdownComesOutAs1_01) {
    SyntheticMachine machine{{1.0, 1.01, 1.0}};
    PairedOptions options;
    options.budget_ms = 1e5;
    const auto run = measure_paired({true, true, true}, std::ref(machine), options);
    const report::MedianInterval& slow = run.stats[1].to_reference;
    const report::MedianInterval& aa = run.stats[2].to_reference;
    EXPECT_TRUE(run.target_met);
    EXPECT_LE(slow.half_width(), 0.002);
    EXPECT_LE(slow.lo, 1.01);
    EXPECT_GE(slow.hi, 1.01);
    EXPECT_NEAR(slow.median, 1.01, 0.002);
    EXPECT_LE(aa.lo, 1.0);  // A/A: the same code, so the interval holds 1
    EXPECT_GE(aa.hi, 1.0);
    EXPECT_EQ(run.stats[0].to_reference.n, 0u);  // the reference has no ratio to itself
}

TEST(PairedMeasurement, PairsAlternateAbba) {
    SyntheticMachine machine{{1.0, 1.0, 1.0}};
    PairedOptions options;
    options.budget_ms = 0;  // min_pairs rounds only
    options.min_pairs = 8;
    const auto run = measure_paired({true, true, true}, std::ref(machine), options);
    EXPECT_EQ(run.pairs, 8u);
    // Warm-up: one call of each, then one chunk of each; then the rounds.
    const std::vector<size_t> rounds(machine.order.begin() + 6, machine.order.end());
    ASSERT_EQ(rounds.size(), 8u * 4);
    const std::vector<size_t> even = {1, 0, 2, 0}, odd = {0, 2, 0, 1};  // variant first, then reference first
    for (size_t r = 0; r < 8; ++r)
        EXPECT_EQ(std::vector<size_t>(rounds.begin() + 4 * r, rounds.begin() + 4 * r + 4), r % 2 ? odd : even) << r;
}

TEST(PairedMeasurement, SameWorkVariantsTimeTheReferencesCallCount) {
    SyntheticMachine machine{{1.0, 1.0, 3.0}};
    PairedOptions options;
    options.budget_ms = 0;
    const auto run = measure_paired({true, true, false}, std::ref(machine), options);
    EXPECT_EQ(run.stats[1].calls_per_sample, run.stats[0].calls_per_sample);
    EXPECT_LT(run.stats[2].calls_per_sample, run.stats[0].calls_per_sample);  // a slower peer: fewer calls
    EXPECT_NEAR(run.stats[2].to_reference.median, 3.0, 0.1);                  // still per call
}

// Perf mode builds each kernel at 4 code placements, and a pair runs one
// placement of both its variants: round r at placement (r / 2) % 4, so each
// placement in both orders, in turn. An instance that runs 30% slower for the
// whole run (variant 1 at placement 2) moves a quarter of its pairs, which the
// median sets aside; a variant 1% slower at every placement still reads 1.01.
// (When a chunk took the placements in turn, the slow instance moved every
// pair: variant 1 read (3 + 1.3) / 4 = 1.075.)
TEST(PairedMeasurement, APairRunsOnePlacementAndTheMedianSetsASlowInstanceAside) {
    SyntheticMachine machine{{1.0, 1.0, 1.01}};
    size_t placement = 0;
    std::vector<size_t> placed;  // the placement of every call or chunk timed
    const harness::ChunkTimer timer = [&](size_t v, long calls) {
        placed.push_back(placement);
        return machine(v, calls) * (v == 1 && placement == 2 ? 1.3 : 1.0);
    };
    PairedOptions options;
    options.budget_ms = 1e5;
    options.placements = 4;
    options.place = [&](size_t j) { placement = j; };
    const auto run = measure_paired({true, true, true}, timer, options);
    EXPECT_NEAR(run.stats[1].to_reference.median, 1.0, 0.005);
    EXPECT_LT(run.stats[1].to_reference.lo, 1.005);
    EXPECT_NEAR(run.stats[2].to_reference.median, 1.01, 0.003);
    EXPECT_GT(run.stats[2].to_reference.lo, 1.0);
    EXPECT_EQ(run.placements_timed, 4u);

    // The order: one call of each at placements 3, 2 and 1, then one call and one chunk of each
    // at placement 0 (the warm-up), then 4 chunks a round at (round / 2) % 4.
    placed.clear();
    options.budget_ms = 0;  // min_pairs rounds only
    options.min_pairs = 8;
    measure_paired({true, true, true}, timer, options);
    std::vector<size_t> expected = {3, 3, 3, 2, 2, 2, 1, 1, 1, 0, 0, 0, 0, 0, 0};
    for (size_t r = 0; r < 8; ++r) expected.insert(expected.end(), 4, r / 2 % 4);
    EXPECT_EQ(placed, expected);

    // A peer (not same work) is called once at the first placement only, and with one placement
    // (or no place) nothing is placed.
    placed.clear();
    measure_paired({true, true, false}, timer, options);
    EXPECT_EQ(std::count(placed.begin(), placed.begin() + 8, size_t{3}), 2);  // variants 0 and 1, not the peer
    options.placements = 1;
    placement = 7;
    placed.clear();
    EXPECT_EQ(measure_paired({true, true}, timer, options).placements_timed, 1u);
    EXPECT_TRUE(std::all_of(placed.begin(), placed.end(), [](size_t j) { return j == 7; }));
}

TEST(PairedMeasurement, BudgetSpentReportsTheWidthReachedNotTheTarget) {
    SyntheticMachine machine{{1.0, 1.0}};
    machine.jitter = 0.05;
    PairedOptions options;
    options.budget_ms = 30;
    const auto run = measure_paired({true, true}, std::ref(machine), options);
    EXPECT_FALSE(run.target_met);
    EXPECT_GT(run.stats[1].to_reference.half_width(), options.target_half_width);
    EXPECT_GE(run.timed_ms, 30);
    EXPECT_LT(run.timed_ms, 60);
}

namespace {

// One run of frame over clobber: its paired ratio, the ratio's interval and the group's A/A control.
report::RunResults with_frame_ratio(double ratio, std::optional<report::Interval> interval,
                                    std::optional<report::Control> aa = std::nullopt, const std::string& file = "a.json") {
    report::RunResults r;
    r.fingerprint = {"cpu", "avx512", 2};
    r.benchmarks["kernel/k/a/avx2/64/clobber"] = {1e6, -1, 1, {}, {}};
    r.benchmarks["kernel/k/a/avx2/64/frame"] = {1e6 * ratio, -1, 1, {{"clobber", {ratio}}}, {}};
    r.source = file;
    r.benchmarks["kernel/k/a/avx2/64/frame"].paired_records["clobber"] = {{interval, aa, file}};
    return r;
}

// The ratio row of the runs merged, judged against t's limits alone.
report::Row merged_ratio_row(const std::vector<report::RunResults>& runs, const report::Tolerances& t) {
    report::RunResults merged = report::merge_runs(runs);
    report::compute_ratios(merged, t);
    for (const report::Row& row : report::judge_limits_only(merged, t).rows)
        if (row.kind == "ratio") return row;
    throw std::runtime_error("no ratio row");
}

// The A/A's ratio is its interval's midpoint unless given.
report::RowVerdict frame_verdict(double ratio, std::optional<report::Interval> interval, bool needs_interval = false,
                                 std::optional<report::Interval> aa = std::nullopt,
                                 std::optional<double> aa_ratio = std::nullopt) {
    report::Tolerances t;
    t.ratio_rules = {{"frame / clobber", "frame", "clobber", 1.005, {}, 0, needs_interval}};
    std::optional<report::Control> control;
    if (aa) control = report::Control{aa_ratio.value_or((aa->lo + aa->hi) / 2), aa};
    report::RunResults r = with_frame_ratio(ratio, interval, control);
    report::compute_ratios(r, t);
    const report::Judgement j = report::judge_limits_only(r, t);
    for (const report::Row& row : j.rows)
        if (row.kind == "ratio") return row.verdict;
    throw std::runtime_error("no ratio row");
}

}  // namespace

// The limit 1.005 against the interval: over only when the whole interval is
// (lo > limit), unresolved when it straddles the limit, within when hi is.
TEST(JudgeFrameCost, IntervalAgainstTheLimit) {
    using report::RowVerdict;
    EXPECT_EQ(frame_verdict(1.003, {{1.001, 1.005}}), RowVerdict::invariant);
    EXPECT_EQ(frame_verdict(1.006, {{1.0055, 1.0065}}), RowVerdict::over_limit);
    EXPECT_EQ(frame_verdict(1.004, {{1.002, 1.007}}), RowVerdict::unresolved);
    EXPECT_EQ(frame_verdict(1.006, {{1.003, 1.009}}), RowVerdict::unresolved);  // the median alone is no verdict
    // Too few pairs for an interval: a rule that needs one does not judge the bare median.
    EXPECT_EQ(frame_verdict(1.036, std::nullopt, true), RowVerdict::unresolved);
    EXPECT_EQ(frame_verdict(1.036, std::nullopt, false), RowVerdict::over_limit);
    // Over the limit, but by no more than the A/A control shows placement alone moving the kernel
    // (its interval excludes 1; the move is its median's distance from 1): unresolved.
    EXPECT_EQ(frame_verdict(1.038, {{1.0175, 1.0609}}, true, report::Interval{1.0150, 1.0350}), RowVerdict::unresolved);
    EXPECT_EQ(frame_verdict(1.038, {{1.0300, 1.0609}}, true, report::Interval{1.0150, 1.0350}), RowVerdict::over_limit);
    // Placement can move a copy faster too. A CI of unchanged code (e5a54e7) failed this row,
    // reduce sum avx2 256x256, when only the A/A's upper end counted, and only an A/A within +-2%.
    EXPECT_EQ(frame_verdict(1.024, {{1.0078, 1.0422}}, true, report::Interval{0.905, 0.959}), RowVerdict::unresolved);
    EXPECT_EQ(frame_verdict(1.12, {{1.10, 1.14}}, true, report::Interval{0.905, 0.959}), RowVerdict::over_limit);
    // An A/A whose interval holds 1 is noise, not a move: however wide, and however far its median
    // (0.955 here) is from 1, it excuses nothing; nor does an interval that ends at 1.
    EXPECT_EQ(frame_verdict(1.03, {{1.02, 1.04}}, true, report::Interval{0.90, 1.01}), RowVerdict::over_limit);
    EXPECT_EQ(frame_verdict(1.03, {{1.02, 1.04}}, true, report::Interval{1.0, 1.06}), RowVerdict::over_limit);
    EXPECT_EQ(frame_verdict(1.08, {{1.07, 1.09}}, true, report::Interval{0.8385, 1.0864}), RowVerdict::over_limit);
    EXPECT_EQ(frame_verdict(1.006, {{1.0055, 1.0065}}, true, report::Interval{1.0, 1.0}), RowVerdict::over_limit);
    // The move is the median's distance from 1, not the interval's far end (0.06 here).
    EXPECT_EQ(frame_verdict(1.05, {{1.04, 1.06}}, true, report::Interval{1.01, 1.06}, 1.02), RowVerdict::over_limit);
    // No move excuses more than 10%: a cost beyond it is the policy's, whatever the A/A says.
    EXPECT_EQ(frame_verdict(1.14, {{1.11, 1.16}}, true, report::Interval{1.30, 1.50}), RowVerdict::over_limit);
    EXPECT_EQ(frame_verdict(1.12, {{1.09, 1.16}}, true, report::Interval{1.30, 1.50}), RowVerdict::unresolved);
    // An A/A with an end or a median that is no finite number shows nothing.
    EXPECT_EQ(frame_verdict(1.024, {{1.0078, 1.0422}}, true, report::Interval{NAN, 0.959}, 0.935), RowVerdict::over_limit);
    EXPECT_EQ(frame_verdict(1.09, {{1.06, 1.12}}, true, report::Interval{1.30, 1.50}, INFINITY), RowVerdict::over_limit);
    report::Judgement j;
    j.rows.push_back({"x", "ratio", 1.004, NAN, NAN, 0.3, 1.005, RowVerdict::unresolved, false, "", 1.002, 1.007, ""});
    EXPECT_FALSE(j.failed());  // unresolved is said, not failed
}

// The same case in several merged runs (a file given twice, or the case twice
// in one file): each run's interval is kept, and the row is judged on their
// hull, never left without one (a probe found a failing frame cost given twice
// read "too few pairs" and passed).
TEST(JudgeFrameCost, MergedRunsAreJudgedOnTheHullOfTheirIntervals) {
    using report::RowVerdict;
    report::Tolerances t;
    t.ratio_rules = {{"frame / clobber", "frame", "clobber", 1.005, {}, 0, true}};
    const auto row_of_merge = [&](const report::RunResults& a, const report::RunResults& b) {
        return merged_ratio_row({a, b}, t);
    };
    const auto verdict_of_merge = [&](const report::RunResults& a, const report::RunResults& b) {
        return row_of_merge(a, b).verdict;
    };
    const report::RunResults failing = with_frame_ratio(1.253, report::Interval{1.20, 1.30});
    EXPECT_EQ(verdict_of_merge(failing, failing), RowVerdict::over_limit);
    // The hull is wider than a 95% interval, and its note says what it is.
    EXPECT_EQ(row_of_merge(failing, with_frame_ratio(1.265, report::Interval{1.21, 1.31})).note,
              "hull of 2 runs' 95% intervals [1.2000, 1.3100] over the limit 1.005");
    report::RunResults one = failing;
    report::compute_ratios(one, t);
    int ratio_rows = 0;
    for (const report::Row& row : report::judge_limits_only(one, t).rows)
        if (row.kind == "ratio") {
            ++ratio_rows;
            EXPECT_EQ(row.note, "95% interval [1.2000, 1.3000] over the limit 1.005");
        }
    EXPECT_EQ(ratio_rows, 1);
    EXPECT_EQ(verdict_of_merge(failing, with_frame_ratio(1.265, report::Interval{1.21, 1.31})), RowVerdict::over_limit);
    // report.json says how many runs lo and hi come from: 1, a 95% interval; 2, a hull.
    const auto json_runs_of = [&](const report::RunResults& r) {
        report::Report rendered;
        rendered.machines.push_back({r, std::nullopt, "", report::judge_limits_only(r, t), ""});
        const nlohmann::json json = report::render_json(rendered);
        for (const auto& row : json["machines"][0]["rows"])
            if (row["kind"] == "ratio") return row["interval_runs"];
        throw std::runtime_error("no ratio row");
    };
    report::RunResults two = report::merge_runs({failing, with_frame_ratio(1.265, report::Interval{1.21, 1.31})});
    report::compute_ratios(two, t);
    EXPECT_EQ(json_runs_of(two), 2);
    EXPECT_EQ(json_runs_of(one), 1);
    report::RunResults none = with_frame_ratio(1.253, std::nullopt);
    report::compute_ratios(none, t);
    EXPECT_TRUE(json_runs_of(none).is_null());
    // One run over the limit and one within: the hull straddles it.
    EXPECT_EQ(verdict_of_merge(failing, with_frame_ratio(1.001, report::Interval{0.999, 1.003})), RowVerdict::unresolved);
    EXPECT_EQ(verdict_of_merge(with_frame_ratio(1.001, report::Interval{0.999, 1.003}),
                               with_frame_ratio(1.002, report::Interval{1.000, 1.004})),
              RowVerdict::invariant);
}

// Merged runs (or one file holding a case twice) are excused by placement
// only where one run's own interval is within its own A/A control's move, as
// that run alone would be: never by one run's A/A beside another's interval.
TEST(JudgeFrameCost, MergedRunsAreExcusedOnlyByARunsOwnControl) {
    using report::RowVerdict;
    report::Tolerances t;
    t.ratio_rules = {{"frame / clobber", "frame", "clobber", 1.005, {}, 0, true}};
    const report::Control quiet_aa{1.001, report::Interval{0.99, 1.01}};
    const report::Control moved_aa{0.960, report::Interval{0.95, 0.97}};
    const report::RunResults quiet = with_frame_ratio(1.024, report::Interval{1.0078, 1.0422}, quiet_aa, "a.json");
    const report::RunResults moved = with_frame_ratio(1.020, report::Interval{1.010, 1.030}, moved_aa, "b.json");
    // Either file first: the run the move excuses is named, with its own interval and A/A.
    for (const auto& runs : {std::vector{quiet, moved}, std::vector{moved, quiet}}) {
        const report::Row row = merged_ratio_row(runs, t);
        EXPECT_EQ(row.verdict, RowVerdict::unresolved) << row.note;
        EXPECT_EQ(row.note, "hull of 2 runs' 95% intervals [1.0078, 1.0422] over the limit, but the run of b.json "
                            "reads 95% interval [1.0100, 1.0300], whose lower end is no farther above 1 than placement "
                            "alone moves this kernel: that run's A/A control reads 0.9600 [0.9500, 0.9700], 4.0% from 1");
    }
    EXPECT_EQ(merged_ratio_row({quiet, quiet}, t).verdict, RowVerdict::over_limit);
    // No run excused by its own control (1.09 and 1.03 beside quiet ones, 1.20 beside a 10% move):
    // the merge fails, though its hull's lo (1.03) is within the largest move (0.10).
    const report::Control far_aa{0.90, report::Interval{0.88, 0.92}};
    const report::Row mixed = merged_ratio_row({with_frame_ratio(1.10, report::Interval{1.09, 1.11}, quiet_aa),
                                                with_frame_ratio(1.04, report::Interval{1.03, 1.05}, quiet_aa),
                                                with_frame_ratio(1.21, report::Interval{1.20, 1.22}, far_aa)},
                                               t);
    EXPECT_EQ(mixed.verdict, RowVerdict::over_limit) << mixed.note;
    // The A/A column of merged runs names every run, one without an A/A too, its name escaped.
    report::RunResults merged = report::merge_runs(
        {with_frame_ratio(1.024, report::Interval{1.0078, 1.0422}, std::nullopt, "p|q.json"), moved});
    report::compute_ratios(merged, t);
    report::Report report;
    report.machines.push_back({merged, std::nullopt, "", report::judge_limits_only(merged, t), ""});
    const std::string md = report::render_markdown(report);
    EXPECT_NE(md.find("| p\\|q.json: -; b.json: 0.9600 [0.9500, 0.9700] |"), std::string::npos) << md;
}

// One file holding a case twice is two runs, each with its own A/A control
// beside its own interval, numbered by its run of the group in the file (failed
// cases counted); the Markdown A/A column shows each run's control under the
// name the note uses, in the order read, from the preserve case where the
// run's frame case failed.
TEST(JudgeFrameCost, OneFileHoldingACaseTwiceIsTwoRunsWithTheirOwnControls) {
    // The second run's specs say "threads": 1, which the first run's leave out (older files do): one group.
    const auto kase = [](const std::string& frame, const std::string& state, const std::string& paired,
                         const std::string& aa) {
        const bool second = aa.find("0.96") != std::string::npos;
        return "{\"state\": \"" + state + "\", \"spec\": {\"kernel\": \"eltwise\", \"alg\": \"relu\", "
               "\"isa\": \"avx2\", \"frame\": \"" + frame + "\", \"mode\": \"perf\", \"problem\": \"1048576\"" +
               (second ? ", \"threads\": 1" : "") + "}, \"perf\": {\"min_ms\": 2" + paired + ", \"aa\": " + aa + "}}";
    };
    const auto paired = [](const char* ratio, const char* lo, const char* hi) {
        return std::string(", \"paired\": {\"reference\": \"clobber\", \"ratio\": ") + ratio + ", \"lo\": " + lo +
               ", \"hi\": " + hi + ", \"pairs\": 40}";
    };
    const std::string quiet = "{\"ratio\": 1.001, \"lo\": 0.99, \"hi\": 1.01, \"pairs\": 40}";
    const std::string moved = "{\"ratio\": 0.96, \"lo\": 0.95, \"hi\": 0.97, \"pairs\": 40}";
    const std::filesystem::path path = benchfp::test::scratch_path("benchfp_pairing_", "twice.json");
    std::ofstream(path) << "{\"benchfp\": {\"schema\": \"benchfp.results/1\"}, \"host\": {\"cpu\": \"cpu\", "
                           "\"isa\": \"avx512\", \"cores\": 2}, \"cases\": ["
                        << kase("clobber", "PASSED", "", quiet) << ", "
                        << kase("frame", "PASSED", paired("1.24", "1.20", "1.30"), quiet) << ", "
                        << kase("preserve", "PASSED", paired("1.24", "1.20", "1.30"), quiet) << ", "
                        << kase("clobber", "PASSED", "", moved) << ", "
                        << kase("frame", "FAILED", paired("1.02", "1.01", "1.03"), moved) << ", "
                        << kase("preserve", "PASSED", paired("1.02", "1.01", "1.03"), moved) << "]}";
    report::RunResults r = report::read_run(path.string());
    std::filesystem::remove(path);
    report::Tolerances t;
    t.ratio_rules = {{"frame / clobber", "frame", "clobber", 1.005, {}, 0, true},
                     {"preserve / clobber", "preserve", "clobber", 1.005, {}, 0, true}};
    report::compute_ratios(r, t);
    const report::Judgement j = report::judge_limits_only(r, t);
    const std::string file = path.string();
    int frame_rows = 0;
    for (const report::Row& row : j.rows) {
        if (row.kind != "ratio") continue;
        ++frame_rows;
        if (row.id.ends_with("frame / clobber")) {  // one run, not excused by the other's A/A
            EXPECT_EQ(row.verdict, report::RowVerdict::over_limit) << row.note;
        } else if (row.id.ends_with("preserve / clobber")) {
            EXPECT_EQ(row.verdict, report::RowVerdict::unresolved) << row.note;
            EXPECT_NE(row.note.find("the run of " + file + ", run 2 reads 95% interval [1.0100, 1.0300]"),
                      std::string::npos) << row.note;
        }
    }
    EXPECT_EQ(frame_rows, 2);
    report::Report report;
    report.machines.push_back({r, std::nullopt, "", j, ""});
    const std::string md = report::render_markdown(report);
    EXPECT_NE(md.find("| " + file + ", run 1: 1.0010 [0.9900, 1.0100]; " + file + ", run 2: 0.9600 [0.9500, 0.9700] |"),
              std::string::npos) << md;
}

// An unresolved row is no pass: the verdict line counts and names it, with
// the A/A's reach in its note.
TEST(JudgeFrameCost, TheVerdictLineCountsUnresolvedRows) {
    report::Tolerances t;
    t.ratio_rules = {{"frame / clobber", "frame", "clobber", 1.005, {}, 0, true}};
    report::RunResults r = with_frame_ratio(1.024, report::Interval{1.0078, 1.0422},
                                            report::Control{0.935, report::Interval{0.905, 0.959}});
    report::compute_ratios(r, t);
    report::Report report;
    report.machines.push_back({r, std::nullopt, "", report::judge_limits_only(r, t), ""});
    const std::string verdict = report::verdict_text(report);
    EXPECT_EQ(verdict.rfind("passed: ", 0), 0u) << verdict;
    EXPECT_NE(verdict.find("1 unresolved (kernel/k/a/avx2/64: frame / clobber)"), std::string::npos)
        << verdict;
    // A reported-only group's row is not judged, unresolved or not: it is not counted.
    t.reported_only = {"kernel/k/"};
    const report::Judgement reported = report::judge_limits_only(r, t);
    EXPECT_EQ(reported.unresolved, 0);
    for (const report::Row& x : reported.rows)
        if (x.kind == "ratio") {
            EXPECT_EQ(x.verdict, report::RowVerdict::not_judged) << x.id;
        }
    const auto& rows = report.machines[0].judgement.rows;
    const auto row = std::find_if(rows.begin(), rows.end(), [](const report::Row& x) { return x.kind == "ratio"; });
    ASSERT_NE(row, rows.end());
    EXPECT_NE(row->note.find("its A/A control reads 0.9350 [0.9050, 0.9590], 6.5% from 1"), std::string::npos) << row->note;
}

namespace {

// A kernel perf result file of a clobber case and a frame case paired with it,
// both with the A/A control `aa` (its JSON object).
std::filesystem::path write_paired_run(const std::string& aa) {
    const auto kase = [&](const std::string& frame, const std::string& paired) {
        return "{\"state\": \"PASSED\", \"spec\": {\"kernel\": \"eltwise\", \"alg\": \"relu\", \"isa\": \"avx2\", "
               "\"frame\": \"" + frame + "\", \"mode\": \"perf\", \"problem\": \"1048576\"}, \"perf\": {\"min_ms\": 2" +
               paired + ", \"aa\": " + aa + "}}";
    };
    const std::filesystem::path path = benchfp::test::scratch_path("benchfp_pairing_", "pairing.json");
    std::ofstream(path) << "{\"benchfp\": {\"schema\": \"benchfp.results/1\"}, \"host\": {\"cpu\": \"cpu\", \"isa\": "
                           "\"avx512\", \"cores\": 2}, \"cases\": [" + kase("clobber", "") + ", " +
                               kase("frame", ", \"paired\": {\"reference\": \"clobber\", \"ratio\": 1.0021, \"lo\": "
                                             "1.0008, \"hi\": 1.0035, \"pairs\": 40}") + "]}";
    return path;
}

}  // namespace

// A median outside its own interval is refused: the A/A's excuse would read it
// on the wrong side of 1.
TEST(JudgeFrameCost, AMedianOutsideItsIntervalIsBadInput) {
    const auto path = write_paired_run("{\"ratio\": 0.95, \"lo\": 1.01, \"hi\": 1.03, \"pairs\": 40}");
    try {
        report::read_run(path.string());
        ADD_FAILURE() << "read";
    } catch (const std::exception& e) {
        EXPECT_NE(std::string(e.what()).find("outside its interval [1.0100, 1.0300]"), std::string::npos) << e.what();
    }
    std::filesystem::remove(path);
}

TEST(JudgeFrameCost, ReadsIntervalsAndTheAAControlAndShowsThem) {
    const auto path = write_paired_run("{\"ratio\": 0.9995, \"lo\": 0.998, \"hi\": 1.001, \"pairs\": 40}");
    report::RunResults r = report::read_run(path.string());
    std::filesystem::remove(path);
    report::Tolerances t;
    t.ratio_rules = {{"frame / clobber", "frame", "clobber", 1.005, {}}};
    report::compute_ratios(r, t);
    const std::string id = "kernel/eltwise/relu/avx2/1048576: frame / clobber";
    EXPECT_DOUBLE_EQ(r.ratios.at(id), 1.0021);  // the paired median, not the ratio of minimum times (1.0)
    EXPECT_DOUBLE_EQ(r.ratio_intervals.at(id).lo, 1.0008);
    ASSERT_EQ(r.ratio_records.at(id).size(), 1u);
    EXPECT_DOUBLE_EQ(r.ratio_records.at(id)[0].aa->ratio, 0.9995);
    report::Report report;
    report.machines.push_back({r, std::nullopt, "", report::judge_limits_only(r, t), ""});
    const std::string md = report::render_markdown(report);
    EXPECT_NE(md.find("| 1.0021 [1.0008, 1.0035] | - | 0.9995 [0.9980, 1.0010] |"), std::string::npos) << md;
}
