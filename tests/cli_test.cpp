// End to end: the benchfp binary as users and CI run it, under real perf_event_open.
// Where the kernel refuses perf_event_open the sampled checks skip with the reason,
// unless BENCHFP_REQUIRE_PERF=1 (CI), where that is a failure.
#include "cli_run.hpp"
#include "jit/isa.hpp"
#include "jit/stream_floats.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <tuple>

using benchfp::jit::Isa;

namespace {

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
// Before any case runs: the corr case first would have run, then status 2.
TEST(CliBadInput, AnUnknownEventStopsTheRunBeforeItsFirstCase) {
    const CommandRun run = run_benchfp("kernel --mode=corr,unwind --event=no-such-event 1048576");
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_NE(run.output.find("no-such-event"), std::string::npos) << run.output;
    EXPECT_EQ(run.output.find("0:PASSED"), std::string::npos) << "a case ran first:\n" << run.output;
}

TEST(CliBadInput, MalformedBatchLine) {
    const std::filesystem::path path = benchfp::test::scratch_path("benchfp_cli_", "bad_batch");
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
    EXPECT_EQ(run.status, 1) << run.output;  // skipped, and so nothing was tested
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

// Each policy's verdict is fixed (README's table): without --expect, each case expects its own.
TEST(Cli, WithoutExpectEachPolicyExpectsItsOwnVerdict) {
    expect_sampled_run("kernel --mode=unwind --duration-ms=200 --frame=clobber,preserve,frame 262144", 0,
                       {"0:PASSED", "1:PASSED", "2:PASSED", "tests:3 passed:3"});
}

TEST(Cli, TooFewSamplesIsInconclusiveNotPassed) {
    expect_sampled_run("kernel --mode=unwind --duration-ms=20 --min-samples=100000 --frame=frame 262144", 1,
                       {"inconclusive"});
}

TEST(Cli, JsonRecordsEveryCase) {
    const std::filesystem::path path = benchfp::test::scratch_path("benchfp_cli_", "results.json");
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
        const nlohmann::json table = nlohmann::json::parse(run.output);  // alive through the loop
        for (const auto& family : table.at("families")) names.push_back(family["name"]);
    } catch (const nlohmann::json::exception&) {
        names.push_back("unlisted");  // the sweep then fails, naming --list
    }
    return names;
}

// Per family: the CI batch against the reference, the unwind batch pinning the
// three behaviours on every ISA.
class CliFamily : public testing::TestWithParam<std::string> {};

TEST_P(CliFamily, HasItsBatchFiles) {
    for (const char* batch : {"ci", "unwind", "perf", "step"})
        EXPECT_TRUE(std::filesystem::is_regular_file(std::filesystem::path(BENCHFP_SOURCE_DIR) / "cases" / GetParam() /
                                                     batch))
            << "cases/" << GetParam() << "/" << batch << " is missing";
}

TEST_P(CliFamily, CiBatchPassesCorrectness) {
    expect_sampled_run("kernel --mode=corr --batch=cases/" + GetParam() + "/ci", 0, {" failed:0", "PASSED"});
}

TEST_P(CliFamily, UnwindBatchPinsEveryPolicy) {
    expect_sampled_run("kernel --mode=unwind --duration-ms=250 --batch=cases/" + GetParam() + "/unwind", 0,
                       {" failed:0", "broken:0)", "skipped-caller:0 broken:0", "full:0/"});
}

// gemm's B panels at avx512 from 3 to 16 A panels: read in place or copied, as
// the FMA rate here chooses (families/gemm/gemm_workload.cpp); each way forced,
// so both are checked on any host with avx512, at 1 and 2 threads (split by N).
TEST(CliGemm, BPanelsInPlaceAndCopiedBothPassCorrectness) {
    std::string why;
    if (!benchfp::jit::isa_usable(benchfp::jit::Isa::avx512, std::nullopt, &why)) GTEST_SKIP() << why;
    for (const char* way : {"in-place", "copied", "measured"})
        for (const char* threads : {"1", "2"}) {
            const CommandRun run = run_benchfp(
                std::string("kernel --mode=corr --kernel=gemm --isa=avx512 --frame=clobber --threads=") + threads +
                    " m36n64k33beta0.5 m100n70k257beta0.5 m192n96k40",
                std::string("BENCHFP_GEMM_B_PANELS=") + way);
            EXPECT_EQ(run.status, 0) << way << " " << threads << "\n" << run.output;
            EXPECT_NE(run.output.find("tests:3 passed:3 "), std::string::npos) << way << "\n" << run.output;
        }
}

// A bad value is bad usage before any case runs, at any ISA.
TEST(CliGemm, ABadBPanelsSettingIsBadUsage) {
    const CommandRun bad = run_benchfp("kernel --mode=corr --kernel=gemm --isa=avx2 m36n64k33", "BENCHFP_GEMM_B_PANELS=sideways");
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("BENCHFP_GEMM_B_PANELS 'sideways' is not one of measured, in-place, copied"),
              std::string::npos)
        << bad.output;
}

// BENCHFP_STREAM_FLOATS moves the size from which reduce (avx512 sum, max) and
// relu (avx2, avx512) take their one-vector loop (jit/stream_floats.hpp). Its
// loop executes other instructions than the unrolled one, so a stepped call
// tells which ran: relu 67 runs it from a threshold of 67 ("at least"), not
// from 68; reduce 2x65 from 100 (130 floats, rows x cols: a kernel that
// compared cols alone, 65, would not) and not from 131. reduce's rows shorter
// than an unrolled step take it at any threshold. Each run checks the results
// too (corr), so the one-vector loop's tails are checked on small problems,
// every instruction judged. The default is set explicitly, whatever the
// environment holds. A bad value is bad usage, at any ISA.
TEST(CliStep, TheStreamThresholdChoosesTheOneVectorLoop) {
    const auto stepped = [](const std::string& args, int64_t threshold) {
        const std::string env = "BENCHFP_STREAM_FLOATS=" + std::to_string(threshold);
        const CommandRun run = run_benchfp("kernel --mode=corr,step --frame=clobber,frame " + args, env);
        std::smatch m;
        const std::regex count(R"(: clobber ([0-9]+) instructions)");
        EXPECT_NE(run.output.find("tests:4 passed:3 "), std::string::npos) << args << " " << env << "\n" << run.output;
        return std::regex_search(run.output, m, count) ? std::stol(m[1]) : -1L;
    };
    const int64_t usual = benchfp::jit::default_stream_floats;
    std::vector<std::string> relus = {"--kernel=eltwise --alg=relu --isa=avx2"}, reduces;
    std::string why;
    if (benchfp::jit::isa_usable(benchfp::jit::Isa::avx512, std::nullopt, &why)) {
        relus.push_back("--kernel=eltwise --alg=relu --isa=avx512");
        reduces = {"--kernel=reduce --alg=sum --isa=avx512", "--kernel=reduce --alg=max --isa=avx512"};
    }
    for (const std::string& relu : relus) {
        const long unrolled = stepped(relu + " 67", usual);
        EXPECT_GT(unrolled, 0) << relu;
        EXPECT_EQ(stepped(relu + " 67", 68), unrolled) << relu;
        EXPECT_NE(stepped(relu + " 67", 67), unrolled) << relu;
    }
    for (const std::string& reduce : reduces) {
        const long unrolled = stepped(reduce + " 2x65", usual);
        EXPECT_GT(unrolled, 0) << reduce;
        EXPECT_EQ(stepped(reduce + " 2x65", 131), unrolled) << reduce;
        EXPECT_NE(stepped(reduce + " 2x65", 100), unrolled) << reduce;
        EXPECT_EQ(stepped(reduce + " 2x63", usual), stepped(reduce + " 2x63", 1)) << reduce;
    }
    for (const char* bad : {"abc", "0", "-5", "010", "2147483648", ""}) {
        const CommandRun run =
            run_benchfp("kernel --mode=corr --kernel=reduce --isa=sse41 64", std::string("BENCHFP_STREAM_FLOATS=") + bad);
        EXPECT_EQ(run.status, 2) << bad << "\n" << run.output;
        EXPECT_NE(run.output.find(std::string("BENCHFP_STREAM_FLOATS '") + bad + "' is not a whole number from 1 to 2147483647"),
                  std::string::npos)
            << run.output;
    }
}

// Every instruction: the static verifier, one stepped call per case (every
// thread of a parallel section too) and the ABI rules, on every ISA and policy.
TEST_P(CliFamily, StepBatchPassesVerifyStepAndAbi) {
    const CommandRun run = run_benchfp("kernel --mode=verify,step,abi --batch=cases/" + GetParam() + "/step");
    EXPECT_EQ(run.status, 0) << run.output;
    for (const char* token : {" failed:0", "(verify instructions:", "(step instructions:", "(abi probe:ok", "threads:2",
                              "--frame=frame", "--frame=preserve", "(rbp clobbered)"})
        EXPECT_NE(run.output.find(token), std::string::npos) << token << " missing in\n" << run.output;
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

// Every perf line carries the paired frame cost with its interval (none on the
// reference policy's own line) and the A/A control; --json has them as numbers.
TEST(CliPerf, PairedFrameCostAndAAControl) {
    const std::filesystem::path path = benchfp::test::scratch_path("benchfp_cli_", "paired.json");
    const CommandRun run = run_benchfp("kernel --mode=perf --kernel=eltwise --frame=clobber,preserve,frame "
                                       "--max-ms-per-prb=50 --json=" + path.string() + " 65536");
    ASSERT_EQ(run.status, 0) << run.output;
    const std::string interval = "\\[[0-9.]+;[0-9.]+\\]";
    EXPECT_TRUE(std::regex_search(run.output, std::regex(",clobber,.*frame-cost:n/a,aa:[0-9.]+" + interval))) << run.output;
    for (const char* policy : {",preserve,", ",frame,"})
        EXPECT_TRUE(std::regex_search(run.output, std::regex(policy + std::string(".*frame-cost:[0-9.]+") + interval +
                                                             ",aa:[0-9.]+" + interval)))
            << policy << " in\n" << run.output;
    const auto doc = nlohmann::json::parse(std::ifstream(path));
    ASSERT_EQ(doc["cases"].size(), 3u);
    const auto& frame = doc["cases"][2]["perf"];
    EXPECT_EQ(frame["paired"]["reference"], "clobber");
    EXPECT_GE(frame["paired"]["pairs"].get<int>(), 8);
    EXPECT_LE(frame["paired"]["lo"].get<double>(), frame["paired"]["ratio"].get<double>());
    EXPECT_GE(frame["paired"]["hi"].get<double>(), frame["paired"]["ratio"].get<double>());
    EXPECT_TRUE(frame["aa"].contains("half_width"));
    EXPECT_FALSE(doc["cases"][0]["perf"].contains("paired"));  // the reference
    // The pairs ran every placement (8 pairs at least: two rounds each of 4), not the first only.
    for (const auto& c : doc["cases"]) EXPECT_EQ(c["perf"]["placements"], 4) << c.dump();
    // judge refuses a policy it does not know, which would judge no frame cost at all.
    for (const auto& [field, spoil] : {std::pair{"/cases/2/spec/frame", "zzz"}, {"/cases/2/perf/paired/reference", "nosuch"}}) {
        nlohmann::json spoiled = doc;
        spoiled[nlohmann::json::json_pointer(field)] = spoil;
        std::ofstream(path) << spoiled.dump();
        const CommandRun judged = run_benchfp("judge --current=" + path.string() + " --report=" + path.string() + ".report");
        EXPECT_EQ(judged.status, 2) << judged.output;
        EXPECT_NE(judged.output.find(std::string("unknown value \"") + spoil + "\""), std::string::npos) << judged.output;
    }
    // Nor a frame policy paired with itself: a ratio of 1, whatever it costs.
    nlohmann::json self_paired = doc;
    self_paired["cases"][2]["perf"]["paired"]["reference"] = doc["cases"][2]["spec"]["frame"];
    std::ofstream(path) << self_paired.dump();
    const CommandRun judged = run_benchfp("judge --current=" + path.string() + " --report=" + path.string() + ".report");
    EXPECT_EQ(judged.status, 2) << judged.output;
    EXPECT_NE(judged.output.find("paired.reference: the case's own policy"), std::string::npos) << judged.output;
    // Nor a fraction of a thread, or perf times in a record of another mode.
    for (const auto& [field, spoil, message] :
         {std::tuple<const char*, nlohmann::json, const char*>{"/cases/2/spec/threads", 1.5, "spec.threads: expected a whole number"},
          {"/cases/2/spec/mode", "corr", "spec.mode: \"corr\" in a record with perf times"}}) {
        nlohmann::json spoiled = doc;
        spoiled[nlohmann::json::json_pointer(field)] = spoil;
        std::ofstream(path) << spoiled.dump();
        const CommandRun refused = run_benchfp("judge --current=" + path.string() + " --report=" + path.string() + ".report");
        EXPECT_EQ(refused.status, 2) << refused.output;
        EXPECT_NE(refused.output.find(message), std::string::npos) << refused.output;
    }
    std::filesystem::remove(path);
}


// Every timed kernel, each policy's and the A/A copy's, is built at 4 code
// placements (kernel_perf.cpp): the perf map the run writes names each one, at
// an address of its own.
TEST(CliPerf, EveryTimedKernelIsBuiltAtFourPlacements) {
    const CommandRun run = run_shell(std::string("sh -c 'echo pid=$$; exec ") + BENCHFP_BIN +
                                     " kernel --mode=perf --jit-profile=map --kernel=eltwise --alg=relu --isa=sse41"
                                     " --frame=clobber,frame --max-ms-per-prb=20 65536'");
    ASSERT_EQ(run.status, 0) << run.output;
    const std::string pid = pid_after(run.output, "pid=");
    ASSERT_FALSE(pid.empty()) << run.output;
    const std::string map = perf_map_of(pid);
    std::ifstream in(map);
    ASSERT_TRUE(in) << map;
    std::map<std::string, std::set<std::string>> addresses;  // kernel name -> start addresses
    for (std::string address, size, name; in >> address >> size >> name;) addresses[name].insert(address);
    std::filesystem::remove(map);
    EXPECT_EQ(addresses["eltwise_relu_sse41_clobber"].size(), 8u);  // 4 placements and 4 of the A/A copy
    EXPECT_EQ(addresses["eltwise_relu_sse41_frame"].size(), 4u);
}
TEST(CliPerf, CsvTemplateHasAHeaderAndOneRowPerCase) {
    const CommandRun run = run_benchfp(
        "kernel --mode=perf --kernel=reduce --alg=sum --frame=clobber,frame --max-ms-per-prb=20 --perf-template=csv "
        "4x4096");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("kernel,alg,isa,frame,threads,problem,min_ms"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(",frame_cost,frame_lo,frame_hi,aa,aa_lo,aa_hi,pairs"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("reduce,sum,"), std::string::npos) << run.output;
}

TEST(CliPerf, CustomTemplateTokens) {
    const CommandRun run = run_benchfp(
        "kernel --mode=perf --kernel=gemm --max-ms-per-prb=20 '--perf-template=%kernel%/%frame%:%-Gflops%' m64n64k64");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("gemm/frame:"), std::string::npos) << run.output;
}

// oneDNN refuses a reduction over rows of one element: the case is timed
// without it and shows n/a with the reason, where it failed ("reduction
// descriptor failed"); softmax, which oneDNN has for that shape, keeps its figure.
TEST(CliPerf, AProblemOneDnnRefusesShowsNotApplicable) {
    const CommandRun run = run_benchfp("kernel --mode=perf --kernel=reduce --alg=sum,softmax --frame=clobber --vs=onednn "
                                       "--max-ms-per-prb=20 64x1");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_TRUE(std::regex_search(run.output, std::regex("perf,reduce,sum,[^\n]*vs-onednn:n/a"))) << run.output;
    EXPECT_TRUE(std::regex_search(run.output, std::regex("perf,reduce,softmax,[^\n]*vs-onednn:[0-9]"))) << run.output;
    EXPECT_NE(run.output.find("oneDNN's reduction refuses rows of 1 element"), std::string::npos) << run.output;
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
// against the project's .proto, with the four sample types, alloc_space the
// default, totals equal to the JSON summary's, source lines, one name per function.
class CliAllocProfile : public testing::TestWithParam<std::string> {};

// The string_table entries of protoc's text output, in order.
std::vector<std::string> string_table(const std::string& decoded) {
    std::vector<std::string> strings;
    static const std::regex entry(R"re(string_table: "((?:[^"\\]|\\.)*)")re");
    for (std::sregex_iterator it(decoded.begin(), decoded.end(), entry), end; it != end; ++it)
        strings.push_back((*it)[1]);
    return strings;
}

// The sum of the i-th value of every sample.
double value_total(const std::string& decoded, size_t i) {
    double total = 0;
    static const std::regex sample(R"(sample \{([^}]*)\})");
    for (std::sregex_iterator it(decoded.begin(), decoded.end(), sample), end; it != end; ++it) {
        const std::string body = (*it)[1];
        static const std::regex value(R"(value: (-?[0-9]+))");
        size_t n = 0;
        for (std::sregex_iterator v(body.begin(), body.end(), value); v != end; ++v, ++n)
            if (n == i) total += std::stod((*v)[1]);
    }
    return total;
}

TEST_P(CliAllocProfile, WritesADecodablePprofWithTheFourSampleTypes) {
    const std::filesystem::path dir = benchfp::test::scratch_path("benchfp_cli_", "alloc");
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

    const std::vector<std::string> strings = string_table(decoded.output);
    std::smatch m;
    ASSERT_TRUE(std::regex_search(decoded.output, m, std::regex(R"(default_sample_type: ([0-9]+))"))) << decoded.output;
    ASSERT_LT(std::stoul(m[1]), strings.size());
    EXPECT_EQ(strings[std::stoul(m[1])], "alloc_space");  // an index into the string table
    // Weights add up per stack before rounding: pprof's totals are the JSON's.
    const double objects = summary["totals"]["alloc_objects"], space = summary["totals"]["alloc_space"];
    EXPECT_NEAR(value_total(decoded.output, 0), objects, 0.001 * objects + 1);
    EXPECT_NEAR(value_total(decoded.output, 1), space, 0.001 * space + 1);
    for (const std::string& name : strings) EXPECT_EQ(name.find("[clone"), std::string::npos) << name;
    EXPECT_TRUE(std::regex_search(decoded.output, std::regex(R"(line \{\s*function_id: [0-9]+\s*line: [1-9])")))
        << "no source line in any location";
    EXPECT_NE(decoded.output.find("duration_nanos: "), std::string::npos);
    // Folded stacks: root first, the type last, a count.
    std::ifstream folded(out + ".folded");
    std::string line;
    ASSERT_TRUE(std::getline(folded, line));
    EXPECT_TRUE(std::regex_match(line, std::regex(R"([^ ]+(;[^;]+)* [0-9]+)"))) << line;
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
    const std::filesystem::path path = benchfp::test::scratch_path("benchfp_cli_", "corrupt.json");
    std::ofstream(path) << "{\"schema\": \"benchfp.baseline/1\", \"benchm";
    expect_usage_error("judge --current=" + stored_alloc_baseline + " --baseline=" + path.string() +
                           " --report=" + benchfp::test::scratch_path("benchfp_cli_", "judge_report"),
                       path.string() + ": baseline is not valid JSON");
    std::filesystem::remove(path);
}

TEST(CliJudge, ASlowerBenchmarkFailsTheGateWithItsRowMarked) {
    // A current run made from the stored baseline (Google Benchmark's format), with
    // one benchmark twice as slow: the time row of that benchmark must be :x:.
    const auto doc = nlohmann::json::parse(std::ifstream(std::string(BENCHFP_SOURCE_DIR) + "/" + stored_alloc_baseline));
    nlohmann::json current = {{"context", {{"benchfp_cpu", doc["fingerprint"]["cpu"]},
                                           {"benchfp_isa", doc["fingerprint"]["isa"]},
                                           {"benchfp_cores", std::to_string(doc["fingerprint"]["cores"].get<int>())}}},
                              {"benchmarks", nlohmann::json::array()}};
    for (const auto& [name, b] : doc["benchmarks"].items()) {
        const double slow = name == "alloc/structs/off" ? 2.0 : 1.0;
        current["benchmarks"].push_back({{"name", name},
                                         {"run_name", name},
                                         {"run_type", "iteration"},
                                         {"real_time", b["min_ns"].get<double>() * slow},
                                         {"time_unit", "ns"},
                                         {"bytes_per_iteration", b["bytes_per_iteration"]}});
    }
    const std::filesystem::path path = benchfp::test::scratch_path("benchfp_cli_", "current.json");
    std::ofstream(path) << current.dump();
    const std::filesystem::path report = benchfp::test::scratch_path("benchfp_cli_", "report");
    const CommandRun run = run_benchfp("judge --current=" + path.string() + " --report=" + report.string());
    EXPECT_EQ(run.status, 1) << run.output;
    // The group's tolerance in results/tolerances.json (0.5) is under 100%.
    const size_t row = run.output.find("| `alloc/structs/off` | 2.000 (");
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

namespace {

// Under clobber the verifier states the clobber and passes; stepping without
// --expect asks for whole chains, which clobber cannot give: it fails, naming
// the first instruction whose chain is broken.
TEST(CliStep, ClobberIsReportedByVerifyAndFailsStep) {
    const CommandRun run = run_benchfp("kernel --kernel=eltwise --alg=relu --isa=avx2 --frame=clobber --mode=verify,step 259");
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_TRUE(std::regex_search(run.output, std::regex("0:PASSED \\(verify instructions:[0-9]+ paths:[0-9]+ .*\\(rbp clobbered\\)")))
        << run.output;
    EXPECT_TRUE(std::regex_search(run.output, std::regex("1:FAILED \\(step instructions:[0-9]+ full:0 .*expected full; first "
                                                          "offending \\+0x[0-9a-f]+ `[^`]+` \\(broken\\)")))
        << run.output;
}

// frame: the instructions without a whole chain are exactly push rbp, mov rbp, rsp and the ret.
TEST(CliStep, FrameWindowsAreTheLinkAndTheUnlink) {
    const CommandRun run = run_benchfp("kernel --kernel=gemm --isa=avx2 --frame=frame --mode=step m13n31k17beta1");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("skipped-caller:0 broken:0 "), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(" windows:2+1 "), std::string::npos) << run.output;
}

// A problem too large to step whole fails at the budget, naming it, within
// seconds: gemm 1024^3 would step for an hour. The reproducer carries the budget.
TEST(CliStep, ACallLongerThanTheBudgetFailsUnjudged) {
    const CommandRun run =
        run_benchfp("kernel --kernel=gemm --isa=avx2 --frame=frame --mode=step,abi --max-steps=2000 m64n64k64");
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_NE(run.output.find("0:FAILED (step instructions:2000 "), std::string::npos) << run.output;
    EXPECT_NE(run.output.find("a thread reached --max-steps=2000 and the rest of the call ran unstepped"),
              std::string::npos)
        << run.output;
    EXPECT_NE(run.output.find("1:FAILED"), std::string::npos) << run.output;  // abi too
    EXPECT_NE(run.output.find("--mode=step --kernel=gemm --alg=f32 --isa=avx2 --frame=frame --max-steps=2000"),
              std::string::npos)
        << run.output;
}

TEST(CliStep, NoVerifyStillVerifiesInVerifyMode) {
    const CommandRun run = run_benchfp("kernel --no-verify --kernel=reorder --alg=transpose --mode=verify,list 9x17");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("0:PASSED (verify instructions:"), std::string::npos) << run.output;
}

}  // namespace
// The in-process unwind check samples every thread of a parallel section: the
// worker's chains are judged against the pool's entry, with the policy's verdict.
TEST(CliUnwind, WorkersOfAParallelSectionAreSampledToo) {
    for (const auto& [frame, verdict] : {std::pair{"frame", "full:"}, {"preserve", "skipped-caller:"}}) {
        const CommandRun run = run_benchfp(std::string("kernel --kernel=gemm --frame=") + frame +
                                           " --threads=2 --mode=unwind --duration-ms=300 m256n256k256");
        SKIP_OR_FAIL_WITHOUT_PERF(run);
        ASSERT_EQ(run.status, 0) << run.output;
        std::smatch m;
        ASSERT_TRUE(std::regex_search(run.output, m, std::regex(R"(1 worker\(s\): unwind full:([0-9]+)/([0-9]+) )")))
            << run.output;
        EXPECT_GT(std::stol(m[2]), 0) << run.output;
        EXPECT_EQ(m[1] == m[2], std::string(frame) == "frame") << run.output;
    }
}

// Step mode counts what a frame policy costs one call: where the same kernel,
// problem and threads were stepped under clobber and another policy, a line
// gives clobber's instructions and stack accesses and each policy's difference.
TEST(CliStep, SaysWhatEachPolicyAddsToClobbersCall) {
    const CommandRun run = run_benchfp("kernel --batch=cases/reduce/step --isa=sse41");
    EXPECT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("frame cost per call, stepped"), std::string::npos) << run.output;
    const std::regex line(R"(\n  kernel/reduce/sum/sse41/5x33: clobber [1-9][0-9]* instructions and [0-9]+ nops, )"
                          R"([1-9][0-9]* on the stack; frame [-+][0-9]+ \([-+][0-9]+\.[0-9]{2}%\) and nops [-+][0-9]+, )"
                          R"(stack [-+][0-9]+; preserve [-+][0-9]+ \([-+][0-9]+\.[0-9]{2}%\) and nops [-+][0-9]+, )"
                          R"(stack [-+][0-9]+\n)");
    EXPECT_TRUE(std::regex_search(run.output, line)) << run.output;
}

// A call stepped only in part (its budget spent) has no whole count: no line for it.
TEST(CliStep, APartlySteppedCallHasNoFrameCostLine) {
    const CommandRun run =
        run_benchfp("kernel --kernel=gemm --isa=sse41 --frame=clobber,frame --mode=step --max-steps=2000 m64n64k64");
    EXPECT_EQ(run.status, 1) << run.output;
    EXPECT_EQ(run.output.find("frame cost per call"), std::string::npos) << run.output;
}
