// End to end, issues 10 and 11: a run never passes without testing, and bad
// input (sizes, rates, paths, batch files) ends in a message naming it and
// status 2, never a signal, a hang, a silent skip or a silent pass.
#include "cli_run.hpp"
#include "scratch_dir.hpp"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <iterator>

namespace {

std::string temp_path(const std::string& name) { return benchfp::test::scratch_path("benchfp_robust_", name); }

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = temp_path(name);
    std::ofstream(path) << text;
    return path;
}

void expect_run(const CommandRun& run, int status, std::initializer_list<const char*> wanted) {
    EXPECT_EQ(run.status, status) << run.output;
    for (const char* text : wanted) EXPECT_NE(run.output.find(text), std::string::npos) << text << " in:\n" << run.output;
}

}  // namespace

TEST(CliNeverGreen, ARunInWhichNoCaseRanFails) {
    expect_run(run_benchfp("kernel --batch=cases/eltwise/ci --isa=avx512 --mode=list", "BENCHFP_MAX_CPU_ISA=avx2"), 1,
               {"tests:39 passed:0 skipped:39", "isa: avx512 ran:0 skipped:39 (not usable here", "no case ran"});
}

TEST(CliNeverGreen, AnIsaAskedForThatCannotRunFailsUnlessAllowed) {
    const std::string args = "kernel --isa=avx2,avx512 --mode=list 64";
    expect_run(run_benchfp(args, "BENCHFP_MAX_CPU_ISA=avx2"), 1,
               {"isa: avx2 ran:1 skipped:0, avx512 ran:0 skipped:1", "--allow-untested=avx512"});
    expect_run(run_benchfp(args + " --allow-untested=avx512", "BENCHFP_MAX_CPU_ISA=avx2"), 0, {"1:SKIPPED"});
    expect_run(run_benchfp("kernel --isa=max --mode=list 64", "BENCHFP_MAX_CPU_ISA=sse41"), 0, {"isa: sse41 ran:1"});
    expect_run(run_benchfp("kernel --max-isa=max --mode=list 64", "BENCHFP_MAX_CPU_ISA=sse41"), 0, {"0:LISTED"});
}

TEST(CliNeverGreen, BatchLineOfOptionsCarriesToTheNextLines) {
    const std::string batch = write_temp("carry", "--kernel=eltwise --alg=exp\n1024\n");
    expect_run(run_benchfp("kernel --batch=" + batch), 0, {"--alg=exp", "tests:1 passed:1"});
    std::filesystem::remove(batch);
}

TEST(CliNeverGreen, ReproHoldsTheRunWideKnobs) {
    expect_run(run_benchfp("kernel --mode=list --freq=1000 --event=cycles --seed=7 --threads=2 64",
                           "BENCHFP_MAX_CPU_ISA=avx2"),
               0, {"--freq=1000", "--event=cycles", "--max-isa=avx2", "--seed=7", "--threads=2"});
}

TEST(CliNeverGreen, UnwritableJsonIsFoundBeforeTheFirstCase) {
    const CommandRun run = run_benchfp("kernel --mode=corr --json=/nonexistent/x.json 64");
    expect_run(run, 2, {"/nonexistent/x.json"});
    EXPECT_EQ(run.output.find("PASSED"), std::string::npos) << run.output;
}

TEST(CliBadInput, HugeGemmBetaIsBadInputNotAnAbort) {
    expect_usage_error("kernel --kernel=gemm --mode=list m1n1k1beta99999999999999999999999999999999999999999999",
                       "beta");
}

TEST(CliBadInput, ConvSizesThatWouldWrapAreRefused) {
    expect_usage_error("kernel --kernel=conv --mode=corr mb65536ic65536ih65536iw65536oc1kh1sh65536", "too large");
}

TEST(CliBadInput, ProblemsLargerThanMemoryAreRefusedUpFront) {
    expect_usage_error("kernel --kernel=gemm --mode=corr m999999n999999k999999", "MemAvailable");
}

TEST(CliRobust, ThreadsThatCannotStartFailTheCaseWithoutHanging) {
    const CommandRun run =
        run_shell(std::string("ulimit -v 4000000; timeout 120 ") + BENCHFP_BIN + " kernel --mode=corr --threads=1024 1000");
    EXPECT_NE(run.status, 124) << "timed out: a hang";
    expect_run(run, 1, {"0:FAILED", "cannot start the parallel section's threads"});
}

TEST(CliRobust, VersionPrintsWithoutAborting) { expect_run(run_benchfp("--version"), 0, {"commit: ", "onednn: "}); }

// The commit is stamped at every build (cmake/git_commit_stamp.cmake), not read
// once when CMake configures: in a repository of its own, the script names each
// new commit and a -dirty tree, and leaves its header untouched (so nothing
// recompiles) while the commit stays the same.
TEST(CliRobust, TheCommitStampFollowsEveryCommitAndRewritesOnlyOnChange) {
    const benchfp::test::ScratchDir dir("benchfp_stamp_");
    const std::string repo = (dir.path() / "repo").string(), header = (dir.path() / "commit.hpp").string();
    const std::string git = "git -C " + repo + " -c user.name=t -c user.email=t@t -c commit.gpgsign=false ";
    const std::string stamp = "cmake -DSOURCE_DIR=" + repo + " -DOUT=" + header + " -P " + BENCHFP_SOURCE_DIR +
                              "/cmake/git_commit_stamp.cmake";
    const auto head = [&] {
        const CommandRun run = run_shell(git + "rev-parse --short=12 HEAD");
        return run.output.substr(0, run.output.find('\n'));
    };
    const auto stamped = [&] {
        std::ifstream in(header);
        return std::string(std::istreambuf_iterator<char>(in), {});
    };
    ASSERT_EQ(run_shell("git init -q " + repo + " && echo a > " + repo + "/f && " + git + "add f && " + git +
                        "commit -q -m one").status,
              0);
    ASSERT_EQ(run_shell(stamp).status, 0);
    EXPECT_NE(stamped().find("#define BENCHFP_GIT_COMMIT \"" + head() + "\""), std::string::npos) << stamped();
    const auto first_write = std::filesystem::last_write_time(header);
    ASSERT_EQ(run_shell(stamp).status, 0);  // the same commit: not rewritten
    EXPECT_EQ(std::filesystem::last_write_time(header), first_write);
    ASSERT_EQ(run_shell("echo b > " + repo + "/f && " + git + "commit -q -am two").status, 0);
    ASSERT_EQ(run_shell(stamp).status, 0);
    EXPECT_NE(stamped().find("#define BENCHFP_GIT_COMMIT \"" + head() + "\""), std::string::npos) << stamped();
    ASSERT_EQ(run_shell("echo c > " + repo + "/f").status, 0);
    ASSERT_EQ(run_shell(stamp).status, 0);
    EXPECT_NE(stamped().find("#define BENCHFP_GIT_COMMIT \"" + head() + "-dirty\""), std::string::npos) << stamped();
}

TEST(CliRobust, WriteErrorsAreStatus2WithThePath) {
    expect_run(run_benchfp("kernel --mode=corr --json=/dev/full 1024"), 2, {"/dev/full", "No space left"});
    expect_run(run_shell(std::string("(") + BENCHFP_BIN + " kernel --mode=list 64 > /dev/full)"), 2,
               {"standard output"});
    expect_run(run_shell(std::string("(") + BENCHFP_BIN + " --version > /dev/full)"), 2, {"standard output"});
}

TEST(CliRobust, ARunsOutputsAreWrittenAllOrNone) {
    // The JSON summary's write fails after the checks: the profile beside it is not written either.
    const std::string profile = temp_path("none.pb.gz");
    expect_run(run_benchfp("alloc profile --workload=structs --out=" + profile + " --json=/dev/full"), 2,
               {"/dev/full", "No space left"});
    EXPECT_FALSE(std::filesystem::exists(profile));
    const std::string csv = temp_path("none.csv");
    expect_run(run_benchfp("kernel --mode=corr --csv=" + csv + " --json=/dev/full 1024"), 2, {"/dev/full"});
    EXPECT_FALSE(std::filesystem::exists(csv));
    // A closed pipe ends the process (SIGPIPE) in its in-place write of the JSON
    // (the reader, `true`, is gone long before the case has run), which comes
    // before any temporary: none is left beside the CSV.
    run_shell(std::string(BENCHFP_BIN) + " kernel --mode=corr --json=/dev/stderr --csv=" + csv +
              " 1024 2>&1 >/dev/null | true");
    const std::filesystem::path dir = std::filesystem::path(csv).parent_path();
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        EXPECT_EQ(entry.path().filename().string().find("none.csv.tmp"), std::string::npos) << entry.path();
}

TEST(CliBadInput, AllocSampleRateNanAndUnknownSubcommand) {
    const std::string out = temp_path("nan.pb.gz");
    expect_usage_error("alloc profile --workload=structs --sample-rate=nan --out=" + out, "--sample-rate");
    EXPECT_FALSE(std::filesystem::exists(out));
    expect_usage_error("alloc foo", "'foo'");
    const CommandRun unwritable = run_benchfp("alloc profile --workload=structs --out=/nonexistent/x.pb.gz");
    expect_run(unwritable, 2, {"/nonexistent/x.pb.gz"});
    EXPECT_EQ(unwritable.output.find("alloc profile: workload="), std::string::npos) << "ran before checking";
}

// "-" is standard output to many tools; here every output is a file written
// through a temporary, and a file named "-" was written.
TEST(CliBadInput, AnOutputNamedDashIsRefusedNotAFileNamedDash) {
    for (const char* option : {"--out=-", "--folded=- --out=/tmp/never.pb.gz", "--json=- --out=/tmp/never.pb.gz"})
        expect_usage_error(std::string("alloc profile --workload=structs ") + option, "=-: name a file");
    expect_usage_error("kernel --mode=corr --kernel=eltwise --csv=- 64", "--csv=-: name a file");
    const std::string results = temp_path("dash_results.json");
    ASSERT_EQ(run_benchfp("kernel --mode=perf --kernel=eltwise --alg=relu --isa=sse41 --max-ms-per-prb=20 --json=" + results + " 64").status, 0);
    const std::string other = temp_path("dash_other.json");  // another build's run: the same file is refused
    std::filesystem::copy_file(results, other, std::filesystem::copy_options::overwrite_existing);
    expect_usage_error("judge --current=" + results + " --baseline-runs=" + other + " --report=-",
                       "-: name a report directory");
    std::filesystem::remove(results);
    std::filesystem::remove(other);
    expect_usage_error("audit --duration-ms=100 --report=- -- /bin/sleep 1", "-: name a report directory");
    EXPECT_FALSE(std::filesystem::exists(std::string(BENCHFP_SOURCE_DIR) + "/-"));
}

// A profile of nothing is no finding: written (pprof reads it), but status 1.
TEST(CliBadInput, AnEmptyAllocationProfileIsNotGreen) {
    const std::string out = temp_path("empty.pb.gz");
    // grow_array makes 24,000 allocations: one is sampled at p = 1e-9 in 2.4e-5
    // of runs, and the test then runs once more (both: 6e-10).
    const std::string command = "alloc profile --workload=grow_array --sample-rate=1e-9 --out=" + out;
    CommandRun run = run_benchfp(command);
    if (run.status == 0) run = run_benchfp(command);
    expect_run(run, 1, {"no allocation was sampled"});
    EXPECT_TRUE(std::filesystem::exists(out));
    std::filesystem::remove(out);
}

TEST(CliBadInput, SamplingRatesAreCheckedUpFrontNamingTheOption) {
    expect_usage_error("kernel --mode=unwind --freq=1000000 1024", "--freq=1000000 is above this host's limit");
    expect_usage_error("kernel --mode=unwind --period=-1 1024", "--period");
    expect_usage_error("kernel --mode=unwind --period=0 1024", "--period");
}

TEST(CliBadInput, NestedBatchesHitTheCaseCapFast) {
    std::string next = write_temp("leaf", "--mode=list 64\n");
    for (int level = 0; level < 7; ++level) {
        std::string lines;
        for (int i = 0; i < 10; ++i) lines += "--batch=" + next + "\n";
        next = write_temp("level" + std::to_string(level), lines);
    }
    const CommandRun run = run_shell(std::string("timeout 60 ") + BENCHFP_BIN + " kernel --batch=" + next);
    expect_run(run, 2, {"more than 100000 cases", "--max-cases"});
}

TEST(CliBadInput, SmallerInputMistakes) {
    expect_usage_error("kernel --kernel= --mode=list 64", "'--kernel=' has an empty value");
    expect_usage_error("kernel --mode=list 2147483649", "too large");
    expect_usage_error("kernel --mode=perf --vs=peak --isa=sse41 64", "--vs=peak needs avx2");
    const CommandRun garbage = run_benchfp("kernel --mode=list " + std::string(100000, 'x'));
    expect_run(garbage, 2, {"(100000 bytes)"});
    EXPECT_LT(garbage.output.size(), 1000u);
    const CommandRun unexpected = run_benchfp("kernel --mode=list 64 --bogus " + std::string(100000, 'y'));
    EXPECT_EQ(unexpected.status, 2);
    EXPECT_LT(unexpected.output.size(), 1000u) << unexpected.output.substr(0, 1000);
}

// A hostile-input probe's findings (session of 2026-12-02): each was exit 0, a
// silent skip, or a file replaced by another output of the same run.
TEST(CliBadInput, ListsWithAnEmptyItemAndUnknownIsaNamesAreRefused) {
    expect_usage_error("kernel --kernel=eltwise, --mode=list 64", "unknown kernel ''");
    expect_usage_error("kernel --kernel=eltwise --isa=avx2, --mode=list 64", "''");
    expect_usage_error("kernel --kernel=eltwise --mode=list --allow-untested=foo 64", "--allow-untested: foo");
    expect_usage_error("kernel --kernel=eltwise --mode=list --jit-profile=map, 64", "--jit-profile");
    expect_usage_error("judge --current=x.json --untested-isas=foo", "--untested-isas: foo");
}

// A list naming one item twice ran its cases twice; a conv problem naming a
// dimension twice took the last; judge took --baseline over --baselines silently.
TEST(CliBadInput, NamesGivenTwiceAndBaselinesFromTwoPlacesAreRefused) {
    expect_usage_error("kernel --kernel=eltwise --alg=relu --isa=avx2 --frame=frame,frame --mode=list 64",
                       "--frame names 'frame' twice");
    expect_usage_error("kernel --kernel=eltwise --alg=relu,exp,relu --mode=list 64", "--alg names 'relu' twice");
    expect_usage_error("kernel --kernel=eltwise --isa=sse41,avx2,sse41 --mode=list 64", "--isa names 'sse41' twice");
    expect_usage_error("kernel --kernel=eltwise --mode=perf,corr,perf 64", "--mode names 'perf' twice");
    expect_usage_error("kernel --kernel=eltwise --mode=perf --vs=copy,copy --isa=avx2 64", "--vs names 'copy' twice");
    expect_usage_error("kernel --kernel=conv --mode=list mb1ic8ic16ih8oc8kh3", "'ic' given twice");
    // Blamed on the command line, not on the batch line it overrides; 'max' and the ISA it stands for.
    expect_usage_error("kernel --mode=list --isa=avx2,avx2 --batch=cases/gemm/ci", "command line: --isa names 'avx2' twice");
    expect_usage_error("kernel --mode=list --kernel=eltwise --isa=max,avx2 64", "'max' is avx2 here",
                       "BENCHFP_MAX_CPU_ISA=avx2");
    expect_usage_error("kernel --mode=list --kernel=eltwise --jit-profile=map,map 64", "--jit-profile names 'map' twice");
    expect_usage_error("kernel --mode=list --kernel=eltwise 64", "BENCHFP_JIT_PROFILE: unknown --jit-profile 'vtune'",
                       "BENCHFP_JIT_PROFILE=vtune");
    // CLI::Range printed this bound as 0.000000.
    expect_usage_error("alloc profile --workload=strings --sample-rate=1e-10 --out=/dev/null", "not in range [1e-09, 1]");
    expect_usage_error("judge --current=x.json --baseline=b.json --baselines=results/baselines", "excludes");
    expect_usage_error("judge --current=x.json --baseline=b.json --baseline-runs=r.json", "excludes");
    expect_usage_error("judge --current=x.json --baseline-runs=r.json --suite=gate", "excludes");
    expect_usage_error("judge --current=x.json --update-baseline --baseline-runs=r.json", "excludes");
    // Recording a baseline writes no report: an option only a report uses would go unused.
    for (const char* unused : {"--report=r", "--untested-isas=avx2", "--baseline-label=x", "--triggered-by=x"})
        expect_usage_error(std::string("judge --current=x.json --update-baseline --baseline=b.json ") + unused,
                           std::string(unused).substr(0, std::string(unused).find('=')) + " excludes --update-baseline");
    // A flag given twice, or given a value (--all=0 read as no --all), as an option given twice.
    expect_usage_error("alloc profile --workload=structs --all --all --out=/dev/null", "--all: At Most 1");
    expect_usage_error("alloc profile --workload=structs --all=0 --out=/dev/null", "disallowed flag override");
    expect_usage_error("judge --current=x.json --update-baseline --update-baseline --baseline=b.json", "--update-baseline: At Most 1");
    expect_usage_error("audit --system-wide --system-wide -- true", "--system-wide: At Most 1");
    // A batch line holds its flags to the same rules (its own parser).
    const std::string reset_zero = write_temp("reset_zero.batch", "--kernel=eltwise --mode=list --reset=0 64\n");
    expect_usage_error("kernel --batch=" + reset_zero, "disallowed flag override");
    // CLI11 dropped a comma list's empty items (--expect=bar,,main read as bar,main).
    expect_usage_error("audit --expect=bar,,main -- true", "--expect 'bar,,main' has an empty item");
    expect_usage_error("judge --current=x.json --untested-isas=avx2,", "--untested-isas 'avx2,' has an empty item");
    // A float option reads decimal numbers only, as the whole-number ones do (strtod took these).
    expect_usage_error("alloc profile --workload=structs --sample-rate=0x1p-3 --out=/dev/null", "'0x1p-3' is not a decimal number");
    expect_usage_error("alloc profile --workload=structs '--sample-rate= 0.5' --out=/dev/null", "' 0.5' is not a decimal number");
    // --folded-unit without --folded went unused.
    expect_usage_error("alloc profile --workload=structs --folded-unit=objects --out=/dev/null", "--folded-unit requires --folded");
    // --pid's process runs already: a --delay-ms there went unused.
    expect_usage_error("audit --pid=1 --delay-ms=3000 --duration-ms=100", "--pid excludes --delay-ms");
    // --expect takes its own value only: greedy, it took the command's words ("-c was not expected").
    const CommandRun expect_then_command =
        run_benchfp("audit --delay-ms=0 --duration-ms=50 --expect=bar -- sh -c 'exit 0'");
    EXPECT_EQ(expect_then_command.output.find("not expected"), std::string::npos) << expect_then_command.output;
}

// One run given twice (or through a link, or as its own re-run) was read as
// two: its paired ratios merged, its cases counted twice. A perf run's file
// is both a run and a file of case records (ci/gate.sh passes it so).
TEST(CliBadInput, AFileGivenTwiceToJudgeIsNamed) {
    const benchfp::test::ScratchDir dir("benchfp_twice_");
    const auto file = [&](const char* name) { return (dir.path() / name).string(); };
    const std::string run = file("run.json");
    const CommandRun made = run_benchfp("kernel --kernel=eltwise --alg=relu --isa=sse41 --frame=clobber,frame --mode=perf "
                                        "--max-ms-per-prb=20 --json=" + run + " 4096");
    ASSERT_EQ(made.status, 0) << made.output;
    std::filesystem::create_symlink(run, file("link.json"));
    const std::string report = " --report=" + file("report");
    expect_usage_error("judge --current=" + run + " --current=" + run + report, "--current and --current name the same file");
    expect_usage_error("judge --current=" + run + " --current=" + file("link.json") + report, "name the same file");
    expect_usage_error("judge --current=" + run + " --confirm=" + run + report, "--current and --confirm name the same file");
    expect_usage_error("judge --current=" + run + " --cases=" + run + " --cases=" + run + report,
                       "--cases and --cases name the same file");
    const CommandRun both = run_benchfp("judge --current=" + run + " --cases=" + run + report);
    EXPECT_LE(both.status, 1) << both.output;
    expect_usage_error("judge --current=" + run + " --baseline-runs=" + file("link.json") + report,
                       "--current and --baseline-runs name the same file");
    // A problem given twice in one perf run: two groups, each policy paired with clobber (one
    // group of both paired the second clobber with the first, which the judge refuses).
    const std::string twice = file("twice.json");
    const CommandRun made_twice = run_benchfp("kernel --kernel=eltwise --alg=relu --isa=sse41 --frame=clobber,frame "
                                              "--mode=perf --max-ms-per-prb=20 --json=" + twice + " 4096 4096");
    ASSERT_EQ(made_twice.status, 0) << made_twice.output;
    const auto doc = nlohmann::json::parse(std::ifstream(twice));
    for (const auto& c : doc["cases"])
        if (c["spec"]["frame"] == "frame") {
            EXPECT_EQ(c["perf"]["paired"]["reference"], "clobber") << c.dump();
        } else {
            EXPECT_FALSE(c["perf"].contains("paired")) << c.dump();
        }
    const CommandRun judged_twice = run_benchfp("judge --current=" + twice + report);
    EXPECT_LE(judged_twice.status, 1) << judged_twice.output;
}

// An empty results file read "unreadable"; a batch of comments only ran nothing
// and said "give a problem"; a '%' left open in --perf-template printed as text.
TEST(CliBadInput, EmptyFilesAndAnOpenTemplateTokenAreNamed) {
    const std::string empty = write_temp("empty.json", "");
    const std::string comments = write_temp("comments_only", "# nothing here\n\n");
    expect_usage_error("judge --current=" + empty, "results file is empty");
    expect_usage_error("kernel --batch=" + comments, "names no problem to run");
    expect_usage_error("kernel --kernel=eltwise --isa=sse41 --mode=perf --perf-template=%-time%,%frame 64",
                       "opens a token that no '%' closes");
    const CommandRun literal = run_benchfp("kernel --kernel=eltwise --isa=sse41 --mode=perf --perf-template=%kernel%%% --max-ms-per-prb=100 64");
    expect_run(literal, 0, {"eltwise%"});
    // Echoed cut to its first 64 bytes: the whole template was repeated.
    const CommandRun long_template =
        run_benchfp("kernel --kernel=eltwise --mode=perf '--perf-template=%" + std::string(3000, 'x') + "%' 64");
    expect_run(long_template, 2, {"unknown token '%xxx", "... (3002 bytes)"});
    EXPECT_LT(long_template.output.size(), 1000u) << long_template.output;
    std::filesystem::remove(empty);
    std::filesystem::remove(comments);
}

TEST(CliBadInput, ListTakesNoCaseOptions) {
    expect_usage_error("kernel --list --kernel=foo", "--list runs nothing and takes no --kernel");
    expect_run(run_benchfp("kernel --list --json=-"), 0, {"\"families\""});
}

TEST(CliBadInput, TwoOutputsOfOneRunMayNotNameOneFile) {
    const std::string same = temp_path("same");
    expect_usage_error("kernel --kernel=eltwise --alg=relu --isa=sse41 --mode=corr --json=" + same + " --csv=" + same + " 64",
                       "--json and --csv name the same file");
    expect_usage_error("alloc profile --workload=structs --out=" + same + " --json=" + same,
                       "--out and --json name the same file");
    EXPECT_FALSE(std::filesystem::exists(same));
    expect_usage_error("kernel --kernel=eltwise --alg=relu --isa=sse41 --mode=corr --json=- 64", "--json=-: name a file");
    // A path relative to the working directory and the same one absolute; a device may take both.
    const std::string here = std::string(BENCHFP_SOURCE_DIR) + "/benchfp_robust_same.json";  // run_shell's directory
    expect_usage_error("kernel --kernel=eltwise --alg=relu --isa=sse41 --mode=corr --json=benchfp_robust_same.json --csv=" +
                           here + " 64",
                       "--json and --csv name the same file");
    EXPECT_EQ(run_benchfp("kernel --kernel=eltwise --alg=relu --isa=sse41 --mode=corr --json=/dev/null --csv=/dev/null 64").status, 0);
}

TEST(CliBadInput, AuditNumbersAreCheckedBeforeAnythingStarts) {
    expect_usage_error("audit --freq=0 -- /bin/true", "--freq");
    expect_usage_error("audit --duration-ms=-1 -- /bin/true", "--duration-ms");
    expect_usage_error("audit --delay-ms=99999999999999999999 -- /bin/true", "--delay-ms");
    expect_usage_error("audit --pid=0", "--pid");
    // --report's place is checked before sampling (it used to fail after the whole window).
    const std::string file = write_temp("report_is_a_file", "x");
    const CommandRun run = run_benchfp("audit --report=" + file + " --duration-ms=600000 -- /bin/sleep 600");
    expect_run(run, 2, {"cannot create report directory: a file of that name is in the way"});
    std::filesystem::remove(file);
}

TEST(CliBadInput, JudgeRefusesABaselineFolderOrSuiteThatIsNotThere) {
    expect_usage_error("judge --current=x.json --baselines=/nonexistent", "--baselines is not a directory");
    expect_usage_error("judge --current=x.json --suite=nosuch", "--suite=nosuch: no machine folder");
    expect_usage_error("judge --current=x.json --suite=../x", "not a plain name");
}

// A probe's findings (session 15): inputs that ran the process out of stack or
// past an abort, and outputs that replaced an input.
TEST(CliBadInput, LongProblemTextIsBadInputNotAStackOverflow) {
    // libstdc++'s regex recursed once per character of an unbounded repetition: SIGSEGV at 30000.
    expect_usage_error("kernel --kernel=gemm --mode=list m8n8k8beta0." + std::string(30000, '5'), "malformed problem");
    expect_usage_error("kernel --kernel=conv --mode=list mb1ic4ih4oc4kh1" + std::string(50000, 'a') + "1",
                       "malformed problem");
}

TEST(CliBadInput, WholeNumbersAreDecimalAndFitTheirType) {
    // CLI11 read 010 as octal 8 and 0x10 as 16, and capped a signed overflow at 2^63 - 1.
    const std::string run = "kernel --kernel=eltwise --alg=relu --isa=sse41 --mode=corr ";
    expect_usage_error(run + "--threads=010 64", "--threads: '010': a leading 0");
    expect_usage_error(run + "--seed=0x10 64", "--seed: '0x10' is not a whole number in decimal digits");
    expect_usage_error(run + "--max-ms-per-prb=+5 64", "--max-ms-per-prb: '+5'");
    expect_usage_error(run + "--period=9223372036854775808 64", "--period: '9223372036854775808' is too large");
    expect_usage_error(run + "--period=-9223372036854775809 64", "--period: '-9223372036854775809' is too small");
    // Before the option's range check, which said "not in range" of a number it could not read.
    expect_usage_error("audit --duration-ms=100 --pid=1e3", "--pid: '1e3' is not a whole number in decimal digits");
    const std::string batch = write_temp("octal.batch", run.substr(7) + "--threads=010 64\n");
    expect_usage_error("kernel --batch=" + batch, "--threads: '010': a leading 0");
    EXPECT_EQ(run_benchfp(run + "--seed=10 --period=9223372036854775807 64").status, 0);
    // The check is silent in the help: "--threads INT", not "INT:DECIMAL".
    const CommandRun help = run_benchfp("kernel --help");
    EXPECT_NE(help.output.find("--threads"), std::string::npos) << help.output;
    EXPECT_EQ(help.output.find("DECIMAL"), std::string::npos) << help.output;
    // Flags may be given once, but asking for help twice is still asking for help.
    for (const std::string twice : {"-h --help", "kernel --help -h", "judge -h -h"}) {
        const CommandRun again = run_benchfp(twice);
        EXPECT_EQ(again.status, 0) << twice << ": " << again.output;
        EXPECT_NE(again.output.find("Usage"), std::string::npos) << twice << ": " << again.output;
    }
}

TEST(CliBadInput, AnOutputMayNotReplaceAnInput) {
    const std::string batch = write_temp("input.batch", "--kernel=eltwise --alg=relu --isa=sse41 --mode=corr 64\n");
    expect_usage_error("kernel --batch=" + batch + " --csv=" + batch, "--csv names '" + batch + "', the file --batch reads");
    // A batch named inside another one: found where the cases are expanded, before any runs.
    const std::string outer = write_temp("outer.batch", "--batch=" + batch + "\n");
    expect_usage_error("kernel --batch=" + outer + " --json=" + batch, "--json names '" + batch + "', the file --batch reads");
    std::ifstream kept(batch);
    EXPECT_EQ(std::string(std::istreambuf_iterator<char>(kept), {}), "--kernel=eltwise --alg=relu --isa=sse41 --mode=corr 64\n");
    const std::string dir = temp_path("report_dir");
    std::filesystem::create_directories(dir);
    const std::string json = dir + "/report.json";
    std::ofstream(json) << "{}";  // refused before it is read
    expect_usage_error("judge --current=" + json + " --baseline-runs=" + dir + "/other.json --report=" + dir,
                       "--report names '" + json + "', the file --current reads");
    std::filesystem::remove_all(dir);
}

TEST(CliBadInput, ABadPoolReleaseThresholdIsBadInputNotAnAbort) {
    for (const char* value : {"garbage", "-1", "99999999999999999999", "+5", "0x10", "010"}) {
        const CommandRun run = run_shell(std::string("BENCHFP_POOL_RELEASE_BYTES='") + value + "' " + BENCHFP_BIN +
                                         " alloc profile --workload=structs --out=/dev/null");
        expect_run(run, 2, {"BENCHFP_POOL_RELEASE_BYTES", "is not a byte count"});
    }
}

// --jit-profile asked for and not writable: exit 2 before any case, not a note
// and exit 0; the map already made is taken back when the jitdump fails. A
// stale map of this user at this pid is replaced. The shell's pid is benchfp's
// after exec: what is planted is where its files go.
TEST(CliBadInput, AJitProfileThatCannotBeWrittenIsBadInput) {
    const std::string run_kernel =
        std::string(BENCHFP_BIN) + " kernel --kernel=eltwise --alg=relu --isa=sse41 --mode=corr";
    const CommandRun run = run_shell("sh -c 'echo pid=$$; ln -s /nonexistent /tmp/jit-$$.dump && exec " + run_kernel +
                                     " --jit-profile=map,jitdump 64'");
    expect_run(run, 2, {"--jit-profile: cannot write /tmp/jit-", "File exists"});
    EXPECT_EQ(run.output.find("PASSED"), std::string::npos) << run.output;
    const std::string pid = pid_after(run.output, "pid=");
    ASSERT_FALSE(pid.empty()) << run.output;
    EXPECT_FALSE(std::filesystem::exists(std::filesystem::symlink_status(perf_map_of(pid))));
    std::filesystem::remove(jitdump_of(pid));
    const CommandRun stale = run_shell("sh -c 'echo pid=$$; echo stale > /tmp/perf-$$.map && exec " + run_kernel +
                                       " --jit-profile=map 64'");
    expect_run(stale, 0, {"PASSED"});
    const std::string stale_pid = pid_after(stale.output, "pid=");
    ASSERT_FALSE(stale_pid.empty()) << stale.output;
    const std::string map = perf_map_of(stale_pid);
    std::ifstream written(map);
    const std::string text((std::istreambuf_iterator<char>(written)), {});
    EXPECT_EQ(text.find("stale"), std::string::npos) << text;
    EXPECT_NE(text.find("eltwise"), std::string::npos) << text;
    std::filesystem::remove(map);
}

// "--expect=," split into no item, and CLI11 took the next argument as the value.
TEST(CliBadInput, AListOfOnlyCommasIsAnEmptyValue) {
    expect_usage_error("audit --expect=, --delay-ms=50 -- /bin/true", "option '--expect=,' has an empty value");
    expect_usage_error("kernel --allow-untested=, --isa=avx2 64", "option '--allow-untested=,' has an empty value");
}
