// benchfp judge end to end on hostile and real inputs: bad files of every kind
// are exit 2 naming the field; results of several machines, each judged
// against its own baseline; stored files found from any working directory.
#include "cli_run.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <ostream>
#include <string>

// Hostile input to benchfp judge: every bad file is exit 2 with a message that
// names the file's field (or says what is wrong with the path), never a signal,
// never a verdict. Each row spoils one of four valid files.
namespace {

struct JudgeFiles {
    std::filesystem::path dir;
    nlohmann::json current, baseline, tolerances, instructions;
};

JudgeFiles valid_judge_files(const std::string& name) {
    JudgeFiles f;
    f.dir = benchfp::test::scratch_path("benchfp_cli_", "hostile_" + name);
    std::filesystem::create_directories(f.dir);
    f.current = {{"context", {{"benchfp_cpu", "Test CPU"}, {"benchfp_isa", "avx2"}, {"benchfp_cores", "2"}}},
                 {"benchmarks",
                  {{{"name", "alloc/w/off"}, {"run_type", "iteration"}, {"real_time", 10.0}, {"time_unit", "ns"}},
                   {{"name", "alloc/w/compiled_out"}, {"run_type", "iteration"}, {"real_time", 10.0}, {"time_unit", "ns"}}}}};
    f.baseline = {{"schema", "benchfp.baseline/1"},
                  {"fingerprint", {{"cpu", "Test CPU"}, {"isa", "avx2"}, {"cores", 2}}},
                  {"date", "d"},
                  {"commit", "c"},
                  {"benchmarks", {{"alloc/w/off", {{"min_ns", 10.0}, {"bytes_per_iteration", 8.0}, {"repetitions", 5}}}}},
                  {"ratios", nlohmann::json::object()},
                  {"instructions", nlohmann::json::object()}};
    f.tolerances = {{"schema", "benchfp.tolerances/1"},
                    {"time", 0.05},
                    {"groups", {{"alloc/w", {{"time", 0.1}}}}},
                    {"reported_only", {"glibc"}},
                    {"ratios", {{{"name", "off / co"}, {"numerator", "off"}, {"denominator", "compiled_out"}, {"limit", 1.5}}}},
                    {"instruction_limits", {{"hook", 2.0}}}};
    f.instructions = {{"hook", 2.0}};
    return f;
}

std::string judge_args(const JudgeFiles& f) {
    for (const auto& [file, doc] : {std::pair{"current.json", &f.current}, {"baseline.json", &f.baseline},
                                    {"tolerances.json", &f.tolerances}, {"instructions.json", &f.instructions}})
        std::ofstream(f.dir / file) << doc->dump();
    const std::string d = f.dir.string() + "/";
    return "judge --current=" + d + "current.json --baseline=" + d + "baseline.json --tolerances=" + d +
           "tolerances.json --instructions=" + d + "instructions.json --report=" + d + "report";
}

// `args` with the value of one option replaced (an option given twice is a usage error of its own).
std::string with(std::string args, const std::string& option, const std::string& value) {
    const size_t start = args.find(option + "="), end = args.find(' ', start);
    return args.replace(start, end == std::string::npos ? std::string::npos : end - start, option + "=" + value);
}

struct HostileCase {
    const char* name;
    void (*spoil)(JudgeFiles&);
    const char* token;  // the message names this
};
void PrintTo(const HostileCase& c, std::ostream* os) { *os << c.name; }

const HostileCase hostile_cases[] = {
    {"BaselineDateNotAString", [](JudgeFiles& f) { f.baseline["date"] = 5; }, "baseline.json: date: expected a string"},
    {"BaselineCommitNotAString", [](JudgeFiles& f) { f.baseline["commit"] = {1}; }, "commit: expected a string"},
    {"BaselineBytesNotANumber", [](JudgeFiles& f) { f.baseline["benchmarks"]["alloc/w/off"]["bytes_per_iteration"] = "8"; },
     "alloc/w/off.bytes_per_iteration: expected a number"},
    {"BaselineRepetitionsNotANumber", [](JudgeFiles& f) { f.baseline["benchmarks"]["alloc/w/off"]["repetitions"] = true; },
     "alloc/w/off.repetitions: expected a number"},
    {"BaselineMinNsMasksEveryRegression", [](JudgeFiles& f) { f.baseline["benchmarks"]["alloc/w/off"]["min_ns"] = 1e308; },
     "alloc/w/off.min_ns: expected a number from"},
    {"BaselineMinNsDenormal", [](JudgeFiles& f) { f.baseline["benchmarks"]["alloc/w/off"]["min_ns"] = 4e-320; },
     "alloc/w/off.min_ns: expected a number from"},
    {"BaselineBenchmarksAList", [](JudgeFiles& f) { f.baseline["benchmarks"] = {1, 2}; }, "benchmarks: expected an object"},
    {"BaselineFingerprintAList", [](JudgeFiles& f) { f.baseline["fingerprint"] = {1, 2}; }, "fingerprint: expected an object"},
    {"BaselineRatioNotANumber", [](JudgeFiles& f) { f.baseline["ratios"]["x"] = "1"; }, "ratios.x: expected a number"},
    {"CurrentContextNotAnObject", [](JudgeFiles& f) { f.current["context"] = "x"; }, "context: expected an object"},
    {"CurrentRunTypeNotAString", [](JudgeFiles& f) { f.current["benchmarks"][0]["run_type"] = 3; }, "benchmarks[0].run_type: expected a string"},
    {"CurrentErrorOccurredNotABool", [](JudgeFiles& f) { f.current["benchmarks"][0]["error_occurred"] = "no"; },
     "benchmarks[0].error_occurred: expected true or false"},
    {"CurrentEntryNotAnObject", [](JudgeFiles& f) { f.current["benchmarks"].push_back(7); }, "benchmarks[2]: expected an object"},
    {"CurrentUnknownTimeUnit", [](JudgeFiles& f) { f.current["benchmarks"][0]["time_unit"] = "fortnights"; },
     "benchmarks[0].time_unit: unknown time unit"},
    {"CurrentNegativeTime", [](JudgeFiles& f) { f.current["benchmarks"][0]["real_time"] = -1; }, "benchmarks[0].real_time: expected"},
    {"CurrentCoresNotACount", [](JudgeFiles& f) { f.current["context"]["benchfp_cores"] = "two"; }, "context.benchfp_cores: expected a core count"},
    {"TolerancesTimeNotANumber", [](JudgeFiles& f) { f.tolerances["time"] = "5%"; }, "tolerances.json: time: expected a number"},
    {"TolerancesNegative", [](JudgeFiles& f) { f.tolerances["time"] = -0.5; }, "tolerances.json: time: expected a number from 0"},
    {"TolerancesGroupTimeNotANumber", [](JudgeFiles& f) { f.tolerances["groups"]["alloc/w"]["time"] = "x"; },
     "groups.alloc/w.time: expected a number"},
    {"TolerancesGroupsAList", [](JudgeFiles& f) { f.tolerances["groups"] = {1}; }, "groups: expected an object"},
    {"TolerancesMisspelledGroupKey", [](JudgeFiles& f) { f.tolerances["groups"]["alloc/w"] = {{"tme", 0.1}}; },
     "unknown key \"tme\""},
    {"TolerancesMisspelledKey", [](JudgeFiles& f) { f.tolerances["tim"] = 0.1; }, "unknown key \"tim\""},
    {"TolerancesMisspelledRuleKey", [](JudgeFiles& f) { f.tolerances["ratios"][0]["limt"] = 1.5; }, "unknown key \"limt\""},
    {"TolerancesReportedOnlyNotAList", [](JudgeFiles& f) { f.tolerances["reported_only"] = "glibc"; }, "reported_only: expected a list"},
    {"TolerancesMachineControlsNotStrings", [](JudgeFiles& f) { f.tolerances["machine_controls"] = {"glibc", 3}; }, "machine_controls"},
    {"TolerancesMachineControlJudged", [](JudgeFiles& f) { f.tolerances["machine_controls"] = {"glibc", "mimalloc"}; },
     "machine_controls[1]: \"mimalloc\" is not in reported_only"},
    {"TolerancesInstructionLimitsAList", [](JudgeFiles& f) { f.tolerances["instruction_limits"] = {2}; },
     "instruction_limits: expected an object"},
    {"TolerancesRatioLimitNotANumber", [](JudgeFiles& f) { f.tolerances["ratios"][0]["limit"] = "1.5"; }, "ratios[0].limit: expected a number"},
    // A rule that names no variant, or a variant over itself, would judge nothing and pass.
    {"TolerancesRatioEmptyNumerator", [](JudgeFiles& f) { f.tolerances["ratios"][0]["numerator"] = ""; }, "ratios[0].numerator: empty"},
    {"TolerancesRatioOfAVariantToItself",
     [](JudgeFiles& f) { f.tolerances["ratios"][0]["denominator"] = f.tolerances["ratios"][0]["numerator"]; },
     "ratios[0].denominator: the numerator's variant"},
    {"InstructionCountNotANumber", [](JudgeFiles& f) { f.instructions["hook"] = "two"; }, "instructions.json: hook: expected a number"},
    {"InstructionsAList", [](JudgeFiles& f) { f.instructions = {1, 2}; }, "instructions.json: expected an object"},
};

}  // namespace

class CliJudgeHostile : public testing::TestWithParam<HostileCase> {};

TEST_P(CliJudgeHostile, IsBadInputNamingTheField) {
    JudgeFiles files = valid_judge_files(GetParam().name);
    // The unspoiled files pass (exit 0): the spoiled field is what fails.
    const CommandRun good = run_benchfp(judge_args(files));
    ASSERT_EQ(good.status, 0) << good.output;
    GetParam().spoil(files);
    expect_usage_error(judge_args(files), GetParam().token);
    std::filesystem::remove_all(files.dir);
}

INSTANTIATE_TEST_SUITE_P(EveryField, CliJudgeHostile, testing::ValuesIn(hostile_cases),
                         [](const auto& info) { return std::string(info.param.name); });

// Paths rather than contents: a directory, a number JSON cannot hold, a
// missing file said to be missing, a report directory that cannot be made, a
// baseline recorded under a bare file name.
TEST(CliJudge, BadPathsAreBadInputNeverASignal) {
    JudgeFiles files = valid_judge_files("paths");
    const std::string args = judge_args(files), d = files.dir.string() + "/";
    expect_usage_error(with(args, "--current", d), "is a directory");
    expect_usage_error(with(args, "--tolerances", d), "is a directory");
    std::ofstream(files.dir / "huge.json") << "{\"hook\": 1e400}";
    expect_usage_error(with(args, "--instructions", d + "huge.json"), "huge.json");
    expect_usage_error(with(args, "--instructions", d + "absent.json"), "absent.json: cannot open instruction counts: no such file");
    expect_usage_error(with(args, "--report", "/dev/null"), "/dev/null: cannot create report directory");
    // A FIFO nobody opens for writing is refused after 10 s, not waited on forever; one whose
    // writer comes after the reader, or a pipe with a writer, is read; a device that never ends
    // (or a terminal) is refused.
    const std::string fifo = d + "fifo.json";
    ASSERT_EQ(run_shell("mkfifo " + fifo).status, 0);
    expect_usage_error(with(args, "--current", fifo), "fifo.json: results is a FIFO that no process opened for writing within 10 s");
    // Each writer under `timeout`, its output elsewhere: a judge that refused it early would
    // leave it blocked in open(), holding this test's pipe.
    const auto judge_beside = [&](const std::string& writer) {  // writer: a shell command writing to the FIFO
        return run_shell("(timeout 30 sh -c '" + writer + "' > /dev/null 2>&1) & " + std::string(BENCHFP_BIN) + " " +
                         with(args, "--current", fifo));
    };
    const CommandRun late_writer = judge_beside("sleep 1; cat " + d + "current.json > " + fifo);
    EXPECT_EQ(late_writer.status, 0) << late_writer.output;
    // A writer that opens it at once and writes after a long while (longer than the wait for a writer).
    const CommandRun slow_writer = judge_beside("(sleep 11; cat " + d + "current.json) > " + fifo);
    EXPECT_EQ(slow_writer.status, 0) << slow_writer.output;
    const CommandRun empty_writer = judge_beside("sleep 1; : > " + fifo);
    EXPECT_EQ(empty_writer.status, 2) << empty_writer.output;
    EXPECT_NE(empty_writer.output.find("is a FIFO or pipe that ended with nothing written to it"), std::string::npos)
        << empty_writer.output;
    expect_usage_error(with(args, "--current", "/dev/zero"), "/dev/zero: cannot open results: not a regular file or a pipe");
    const CommandRun piped = run_shell("bash -c '" + std::string(BENCHFP_BIN) + " " +
                                       with(args, "--current", "<(cat " + d + "current.json)") + "'");
    EXPECT_EQ(piped.status, 0) << piped.output;
    const CommandRun bare = run_shell("cd " + files.dir.string() + " && " + BENCHFP_BIN + " judge --current=current.json "
                                      "--update-baseline --baseline=bare.json --tolerances=tolerances.json");
    EXPECT_EQ(bare.status, 0) << bare.output;
    EXPECT_TRUE(std::filesystem::exists(files.dir / "bare.json"));
    std::filesystem::remove_all(files.dir);
}

// Results of two machines at once: each recorded into its own baseline folder,
// then each judged against its own; a third, plain Google Benchmark file
// (unknown CPU) has no baseline and is judged on the absolute limits only.
TEST(CliJudge, EachMachineAgainstItsOwnBaseline) {
    JudgeFiles a = valid_judge_files("machine_a"), b = valid_judge_files("machine_b");
    b.current["context"] = {{"benchfp_cpu", "Other CPU"}, {"benchfp_isa", "avx512"}, {"benchfp_cores", "8"}};
    judge_args(a);
    judge_args(b);
    const std::string baselines = (a.dir / "baselines").string(), tolerances = (a.dir / "tolerances.json").string();
    const std::string both = " --current=" + (a.dir / "current.json").string() + " --current=" + (b.dir / "current.json").string();
    const CommandRun record = run_benchfp("judge --update-baseline --baselines=" + baselines + " --tolerances=" + tolerances + both);
    ASSERT_EQ(record.status, 0) << record.output;
    EXPECT_TRUE(std::filesystem::exists(a.dir / "baselines/test-cpu-avx2-2cores/alloc.json")) << record.output;
    EXPECT_TRUE(std::filesystem::exists(a.dir / "baselines/other-cpu-avx512-8cores/alloc.json"));
    // Machine B got slower; A did not.
    b.current["benchmarks"][0]["real_time"] = 20.0;
    judge_args(b);
    nlohmann::json plain = a.current;
    plain["context"] = {{"host_name", "elsewhere"}, {"num_cpus", 2}};
    std::ofstream(a.dir / "plain.json") << plain.dump();
    const std::string report = (a.dir / "report").string();
    const CommandRun run = run_benchfp("judge --baselines=" + baselines + " --tolerances=" + tolerances + both +
                                       " --current=" + (a.dir / "plain.json").string() + " --report=" + report);
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_NE(run.output.find("### Machine: Test CPU, avx2, 2 cores"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("### Machine: Other CPU, avx512, 8 cores"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("no baseline for this machine (unknown, unknown, 2 cores, host elsewhere"), std::string::npos)
        << run.output;
    const auto json = nlohmann::json::parse(std::ifstream(a.dir / "report/report.json"));
    ASSERT_EQ(json["machines"].size(), 3u);
    EXPECT_EQ(json["machines"][0]["failed"], false);
    EXPECT_EQ(json["machines"][1]["failed"], true);
    EXPECT_EQ(json["machines"][2]["failed"], false);
    EXPECT_TRUE(json["build"].contains("version"));
    const auto stored = nlohmann::json::parse(std::ifstream(a.dir / "baselines/test-cpu-avx2-2cores/alloc.json"));
    EXPECT_TRUE(stored["build"].contains("compiler"));
    std::filesystem::remove_all(a.dir);
    std::filesystem::remove_all(b.dir);
}

// --confirm: a time that regressed is re-judged on the re-run's file; the
// judgement fails only when the re-run shows the regression too, and the report
// names what was not confirmed.
TEST(CliJudge, AFailureMustReproduceInTheConfirmRun) {
    JudgeFiles f = valid_judge_files("confirm");
    f.current["benchmarks"][0]["real_time"] = 20.0;  // alloc/w/off: 2x its baseline
    const std::string args = judge_args(f), d = f.dir.string() + "/";
    ASSERT_EQ(run_benchfp(args).status, 1);
    nlohmann::json rerun = f.current;
    rerun["benchmarks"][0]["real_time"] = 10.2;
    std::ofstream(f.dir / "usual.json") << rerun.dump();
    const CommandRun unconfirmed = run_benchfp(args + " --confirm=" + d + "usual.json");
    EXPECT_EQ(unconfirmed.status, 0) << unconfirmed.output;
    EXPECT_NE(unconfirmed.output.find("2 not confirmed by a re-run (alloc/w/off, alloc/w: off / co)"), std::string::npos) << unconfirmed.output;
    EXPECT_NE(unconfirmed.output.find(":warning: not confirmed: 2.000 x the baseline in the run, 1.020 x the baseline"),
              std::string::npos)
        << unconfirmed.output;
    rerun["benchmarks"][0]["real_time"] = 19.0;
    std::ofstream(f.dir / "slow.json") << rerun.dump();
    const CommandRun confirmed = run_benchfp(args + " --confirm=" + d + "slow.json");
    EXPECT_EQ(confirmed.status, 1) << confirmed.output;
    EXPECT_NE(confirmed.output.find("confirmed by a re-run: 1.900 x the baseline"), std::string::npos) << confirmed.output;
    EXPECT_NE(confirmed.output.find("*Failures re-run in:* " + d + "slow.json"), std::string::npos) << confirmed.output;
    const auto json = nlohmann::json::parse(std::ifstream(f.dir / "report/report.json"));
    EXPECT_EQ(json["machines"][0]["rerun"], d + "slow.json");
    for (const auto& row : json["machines"][0]["rows"])
        if (row["id"] == "alloc/w/off") {
            EXPECT_EQ(row["group"], "alloc/w");
        }
    // A second round (--confirm-again): the failure must show there too.
    std::filesystem::copy_file(f.dir / "slow.json", f.dir / "slow_again.json");  // a re-run of its own: one file is refused twice
    const CommandRun twice = run_benchfp(args + " --confirm=" + d + "slow.json --confirm-again=" + d + "slow_again.json");
    EXPECT_EQ(twice.status, 1) << twice.output;
    const CommandRun not_again = run_benchfp(args + " --confirm=" + d + "slow.json --confirm-again=" + d + "usual.json");
    EXPECT_EQ(not_again.status, 0) << not_again.output;
    EXPECT_NE(not_again.output.find("*Failures re-run in:* " + d + "slow.json; then " + d + "usual.json"),
              std::string::npos)
        << not_again.output;
    expect_usage_error(args + " --confirm-again=" + d + "slow.json", "it needs --confirm");
    expect_usage_error(args + " --confirm=" + d + "absent.json", "absent.json");
    // A re-run of a machine nothing here ran on would confirm nothing: bad input, not a silent pass or fail.
    rerun["context"]["benchfp_cpu"] = "Another CPU";
    std::ofstream(f.dir / "elsewhere.json") << rerun.dump();
    expect_usage_error(args + " --confirm=" + d + "elsewhere.json", "a machine no --current file ran on");
    expect_usage_error("judge --current=" + d + "current.json --baseline=" + d + "baseline.json --update-baseline --confirm=" +
                           d + "slow.json",
                       "--confirm excludes --update-baseline");
    std::filesystem::remove_all(f.dir);
}

// A time the machine's move excused (its peers 1.4x their baselines, the row
// 1.5x) is judged by its re-run, and the round decides what a failure there
// is: in --confirm's re-run a regression (--confirm-again must show it again),
// in --confirm-again's, with no round after it, unresolved still.
TEST(CliJudge, AnExcusedTimeFailsOnlyWhereARoundAfterItCouldShowItAgain) {
    JudgeFiles f = valid_judge_files("excused");
    const char* peers[] = {"glibc", "mimalloc", "tcmalloc"};
    f.tolerances["reported_only"] = {"glibc", "mimalloc", "tcmalloc"};
    f.tolerances["machine_controls"] = {"glibc", "mimalloc", "tcmalloc"};
    f.tolerances["groups"]["alloc/w"]["time"] = 0.2;
    const auto with_times = [&](double off, double peer) {
        nlohmann::json run = f.current;
        run["benchmarks"][0]["real_time"] = off;  // alloc/w/off
        run["benchmarks"][1]["real_time"] = off;  // alloc/w/compiled_out: the ratio rule off / co stays 1
        for (const char* peer_name : peers)
            run["benchmarks"].push_back({{"name", std::string("alloc/w/") + peer_name},
                                         {"run_type", "iteration"},
                                         {"real_time", peer},
                                         {"time_unit", "ns"}});
        return run;
    };
    for (const char* peer_name : peers)
        f.baseline["benchmarks"][std::string("alloc/w/") + peer_name] = {
            {"min_ns", 10.0}, {"bytes_per_iteration", 8.0}, {"repetitions", 5}};
    f.current = with_times(15.0, 14.0);
    const std::string args = judge_args(f), d = f.dir.string() + "/";
    const CommandRun excused = run_benchfp(args);
    EXPECT_EQ(excused.status, 0) << excused.output;
    EXPECT_NE(excused.output.find("the machine moved"), std::string::npos) << excused.output;
    std::ofstream(f.dir / "moved.json") << with_times(15.0, 14.0).dump();
    std::ofstream(f.dir / "slow.json") << with_times(15.0, 10.0).dump();
    const CommandRun first = run_benchfp(args + " --confirm=" + d + "slow.json");
    EXPECT_EQ(first.status, 1) << first.output;
    EXPECT_NE(first.output.find("where the machine did not excuse it: a regression"), std::string::npos) << first.output;
    const CommandRun last = run_benchfp(args + " --confirm=" + d + "moved.json --confirm-again=" + d + "slow.json");
    EXPECT_EQ(last.status, 0) << last.output;
    EXPECT_NE(last.output.find("in the last re-run, with no round after it to show it again"), std::string::npos)
        << last.output;
    std::filesystem::remove_all(f.dir);
}

// From any working directory the stored tolerances and this machine's baseline
// folder are found in the source tree, as batch files are.
TEST(CliJudge, JudgesFromAnyWorkingDirectory) {
    const auto doc = nlohmann::json::parse(
        std::ifstream(std::string(BENCHFP_SOURCE_DIR) + "/" + stored_alloc_baseline));
    nlohmann::json current = {{"context", {{"benchfp_cpu", doc["fingerprint"]["cpu"]},
                                           {"benchfp_isa", doc["fingerprint"]["isa"]},
                                           {"benchfp_cores", std::to_string(doc["fingerprint"]["cores"].get<int>())}}},
                              {"benchmarks", nlohmann::json::array()}};
    for (const auto& [name, b] : doc["benchmarks"].items())
        current["benchmarks"].push_back({{"name", name}, {"real_time", b["min_ns"]}, {"time_unit", "ns"}});
    const std::filesystem::path dir = benchfp::test::scratch_path("benchfp_cli_", "elsewhere");
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "current.json") << current.dump();
    const CommandRun run = run_shell("cd " + dir.string() + " && " + BENCHFP_BIN + " judge --current=current.json");
    EXPECT_NE(run.status, 2) << run.output;
    EXPECT_NE(run.output.find("same as the baseline's: absolute times are judged"), std::string::npos) << run.output;
    EXPECT_TRUE(std::filesystem::exists(dir / "results/report/report.md")) << run.output;
    std::filesystem::remove_all(dir);
}

// A report file that cannot be written fails the run before any is written:
// the directory never holds a new report.md beside an old report.json.
TEST(CliJudge, AReportThatCannotBeWrittenLeavesTheOthersAsTheyWere) {
    const JudgeFiles f = valid_judge_files("report_set");
    const std::string args = judge_args(f);
    std::filesystem::create_directories(f.dir / "report/report.json");  // in the way
    std::ofstream(f.dir / "report/report.md") << "old\n";
    const CommandRun run = run_benchfp(args);
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_NE(run.output.find("report.json': it is a directory"), std::string::npos) << run.output;
    std::ifstream md(f.dir / "report/report.md");
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(md), {}), "old\n");
    std::filesystem::remove_all(f.dir);
}

// A probe's findings (session 15). A message about a value 100000 arrays deep
// dumped it, recursing once per level (SIGSEGV); a build block so deep was kept
// for the report, which dumped it too.
TEST(CliJudge, DeeplyNestedInputIsBadInputNeverASignal) {
    JudgeFiles files = valid_judge_files("deep");
    const std::string args = judge_args(files), d = files.dir.string() + "/";
    const std::string deep = std::string(100000, '[') + std::string(100000, ']');
    std::ofstream(files.dir / "deep.json") << deep;
    expect_usage_error(with(args, "--current", d + "deep.json"), "deep.json");
    std::ofstream(files.dir / "deep_field.json") << "{\"schema\": \"benchfp.tolerances/1\", \"time\": " + deep + "}";
    expect_usage_error(with(args, "--tolerances", d + "deep_field.json"), "array of 1 elements");
    // A baseline's build block so deep is not kept for the report (which dumped it): judged as usual.
    nlohmann::json baseline = files.baseline;
    baseline["build"] = {{"version", "1"}};
    std::string text = baseline.dump();
    text.replace(text.find("\"1\""), 3, deep);
    std::ofstream(files.dir / "deep_build.json") << text;
    const CommandRun deep_build = run_benchfp(with(args, "--baseline", d + "deep_build.json"));
    EXPECT_LE(deep_build.status, 1) << deep_build.output;
    std::filesystem::remove_all(files.dir);
}

TEST(CliJudge, AnUntestedIsaNamedTwiceIsBadInput) {
    JudgeFiles files = valid_judge_files("untested_twice");
    expect_usage_error(judge_args(files) + " --untested-isas=avx2,avx2", "--untested-isas names 'avx2' twice");
    std::filesystem::remove_all(files.dir);
}

// Labels from the command line are one line of text in report.md: a line break
// made a heading of its own and HTML went in as markup.
TEST(CliJudge, LabelsAreOneLineOfTextInTheMarkdownReport) {
    JudgeFiles files = valid_judge_files("labels");
    const std::string args = judge_args(files);
    const CommandRun run = run_benchfp(args + " --triggered-by=\"$(printf 'line1\\n## Injected heading')\" --commit='<script>x</script>'");
    EXPECT_LE(run.status, 1) << run.output;
    std::ifstream md(files.dir / "report" / "report.md");
    const std::string text((std::istreambuf_iterator<char>(md)), {});
    EXPECT_EQ(text.find("\n## Injected heading"), std::string::npos) << text;
    EXPECT_NE(text.find("line1 ## Injected heading"), std::string::npos) << text;
    EXPECT_EQ(text.find("<script>"), std::string::npos) << text;
    EXPECT_NE(text.find("&lt;script&gt;x&lt;/script&gt;"), std::string::npos) << text;
    std::filesystem::remove_all(files.dir);
}

namespace {

// A results file of two step records of conv/f32/avx2/p1, clobber's and
// frame's, frame's call `frame_instructions` long (100 of them nops).
std::string step_results(const std::filesystem::path& file, double frame_instructions) {
    nlohmann::json doc = {{"schema", "benchfp.kernel-results/1"}, {"cases", nlohmann::json::array()}};
    for (const auto& [frame, instructions] : {std::pair{"clobber", 1000.0}, {"frame", frame_instructions}})
        doc["cases"].push_back(
            {{"index", doc["cases"].size()},
             {"state", "PASSED"},
             {"spec", {{"mode", "step"}, {"kernel", "conv"}, {"alg", "f32"}, {"isa", "avx2"}, {"problem", "p1"}, {"frame", frame}, {"threads", 1}}},
             {"step", {{"instructions", instructions}, {"nops", 100}, {"stack_accesses", 50}, {"budget_spent", false}, {"unstepped_calls", 0}}}});
    std::ofstream(file) << doc.dump();
    return file.string();
}

}  // namespace

// The counts of step records (--cases) go into the baseline --update-baseline
// records, and a policy whose call comes to execute more than its baseline's
// fails the judgement in that one run, named; the same counts pass.
TEST(CliJudge, SteppedCountsAreHeldToTheBaseline) {
    JudgeFiles f = valid_judge_files("stepped");
    const std::string args = judge_args(f), d = f.dir.string() + "/";
    const std::string record_args = "judge --current=" + d + "current.json --baseline=" + d + "stepped_base.json --tolerances=" +
                                    d + "tolerances.json --update-baseline --cases=" + step_results(f.dir / "steps.json", 1001);
    const CommandRun record = run_benchfp(record_args);
    ASSERT_EQ(record.status, 0) << record.output;
    EXPECT_NE(record.output.find("4 instruction counts"), std::string::npos) << record.output;
    const auto stored = nlohmann::json::parse(std::ifstream(f.dir / "stepped_base.json"));
    EXPECT_EQ(stored["instructions"]["kernel/conv/f32/avx2/p1/frame: stepped instructions per call, nops apart"], 901);
    EXPECT_EQ(stored["instructions"]["kernel/conv/f32/avx2/p1/clobber: stepped stack accesses per call"], 50);

    const std::string judge = with(args, "--baseline", d + "stepped_base.json");
    const CommandRun same = run_benchfp(judge + " --cases=" + d + "steps.json");
    EXPECT_EQ(same.status, 0) << same.output;
    const CommandRun more = run_benchfp(judge + " --cases=" + step_results(f.dir / "more.json", 1021));
    EXPECT_EQ(more.status, 1) << more.output;
    EXPECT_NE(more.output.find("`kernel/conv/f32/avx2/p1/frame: stepped instructions per call, nops apart` | 921.000 | 901.000"),
              std::string::npos)
        << more.output;
    // Each count's row says its unit in report.json, not callgrind's "instructions per operation".
    std::map<std::string, std::string> units;
    const auto report = nlohmann::json::parse(std::ifstream(f.dir / "report" / "report.json"));
    for (const auto& row : report["machines"][0]["rows"]) units[row["id"]] = row["unit"];
    EXPECT_EQ(units["kernel/conv/f32/avx2/p1/frame: stepped instructions per call, nops apart"], "instructions per call, nops apart");
    EXPECT_EQ(units["kernel/conv/f32/avx2/p1/clobber: stepped stack accesses per call"], "stack accesses per call");
    EXPECT_EQ(units["hook"], "instructions per operation") << "callgrind's count keeps its own unit";
    // A machine with no baseline: the stepped counts are no callgrind counts, so the hook's
    // instruction limit does not expect its count (exit 1, "missing", before).
    // (Another machine's folder only: a folder that holds no suite file at all is bad input.)
    std::filesystem::create_directories(f.dir / "no-baselines/other-cpu-avx2-2cores");
    nlohmann::json other = f.baseline;
    other["fingerprint"]["cpu"] = "Other CPU";
    std::ofstream(f.dir / "no-baselines/other-cpu-avx2-2cores/alloc.json") << other.dump();
    const CommandRun unknown = run_benchfp("judge --current=" + d + "current.json --baselines=" + d + "no-baselines --tolerances=" +
                                           d + "tolerances.json --cases=" + d + "steps.json --report=" + d + "report");
    EXPECT_EQ(unknown.status, 0) << unknown.output;
    EXPECT_NE(unknown.output.find("no baseline for this machine"), std::string::npos) << unknown.output;
    std::filesystem::remove_all(f.dir);
}
