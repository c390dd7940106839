// End to end: the benchfp binary as users and CI run it, under real perf_event_open.
// Where the kernel refuses perf_event_open the sampled checks skip with the reason,
// unless BENCHFP_REQUIRE_PERF=1 (CI), where that is a failure.
#include "jit/isa.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

using benchfp::jit::Isa;

namespace {

struct CommandRun {
    int status = -1;
    std::string output;  // stdout and stderr
};

// Runs a shell command from the source tree, capturing stdout and stderr.
CommandRun run_shell(const std::string& command) {
    CommandRun run;
    FILE* pipe = popen((std::string("cd ") + BENCHFP_SOURCE_DIR + " && " + command + " 2>&1").c_str(), "r");
    if (!pipe) return run;
    std::array<char, 4096> buffer;
    while (size_t n = fread(buffer.data(), 1, buffer.size(), pipe)) run.output.append(buffer.data(), n);
    const int status = pclose(pipe);
    run.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return run;
}

// Runs benchfp; `env` is prepended as shell assignments.
CommandRun run_benchfp(const std::string& args, const std::string& env = "") {
    return run_shell(env + " " + BENCHFP_BIN + " " + args);
}

bool perf_required() {
    const char* value = std::getenv("BENCHFP_REQUIRE_PERF");
    return value && std::string(value) == "1";
}

bool perf_unavailable(const CommandRun& run) {
    return run.status == 2 && run.output.find("perf_event_open") != std::string::npos;
}

#define SKIP_OR_FAIL_WITHOUT_PERF(run)                                                                  \
    if (perf_unavailable(run)) {                                                                        \
        if (perf_required()) FAIL() << "BENCHFP_REQUIRE_PERF=1 but sampling is unavailable:\n" << (run).output; \
        GTEST_SKIP() << "sampling unavailable here:\n" << (run).output;                                 \
    }

void expect_usage_error(const std::string& args, const std::string& token, const std::string& env = "") {
    const CommandRun run = run_benchfp(args, env);
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_NE(run.output.find(token), std::string::npos) << "message should name " << token << ":\n" << run.output;
}

// Runs a command that samples; checks its status and that the output holds each of `wanted`.
void expect_sampled_run(const std::string& args, int status, std::initializer_list<const char*> wanted) {
    const CommandRun run = run_benchfp(args);
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, status) << run.output;
    for (const char* text : wanted) EXPECT_NE(run.output.find(text), std::string::npos) << text << " in:\n" << run.output;
}

// The tallies of a single-case unwind run.
struct Tallies {
    long full = -1, judged = -1, prologue = -1, skipped = -1, broken = -1;
};
Tallies tallies_of(const std::string& output) {
    std::smatch m;
    const std::regex line(R"(unwind full:(\d+)/(\d+) prologue:(\d+) skipped-caller:(\d+) broken:(\d+))");
    Tallies t;
    if (std::regex_search(output, m, line))
        t = {std::stol(m[1]), std::stol(m[2]), std::stol(m[3]), std::stol(m[4]), std::stol(m[5])};
    return t;
}

}  // namespace

TEST(CliBadInput, UnknownKernel) { expect_usage_error("kernel --kernel=nosuch 64", "'nosuch'"); }
TEST(CliBadInput, UnknownIsa) { expect_usage_error("kernel --isa=avx9 64", "'avx9'"); }
TEST(CliBadInput, UnknownMaxIsa) { expect_usage_error("kernel --max-isa=avx9 64", "'avx9'"); }
TEST(CliBadInput, BadIsaCapInEnvironment) { expect_usage_error("kernel 64", "BENCHFP_MAX_CPU_ISA=avx3", "BENCHFP_MAX_CPU_ISA=avx3");
}
TEST(CliBadInput, UnknownFrame) { expect_usage_error("kernel --frame=omit 64", "'omit'"); }
TEST(CliBadInput, MalformedProblem) { expect_usage_error("kernel --alg=relu 12a", "'12a'"); }
TEST(CliBadInput, UnknownOption) { expect_usage_error("kernel --bogus=1 64", "--bogus"); }
TEST(CliBadInput, UnknownSubcommand) { expect_usage_error("kernal 64", "kernal"); }
TEST(CliBadInput, UnknownEvent) { expect_usage_error("kernel --mode=unwind --event=no-such-event 1048576", "no-such-event"); }

TEST(CliBadInput, MalformedBatchLine) {
    const auto path = std::filesystem::temp_directory_path() / ("benchfp_bad_batch_" + std::to_string(getpid()));
    std::ofstream(path) << "--frame=frame 64\n--frame=frame --alg=relu 64 --isa\n";
    expect_usage_error("kernel --batch=" + path.string(), path.string() + ":2");
    std::filesystem::remove(path);
}

TEST(CliBadInput, NothingRunsBeforeTheWholeInputIsValid) {
    const CommandRun run = run_benchfp("kernel --mode=corr 64 65 6x");
    EXPECT_EQ(run.status, 2);
    EXPECT_EQ(run.output.find("PASSED"), std::string::npos) << run.output;
}

TEST(Cli, CorrPassesAndPrintsTheSummary) {
    const CommandRun run = run_benchfp("kernel --mode=corr --alg=relu,exp,gelu_tanh,tanh --frame=clobber,preserve,frame 1000003 17");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("tests:24 passed:24 skipped:0 mistrusted:0 failed:0"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("__REPRO: --mode=corr --kernel=eltwise --alg=exp"), std::string::npos);
}

TEST(Cli, IsaAboveTheCapIsSkippedNotRun) {
    const CommandRun run = run_benchfp("kernel --mode=corr --max-isa=avx2 --isa=avx512 64");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("0:SKIPPED"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("tests:1 passed:0 skipped:1"), std::string::npos) << run.output;
}

// Each policy pins its chain verdict, per ISA.
struct UnwindParams {
    Isa isa;
    const char* frame;
    const char* verdict;
};

void PrintTo(const UnwindParams& p, std::ostream* os) {
    *os << benchfp::jit::to_string(p.isa) << '/' << p.frame << " expects " << p.verdict;
}

class CliUnwind : public testing::TestWithParam<UnwindParams> {};

TEST_P(CliUnwind, PolicyGivesItsVerdictOnEverySample) {
    const auto& p = GetParam();
    std::string why;
    if (!benchfp::jit::isa_usable(p.isa, std::nullopt, &why)) GTEST_SKIP() << why;
    const CommandRun run = run_benchfp(std::string("kernel --mode=unwind --duration-ms=300 --alg=exp --isa=") +
                            benchfp::jit::to_string(p.isa) + " --frame=" + p.frame + " --expect=" + p.verdict +
                            " 262144");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, 0) << run.output;
    const Tallies t = tallies_of(run.output);
    ASSERT_GE(t.judged, 200) << run.output;
    const long wanted = std::string(p.verdict) == "full" ? t.full : std::string(p.verdict) == "broken" ? t.broken : t.skipped;
    EXPECT_EQ(wanted, t.judged) << run.output;
}

INSTANTIATE_TEST_SUITE_P(
    PerIsaAndPolicy, CliUnwind,
    testing::Values(UnwindParams{Isa::avx2, "clobber", "broken"}, UnwindParams{Isa::avx2, "preserve", "skipped-caller"},
                    UnwindParams{Isa::avx2, "frame", "full"}, UnwindParams{Isa::avx512, "clobber", "broken"},
                    UnwindParams{Isa::avx512, "preserve", "skipped-caller"}, UnwindParams{Isa::avx512, "frame", "full"}),
    [](const auto& info) {
        std::string name = std::string(benchfp::jit::to_string(info.param.isa)) + "_" + info.param.frame;
        return name;
    });

TEST(Cli, ExpectingFullOnClobberFails) {
    expect_sampled_run("kernel --mode=unwind --duration-ms=200 --frame=clobber --expect=full 262144", 1, {"0:FAILED"});
}

TEST(Cli, WithoutExpectTheRuleIsEverySampleFull) {
    expect_sampled_run("kernel --mode=unwind --duration-ms=200 --frame=preserve,frame 262144", 1,
                       {"0:FAILED", "1:PASSED"});
}

TEST(Cli, TooFewSamplesIsInconclusiveNotPassed) {
    expect_sampled_run("kernel --mode=unwind --duration-ms=20 --min-samples=100000 --frame=frame 262144", 1,
                       {"inconclusive"});
}

TEST(Cli, JsonRecordsEveryCase) {
    const auto path = std::filesystem::temp_directory_path() / ("benchfp_results_" + std::to_string(getpid()) + ".json");
    const CommandRun run = run_benchfp("kernel --mode=unwind --duration-ms=200 --frame=clobber --expect=broken --json=" +
                            path.string() + " 262144");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    ASSERT_EQ(run.status, 0) << run.output;
    const auto doc = nlohmann::json::parse(std::ifstream(path));
    ASSERT_EQ(doc["cases"].size(), 1u);
    const auto& c = doc["cases"][0];
    EXPECT_EQ(c["state"], "PASSED");
    EXPECT_EQ(c["spec"]["frame"], "clobber");
    EXPECT_GT(c["unwind"]["tally"]["broken"].get<int>(), 0);
    EXPECT_TRUE(c["unwind"].contains("event"));
    EXPECT_TRUE(c["unwind"]["ring"].contains("lost"));
    EXPECT_TRUE(doc["host"].contains("isa"));
    std::filesystem::remove(path);
}

// The families, as `benchfp kernel --list` reports the family table: a new
// family joins every sweep below without a line here.
std::vector<std::string> listed_families() {
    const CommandRun run = run_benchfp("kernel --list --json=-");
    std::vector<std::string> names;
    try {
        for (const auto& family : nlohmann::json::parse(run.output)) names.push_back(family["name"]);
    } catch (const nlohmann::json::exception&) {
        names.push_back("unlisted");  // the sweep then fails, naming --list
    }
    return names;
}

// Per family: the CI batch against the reference, the unwind batch pinning the
// three behaviours on every ISA.
class CliFamily : public testing::TestWithParam<std::string> {};

TEST_P(CliFamily, HasItsBatchFiles) {
    for (const char* batch : {"ci", "unwind", "perf"})
        EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(BENCHFP_SOURCE_DIR) / "cases" / GetParam() /
                                                     batch))
            << "cases/" << GetParam() << "/" << batch << " is missing";
    for (const auto& [suite, batch] : {std::pair{"unwind", "unwind"}, {"default", "ci"}}) {
        std::ifstream file(std::filesystem::path(BENCHFP_SOURCE_DIR) / "cases" / suite);
        const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
        EXPECT_NE(text.find("cases/" + GetParam() + "/" + batch), std::string::npos)
            << "cases/" << suite << " does not run cases/" << GetParam() << "/" << batch;
    }
}

TEST_P(CliFamily, CiBatchPassesCorrectness) {
    expect_sampled_run("kernel --mode=corr --batch=cases/" + GetParam() + "/ci", 0, {" failed:0", "PASSED"});
}

TEST_P(CliFamily, UnwindBatchPinsEveryPolicy) {
    expect_sampled_run("kernel --mode=unwind --duration-ms=250 --batch=cases/" + GetParam() + "/unwind", 0,
                       {" failed:0", "broken:0)", "skipped-caller:0 broken:0", "full:0/"});
}

INSTANTIATE_TEST_SUITE_P(AllFamilies, CliFamily, testing::ValuesIn(listed_families()),
                         [](const auto& info) { return info.param; });

TEST(CliPerf, PoliciesRunSideBySideWithRatios) {
    const CommandRun run = run_benchfp(
        "kernel --mode=perf --kernel=eltwise --frame=clobber,frame --vs=copy --max-ms-per-prb=50 65536");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("clobber,65536,min:"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("frame-ratio:1.0000"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("vs-copy:"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("tests:2 passed:2"), std::string::npos) << run.output;
}

TEST(CliPerf, CsvTemplateHasAHeaderAndOneRowPerCase) {
    const CommandRun run = run_benchfp(
        "kernel --mode=perf --kernel=reduce --alg=sum --frame=clobber,frame --max-ms-per-prb=20 --perf-template=csv "
        "4x4096");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("kernel,alg,isa,frame,threads,problem,min_ms"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("reduce,sum,"), std::string::npos) << run.output;
}

TEST(CliPerf, CustomTemplateTokens) {
    const CommandRun run = run_benchfp(
        "kernel --mode=perf --kernel=gemm --max-ms-per-prb=20 '--perf-template=%kernel%/%frame%:%-Gflops%' m64n64k64");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("gemm/frame:"), std::string::npos) << run.output;
}

TEST(CliBadInput, UnknownPerfTemplateToken) {
    expect_usage_error("kernel --mode=perf '--perf-template=%nope%' 64", "%nope%");
}
TEST(CliBadInput, UnknownPeer) { expect_usage_error("kernel --mode=perf --vs=mkl 64", "'mkl'"); }
TEST(CliBadInput, MalformedGemmProblem) { expect_usage_error("kernel --kernel=gemm m10n10", "'m10n10'"); }
TEST(CliBadInput, MalformedConvProblem) { expect_usage_error("kernel --kernel=conv ic3ih7kh3", "oc missing"); }

TEST(CliList, ShowsRegistersAndSpills) {
    const CommandRun run = run_benchfp("kernel --mode=list --kernel=conv --isa=avx2 --frame=clobber,frame ic3ih7oc5kh3");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("0:LISTED (gprs:14 callee-saved:6 (rbp,"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("1:LISTED (gprs:13 callee-saved:5 (rbx,"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("spilled:0"), std::string::npos) << run.output;
}

// `benchfp alloc profile` for every workload: a pprof file that protoc decodes
// against the project's .proto, with the four sample types.
class CliAllocProfile : public testing::TestWithParam<std::string> {};

TEST_P(CliAllocProfile, WritesADecodablePprofWithTheFourSampleTypes) {
    const auto dir = std::filesystem::temp_directory_path() / ("benchfp_alloc_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const std::string out = (dir / (GetParam() + ".pb.gz")).string();
    const CommandRun run = run_benchfp("alloc profile --workload=" + GetParam() + " --sample-bytes=65536 --out=" + out +
                                       " --folded=" + out + ".folded --json=" + out + ".json");
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("alloc profile: workload=" + GetParam()), std::string::npos) << run.output;
    const CommandRun decoded = run_shell("zcat " + out + " | protoc --decode=perftools.profiles.Profile "
                                                 "--proto_path=lib/alloc lib/alloc/profile.proto");
    ASSERT_EQ(decoded.status, 0) << decoded.output;
    size_t sample_types = 0;
    for (size_t at = 0; (at = decoded.output.find("sample_type {", at)) != std::string::npos; ++at) ++sample_types;
    EXPECT_EQ(sample_types, 4u);
    for (const char* name : {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"})
        EXPECT_NE(decoded.output.find(std::string("string_table: \"") + name + "\""), std::string::npos) << name;
    const auto summary = nlohmann::json::parse(std::ifstream(out + ".json"));
    EXPECT_GT(summary["samples"].get<int>(), 0);
    std::filesystem::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(AllWorkloads, CliAllocProfile,
                         testing::Values("arrays", "strings", "structs", "grow_array", "small_churn", "binary_trees",
                                         "producer_consumer"),
                         [](const auto& info) { return info.param; });

TEST(CliBadInput, UnknownAllocWorkload) {
    expect_usage_error("alloc profile --workload=nope --out=/tmp/never.pb.gz", "'nope'");
}
TEST(CliBadInput, ConflictingSamplingOptions) {
    expect_usage_error("alloc profile --workload=structs --all --sample-rate=0.5 --out=/tmp/never.pb.gz", "excludes");
}

// benchfp judge end to end on the checked-in baseline and tolerances: a corrupt
// baseline is exit 2, the baseline judged against itself passes the tolerance
// rows, and a run with a slower benchmark fails with that row marked.
TEST(CliJudge, CorruptBaselineIsBadInputNeverAPass) {
    const auto path = std::filesystem::temp_directory_path() / ("benchfp_corrupt_" + std::to_string(getpid()) + ".json");
    std::ofstream(path) << "{\"schema\": \"benchfp.baseline/1\", \"benchm";
    expect_usage_error("judge --current=results/baselines/amd-epyc-avx512-2cores/alloc.json --baseline=" + path.string() +
                           " --report=/tmp/benchfp_judge_report",
                       path.string() + ": baseline is not valid JSON");
    std::filesystem::remove(path);
}

TEST(CliJudge, ASlowerBenchmarkFailsTheGateWithItsRowMarked) {
    // A current run made from the stored baseline (Google Benchmark's format), with
    // one benchmark 30% slower: the time row of that benchmark must be :x:.
    const auto doc = nlohmann::json::parse(std::ifstream(std::string(BENCHFP_SOURCE_DIR) + "/results/baselines/amd-epyc-avx512-2cores/alloc.json"));
    nlohmann::json current = {{"context", {{"benchfp_cpu", doc["fingerprint"]["cpu"]},
                                           {"benchfp_isa", doc["fingerprint"]["isa"]},
                                           {"benchfp_cores", std::to_string(doc["fingerprint"]["cores"].get<int>())}}},
                              {"benchmarks", nlohmann::json::array()}};
    for (const auto& [name, b] : doc["benchmarks"].items()) {
        const double slow = name == "alloc/structs/off" ? 1.3 : 1.0;
        current["benchmarks"].push_back({{"name", name},
                                         {"run_name", name},
                                         {"run_type", "iteration"},
                                         {"real_time", b["min_ns"].get<double>() * slow},
                                         {"time_unit", "ns"},
                                         {"bytes_per_iteration", b["bytes_per_iteration"]}});
    }
    const auto path = std::filesystem::temp_directory_path() / ("benchfp_current_" + std::to_string(getpid()) + ".json");
    std::ofstream(path) << current.dump();
    const auto report = std::filesystem::temp_directory_path() / ("benchfp_report_" + std::to_string(getpid()));
    const CommandRun run = run_benchfp("judge --current=" + path.string() + " --report=" + report.string());
    EXPECT_EQ(run.status, 1) << run.output;
    // Whatever the group's tolerance in results/tolerances.json, 30% is over it.
    const size_t row = run.output.find("| `alloc/structs/off` | 1.300 (");
    ASSERT_NE(row, std::string::npos) << run.output;
    EXPECT_NE(run.output.substr(row, run.output.find('\n', row) - row).find(":x:"), std::string::npos) << run.output;
    EXPECT_TRUE(std::filesystem::exists(report / "report.html"));
    std::filesystem::remove(path);
    std::filesystem::remove_all(report);
}

TEST(Cli, CiBatchPinsTheThreeBehaviours) {
    expect_sampled_run("kernel --batch=cases/eltwise/ci --mode=unwind --duration-ms=150", 0, {" failed:0"});
}

TEST(Cli, DefaultSuiteRunsAndPasses) { expect_sampled_run("", 0, {"--mode=corr", "--mode=unwind", " failed:0"}); }

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
    f.dir = std::filesystem::temp_directory_path() / ("benchfp_hostile_" + std::to_string(getpid()) + "_" + name);
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
    {"TolerancesReportedOnlyNotAList", [](JudgeFiles& f) { f.tolerances["reported_only"] = "glibc"; }, "reported_only: expected a list"},
    {"TolerancesInstructionLimitsAList", [](JudgeFiles& f) { f.tolerances["instruction_limits"] = {2}; },
     "instruction_limits: expected an object"},
    {"TolerancesRatioLimitNotANumber", [](JudgeFiles& f) { f.tolerances["ratios"][0]["limit"] = "1.5"; }, "ratios[0].limit: expected a number"},
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
    EXPECT_NE(run.output.find("## Machine: Test CPU, avx2, 2 cores"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("## Machine: Other CPU, avx512, 8 cores"), std::string::npos) << run.output;
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

// From any working directory the stored tolerances and this machine's baseline
// folder are found in the source tree, as batch files are.
TEST(CliJudge, JudgesFromAnyWorkingDirectory) {
    const auto doc = nlohmann::json::parse(
        std::ifstream(std::string(BENCHFP_SOURCE_DIR) + "/results/baselines/amd-epyc-avx512-2cores/alloc.json"));
    nlohmann::json current = {{"context", {{"benchfp_cpu", doc["fingerprint"]["cpu"]},
                                           {"benchfp_isa", doc["fingerprint"]["isa"]},
                                           {"benchfp_cores", std::to_string(doc["fingerprint"]["cores"].get<int>())}}},
                              {"benchmarks", nlohmann::json::array()}};
    for (const auto& [name, b] : doc["benchmarks"].items())
        current["benchmarks"].push_back({{"name", name}, {"real_time", b["min_ns"]}, {"time_unit", "ns"}});
    const auto dir = std::filesystem::temp_directory_path() / ("benchfp_elsewhere_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    std::ofstream(dir / "current.json") << current.dump();
    const CommandRun run = run_shell("cd " + dir.string() + " && " + BENCHFP_BIN + " judge --current=current.json");
    EXPECT_NE(run.status, 2) << run.output;
    EXPECT_NE(run.output.find("same as the baseline's: absolute times are judged"), std::string::npos) << run.output;
    EXPECT_TRUE(std::filesystem::exists(dir / "results/report/report.md")) << run.output;
    std::filesystem::remove_all(dir);
}
