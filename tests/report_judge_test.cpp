// The judge on fixed inputs: every verdict, NaN, missing and new benchmarks,
// other machines, limits; and bad files, which never pass.
#include "report/case_result.hpp"
#include "report/judge.hpp"
#include "report/machine.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

using namespace benchfp::report;

namespace {

RunResults run(std::map<std::string, double> times, std::map<std::string, double> ratios = {},
               Fingerprint fp = {"cpu", "avx512", 2}) {
    RunResults r;
    r.fingerprint = fp;
    for (const auto& [name, ns] : times) r.benchmarks[name] = {ns, 1000.0, 5, {}, {}};
    r.ratios = ratios;
    return r;
}

const Row& row(const Judgement& j, const std::string& id, const std::string& kind) {
    for (const Row& r : j.rows)
        if (r.id == id && r.kind == kind) return r;
    throw std::runtime_error("no row " + id + " " + kind);
}

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = benchfp::test::scratch_path("benchfp_judge_", name);
    std::ofstream(path) << text;
    return path;
}

std::string error_of(const std::string& path) {
    try {
        read_baseline(path);
    } catch (const InputError& e) {
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST(Judge, VerdictsByTolerance) {
    const RunResults base = run({{"g/a", 100}, {"g/b", 100}, {"g/c", 100}, {"g/d", 100}});
    const RunResults cur = run({{"g/a", 106}, {"g/b", 94}, {"g/c", 104}, {"g/d", 96}});
    const Judgement j = judge(cur, base, Tolerances{});
    EXPECT_EQ(row(j, "g/a", "time").verdict, RowVerdict::regression);   // 1.06 - 0.05 > 1
    EXPECT_EQ(row(j, "g/b", "time").verdict, RowVerdict::improvement);  // 0.94 + 0.05 < 1
    EXPECT_EQ(row(j, "g/c", "time").verdict, RowVerdict::invariant);
    EXPECT_EQ(row(j, "g/d", "time").verdict, RowVerdict::invariant);
    EXPECT_EQ(row(j, "g/a", "memory").verdict, RowVerdict::invariant);
    EXPECT_TRUE(j.failed());
    EXPECT_EQ(j.regressions, 1);
    EXPECT_EQ(j.improvements, 1);
}

TEST(Judge, GroupToleranceOverridesTheDefault) {
    Tolerances t;
    t.time_by_group["noisy"] = 0.25;
    const Judgement j = judge(run({{"noisy/a", 120}, {"calm/a", 120}}), run({{"noisy/a", 100}, {"calm/a", 100}}), t);
    EXPECT_EQ(row(j, "noisy/a", "time").verdict, RowVerdict::invariant);
    EXPECT_EQ(row(j, "calm/a", "time").verdict, RowVerdict::regression);
}

// A key with '*' names the groups it matches, a '*' within one path segment;
// the longest matching key wins.
TEST(Judge, GroupToleranceKeysMatchOneSegmentPerStar) {
    Tolerances t;
    t.time_by_group["kernel/"] = 0.4;
    t.time_by_group["kernel/reduce/*/*/4096x4096"] = 0.8;
    const Judgement j = judge(run({{"kernel/reduce/max/avx512/4096x4096/frame", 170},
                                   {"kernel/reduce/max/avx512/256x256/frame", 170},
                                   {"kernel/reduce/max/avx512/x/4096x4096/frame", 170}}),
                              run({{"kernel/reduce/max/avx512/4096x4096/frame", 100},
                                   {"kernel/reduce/max/avx512/256x256/frame", 100},
                                   {"kernel/reduce/max/avx512/x/4096x4096/frame", 100}}),
                              t);
    EXPECT_EQ(row(j, "kernel/reduce/max/avx512/4096x4096/frame", "time").verdict, RowVerdict::invariant);
    EXPECT_EQ(row(j, "kernel/reduce/max/avx512/256x256/frame", "time").verdict, RowVerdict::regression);
    EXPECT_EQ(row(j, "kernel/reduce/max/avx512/x/4096x4096/frame", "time").verdict, RowVerdict::regression);
}

TEST(Judge, NanIsInvalidAndFails) {
    const Judgement j = judge(run({{"g/a", NAN}}), run({{"g/a", 100}}), Tolerances{});
    EXPECT_EQ(row(j, "g/a", "time").verdict, RowVerdict::invalid);
    EXPECT_TRUE(j.failed());
}

TEST(Judge, MissingFailsAndNewIsReported) {
    const Judgement j = judge(run({{"g/new", 100}}), run({{"g/gone", 100}}), Tolerances{});
    EXPECT_EQ(row(j, "g/gone", "time").verdict, RowVerdict::missing);
    EXPECT_EQ(row(j, "g/new", "time").verdict, RowVerdict::added);
    EXPECT_TRUE(j.failed());
}

TEST(Judge, OtherMachinesTimesAreReportedNotJudged) {
    const Judgement j = judge(run({{"g/a", 300}}, {}, {"other", "avx2", 8}), run({{"g/a", 100}}), Tolerances{});
    EXPECT_FALSE(j.same_machine);
    EXPECT_EQ(row(j, "g/a", "time").verdict, RowVerdict::not_judged);
    EXPECT_FALSE(j.failed());
}

TEST(Judge, InRunRatiosGateEverywhereWithLimits) {
    Tolerances t;
    t.ratio_rules.push_back({"hook off / compiled out", "off", "compiled_out", 1.01, {}});
    RunResults cur = run({{"g/off", 103}, {"g/compiled_out", 100}}, {}, {"other", "x", 1});
    compute_ratios(cur, t);
    ASSERT_DOUBLE_EQ(cur.ratios.at("g: hook off / compiled out"), 1.03);
    RunResults base = run({{"g/off", 100}, {"g/compiled_out", 100}}, {{"g: hook off / compiled out", 1.03}});
    const Judgement j = judge(cur, base, t);
    const Row& r = row(j, "g: hook off / compiled out", "ratio");
    EXPECT_EQ(r.verdict, RowVerdict::over_limit);  // same as stored, but over the absolute limit: not a regression
    EXPECT_TRUE(r.over_limit);
    EXPECT_TRUE(j.failed());
    EXPECT_EQ(j.regressions, 0);
    EXPECT_EQ(j.over_limit, 1);
    EXPECT_NE(r.note.find("limit"), std::string::npos);
    // A rule's own tolerance replaces the default against the stored value.
    t.ratio_rules = {{"hook off / compiled out", "off", "compiled_out", 0, {}, 0.2}};
    RunResults drifted = base;
    drifted.ratios["g: hook off / compiled out"] = 1.03 * 1.15;
    EXPECT_EQ(row(judge(drifted, base, t), "g: hook off / compiled out", "ratio").verdict, RowVerdict::invariant);
    t.ratio_rules[0].tolerance = 0;
    EXPECT_EQ(row(judge(drifted, base, t), "g: hook off / compiled out", "ratio").verdict, RowVerdict::regression);
}

TEST(Judge, ReportsShowOnlySignificantRowsAndTheMeaning) {
    const RunResults base = run({{"g/a", 100}, {"g/b", 100}});
    const RunResults cur = run({{"g/a", 150}, {"g/b", 100}});
    const Judgement j = judge(cur, base, Tolerances{});
    const Report report{{"abc123", "main", "today", {{"version", "test"}}, ""}, {{cur, base, "base.json", j, ""}}, {}};
    const std::string md = render_markdown(report);
    EXPECT_NE(md.find("| `g/a` | 1.500 (5%) :x:"), std::string::npos) << md;
    EXPECT_EQ(md.find("`g/b`"), std::string::npos) << md;
    EXPECT_NE(md.find("A ratio greater than `1.0` denotes a possible regression"), std::string::npos);
    EXPECT_NE(md.find("*Commit(s):* abc123"), std::string::npos);
    const std::string html = render_html(report);
    EXPECT_NE(html.find("<svg"), std::string::npos);
    EXPECT_EQ(render_json(report)["failed"], true);
}

TEST(Judge, BaselineRoundTrips) {
    RunResults r = run({{"g/a", 123.5}}, {{"g: x", 0.9}});
    r.instructions["count"] = 2;
    const std::string path = write_temp("roundtrip.json", "");
    write_baseline(path, r);
    const RunResults back = read_baseline(path);
    EXPECT_DOUBLE_EQ(back.benchmarks.at("g/a").min_ns, 123.5);
    EXPECT_DOUBLE_EQ(back.ratios.at("g: x"), 0.9);
    EXPECT_EQ(back.fingerprint, r.fingerprint);
    std::filesystem::remove(path);
}

TEST(Judge, CorruptTruncatedOrMismatchedBaselinesNameTheFileAndTheProblem) {
    const std::string corrupt = write_temp("corrupt.json", "{\"schema\": \"benchfp.baseline/1\", \"bench");
    EXPECT_NE(error_of(corrupt).find(corrupt + ": baseline is not valid JSON"), std::string::npos) << error_of(corrupt);
    // A NUL ended nlohmann's input (what followed was never read), and a key twice kept the last value.
    const std::string nul = write_temp("nul.json", std::string("{\"schema\": \"benchfp.baseline/1\"}\0garbage", 40));
    EXPECT_NE(error_of(nul).find("a NUL byte at offset 32"), std::string::npos) << error_of(nul);
    const std::string twice = write_temp("twice.json", "{\"schema\": \"benchfp.baseline/1\", \"benchmarks\": "
                                                       "{\"g/a\": {\"min_ns\": 1, \"min_ns\": 2}}}");
    EXPECT_NE(error_of(twice).find("the key \"min_ns\" twice in one object"), std::string::npos) << error_of(twice);
    const std::string other = write_temp("other.json", "{\"schema\": \"something/2\", \"benchmarks\": {}}");
    EXPECT_NE(error_of(other).find("schema mismatch"), std::string::npos) << error_of(other);
    const std::string empty = write_temp("empty.json",
                                         "{\"schema\": \"benchfp.baseline/1\", \"fingerprint\": {\"cpu\": \"c\", "
                                         "\"isa\": \"i\", \"cores\": 1}, \"benchmarks\": {}}");
    EXPECT_NE(error_of(empty).find("no benchmark"), std::string::npos) << error_of(empty);
    const std::string bad_value = write_temp("bad.json",
                                             "{\"schema\": \"benchfp.baseline/1\", \"fingerprint\": {\"cpu\": \"c\", "
                                             "\"isa\": \"i\", \"cores\": 1}, \"benchmarks\": {\"g/a\": {\"min_ns\": \"x\"}}}");
    EXPECT_NE(error_of(bad_value).find("min_ns"), std::string::npos) << error_of(bad_value);
    EXPECT_NE(error_of("/nonexistent/baseline.json").find("cannot open"), std::string::npos);
    for (const auto& p : {corrupt, other, empty, bad_value}) std::filesystem::remove(p);
}

// The suite's own JSON: chunked benchmarks (manual time, ns_per_iteration) with
// paired ratios; the in-run ratios come from the pairs' medians, chained where
// needed, and fall back to the minimum times only where nothing was paired.
TEST(Judge, PairedRatiosFromTheSuiteJsonWinOverMinimumTimes) {
    const auto entry = [](const std::string& name, double ns, const std::string& counters) {
        return "{\"name\": \"" + name + "/manual_time\", \"run_name\": \"" + name +
               "/manual_time\", \"run_type\": \"iteration\", \"real_time\": 99999, \"time_unit\": \"ns\", "
               "\"bytes_per_iteration\": 64, \"ns_per_iteration\": " + std::to_string(ns) + counters + "}";
    };
    const std::string path = write_temp("suite.json",
        "{\"context\": {\"benchfp_cpu\": \"cpu\", \"benchfp_isa\": \"avx512\", \"benchfp_cores\": \"2\"}, \"benchmarks\": [" +
        entry("alloc/w/compiled_out", 100, "") + ", " +
        entry("alloc/w/off", 90, ", \"ratio_to_compiled_out\": 1.02") + ", " +
        entry("alloc/w/off", 95, ", \"ratio_to_compiled_out\": 1.04") + ", " +
        entry("alloc/w/off", 80, ", \"ratio_to_compiled_out\": 1.03") + ", " +
        entry("alloc/w/sampled_512k", 70, ", \"ratio_to_off\": 1.01") + ", " +
        entry("alloc/w/glibc", 300, "") + "]}");
    RunResults r = read_run(path);
    std::filesystem::remove(path);
    ASSERT_EQ(r.benchmarks.count("alloc/w/off"), 1u);  // "/manual_time" dropped
    EXPECT_DOUBLE_EQ(r.benchmarks.at("alloc/w/off").min_ns, 80);  // ns_per_iteration, not real_time
    EXPECT_EQ(r.benchmarks.at("alloc/w/off").repetitions, 3);
    Tolerances t;
    t.ratio_rules = {{"off / co", "off", "compiled_out", 0, {}},
                     {"co / off", "compiled_out", "off", 0, {}},
                     {"sampled / co", "sampled_512k", "compiled_out", 0, {}},
                     {"pool / glibc", "compiled_out", "glibc", 0, {}}};
    compute_ratios(r, t);
    EXPECT_DOUBLE_EQ(r.ratios.at("alloc/w: off / co"), 1.03);  // median of the pairs, not 80 / 100
    EXPECT_DOUBLE_EQ(r.ratios.at("alloc/w: co / off"), 1 / 1.03);
    EXPECT_DOUBLE_EQ(r.ratios.at("alloc/w: sampled / co"), 1.01 * 1.03);  // through off
    EXPECT_DOUBLE_EQ(r.ratios.at("alloc/w: pool / glibc"), 100.0 / 300.0);  // not paired: minimum times
}

// Peer allocators' (and unsteady groups') own times and bytes are reported,
// never a verdict; the pool's are judged as usual.
TEST(Judge, ReportedOnlyVariantsNeverRegress) {
    Tolerances t;
    t.reported_only = {"glibc", "unsteady"};
    RunResults cur = run({{"g/glibc", 200}, {"g/off", 200}, {"unsteady/off", 300}});
    cur.benchmarks["g/glibc"].bytes_per_iteration = 2000;
    const RunResults base = run({{"g/glibc", 100}, {"g/off", 100}, {"unsteady/off", 100}});
    const Judgement j = judge(cur, base, t);
    EXPECT_EQ(row(j, "g/glibc", "time").verdict, RowVerdict::not_judged);
    EXPECT_EQ(row(j, "unsteady/off", "time").verdict, RowVerdict::not_judged);  // a whole group, ratios too
    RunResults cur_ratios = cur, base_ratios = base;
    cur_ratios.ratios["unsteady: off / co"] = 2.0;
    base_ratios.ratios["unsteady: off / co"] = 1.0;
    EXPECT_EQ(row(judge(cur_ratios, base_ratios, t), "unsteady: off / co", "ratio").verdict, RowVerdict::not_judged);
    // A ratio rule named there: its rows are reported in every group, others' judged.
    t.ratio_rules = {{"off / glibc", "off", "glibc", 0, {}}, {"off / co", "off", "co", 0, {}}};
    t.reported_only.push_back("off / glibc");
    cur_ratios.ratios["g: off / glibc"] = 2.0, base_ratios.ratios["g: off / glibc"] = 1.0;
    cur_ratios.ratios["g: off / co"] = 2.0, base_ratios.ratios["g: off / co"] = 1.0;
    const Judgement by_rule = judge(cur_ratios, base_ratios, t);
    EXPECT_EQ(row(by_rule, "g: off / glibc", "ratio").verdict, RowVerdict::not_judged);
    EXPECT_EQ(row(by_rule, "g: off / co", "ratio").verdict, RowVerdict::regression);
    EXPECT_EQ(row(j, "g/glibc", "memory").verdict, RowVerdict::not_judged);
    EXPECT_EQ(row(j, "g/off", "time").verdict, RowVerdict::regression);
    EXPECT_TRUE(j.failed());
}

// benchfp's own perf results join the same model: a benchmark per case and
// frame policy, so the in-run rule frame / clobber applies to each case.
TEST(Judge, ReadsBenchfpPerfResults) {
    const auto kase = [](const std::string& frame, double min_ms, const std::string& state = "PASSED") {
        return "{\"state\": \"" + state + "\", \"spec\": {\"kernel\": \"eltwise\", \"alg\": \"relu\", \"isa\": \"avx2\", "
               "\"frame\": \"" + frame + "\", \"mode\": \"perf\", \"problem\": \"1048576\"}, \"perf\": {\"min_ms\": " +
               std::to_string(min_ms) + "}}";
    };
    const std::string path = write_temp("kernel.json",
        "{\"benchfp\": {\"schema\": \"benchfp.results/1\"}, \"host\": {\"cpu\": \"cpu\", \"isa\": \"avx512\", \"cores\": 2}, "
        "\"cases\": [" + kase("clobber", 2.0) + ", " + kase("frame", 2.02) + ", " + kase("preserve", 9, "FAILED") + "]}");
    RunResults r = read_run(path);
    std::filesystem::remove(path);
    EXPECT_EQ(r.fingerprint, (Fingerprint{"cpu", "avx512", 2}));
    ASSERT_EQ(r.benchmarks.size(), 2u);  // the failed case is not a measurement
    EXPECT_DOUBLE_EQ(r.benchmarks.at("kernel/eltwise/relu/avx2/1048576/clobber").min_ns, 2e6);
    Tolerances t;
    t.ratio_rules = {{"frame / clobber", "frame", "clobber", 1.005, {}}};
    compute_ratios(r, t);
    EXPECT_DOUBLE_EQ(r.ratios.at("kernel/eltwise/relu/avx2/1048576: frame / clobber"), 1.01);
    const std::string empty = write_temp("nokernel.json",
        "{\"benchfp\": {\"schema\": \"benchfp.results/1\"}, \"host\": {\"cpu\": \"c\", \"isa\": \"avx2\", \"cores\": 2}, \"cases\": []}");
    EXPECT_THROW(read_run(empty), InputError);
    std::filesystem::remove(empty);
}

// The same problem on 1 and 2 threads is two cases, two benchmarks: merged,
// a 2-thread time was judged against the 1-thread one's baseline.
TEST(Judge, ACaseOnMoreThreadsIsABenchmarkOfItsOwn) {
    const auto kase = [](const std::string& threads, double min_ms) {
        return "{\"state\": \"PASSED\", \"spec\": {\"kernel\": \"gemm\", \"alg\": \"f32\", \"isa\": \"avx2\", "
               "\"frame\": \"clobber\", \"mode\": \"perf\", \"problem\": \"m64n64k64\"" + threads +
               "}, \"perf\": {\"min_ms\": " + std::to_string(min_ms) + "}}";
    };
    const std::string path = write_temp("threads.json",
        "{\"benchfp\": {\"schema\": \"benchfp.results/1\"}, \"host\": {\"cpu\": \"cpu\", \"isa\": \"avx2\", \"cores\": 2}, "
        "\"cases\": [" + kase(", \"threads\": 1", 2.0) + ", " + kase(", \"threads\": 2", 1.1) + ", " + kase("", 2.2) + "]}");
    const RunResults r = read_run(path);
    std::filesystem::remove(path);
    ASSERT_EQ(r.benchmarks.size(), 2u);  // no threads field: a file from before, 1 thread
    EXPECT_DOUBLE_EQ(r.benchmarks.at("kernel/gemm/f32/avx2/m64n64k64/clobber").min_ns, 2e6);
    EXPECT_DOUBLE_EQ(r.benchmarks.at("kernel/gemm/f32/avx2/m64n64k64@2t/clobber").min_ns, 1.1e6);
}

// A plain Google Benchmark file: the machine is what its own context says, and
// without benchfp's keys the CPU model and ISA are unknown -- never a match,
// not even with itself.
TEST(Judge, GoogleBenchmarkContextIsTheFingerprintAndUnknownNeverMatches) {
    const std::string path = write_temp("plain.json",
        "{\"context\": {\"host_name\": \"runner-7\", \"num_cpus\": 4, \"mhz_per_cpu\": 2450, \"library_build_type\": \"debug\", "
        "\"caches\": [{\"type\": \"Data\", \"level\": 1, \"size\": 32768, \"num_sharing\": 1}, "
        "{\"type\": \"Unified\", \"level\": 2, \"size\": 1048576, \"num_sharing\": 2}]}, "
        "\"benchmarks\": [{\"name\": \"g/a\", \"run_type\": \"iteration\", \"real_time\": 2, \"time_unit\": \"us\"}]}");
    const RunResults r = read_run(path);
    std::filesystem::remove(path);
    EXPECT_EQ(r.fingerprint.cpu, "unknown");
    EXPECT_EQ(r.fingerprint.cores, 4);
    EXPECT_EQ(r.fingerprint.host, "runner-7");
    EXPECT_EQ(r.fingerprint.describe(), "unknown, unknown, 4 cores, host runner-7, 2450 MHz, L1d 32 KiB, L2 1 MiB, "
                                        "Google Benchmark built debug");
    EXPECT_FALSE(same_machine(r.fingerprint, r.fingerprint));
    RunResults slower = r;
    slower.benchmarks["g/a"].min_ns *= 2;
    const Judgement j = judge(slower, r, Tolerances{});
    EXPECT_FALSE(j.same_machine);
    EXPECT_EQ(row(j, "g/a", "time").verdict, RowVerdict::not_judged);
}

// --benchmark_report_aggregates_only=true: no iterations, only aggregates. The
// judge takes min where the suite computes it, else the median, else the mean.
TEST(Judge, ReadsAggregatesOnlyFiles) {
    const auto aggregate = [](const std::string& name, const std::string& which, double ns) {
        return "{\"name\": \"" + name + "_" + which + "\", \"run_name\": \"" + name +
               "\", \"run_type\": \"aggregate\", \"aggregate_name\": \"" + which +
               "\", \"repetitions\": 5, \"real_time\": " + std::to_string(ns) + ", \"time_unit\": \"ns\"}";
    };
    const std::string path = write_temp("aggregates.json",
        "{\"benchmarks\": [" + aggregate("g/a", "mean", 12) + ", " + aggregate("g/a", "median", 11) + ", " +
        aggregate("g/a", "stddev", 1) + ", " + aggregate("g/b", "mean", 30) + ", " + aggregate("g/c", "median", 9) +
        ", " + aggregate("g/c", "min", 7) + "]}");
    const RunResults r = read_run(path);
    std::filesystem::remove(path);
    EXPECT_DOUBLE_EQ(r.benchmarks.at("g/a").min_ns, 11);  // median over mean; stddev is no time
    EXPECT_DOUBLE_EQ(r.benchmarks.at("g/b").min_ns, 30);  // only a mean
    EXPECT_DOUBLE_EQ(r.benchmarks.at("g/c").min_ns, 7);   // min first
    EXPECT_EQ(r.benchmarks.at("g/a").repetitions, 5);
    EXPECT_NE(r.time_from.find("median"), std::string::npos) << r.time_from;
    EXPECT_NE(r.time_from.find("aggregates"), std::string::npos) << r.time_from;
}

// A count with a limit is a difference of counts (the stopped hook's
// instructions), whose best value is 0: judged by its limit, not as a ratio to
// its baseline (0 / 0 was an invalid value and failed the gate at its best).
TEST(Judge, ALimitedCountIsJudgedByItsLimitAlone) {
    Tolerances t;
    t.instruction_limits["hook"] = 2;
    RunResults base = run({{"g/a", 100}});
    base.instructions["hook"] = 2;
    base.instructions["total"] = 46;
    for (const double hook : {0.0, 2.0, 1.0}) {
        RunResults cur = run({{"g/a", 100}});
        cur.instructions["hook"] = hook;
        cur.instructions["total"] = 46;
        const Judgement j = judge(cur, base, t);
        EXPECT_EQ(row(j, "hook", "instructions").verdict, RowVerdict::invariant) << hook;
        EXPECT_DOUBLE_EQ(row(j, "hook", "instructions").baseline, 2.0);
        EXPECT_FALSE(j.failed()) << hook;
    }
    RunResults over = run({{"g/a", 100}});
    over.instructions["hook"] = 2.5;
    over.instructions["total"] = 46;
    EXPECT_EQ(row(judge(over, base, t), "hook", "instructions").verdict, RowVerdict::over_limit);
    over.instructions["hook"] = 0;
    over.instructions["total"] = 48;  // the counts themselves still regress against their baselines
    EXPECT_EQ(row(judge(over, base, t), "total", "instructions").verdict, RowVerdict::regression);
    t.instruction_limits["total"] = 0;  // 0 is no limit: still judged against its baseline
    EXPECT_EQ(row(judge(over, base, t), "total", "instructions").verdict, RowVerdict::regression);
}

// No baseline for the machine: only the absolute limits judge. Times are never
// red for it; a value a limit needs that the run lacks is never green.
TEST(Judge, WithoutABaselineOnlyTheLimitsJudge) {
    Tolerances t;
    t.ratio_rules = {{"off / co", "off", "compiled_out", 1.02, {}}, {"pool / glibc", "compiled_out", "glibc", 0.5, {"g"}}};
    t.instruction_limits["hook"] = 2;
    RunResults cur = run({{"g/off", 110}, {"g/compiled_out", 100}, {"h/off", 100}, {"h/compiled_out", 100}});
    compute_ratios(cur, t);
    cur.instructions["other count"] = 5;
    const Judgement j = judge_limits_only(cur, t);
    EXPECT_FALSE(j.has_baseline);
    EXPECT_EQ(row(j, "g/off", "time").verdict, RowVerdict::not_judged);
    EXPECT_EQ(row(j, "g: off / co", "ratio").verdict, RowVerdict::over_limit);  // 1.1 over 1.02: no baseline to regress from
    EXPECT_EQ(row(j, "h: off / co", "ratio").verdict, RowVerdict::invariant);   // within its limit
    EXPECT_EQ(row(j, "g: pool / glibc", "ratio").verdict, RowVerdict::missing);  // no glibc in group g
    EXPECT_EQ(row(j, "hook", "instructions").verdict, RowVerdict::missing);
    EXPECT_EQ(row(j, "other count", "instructions").verdict, RowVerdict::not_judged);
    RunResults calm = run({{"h/off", 100}, {"h/compiled_out", 100}});
    compute_ratios(calm, t);
    EXPECT_FALSE(judge_limits_only(calm, t).failed());
}

// Runs of several machines stay apart; each machine's baseline has its folder.
TEST(Judge, RunsOfSeveralMachinesMergePerMachine) {
    RunResults a1 = run({{"g/x", 100}}, {}, {"CPU A", "avx2", 2}), a2 = run({{"g/x", 90}}, {}, {"CPU A", "avx2", 2});
    RunResults b = run({{"g/x", 300}}, {}, {"CPU B", "avx512", 8});
    const std::vector<RunResults> machines = merge_by_machine({a1, b, a2});
    ASSERT_EQ(machines.size(), 2u);
    EXPECT_DOUBLE_EQ(machines[0].benchmarks.at("g/x").min_ns, 90);
    EXPECT_EQ(machines[1].fingerprint.cpu, "CPU B");
    EXPECT_EQ(baseline_path("results/baselines", machines[1].fingerprint, "alloc"),
              "results/baselines/cpu-b-avx512-8cores/alloc.json");
    EXPECT_THROW(merge_runs({a1, b}), InputError);
}

TEST(Judge, AReportHasASectionPerMachine) {
    const RunResults base_a = run({{"g/x", 100}}, {}, {"CPU A", "avx2", 2});
    const RunResults cur_a = run({{"g/x", 100}}, {}, {"CPU A", "avx2", 2});
    const RunResults cur_b = run({{"g/x", 300}}, {}, {"CPU B", "avx512", 8});
    const Report report{{"abc", "", "today", {{"version", "1.2.3"}}, ""},
                        {{cur_a, base_a, "a.json", judge(cur_a, base_a, Tolerances{}), ""},
                         {cur_b, std::nullopt, "b/alloc.json", judge_limits_only(cur_b, Tolerances{}), ""}},
                        {}};
    EXPECT_FALSE(report.failed());
    const std::string md = render_markdown(report);
    EXPECT_NE(md.find("### Machine: CPU A, avx2, 2 cores"), std::string::npos) << md;
    EXPECT_NE(md.find("### Machine: CPU B, avx512, 8 cores"), std::string::npos) << md;
    EXPECT_NE(md.find("no baseline for this machine (CPU B, avx512, 8 cores"), std::string::npos) << md;
    EXPECT_NE(md.find("*Judged by:* version 1.2.3"), std::string::npos) << md;  // the build
    const nlohmann::json json = render_json(report);
    ASSERT_EQ(json["machines"].size(), 2u);
    EXPECT_EQ(json["machines"][1]["baseline"], nullptr);
    EXPECT_EQ(json["build"]["version"], "1.2.3");
    const std::string html = render_html(report);
    EXPECT_NE(html.find("CPU B"), std::string::npos);
}

TEST(Judge, TheFingerprintRoundTripsThroughJson) {
    Fingerprint f{"AMD EPYC (family 26, model 2)", "avx512", 2};
    f.host = "h";
    const nlohmann::json j = to_json(f);
    const Fingerprint back = fingerprint_from_json(In(j, "f.json", ""));
    EXPECT_TRUE(same_machine(back, f));
    EXPECT_EQ(back.host, "h");
    EXPECT_EQ(f.slug(), "amd-epyc-family-26-model-2-avx512-2cores");
    EXPECT_FALSE(Fingerprint{}.known());
}

// Two CPUs a hypervisor names alike ("AMD EPYC" for a Zen 4 and a Zen 5 guest)
// are two machines: this machine's CPU carries its family and model numbers.
TEST(Judge, ThisMachinesCpuCarriesItsFamilyAndModel) {
    std::ifstream cpuinfo("/proc/cpuinfo");
    std::string family, model;
    for (std::string line; std::getline(cpuinfo, line) && (family.empty() || model.empty());) {
        const auto value = [&] { return line.substr(line.find_first_not_of(" \t", line.find(':') + 1)); };
        if (line.rfind("cpu family\t", 0) == 0) family = value();
        if (line.rfind("model\t", 0) == 0) model = value();
    }
    ASSERT_FALSE(family.empty() || model.empty()) << "/proc/cpuinfo names no cpu family and model here";
    const Fingerprint f = this_machine("avx2");
    const std::string tail = " (family " + family + ", model " + model + ")";
    ASSERT_GT(f.cpu.size(), tail.size()) << f.cpu;
    EXPECT_EQ(f.cpu.substr(f.cpu.size() - tail.size()), tail) << f.cpu;
    Fingerprint other = f;
    other.cpu = f.cpu.substr(0, f.cpu.size() - tail.size()) + " (family " + family + ", model 999)";
    EXPECT_FALSE(same_machine(f, other));
}

// A failure must reproduce (confirm): a measured failure a re-run does not show
// again is unconfirmed, one it shows again stays, one it lacks stays; rows the
// run passed and deterministic rows are never changed by a re-run.
TEST(Judge, AFailureMustReproduceInTheReRun) {
    Tolerances t;
    t.ratio_rules.push_back({"off / co", "off", "co", 1.02, {}});
    const RunResults base = run({{"g/a", 100}, {"g/b", 100}, {"g/c", 100}, {"h/off", 100}, {"h/co", 100}});
    RunResults cur = run({{"g/a", 150}, {"g/b", 150}, {"g/c", 150}, {"h/off", 110}, {"h/co", 100}});
    cur.benchmarks["g/a"].bytes_per_iteration = 2000;  // a memory regression: deterministic, never re-run away
    compute_ratios(cur, t);
    Judgement j = judge(cur, base, t);
    ASSERT_EQ(j.regressions, 5);  // g/a (time and memory), g/b, g/c, h/off
    ASSERT_EQ(row(j, "h: off / co", "ratio").verdict, RowVerdict::over_limit);
    // The re-run: g/a and the ratio at their usual values, g/b slow again, g/c not re-run.
    RunResults again = run({{"g/a", 101}, {"g/b", 149}, {"h/off", 100}, {"h/co", 100}});
    compute_ratios(again, t);
    confirm(j, judge(again, base, t), ConfirmRound::first);
    EXPECT_EQ(row(j, "g/a", "time").verdict, RowVerdict::unconfirmed);
    EXPECT_NE(row(j, "g/a", "time").note.find("1.500 x the baseline in the run, 1.010 x the baseline in a re-run"),
              std::string::npos)
        << row(j, "g/a", "time").note;
    EXPECT_EQ(row(j, "g/a", "memory").verdict, RowVerdict::regression);
    EXPECT_EQ(row(j, "g/b", "time").verdict, RowVerdict::regression);
    EXPECT_NE(row(j, "g/b", "time").note.find("confirmed by a re-run: 1.490"), std::string::npos);
    EXPECT_EQ(row(j, "g/c", "time").verdict, RowVerdict::regression);
    EXPECT_NE(row(j, "g/c", "time").note.find("not re-run"), std::string::npos);
    EXPECT_EQ(row(j, "h: off / co", "ratio").verdict, RowVerdict::unconfirmed);
    EXPECT_FALSE(row(j, "h: off / co", "ratio").over_limit);
    EXPECT_EQ(row(j, "h/off", "time").verdict, RowVerdict::unconfirmed);
    EXPECT_EQ(j.regressions, 3);
    EXPECT_EQ(j.over_limit, 0);
    EXPECT_EQ(j.unconfirmed, 3);
    EXPECT_TRUE(j.failed());
    // A re-run in which everything is fine clears every measured failure, and only those.
    RunResults fine = run({{"g/a", 100}, {"g/b", 100}, {"g/c", 100}, {"h/off", 100}, {"h/co", 100}});
    compute_ratios(fine, t);
    confirm(j, judge(fine, base, t), ConfirmRound::first);
    EXPECT_EQ(j.regressions, 1);  // g/a's memory
    EXPECT_TRUE(j.failed());
    // A limit row whose re-run straddles the limit did not fail again: not confirmed, and said so.
    RunResults straddling = run({{"h/off", 103}, {"h/co", 100}});
    compute_ratios(straddling, t);
    straddling.ratio_intervals["h: off / co"] = {1.01, 1.04};
    Judgement limit = judge(cur, base, t);
    confirm(limit, judge(straddling, base, t), ConfirmRound::first);
    EXPECT_EQ(row(limit, "h: off / co", "ratio").verdict, RowVerdict::unconfirmed);
    EXPECT_NE(row(limit, "h: off / co", "ratio").note.find("unresolved"), std::string::npos) << row(limit, "h: off / co", "ratio").note;
    // A passed row is never re-judged, even if the re-run is worse.
    Judgement passed = judge(base, base, t);
    confirm(passed, judge(cur, base, t), ConfirmRound::first);
    EXPECT_FALSE(passed.failed());
}

// A whole process slower than the baseline's, peers and pool alike (a quick
// gate of unchanged code on 2026-12-03: arrays glibc 1.43x, tcmalloc 2.11x,
// pool off 1.89x), is the machine: a pool row within twice the peers' median
// move is unresolved, one beyond it still regresses, and peers that did not
// move (or too few of them, or another machine) excuse nothing.
TEST(Judge, ATimeRegressionWithinTheMachinesMoveIsUnresolved) {
    Tolerances t;
    t.time = 0.2;
    t.reported_only = {"glibc", "mimalloc", "tcmalloc", "alloc/unsteady", "probability"};
    t.machine_controls = {"glibc", "mimalloc", "tcmalloc"};  // probability: reported only, but this project's code
    const RunResults base = run({{"alloc/a/off", 100}, {"alloc/a/co", 100}, {"alloc/a/glibc", 100},
                                 {"alloc/a/mimalloc", 100}, {"alloc/a/tcmalloc", 100}, {"alloc/b/off", 100},
                                 {"alloc/unsteady/glibc", 100}, {"kernel/k/frame", 100}});
    RunResults cur = run({{"alloc/a/off", 189}, {"alloc/a/co", 300}, {"alloc/a/glibc", 143},
                          {"alloc/a/mimalloc", 81}, {"alloc/a/tcmalloc", 211}, {"alloc/b/off", 150},
                          {"alloc/unsteady/glibc", 900}, {"kernel/k/frame", 150}});
    const Judgement j = judge(cur, base, t);
    EXPECT_EQ(row(j, "alloc/a/off", "time").verdict, RowVerdict::unresolved);
    EXPECT_NE(row(j, "alloc/a/off", "time").note.find("3 peer rows) read a median 1.430 x their baselines"),
              std::string::npos)
        << row(j, "alloc/a/off", "time").note;
    EXPECT_EQ(row(j, "alloc/b/off", "time").verdict, RowVerdict::unresolved);  // the family's move, any workload
    EXPECT_EQ(row(j, "alloc/a/co", "time").verdict, RowVerdict::regression);   // 3.0 > 2 x 1.43
    EXPECT_EQ(row(j, "kernel/k/frame", "time").verdict, RowVerdict::regression);  // another family: no peers
    EXPECT_EQ(j.unresolved, 2);
    EXPECT_TRUE(j.failed());
    // Peers within 10% of their baselines: the machine did not move, the pool regressed.
    RunResults calm = cur;
    for (const char* peer : {"alloc/a/glibc", "alloc/a/mimalloc", "alloc/a/tcmalloc"}) calm.benchmarks[peer].min_ns = 110;
    EXPECT_EQ(row(judge(calm, base, t), "alloc/a/off", "time").verdict, RowVerdict::regression);
    // Two peers moved are too few to call it the machine (a reported-only group's rows and a
    // reported-only variant that is not a control do not count).
    RunResults few = cur, few_base = base;
    few.benchmarks.erase("alloc/a/mimalloc");
    few.benchmarks["alloc/a/probability"].min_ns = 200;
    few_base.benchmarks["alloc/a/probability"].min_ns = 100;
    EXPECT_EQ(row(judge(few, few_base, t), "alloc/a/off", "time").verdict, RowVerdict::regression);
    // Three rows of one allocator are one allocator's move, not the machine's.
    RunResults one = few, one_base = few_base;
    one.benchmarks.erase("alloc/a/tcmalloc");
    for (const char* w : {"alloc/c/glibc", "alloc/d/glibc"}) one.benchmarks[w].min_ns = 150, one_base.benchmarks[w].min_ns = 100;
    EXPECT_EQ(row(judge(one, one_base, t), "alloc/a/off", "time").verdict, RowVerdict::regression);
    // Another machine's times are not judged at all, so nothing is excused either.
    const RunResults elsewhere = run({{"alloc/a/off", 100}}, {}, {"other", "avx2", 2});
    EXPECT_EQ(row(judge(cur, elsewhere, t), "alloc/a/off", "time").verdict, RowVerdict::not_judged);
}

// A time the machine's move excused in the run is judged by its re-run, as a
// failure is: slow there too (where the peers did not move), a regression;
// at its usual speed there, unconfirmed; excused there again, or not re-run,
// unresolved still.
TEST(Judge, ATimeTheMachinesMoveExcusedIsJudgedByItsReRun) {
    Tolerances t;
    t.time = 0.2;
    t.reported_only = {"glibc", "mimalloc", "tcmalloc"};
    t.machine_controls = {"glibc", "mimalloc", "tcmalloc"};
    const auto with_peers = [](std::map<std::string, double> rows, double peer_ns) {
        for (const char* peer : {"alloc/a/glibc", "alloc/a/mimalloc", "alloc/a/tcmalloc"}) rows[peer] = peer_ns;
        return run(rows);
    };
    const RunResults base = with_peers({{"alloc/a/off", 100}, {"alloc/b/off", 100}, {"alloc/c/off", 100}}, 100);
    const RunResults moved = with_peers({{"alloc/a/off", 150}, {"alloc/b/off", 150}, {"alloc/c/off", 150}}, 140);
    const Judgement excused = judge(moved, base, t);
    ASSERT_EQ(excused.unresolved, 3);
    ASSERT_FALSE(excused.failed());
    // The re-run, with the peers still: a slow again, b at its usual speed, c not re-run.
    Judgement j = excused;
    confirm(j, judge(with_peers({{"alloc/a/off", 149}, {"alloc/b/off", 101}}, 100), base, t), ConfirmRound::first);
    EXPECT_EQ(row(j, "alloc/a/off", "time").verdict, RowVerdict::regression);
    EXPECT_NE(row(j, "alloc/a/off", "time").note.find("1.500 x the baseline in the run (excused there: the machine "
                                                       "moved"),
              std::string::npos)
        << row(j, "alloc/a/off", "time").note;
    EXPECT_NE(row(j, "alloc/a/off", "time").note.find("1.490 x the baseline in a re-run, where the machine did not"),
              std::string::npos);
    EXPECT_EQ(row(j, "alloc/b/off", "time").verdict, RowVerdict::unconfirmed);
    EXPECT_NE(row(j, "alloc/b/off", "time").note.find("1.010 x the baseline in a re-run, invariant: not the build's"),
              std::string::npos)
        << row(j, "alloc/b/off", "time").note;
    EXPECT_EQ(row(j, "alloc/c/off", "time").verdict, RowVerdict::unresolved);
    EXPECT_NE(row(j, "alloc/c/off", "time").note.find("not re-run"), std::string::npos);
    EXPECT_EQ(j.regressions, 1);
    EXPECT_EQ(j.unconfirmed, 1);
    EXPECT_EQ(j.unresolved, 1);
    EXPECT_TRUE(j.failed());
    // The next round must show the regression again, as any failure: here it does not.
    confirm(j, judge(with_peers({{"alloc/a/off", 101}}, 100), base, t), ConfirmRound::last);
    EXPECT_EQ(row(j, "alloc/a/off", "time").verdict, RowVerdict::unconfirmed);
    EXPECT_FALSE(j.failed());
    // A re-run that leaves the row unresolved, and says why.
    const auto expect_still_unresolved = [&](const RunResults& rerun, ConfirmRound round, const std::string& why) {
        Judgement still = excused;
        confirm(still, judge(rerun, base, t), round);
        const Row& r = row(still, "alloc/a/off", "time");
        EXPECT_EQ(r.verdict, RowVerdict::unresolved) << why;
        EXPECT_NE(r.note.find(why), std::string::npos) << r.note;
        EXPECT_FALSE(still.failed()) << why;
    };
    // The machine moved again.
    expect_still_unresolved(with_peers({{"alloc/a/off", 160}}, 150), ConfirmRound::first,
                            "unresolved again in a re-run: 1.600 x the baseline");
    // Failing in the last round's re-run: no round after it to show it again.
    expect_still_unresolved(with_peers({{"alloc/a/off", 149}}, 100), ConfirmRound::last,
                            "1.490 x the baseline in the last re-run, with no round after");
    // Failing in a re-run with too few peers to measure the machine by (one
    // could not load there): its judgement could excuse nothing.
    expect_still_unresolved(run({{"alloc/a/off", 149}, {"alloc/a/glibc", 100}, {"alloc/a/mimalloc", 100}}),
                            ConfirmRound::first, "in a re-run with too few peers to measure the machine by (3 needed)");
}

// What ci/gate.sh re-runs (scripts/failed_groups.py, reading the judge's
// report.json) is what confirm() judges again by a re-run: were the script to
// drift from the judge, a failure would stand "not re-run", or an excused time
// stay unresolved unexamined, with no error. Every kind and verdict, one
// workload each.
TEST(Judge, FailedGroupsReRunsWhatConfirmJudgesAgain) {
    const RowVerdict verdicts[] = {RowVerdict::regression,  RowVerdict::improvement, RowVerdict::invariant,
                                   RowVerdict::not_judged,  RowVerdict::added,       RowVerdict::missing,
                                   RowVerdict::invalid,     RowVerdict::over_limit,  RowVerdict::unresolved,
                                   RowVerdict::unconfirmed};
    Judgement j;
    std::set<std::string> expected;  // the script's lines: "alloc W" per workload, "kernel FAMILY ISA"
    for (const std::string family : {"alloc", "kernel"})
        for (const std::string kind : {"time", "memory", "ratio", "instructions", "footprint"})
            for (const RowVerdict verdict : verdicts) {
                const std::string n = std::to_string(j.rows.size());
                // A kernel group is kernel/FAMILY/ALG/ISA/PROBLEM, an allocator's alloc/WORKLOAD.
                const std::string group = family == "alloc" ? "alloc/w" + n : "kernel/f" + n + "/alg/isa" + n + "/64";
                Row r;
                r.kind = kind;
                r.id = kind == "ratio" || kind == "instructions" ? group + ": a / b" : group + "/off";
                r.verdict = verdict;
                if (judged_again_by_a_rerun(r)) expected.insert(family == "alloc" ? "alloc w" + n : "kernel f" + n + " isa" + n);
                j.rows.push_back(r);
            }
    ASSERT_FALSE(expected.empty());
    const Report report{{"abc", "", "today", {}, ""}, {{run({}), std::nullopt, "none.json", j, ""}}, {}};
    const std::string path = write_temp("every_verdict.json", render_json(report).dump());
    FILE* pipe = popen(("python3 " BENCHFP_SOURCE_DIR "/scripts/failed_groups.py " + path + " 2>&1").c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string output;
    for (int c; (c = std::fgetc(pipe)) != EOF;) output += static_cast<char>(c);
    ASSERT_EQ(pclose(pipe), 0) << output;
    std::set<std::string> rerun;
    std::istringstream lines(output);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("alloc ", 0) != 0) {
            rerun.insert(line);
            continue;
        }
        std::istringstream workloads(line.substr(6));
        for (std::string w; std::getline(workloads, w, '|');) rerun.insert("alloc " + w);
    }
    EXPECT_EQ(rerun, expected) << output;
}

// Issue 14: the pool's resident bytes per live object over mimalloc's, both
// from the same run, against the rule's limit: within passes, over fails, and
// a figure the limit needs that the run lacks fails as missing. Times play no part.
TEST(Judge, FootprintRuleJudgesResidentBytesPerLiveObjectInOneRun) {
    Tolerances t;
    RatioRule rule{"pool / mimalloc, bytes per live object", "off", "mimalloc", 1.1, {"alloc/w"}};
    rule.metric = RatioMetric::resident_bytes_per_live_object;
    t.ratio_rules = {rule};
    const std::string id = "alloc/w: pool / mimalloc, bytes per live object";
    const auto with_figures = [&](double pool, double mimalloc) {
        RunResults r = run({{"alloc/w/off", 100}, {"alloc/w/mimalloc", 50}});  // the pool 2x slower: not this rule's
        r.benchmarks["alloc/w/off"].resident_bytes_per_live_object = pool;
        r.benchmarks["alloc/w/mimalloc"].resident_bytes_per_live_object = mimalloc;
        compute_ratios(r, t);
        return r;
    };
    const RunResults within = with_figures(20, 19);
    ASSERT_DOUBLE_EQ(within.ratios.at(id), 20.0 / 19.0);
    const Judgement pass = judge_limits_only(within, t);
    EXPECT_EQ(row(pass, id, "ratio").verdict, RowVerdict::invariant);
    EXPECT_EQ(row(pass, id, "ratio").unit, "ratio (resident bytes per live object over the same, in one run)");
    EXPECT_EQ(row(pass, "alloc/w/off", "footprint").current, 20);
    EXPECT_EQ(row(pass, "alloc/w/off", "footprint").verdict, RowVerdict::not_judged);
    EXPECT_FALSE(pass.failed());

    const RunResults over = with_figures(24, 19);
    const Judgement fail = judge_limits_only(over, t);
    EXPECT_EQ(row(fail, id, "ratio").verdict, RowVerdict::over_limit);
    EXPECT_TRUE(fail.failed());
    const Report report{{"abc", "", "today", {}, ""}, {{over, std::nullopt, "none.json", fail, ""}}, {}};
    const std::string md = render_markdown(report);
    EXPECT_NE(md.find("| `alloc/w` | 24.0 | 19.0 | pool / mimalloc, bytes per live object: 1.263 (limit 1.100) :no_entry: |"),
              std::string::npos) << md;
    const std::string html = render_html(report);
    EXPECT_NE(html.find("id='footprint'"), std::string::npos);
    const nlohmann::json json = render_json(report);  // kept: the loop below ranges over a part of it
    for (const auto& r : json["machines"][0]["rows"])
        if (r["kind"] == "ratio") {
            EXPECT_EQ(r["unit"], "ratio (resident bytes per live object over the same, in one run)");
        }

    RunResults unmeasured = run({{"alloc/w/off", 100}, {"alloc/w/mimalloc", 50}});
    unmeasured.benchmarks["alloc/w/off"].resident_bytes_per_live_object = 20;  // mimalloc's figure absent
    compute_ratios(unmeasured, t);
    EXPECT_EQ(unmeasured.ratios.count(id), 0u);
    const Judgement missing = judge_limits_only(unmeasured, t);
    EXPECT_EQ(row(missing, id, "ratio").verdict, RowVerdict::missing);
    EXPECT_TRUE(missing.failed());
}

// Issue 14's peer table in every report: each allocation workload's time for
// the pool's two builds and each peer (the other variants are in-run ratios),
// and the fastest peer over the pool with the hook off; a workload the peers
// did not run gets no best peer, and kernel groups no line.
TEST(Judge, ReportsShowEachAllocatorsTimeAndTheBestPeerOverThePool) {
    const RunResults r = run({{"alloc/w/compiled_out", 90}, {"alloc/w/off", 100}, {"alloc/w/sampled_512k", 104},
                              {"alloc/w/glibc", 300}, {"alloc/w/mimalloc", 120}, {"alloc/w/tcmalloc", 110},
                              {"alloc/v/off", 50}, {"kernel/k/frame", 7}});
    const Judgement j = judge_limits_only(r, Tolerances{});
    const WorkloadTable table = workload_table(j, "time");
    EXPECT_EQ(table.allocators, (std::vector<std::string>{"compiled_out", "off", "glibc", "mimalloc", "tcmalloc"}));
    ASSERT_EQ(table.lines.size(), 2u);
    const std::optional<BestPeer> best = best_peer(table.lines[1]);
    ASSERT_TRUE(best);
    EXPECT_EQ(best->peer, "tcmalloc");
    EXPECT_DOUBLE_EQ(best->over_pool, 1.1);
    EXPECT_FALSE(best_peer(table.lines[0]));  // alloc/v: no peer ran

    const Report report{{"abc", "", "today", {}, ""}, {{r, std::nullopt, "none.json", j, ""}}, {}};
    const std::string md = render_markdown(report);
    EXPECT_NE(md.find("| workload | compiled_out | off | glibc | mimalloc | tcmalloc | best peer / pool |"),
              std::string::npos) << md;
    EXPECT_NE(md.find("| `alloc/w` | 90.0 | 100.0 | 300.0 | 120.0 | 110.0 | 1.100 (tcmalloc) |"), std::string::npos) << md;
    EXPECT_NE(md.find("| `alloc/v` | - | 50.0 | - | - | - | - |"), std::string::npos) << md;
    EXPECT_EQ(md.find("| `kernel/k`"), std::string::npos) << md;
    const std::string html = render_html(report);
    EXPECT_NE(html.find("id='allocation-time'"), std::string::npos);
    EXPECT_NE(html.find("<td>1.100 (tcmalloc)</td>"), std::string::npos) << html;
}

// Issue 14's profiler table in every report: the in-run ratios of the pool's
// own variants per workload, every one (an invariant row too), in the rules'
// order, each against its rule's target where it has one. A target is said,
// never judged: a ratio over its target and within its limit passes, one over
// its limit fails as before. Not the table's: a rule with a peer, a footprint
// rule, a kernel's ratio. A ratio the run lacks is a missing cell, counted
// neither met nor not.
TEST(Judge, ReportsShowTheProfilersRatiosAgainstTheirTargets) {
    Tolerances t;
    t.machine_controls = {"tcmalloc"};
    RatioRule hook{"hook off / compiled out", "off", "compiled_out"};
    hook.target = 1.01;
    RatioRule sampled{"byte-sampled / hook off", "sampled", "off", 1.3, {"alloc/w", "alloc/v"}};
    sampled.target = 1.02;
    RatioRule footprint{"pool / compiled out, bytes", "off", "compiled_out", 1.1};
    footprint.metric = RatioMetric::resident_bytes_per_live_object;
    t.ratio_rules = {hook, sampled, {"hook off / tcmalloc", "off", "tcmalloc"}, footprint,
                     {"frame / clobber", "frame", "clobber"}};
    const auto judged = [&](double sampled_ns) {
        RunResults r = run({{"alloc/w/compiled_out", 100}, {"alloc/w/off", 100.5}, {"alloc/w/sampled", sampled_ns},
                            {"alloc/w/tcmalloc", 90}, {"alloc/v/off", 50}, {"alloc/v/compiled_out", 50},
                            {"kernel/k/frame", 7}, {"kernel/k/clobber", 7}});
        r.benchmarks["alloc/w/off"].resident_bytes_per_live_object = 20;
        r.benchmarks["alloc/w/compiled_out"].resident_bytes_per_live_object = 20;
        compute_ratios(r, t);
        return std::pair{r, judge_limits_only(r, t)};
    };
    const auto [r, j] = judged(103);
    EXPECT_EQ(row(j, "alloc/w: byte-sampled / hook off", "ratio").verdict, RowVerdict::invariant);  // 1.025: within 1.3
    EXPECT_DOUBLE_EQ(row(j, "alloc/w: byte-sampled / hook off", "ratio").target, 1.02);
    EXPECT_DOUBLE_EQ(row(j, "alloc/w: hook off / compiled out", "ratio").target, 1.01);
    EXPECT_EQ(row(j, "alloc/v: byte-sampled / hook off", "ratio").verdict, RowVerdict::missing);  // alloc/v ran no "sampled"
    const RatioTable table = profiler_ratio_table(j);
    EXPECT_EQ(table.rules, (std::vector<std::string>{"hook off / compiled out", "byte-sampled / hook off"}));
    ASSERT_EQ(table.lines.size(), 2u);  // alloc/v, alloc/w; not kernel/k
    EXPECT_EQ(targets_met_text(table), "Targets met in this run: 2 of 3.");  // v's hook, w's hook; not w's sampled

    const Report report{{"abc", "", "today", {}, ""}, {{r, std::nullopt, "none.json", j, ""}}, {}};
    const std::string md = render_markdown(report);
    EXPECT_NE(md.find("Targets met in this run: 2 of 3."), std::string::npos) << md;
    EXPECT_NE(md.find("| workload | hook off / compiled out (target 1.010) | byte-sampled / hook off (target 1.020) |"),
              std::string::npos) << md;
    EXPECT_NE(md.find("| `alloc/w` | 1.005 | 1.025 over target |"), std::string::npos) << md;
    EXPECT_NE(md.find("| `alloc/v` | 1.000 | - :x: |"), std::string::npos) << md;
    const std::string html = render_html(report);
    EXPECT_NE(html.find("id='profiler-cost'"), std::string::npos);
    EXPECT_NE(html.find("<td class='num'>1.025 over target</td>"), std::string::npos) << html;
    EXPECT_NE(html.find("<td class='num fail'>-: missing</td>"), std::string::npos) << html;
    const nlohmann::json json = render_json(report);
    const nlohmann::json& rows = json["machines"][0]["rows"];
    const auto sampled_row = std::find_if(rows.begin(), rows.end(),
                                          [](const nlohmann::json& x) { return x["id"] == "alloc/w: byte-sampled / hook off"; });
    ASSERT_NE(sampled_row, rows.end());
    EXPECT_EQ((*sampled_row)["target"], 1.02);

    const auto [over_r, over] = judged(140);  // 1.393: over its limit
    EXPECT_EQ(row(over, "alloc/w: byte-sampled / hook off", "ratio").verdict, RowVerdict::over_limit);
    const Report failed{{"abc", "", "today", {}, ""}, {{over_r, std::nullopt, "none.json", over, ""}}, {}};
    EXPECT_NE(render_markdown(failed).find("| `alloc/w` | 1.005 | 1.393 over target :no_entry: |"), std::string::npos)
        << render_markdown(failed);
    EXPECT_NE(render_html(failed).find("<td class='num fail'>1.393 over target: over limit</td>"), std::string::npos)
        << render_html(failed);

    // A target the table would not show, or one the limit holds already, is bad input.
    const auto rule_with = [](const char* denominator, double limit, double target) {
        return nlohmann::json{{"schema", "benchfp.tolerances/1"},
                              {"machine_controls", {"tcmalloc"}},
                              {"reported_only", {"tcmalloc"}},
                              {"ratios", {{{"name", "n"}, {"numerator", "a"}, {"denominator", denominator},
                                           {"limit", limit}, {"target", target}}}}};
    };
    EXPECT_DOUBLE_EQ(parse_tolerances(rule_with("b", 1.3, 1.02), "t.json").ratio_rules.at(0).target, 1.02);
    EXPECT_THROW(parse_tolerances(rule_with("b", 0, -1), "t.json"), InputError);
    EXPECT_THROW(parse_tolerances(rule_with("tcmalloc", 0, 1.02), "t.json"), InputError);
    EXPECT_THROW(parse_tolerances(rule_with("b", 1.02, 1.02), "t.json"), InputError);
}

TEST(Judge, FootprintIsReadFromTheSuiteAndTheRuleMetricIsChecked) {
    const std::string path = write_temp("footprint.json",
        "{\"context\": {}, \"benchmarks\": [{\"name\": \"alloc/w/off/manual_time\", \"run_type\": \"iteration\", "
        "\"real_time\": 5, \"time_unit\": \"ns\", \"resident_bytes_per_live_object\": 17.5}, "
        "{\"name\": \"alloc/w/glibc/manual_time\", \"run_type\": \"iteration\", \"real_time\": 5, \"time_unit\": \"ns\"}]}");
    const RunResults r = read_run(path);
    std::filesystem::remove(path);
    EXPECT_DOUBLE_EQ(r.benchmarks.at("alloc/w/off").resident_bytes_per_live_object, 17.5);
    EXPECT_LT(r.benchmarks.at("alloc/w/glibc").resident_bytes_per_live_object, 0);  // not reported
    const auto rules = [](const std::string& metric) {
        return nlohmann::json{{"schema", "benchfp.tolerances/1"},
                              {"ratios", {{{"name", "n"}, {"numerator", "off"}, {"denominator", "mimalloc"},
                                           {"metric", metric}}}}};
    };
    EXPECT_EQ(parse_tolerances(rules("resident_bytes_per_live_object"), "t.json").ratio_rules.at(0).metric,
              RatioMetric::resident_bytes_per_live_object);
    EXPECT_EQ(parse_tolerances(rules("time"), "t.json").ratio_rules.at(0).metric, RatioMetric::time);
    try {
        parse_tolerances(rules("bytes"), "t.json");
        FAIL() << "an unknown metric was accepted";
    } catch (const InputError& e) {
        EXPECT_NE(std::string(e.what()).find("unknown metric"), std::string::npos) << e.what();
    }
}

namespace {

// A results file of `records` unwind records, each with this tally and one folded stack counted `full`.
std::string unwind_records(int records, double full, double judged) {
    nlohmann::json doc = {{"schema", benchfp::report::results_schema}, {"cases", nlohmann::json::array()}};
    for (int i = 0; i < records; ++i)
        doc["cases"].push_back({{"index", i},
                                {"state", "PASSED"},
                                {"spec", {{"mode", "unwind"}, {"isa", "avx2"}, {"kernel", "eltwise"}, {"frame", "frame"}}},
                                {"unwind", {{"tally", {{"full", full}, {"judged", judged}}}, {"folded", {{"main;k", full}}}}}});
    return doc.dump();
}

std::string cases_error(const std::string& text) {
    benchfp::report::CaseSummary summary;
    try {
        benchfp::report::add_cases(summary, write_temp("unwind_cases.json", text));
    } catch (const InputError& e) {
        return e.what();
    }
    return "";
}

}  // namespace

// Unwind tallies: a full chain is one of the judged samples, and counts of many
// records add up within a long (10^4 records of 10^15 printed negative totals).
TEST(Judge, UnwindTalliesAreCountsThatAddUp) {
    EXPECT_EQ(cases_error(unwind_records(3, 634, 634)), "");
    EXPECT_NE(cases_error(unwind_records(1, 1000, 10)).find("tally.full: more full chains than judged samples (10)"),
              std::string::npos);
    EXPECT_NE(cases_error(unwind_records(10000, 1e15, 1e15)).find("adds up past 2^63 - 1"), std::string::npos);
}

namespace {

// A step record of group conv/f32/avx2/p1 (or `problem`) under `frame`.
nlohmann::json step_record(const std::string& frame, nlohmann::json step, const std::string& problem = "p1") {
    return {{"index", 0},
            {"state", "PASSED"},
            {"spec", {{"mode", "step"}, {"kernel", "conv"}, {"alg", "f32"}, {"isa", "avx2"}, {"problem", problem},
                      {"frame", frame}, {"threads", 1}}},
            {"step", step}};
}

nlohmann::json step_counts(double instructions, double nops, double stack) {
    return {{"instructions", instructions}, {"nops", nops}, {"stack_accesses", stack},
            {"budget_spent", false},        {"unstepped_calls", 0}};
}

std::string stepped_error(const nlohmann::json& record) {
    const nlohmann::json doc = {{"schema", benchfp::report::results_schema}, {"cases", {record}}};
    return cases_error(doc.dump());
}

}  // namespace

// Step records give what each policy adds to clobber's call, nops apart, in the
// report's three forms; a call stepped in part (budget spent) and a group
// without clobber give none, and a count that cannot be one is bad input.
TEST(JudgeCases, SteppedCallsGiveWhatEachPolicyAddsToClobbers) {
    nlohmann::json budget = step_counts(500, 0, 0);
    budget["budget_spent"] = true;
    const nlohmann::json doc = {
        {"schema", benchfp::report::results_schema},
        {"cases",
         {step_record("clobber", step_counts(1000, 100, 50)), step_record("frame", step_counts(1130, 228, 60)),
          step_record("preserve", budget), step_record("frame", step_counts(10, 0, 1), "alone"),
          {{"index", 9}, {"state", "SKIPPED"}, {"spec", {{"mode", "step"}, {"isa", "avx2"}, {"frame", "frame"}}}}}}};
    CaseSummary summary;
    add_cases(summary, write_temp("stepped_cases.json", doc.dump()));
    ASSERT_EQ(compared_groups(summary.stepped), std::vector<std::string>{"kernel/conv/f32/avx2/p1"});
    EXPECT_EQ(summary.stepped.at("kernel/conv/f32/avx2/p1").count("preserve"), 0u) << "a call stepped in part";
    const std::string md = render_cases_markdown(summary);
    EXPECT_NE(md.find("| `kernel/conv/f32/avx2/p1` | 900 instructions and 100 nops, 50 on the stack | "
                      "+2 (+0.22%) and nops +128, stack +10 | - |"),
              std::string::npos)
        << md;
    const Report report{{"abc", "", "today", {}, ""}, {}, summary};
    const nlohmann::json stepped = render_json(report)["cases"]["stepped"];
    ASSERT_EQ(stepped.size(), 1u) << stepped;
    EXPECT_EQ(stepped[0]["frame"], (nlohmann::json{{"instructions", 902}, {"nops", 228}, {"stack_accesses", 60}}));
    EXPECT_NE(render_html(report).find("<td>+2 (+0.22%) and nops +128, stack +10</td>"), std::string::npos);
    // Every call stepped whole, compared or not, as two counts the judge holds to the baseline.
    const std::map<std::string, double> counts = stepped_instruction_counts(summary.stepped);
    EXPECT_EQ(counts, (std::map<std::string, double>{
                          {"kernel/conv/f32/avx2/alone/frame: stepped instructions per call, nops apart", 10},
                          {"kernel/conv/f32/avx2/alone/frame: stepped stack accesses per call", 1},
                          {"kernel/conv/f32/avx2/p1/clobber: stepped instructions per call, nops apart", 900},
                          {"kernel/conv/f32/avx2/p1/clobber: stepped stack accesses per call", 50},
                          {"kernel/conv/f32/avx2/p1/frame: stepped instructions per call, nops apart", 902},
                          {"kernel/conv/f32/avx2/p1/frame: stepped stack accesses per call", 60}}));

    EXPECT_NE(stepped_error(step_record("frame", step_counts(10, 11, 0))).find("step.nops: more nops than instructions"),
              std::string::npos);
    EXPECT_NE(stepped_error(step_record("frame", step_counts(10, 0, 2.5))).find("step.stack_accesses: expected a whole number"),
              std::string::npos);
    EXPECT_NE(stepped_error(step_record("omit", step_counts(10, 0, 1))).find("spec.frame: 'omit', expected"),
              std::string::npos);
    // Past what a baseline's instruction counts may hold: refused here, not recorded into a baseline no judge could read.
    EXPECT_NE(stepped_error(step_record("frame", step_counts(2e12, 0, 1))).find("step.instructions"), std::string::npos);
    // A whole call executes its ret (a 0 would be judged 0 / 0, invalid, against an equal baseline).
    EXPECT_NE(stepped_error(step_record("frame", step_counts(10, 10, 1))).find("step.instructions: no instruction but nops"),
              std::string::npos);
    EXPECT_NE(stepped_error(step_record("frame", step_counts(10, 0, 0))).find("step.stack_accesses: 0"), std::string::npos);
    nlohmann::json no_nops = step_counts(10, 0, 1);
    no_nops.erase("nops");
    EXPECT_NE(stepped_error(step_record("frame", no_nops)).find("step: has no \"nops\""), std::string::npos) << stepped_error(step_record("frame", no_nops));
    // One call counted twice: the same counts are one call, other counts are refused, naming both.
    const auto twice = [](const nlohmann::json& second) {
        const nlohmann::json doc = {{"schema", benchfp::report::results_schema},
                                    {"cases", {step_record("frame", step_counts(10, 0, 1)), second}}};
        return cases_error(doc.dump());
    };
    EXPECT_EQ(twice(step_record("frame", step_counts(10, 0, 1))), "");
    EXPECT_NE(twice(step_record("frame", step_counts(11, 0, 1)))
                  .find("kernel/conv/f32/avx2/p1 under frame is counted twice, differently (10 instructions and 0 nops, 1 "
                        "on the stack; then 11 instructions"),
              std::string::npos)
        << twice(step_record("frame", step_counts(11, 0, 1)));
}

// Names from a results file are text, not Markdown: a kernel named with a `|`,
// a backtick and a line break stays in its cell of the unwind table (it ended
// the cell, the code span and the table before), and a failed case's line in its span.
TEST(JudgeCases, NamesFromResultsStayInTheirCells) {
    nlohmann::json doc = nlohmann::json::parse(unwind_records(1, 5, 10));
    doc["cases"][0]["spec"]["kernel"] = "a|b`c\nd";
    doc["cases"].push_back({{"index", 1},
                            {"state", "FAILED"},
                            {"detail", "rbp `clobbered`"},
                            {"repro", "--kernel=x`y|z"},
                            {"spec", {{"mode", "unwind"}, {"isa", "avx2"}, {"kernel", "x`y|z"}, {"frame", "frame"}}}});
    CaseSummary summary;
    add_cases(summary, write_temp("hostile_names.json", doc.dump()));
    const std::string md = render_cases_markdown(summary);
    EXPECT_NE(md.find("| `a\\|b'c d` | avx2 | frame | "), std::string::npos) << md;
    ASSERT_EQ(summary.failed.size(), 1u);
    ASSERT_NE(summary.failed[0].find("x`y"), std::string::npos) << summary.failed[0];
    const size_t list = md.find("### Failed cases");
    ASSERT_NE(list, std::string::npos) << md;
    const std::string item = md.substr(md.find("- `", list));
    EXPECT_EQ(std::count(item.begin(), item.begin() + item.find('\n'), '`'), 2) << item;
    // A list item is no table cell: a `|` in its code span is the name's own (`\|` would show as written).
    EXPECT_NE(item.find("x'y|z"), std::string::npos) << item;
}
