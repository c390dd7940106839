// The allocation profile as its readers read it: every workload, in every
// sampling mode, decoded by `go tool pprof` (golang-go, scripts/setup.sh) and
// checked against the JSON summary written by the same run: the sample types,
// the default type, the period, the totals (within 0.1%), source lines that
// `-list` finds, the in-use snapshot (--inuse-at) and the folded stacks.
#include "cli_run.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

namespace {

struct Sampling {
    const char* name;
    const char* option;
    const char* period_type;  // go tool pprof -raw's "PeriodType:" line
    const char* period;       // and its "Period:"
};
const Sampling samplings[] = {
    {"bytes", "--sample-bytes=65536", "space bytes", "65536"},
    {"all", "--all", "objects count", "1"},
    {"probability", "--sample-rate=0.25", "objects count", "4"},
};

std::string temp_path(const std::string& name) { return benchfp::test::scratch_path("benchfp_pprof_", name); }

// go tool pprof's -raw listing: the four values of every sample, summed.
std::vector<double> raw_totals(const std::string& raw) {
    std::vector<double> totals(4, 0.0);
    static const std::regex sample(R"(^\s+(-?[0-9]+)\s+(-?[0-9]+)\s+(-?[0-9]+)\s+(-?[0-9]+): )");
    std::istringstream lines(raw);
    for (std::string line; std::getline(lines, line);) {
        std::smatch m;
        if (!std::regex_search(line, m, sample)) continue;
        for (size_t i = 0; i < 4; ++i) totals[i] += std::stod(m[i + 1]);
    }
    return totals;
}

std::string line_of(const std::string& text, const std::string& start) {
    const size_t at = text.find("\n" + start);
    if (at == std::string::npos) return "";
    return text.substr(at + 1, text.find('\n', at + 1) - at - 1);
}

nlohmann::json read_json(const std::string& path) {
    std::ifstream in(path);
    return nlohmann::json::parse(in);
}

CommandRun pprof(const std::string& args) { return run_shell("go tool pprof " + args); }

class CliPprof : public testing::TestWithParam<std::tuple<std::string, Sampling>> {};

TEST_P(CliPprof, GoToolPprofReadsTypesPeriodTotalsAndLines) {
    const auto& [workload, sampling] = GetParam();
    const std::string out = temp_path(workload + "_" + sampling.name + ".pb.gz");
    const CommandRun run = run_benchfp("alloc profile --workload=" + workload + " " + sampling.option + " --out=" + out +
                                       " --json=" + out + ".json --inuse-at=peak");
    ASSERT_EQ(run.status, 0) << run.output;
    const CommandRun raw = pprof("-raw " + out);
    ASSERT_EQ(raw.status, 0) << "go tool pprof (golang-go, scripts/setup.sh) cannot read it:\n" << raw.output;

    // The sample types and the default one, by name (pprof marks it [dflt]).
    EXPECT_NE(raw.output.find("alloc_objects/count alloc_space/bytes[dflt] inuse_objects/count inuse_space/bytes"),
              std::string::npos)
        << raw.output.substr(0, 600);
    EXPECT_EQ(line_of(raw.output, "PeriodType:"), std::string("PeriodType: ") + sampling.period_type);
    EXPECT_EQ(line_of(raw.output, "Period:"), std::string("Period: ") + sampling.period);
    EXPECT_NE(line_of(raw.output, "Time: "), "");
    EXPECT_NE(line_of(raw.output, "Duration: "), "");

    // Totals: pprof's equal the JSON's within 0.1% (weights added per stack, rounded once).
    const nlohmann::json totals = read_json(out + ".json")["totals"];
    const std::vector<double> sums = raw_totals(raw.output);
    const char* names[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
    for (size_t i = 0; i < 4; ++i) {
        const double want = totals[names[i]].get<double>();
        EXPECT_LE(std::abs(sums[i] - want), 0.001 * want + (want < 1000 ? 1 : 0)) << names[i] << ": pprof " << sums[i]
                                                                                  << ", JSON " << want;
    }
    // In use at the peak: never more than was allocated; with every allocation recorded, some of it
    // (sampled, the few objects of a peak may hold no sample; the consumer may have emptied the ring).
    EXPECT_LE(sums[2], sums[0]);
    EXPECT_LE(sums[3], sums[1]);
    if (std::string(sampling.name) == "all" && workload != "producer_consumer") {
        EXPECT_GT(sums[2], 0);
        EXPECT_GT(sums[3], 0);
    }

    // Source lines: the workload's frame has workloads.cpp and a line, and -list shows the source.
    EXPECT_TRUE(std::regex_search(raw.output, std::regex(workload + R"(\S* \S*lib/alloc/workloads\.cpp:[1-9][0-9]*)")))
        << raw.output;
    const CommandRun list = pprof("-list '" + workload + "$' " + out);
    EXPECT_EQ(list.status, 0) << list.output;
    EXPECT_NE(list.output.find("ROUTINE ="), std::string::npos) << list.output;
    EXPECT_NE(list.output.find("workloads.cpp"), std::string::npos) << list.output;
    EXPECT_TRUE(std::regex_search(list.output, std::regex(R"(\n\s+\S+\s+[0-9][0-9.]*[kMGT]?B\s+[0-9]+:)")))
        << "no source line carries a value:\n" << list.output;
    EXPECT_EQ(list.output.find("[clone"), std::string::npos) << list.output;
}

INSTANTIATE_TEST_SUITE_P(
    EveryWorkloadEverySampling, CliPprof,
    testing::Combine(testing::Values("arrays", "strings", "structs", "grow_array", "small_churn", "binary_trees",
                                     "producer_consumer"),
                     testing::ValuesIn(samplings)),
    [](const auto& info) { return std::get<0>(info.param) + "_" + std::get<1>(info.param).name; });

// The snapshots, with every allocation recorded: exact counts.
double inuse_objects(const std::string& workload, const std::string& at) {
    const std::string out = temp_path(workload + "_" + at + ".pb.gz");
    const CommandRun run = run_benchfp("alloc profile --workload=" + workload + " --all --inuse-at=" + at +
                                       " --out=" + out + " --json=" + out + ".json");
    EXPECT_EQ(run.status, 0) << run.output;
    const nlohmann::json summary = read_json(out + ".json");
    EXPECT_EQ(summary["inuse_at"], at);
    return summary["totals"]["inuse_objects"].get<double>();
}

TEST(CliPprofInuse, PeakHoldsTheWorkloadsLargestLiveSet) {
    EXPECT_EQ(inuse_objects("binary_trees", "peak"), 511);  // a whole tree of depth 8
    EXPECT_EQ(inuse_objects("small_churn", "peak"), 1024);  // every slot
    EXPECT_EQ(inuse_objects("grow_array", "peak"), 1);      // the grown array
}

TEST(CliPprofInuse, EndIsBeforeTheWorkloadFreesWhatItHolds) {
    EXPECT_EQ(inuse_objects("small_churn", "end"), 1024);  // its slots, freed only by the teardown
    EXPECT_EQ(inuse_objects("structs", "end"), 256);
    EXPECT_EQ(inuse_objects("binary_trees", "end"), 0);  // freed in each iteration: nothing left at the end
    EXPECT_EQ(inuse_objects("strings", "end"), 0);
}

TEST(CliPprofInuse, AnUnknownMomentIsBadInputNamingTheOption) {
    expect_usage_error("alloc profile --workload=structs --inuse-at=middle --out=/tmp/never.pb.gz", "--inuse-at");
    expect_usage_error("alloc profile --workload=structs --inuse-at= --out=/tmp/never.pb.gz", "--inuse-at");
}

// Folded stacks: FlameGraph's lines, the type as the last frame, the count in
// the unit asked for, adding up to the JSON's totals.
TEST(CliPprofFolded, CountsAreTheUnitAskedForAndAddUpToTheTotals) {
    for (const auto& [unit, total] : {std::pair{"bytes", "alloc_space"}, {"objects", "alloc_objects"}}) {
        const std::string out = temp_path(std::string("folded_") + unit + ".pb.gz");
        const CommandRun run = run_benchfp("alloc profile --workload=structs --sample-bytes=65536 --out=" + out +
                                           " --folded=" + out + ".folded --folded-unit=" + unit + " --json=" + out +
                                           ".json");
        ASSERT_EQ(run.status, 0) << run.output;
        std::ifstream folded(out + ".folded");
        double sum = 0;
        size_t lines = 0;
        for (std::string line; std::getline(folded, line); ++lines) {
            std::smatch m;
            ASSERT_TRUE(std::regex_match(line, m, std::regex(R"((.+;)([^;]+) ([0-9]+))"))) << line;
            // Root first: main before the workload, the workload before the type (frames may hold
            // spaces, "run(... const&, int)": the count is after the last one, as flamegraph.pl reads it).
            const std::string frames = m[1];
            ASSERT_NE(frames.find("::structs("), std::string::npos) << line;
            EXPECT_LT(frames.find(";main;"), frames.find("::structs(")) << line;
            EXPECT_EQ(m[2], "benchfp::alloc::workloads::(anonymous namespace)::Particle") << line;
            sum += std::stod(m[3]);
        }
        EXPECT_GT(lines, 0u);
        const double want = read_json(out + ".json")["totals"][total].get<double>();
        EXPECT_LE(std::abs(sum - want), 0.001 * want + double(lines)) << unit;
    }
}

}  // namespace
