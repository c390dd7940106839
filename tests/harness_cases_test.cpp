// Expansion of options and batch files into cases: precedence, lists, nesting,
// and bad input named precisely.
#include "kernel/kernel_cases.hpp"
#include "usage_error.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

using namespace benchfp;
using namespace benchfp::harness;

namespace {

class CasesTest : public testing::Test {
protected:
    void SetUp() override {
        dir_ = std::filesystem::temp_directory_path() /
               ("benchfp_cases_" + std::to_string(getpid()) + "_" +
                testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::create_directories(dir_);
    }
    void TearDown() override { std::filesystem::remove_all(dir_); }

    std::string write(const std::string& name, const std::string& text) {
        const auto path = dir_ / name;
        std::ofstream(path) << text;
        return path.string();
    }

    static std::string usage_error_of(const CaseOptions& cli) {
        try {
            expand_cases(cli, std::nullopt);
        } catch (const UsageError& e) {
            return e.what();
        }
        return "no error";
    }

    std::filesystem::path dir_;
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
    EXPECT_EQ(cases[1].spec.frame, jit::FramePolicy::clobber);   // the inner line's options stay on it
    EXPECT_EQ(cases[1].spec.alg, "relu");

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

    cli.batches = {(dir_ / "missing").string()};
    EXPECT_NE(usage_error_of(cli).find("cannot open batch file"), std::string::npos);

    cli.batches = {write("loop", "--batch=" + (dir_ / "loop").string() + "\n")};
    EXPECT_NE(usage_error_of(cli).find("nested"), std::string::npos);
}
