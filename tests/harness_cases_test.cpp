// Expansion of options and batch files into cases: precedence, lists, nesting,
// and bad input named precisely.
#include "kernel/isa_tally.hpp"
#include "kernel/kernel_cases.hpp"
#include "usage_error.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace benchfp;
using namespace benchfp::harness;

namespace {

class CasesTest : public testing::Test {
protected:
    std::string write(const std::string& name, const std::string& text) {
        const auto path = dir_.path() / name;
        std::ofstream(path) << text;
        return path.string();
    }

    static std::string usage_error_of(const CaseOptions& cli, const ExpandLimits& limits = {}) {
        try {
            expand_cases(cli, std::nullopt, limits);
        } catch (const UsageError& e) {
            return e.what();
        }
        return "no error";
    }

    // Empty at each test's start, removed at its end (a fixture per test).
    benchfp::test::ScratchDir dir_{"benchfp_cases_"};
};

CaseOptions with_problem(std::string problem) {
    CaseOptions o;
    o.problems = {std::move(problem)};
    return o;
}

}  // namespace

TEST_F(CasesTest, ListsExpandToTheCartesianProduct) {
    CaseOptions cli = with_problem("100");
    cli.problems.push_back("7x3");
    cli.alg = "relu,exp";
    cli.isa = "avx2,avx512";
    cli.frame = "clobber,preserve,frame";
    const auto cases = expand_cases(cli, std::nullopt);
    EXPECT_EQ(cases.size(), 2u * 2 * 2 * 3);
    EXPECT_EQ(cases.front().spec.alg, "relu");
    EXPECT_EQ(cases.front().spec.frame, jit::FramePolicy::clobber);
    EXPECT_EQ(cases.back().problem, "7x3");
}

TEST_F(CasesTest, DefaultsAreCorrFrameAndTheHighestUsableIsa) {
    const auto cases = expand_cases(with_problem("64"), std::nullopt);
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].mode, Mode::corr);
    EXPECT_EQ(cases[0].spec.kernel, "eltwise");
    EXPECT_EQ(cases[0].spec.alg, "relu");
    EXPECT_EQ(cases[0].spec.frame, jit::FramePolicy::frame);
    if (cases[0].skip_reason.empty()) {
        EXPECT_TRUE(jit::isa_usable(cases[0].spec.isa, std::nullopt));
    }
    const auto capped = expand_cases(with_problem("64"), jit::Isa::avx2);
    EXPECT_EQ(capped[0].spec.isa, jit::Isa::avx2);
}

TEST_F(CasesTest, IsaAboveTheCapIsSkippedWithAReason) {
    CaseOptions cli = with_problem("64");
    cli.isa = "avx512";
    const auto cases = expand_cases(cli, jit::Isa::avx2);
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_NE(cases[0].skip_reason, "");
}

TEST_F(CasesTest, LineOptionsOverrideEnclosingLinesAndTheCommandLineOverridesAll) {
    const std::string inner = write("inner", "--frame=preserve --alg=exp 10\n# comment only\n\n20 # trailing\n");
    const std::string outer = write("outer", "--frame=clobber --mode=unwind --batch=" + inner + "\n");
    CaseOptions cli;
    cli.batches = {outer};
    auto cases = expand_cases(cli, std::nullopt);
    ASSERT_EQ(cases.size(), 2u);
    EXPECT_EQ(cases[0].spec.frame, jit::FramePolicy::preserve);  // inner line wins over outer line
    EXPECT_EQ(cases[0].spec.alg, "exp");
    EXPECT_EQ(cases[0].mode, Mode::unwind);                      // inherited from the outer line
    EXPECT_EQ(cases[1].spec.frame, jit::FramePolicy::preserve);  // carried to the following lines of its file
    EXPECT_EQ(cases[1].spec.alg, "exp");

    cli.frame = "frame";  // typed on the command line: overrides every batch line
    cases = expand_cases(cli, std::nullopt);
    for (const auto& c : cases) EXPECT_EQ(c.spec.frame, jit::FramePolicy::frame);
}

TEST_F(CasesTest, ReproReproducesTheCase) {
    CaseOptions cli = with_problem("4099");
    cli.mode = "unwind";
    cli.isa = "avx2";
    cli.frame = "clobber";
    cli.expect = "broken";
    const auto c = expand_cases(cli, std::nullopt).at(0);
    EXPECT_EQ(repro(c), "--mode=unwind --kernel=eltwise --alg=relu --isa=avx2 --frame=clobber --expect=broken "
                        "--duration-ms=500 4099");
}

TEST_F(CasesTest, BadInputNamesTheBadToken) {
    auto with = [](auto setter) {
        CaseOptions o = with_problem("64");
        setter(o);
        return o;
    };
    EXPECT_NE(usage_error_of(with([](CaseOptions& o) { o.kernel = "convx"; })).find("'convx'"), std::string::npos);
    EXPECT_NE(usage_error_of(with([](CaseOptions& o) { o.isa = "avx9"; })).find("'avx9'"), std::string::npos);
    EXPECT_NE(usage_error_of(with([](CaseOptions& o) { o.alg = "sigmoid"; })).find("'sigmoid'"), std::string::npos);
    EXPECT_NE(usage_error_of(with([](CaseOptions& o) { o.frame = "omit"; })).find("'omit'"), std::string::npos);
    EXPECT_NE(usage_error_of(with([](CaseOptions& o) { o.mode = "fast"; })).find("'fast'"), std::string::npos);
    EXPECT_NE(usage_error_of(with([](CaseOptions& o) { o.expect = "whole"; })).find("'whole'"), std::string::npos);
    for (const char* bad : {"12a", "0", "x", "4x", "4xx4", "-5", "99999999999999999999"})
        EXPECT_NE(usage_error_of(with_problem(bad)).find(std::string("'") + bad + "'"), std::string::npos) << bad;
    EXPECT_NE(usage_error_of(CaseOptions{}).find("no problem"), std::string::npos);
}

TEST_F(CasesTest, MalformedBatchLineNamesFileLineAndToken) {
    CaseOptions cli;
    cli.batches = {write("bad", "--frame=clobber 64\n--frame=frame --bogus 64\n")};
    const std::string error = usage_error_of(cli);
    EXPECT_NE(error.find("bad:2"), std::string::npos) << error;
    EXPECT_NE(error.find("--bogus"), std::string::npos) << error;

    cli.batches = {write("bad_problem", "--frame=frame 64 6O\n")};
    EXPECT_NE(usage_error_of(cli).find("bad_problem:1: malformed problem '6O'"), std::string::npos);

    cli.batches = {write("long_line", "--kernel=eltwise " + std::string(1 << 20, '6') + "\n")};
    EXPECT_NE(usage_error_of(cli).find("long_line:1: a line of 1048593 bytes; the most is 1048576"), std::string::npos)
        << usage_error_of(cli);

    cli.batches = {(dir_.path() / "missing").string()};
    EXPECT_NE(usage_error_of(cli).find("cannot open batch file"), std::string::npos);
    EXPECT_NE(usage_error_of(cli).find(": not found here or in the source tree"), std::string::npos);
    cli.batches = {dir_.path().string()};  // why, not only that
    EXPECT_NE(usage_error_of(cli).find(": not a regular file"), std::string::npos) << usage_error_of(cli);
    cli.batches = {"cases/gemm"};  // a directory of the source tree: judged there
    EXPECT_NE(usage_error_of(cli).find("'cases/gemm': not a regular file"), std::string::npos) << usage_error_of(cli);

    cli.batches = {write("loop", "--batch=" + (dir_.path() / "loop").string() + "\n")};
    EXPECT_NE(usage_error_of(cli).find("nested"), std::string::npos);
}

// Issue 10: a line of options alone used to be ignored; now, as in benchdnn,
// options carry to the following lines of the same file until --reset.
TEST_F(CasesTest, BatchOptionsCarryToTheFollowingLinesUntilReset) {
    CaseOptions cli;
    cli.batches = {write("carry", "--kernel=eltwise --alg=exp\n1024\n--frame=clobber 64\n32\n--reset\n16\n"
                                  "--reset --alg=tanh 8\n")};
    const auto cases = expand_cases(cli, std::nullopt);
    ASSERT_EQ(cases.size(), 5u);
    EXPECT_EQ(cases[0].spec.alg, "exp");
    EXPECT_EQ(cases[1].spec.frame, jit::FramePolicy::clobber);
    EXPECT_EQ(cases[2].spec.alg, "exp");
    EXPECT_EQ(cases[2].spec.frame, jit::FramePolicy::clobber);
    EXPECT_EQ(cases[3].spec.alg, "relu");  // after --reset: the defaults again
    EXPECT_EQ(cases[3].spec.frame, jit::FramePolicy::frame);
    EXPECT_EQ(cases[4].spec.alg, "tanh");  // --reset, then the line's own options
}

TEST_F(CasesTest, ResetKeepsTheIncludingLinesOptions) {
    const std::string inner = write("inner", "--alg=exp 10\n--reset\n20\n");
    CaseOptions cli;
    cli.batches = {write("outer", "--mode=list --batch=" + inner + "\n")};
    const auto cases = expand_cases(cli, std::nullopt);
    ASSERT_EQ(cases.size(), 2u);
    EXPECT_EQ(cases[1].spec.alg, "relu");
    EXPECT_EQ(cases[1].mode, Mode::list);
}

TEST_F(CasesTest, ByteOrderMarkDoesNotBreakTheFirstLine) {
    CaseOptions cli;
    cli.batches = {write("bom", "\xEF\xBB\xBF--alg=exp 64\n")};
    const auto cases = expand_cases(cli, std::nullopt);
    ASSERT_EQ(cases.size(), 1u);
    EXPECT_EQ(cases[0].spec.alg, "exp");
}

TEST_F(CasesTest, CaseCapStopsNestedBatchesDuringTheExpansion) {
    std::string next = write("leaf", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n");
    for (int level = 0; level < 5; ++level) {
        std::string lines;
        for (int i = 0; i < 10; ++i) lines += "--batch=" + next + "\n";
        next = write("level" + std::to_string(level), lines);
    }
    CaseOptions cli;
    cli.batches = {next};
    const std::string error = usage_error_of(cli, {1000, std::nullopt});
    EXPECT_NE(error.find("more than 1000 cases"), std::string::npos) << error;
    EXPECT_NE(error.find("--max-cases"), std::string::npos) << error;

    // Lines without cases are bounded too: 100 of them to each case (a batch with
    // no problem at all is refused: BatchWithoutProblemsIsRefused).
    cli.batches = {write("mostly_empty", std::string(100, '\n') + "64\n")};
    for (int level = 0; level < 5; ++level) {
        std::string lines;
        for (int i = 0; i < 10; ++i) lines += "--batch=" + cli.batches[0] + "\n";
        cli.batches = {write("empty" + std::to_string(level), lines)};
    }
    cli.problems = {"64"};
    EXPECT_NE(usage_error_of(cli, {100, std::nullopt}).find("batch lines"), std::string::npos);
}

TEST_F(CasesTest, BatchWithoutProblemsIsRefused) {
    CaseOptions cli;
    cli.batches = {write("comments_only", "# no problem here\n--isa=avx2\n\n")};
    EXPECT_NE(usage_error_of(cli, {100, std::nullopt}).find("names no problem to run"), std::string::npos);
    // One that includes a batch with problems is not empty.
    const std::string leaf = write("leaf_with_problem", "64\n");
    cli.batches = {write("includes_leaf", "--isa=avx2\n--batch=" + leaf + "\n")};
    EXPECT_NO_THROW(expand_cases(cli, std::nullopt, {100, std::nullopt}));
}

TEST_F(CasesTest, ProblemsThatCannotFitInMemoryAreRefusedBeforeAllocating) {
    CaseOptions cli = with_problem("268435456");  // 2^28 floats: 1 GiB each for src, dst and reference
    const std::string error = usage_error_of(cli, {100000, 2.0 * (1 << 30)});
    EXPECT_NE(error.find("needs 3 GiB"), std::string::npos) << error;
    EXPECT_NE(error.find("2 GiB is available"), std::string::npos) << error;
    cli.mode = "list";  // builds the kernel only
    EXPECT_EQ(usage_error_of(cli, {100000, 2.0 * (1 << 30)}), "no error");
    for (const char* kernel : {"gemm", "conv", "reduce", "reorder"}) {
        CaseOptions big = with_problem(kernel == std::string("gemm")   ? "m100000n100000k100000"
                                       : kernel == std::string("conv") ? "mb16ic64ih1024oc64kh3"
                                                                       : "32768x32768");
        big.kernel = kernel;
        EXPECT_NE(usage_error_of(big, {100000, 1.0 * (1 << 30)}).find("needs"), std::string::npos) << kernel;
    }
}

TEST_F(CasesTest, SizeProductsNeverWrap) {
    CaseOptions conv = with_problem("mb65536ic65536ih65536iw65536oc1kh1sh65536");  // 2^64 source elements
    conv.kernel = "conv";
    EXPECT_NE(usage_error_of(conv).find("too large"), std::string::npos);
    conv.problems = {"ic1ih1000oc999999kh1"};
    EXPECT_NE(usage_error_of(conv).find("too large"), std::string::npos);
    EXPECT_NE(usage_error_of(with_problem("2147483649")).find("too large"), std::string::npos);
    EXPECT_NE(usage_error_of(with_problem("65536x65536")).find("too large"), std::string::npos);
}

TEST_F(CasesTest, GemmBetaOutsideAFloatIsBadInput) {
    CaseOptions gemm = with_problem("m1n1k1beta" + std::string(45, '9'));
    gemm.kernel = "gemm";
    EXPECT_NE(usage_error_of(gemm).find("overflow"), std::string::npos);
    gemm.problems = {"m1n1k1beta0." + std::string(60, '0') + "1"};
    EXPECT_NE(usage_error_of(gemm).find("underflow"), std::string::npos);
}

TEST_F(CasesTest, EchoedTokensAreCutAndEscaped) {
    const std::string error = usage_error_of(with_problem(std::string(1 << 20, '7') + "q"));
    EXPECT_LT(error.size(), 400u) << error.substr(0, 400);
    EXPECT_NE(error.find("(1048577 bytes)"), std::string::npos);
    CaseOptions binary;
    binary.batches = {write("binary", std::string("--alg=relu \x01\x9a\x7f\n"))};
    const std::string binary_error = usage_error_of(binary);
    EXPECT_NE(binary_error.find("'\\x01\\x9a\\x7f'"), std::string::npos) << binary_error;
}

TEST_F(CasesTest, EmptyOptionValueIsRefusedNotFilledWithTheNextToken) {
    CaseOptions cli;
    cli.batches = {write("empty", "--kernel= 64\n")};
    EXPECT_NE(usage_error_of(cli).find("'--kernel=' has an empty value"), std::string::npos);
}

TEST_F(CasesTest, PeakPeerOnSse41IsRefusedClearly) {
    CaseOptions cli = with_problem("64");
    cli.mode = "perf";
    cli.vs = "peak";
    cli.isa = "sse41";
    EXPECT_NE(usage_error_of(cli).find("--vs=peak needs avx2"), std::string::npos);
}

TEST_F(CasesTest, ReproCarriesEveryKnobThatIsNotDefault) {
    CaseOptions cli = with_problem("64");
    cli.mode = "unwind";
    cli.min_samples = 50;
    cli.seed = 7;
    cli.threads = 2;
    const auto c = expand_cases(cli, std::nullopt).at(0);
    const std::string line = repro(c, " --freq=1000 --max-isa=avx2");
    for (const char* knob : {"--min-samples=50", "--seed=7", "--threads=2", "--duration-ms=500", "--freq=1000",
                             "--max-isa=avx2"})
        EXPECT_NE(line.find(knob), std::string::npos) << knob << " in " << line;
    EXPECT_TRUE(line.ends_with(" 64")) << line;
    cli.mode = "list";
    cli.min_samples.reset();
    cli.threads.reset();
    EXPECT_EQ(repro(expand_cases(cli, std::nullopt).at(0)).find("--min-samples"), std::string::npos);
}

TEST_F(CasesTest, OnlyIsasNamedOnTheCommandLineAreExplicit) {
    CaseOptions cli;
    cli.batches = {write("matrix", "--isa=sse41,avx2 64\n")};
    for (const auto& c : expand_cases(cli, std::nullopt)) EXPECT_FALSE(c.isa_explicit);
    cli.isa = "avx2";
    for (const auto& c : expand_cases(cli, std::nullopt)) EXPECT_TRUE(c.isa_explicit);
    cli.isa = "max";
    for (const auto& c : expand_cases(cli, std::nullopt)) EXPECT_FALSE(c.isa_explicit);
}

TEST(IsaTally, ARunInWhichNothingRanFails) {
    IsaTally tally(jit::Isa::avx2);
    KernelCase c;
    c.spec.isa = jit::Isa::avx512;
    tally.add(c, false);
    EXPECT_NE(tally.untested_failure({}).find("no case ran"), std::string::npos);
    EXPECT_NE(tally.untested_failure({"avx512"}).find("no case ran"), std::string::npos);
    EXPECT_NE(tally.line().find("avx512 ran:0 skipped:1 (not usable here: avx512 is above the ISA cap avx2)"),
              std::string::npos)
        << tally.line();
}

TEST(IsaTally, AnExplicitIsaThatCannotRunFailsUnlessAllowed) {
    IsaTally tally(jit::Isa::avx2);
    KernelCase ran, skipped;
    ran.spec.isa = jit::Isa::sse41;
    skipped.spec.isa = jit::Isa::avx512;
    skipped.isa_explicit = true;
    tally.add(ran, true);
    tally.add(skipped, false);
    EXPECT_NE(tally.untested_failure({}).find("--allow-untested=avx512"), std::string::npos);
    EXPECT_EQ(tally.untested_failure({"avx512"}), "");
    skipped.isa_explicit = false;  // --isa=max, or a batch's ISA matrix
    IsaTally implicit(jit::Isa::avx2);
    implicit.add(ran, true);
    implicit.add(skipped, false);
    EXPECT_EQ(implicit.untested_failure({}), "");
    EXPECT_EQ(implicit.line(), "isa: sse41 ran:1 skipped:0, avx512 ran:0 skipped:1 (not usable here: avx512 is above "
                               "the ISA cap avx2)");
}
