// Output for tools. Machine-readable output stands alone: a perf template's
// rows on stdout (or --csv's file), status lines, the summary and notes on
// stderr. Every JSON output matches its JSON Schema (results/schemas, checked by
// scripts/validate_json.py with Debian's python3-jsonschema), and an output
// that changes shape does not.
#include "cli_run.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string temp_path(const std::string& name) { return benchfp::test::scratch_path("benchfp_tools_", name); }

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
}

struct SplitRun {
    int status = -1;
    std::string out, err;
};

// benchfp with stdout and stderr apart.
SplitRun run_split(const std::string& args) {
    const std::string err = temp_path("stderr.txt");
    const CommandRun run = run_shell(std::string("{ ") + BENCHFP_BIN + " " + args + " 2>" + err + "; }");
    return {run.status, run.output, read_text(err)};
}

const char* csv_header =
    "kernel,alg,isa,frame,threads,problem,min_ms,avg_ms,gflops_min,gflops_avg,gbps_min,gbps_avg,frame_ratio,"
    "vs_onednn,vs_copy,vs_peak,rounds,frame_cost,frame_lo,frame_hi,aa,aa_lo,aa_hi,pairs";
const char* reduce_perf = "kernel --mode=perf --kernel=reduce --alg=sum --frame=clobber,frame --max-ms-per-prb=20 ";

void expect_csv_rows(const std::vector<std::string>& lines, size_t rows) {
    ASSERT_EQ(lines.size(), rows + 1);
    EXPECT_EQ(lines[0], csv_header);
    for (size_t i = 1; i < lines.size(); ++i) {
        EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ','), 23) << lines[i];
        EXPECT_EQ(lines[i].rfind("reduce,sum,", 0), 0u) << lines[i];
    }
}

TEST(CliToolOutput, CsvTemplateStdoutHoldsTheRowsAlone) {
    const SplitRun run = run_split(std::string(reduce_perf) + "--perf-template=csv 4x4096");
    ASSERT_EQ(run.status, 0) << run.out << run.err;
    expect_csv_rows(lines_of(run.out), 2);
    EXPECT_NE(run.err.find("tests:2 passed:2"), std::string::npos) << run.err;
    EXPECT_EQ(run.out.find("tests:"), std::string::npos) << run.out;
}

TEST(CliToolOutput, CsvFileBesideTheHumanLines) {
    const std::string csv = temp_path("rows.csv");
    const SplitRun run = run_split(std::string(reduce_perf) + "--csv=" + csv + " 4x4096");
    ASSERT_EQ(run.status, 0) << run.out << run.err;
    expect_csv_rows(lines_of(read_text(csv)), 2);
    EXPECT_NE(run.out.find("perf,reduce,sum,"), std::string::npos) << run.out;  // stdout as without --csv
    EXPECT_NE(run.out.find("tests:2 passed:2"), std::string::npos) << run.out;
}

TEST(CliToolOutput, AnUnwritableCsvFileIsBadInputBeforeAnythingRuns) {
    expect_usage_error(std::string(reduce_perf) + "--csv=/nonexistent-dir/rows.csv 4x4096", "--csv");
}

TEST(CliToolOutput, NotesGoToStderrAndSayWhatIsMissing) {
    const SplitRun run = run_split("kernel --mode=unwind --kernel=eltwise --frame=frame --duration-ms=100 65536");
    const CommandRun both{run.status, run.out + run.err};
    SKIP_OR_FAIL_WITHOUT_PERF(both);
    ASSERT_EQ(run.status, 0) << run.out << run.err;
    EXPECT_EQ(run.out.find("note:"), std::string::npos) << run.out;
    // Only a host without a PMU falls back; there the note says so, without an errno's text.
    if (run.err.find("note:") != std::string::npos) {
        EXPECT_NE(run.err.find("no hardware PMU on this host (cycles unavailable), using perf::task-clock"),
                  std::string::npos)
            << run.err;
        EXPECT_EQ(run.err.find("No such file"), std::string::npos) << run.err;
    }
}

// scripts/validate_json.py's exit status and output.
CommandRun validate(const std::string& schema, const std::string& path) {
    return run_shell("scripts/validate_json.py " + schema + " " + path);
}

// The file matches its schema, and a copy changed by `change` does not.
void expect_schema_holds(const std::string& schema, const std::string& path,
                         void (*change)(nlohmann::json& doc)) {
    const CommandRun good = validate(schema, path);
    EXPECT_EQ(good.status, 0) << good.output;
    nlohmann::json doc = nlohmann::json::parse(read_text(path));
    change(doc);
    const std::string changed = temp_path(std::filesystem::path(path).filename().string() + ".changed.json");
    std::ofstream(changed) << doc.dump(2);
    const CommandRun bad = validate(schema, changed);
    EXPECT_EQ(bad.status, 1) << "a changed " << schema << " still matches:\n" << bad.output;
    EXPECT_NE(bad.output.find("does not match " + schema), std::string::npos) << bad.output;
}

TEST(CliJsonSchemas, EveryOutputMatchesItsSchemaAndAChangedOneDoesNot) {
    const std::string corr = temp_path("corr.json"), perf = temp_path("perf.json"), list = temp_path("list.json"),
                      alloc = temp_path("alloc.json"), report = temp_path("report"), step = temp_path("step.json");
    for (const std::string& args :
         {"kernel --kernel=eltwise --json=" + corr + " 4096", std::string(reduce_perf) + "--json=" + perf + " 4x4096",
          "kernel --batch=cases/reduce/step --isa=sse41 --json=" + step,
          "kernel --list --json=" + list,
          "alloc profile --workload=structs --out=" + alloc + ".pb.gz --json=" + alloc}) {
        const CommandRun run = run_benchfp(args);
        ASSERT_EQ(run.status, 0) << args << '\n' << run.output;
    }
    // Judged against the stored baselines: new and missing rows fail the gate (1), the report is written.
    const CommandRun judge =
        run_benchfp("judge --current=" + perf + " --cases=" + corr + " --cases=" + step + " --report=" + report);
    ASSERT_LE(judge.status, 1) << judge.output;
    EXPECT_FALSE(nlohmann::json::parse(read_text(report + "/report.json"))["cases"]["stepped"].empty());  // the step cases' frame cost

    expect_schema_holds("kernel-results", corr, [](nlohmann::json& d) { d["cases"][0]["ms"] = "12"; });
    expect_schema_holds("kernel-results", perf, [](nlohmann::json& d) { d["units"]["perf.min_ms"] = "ns"; });
    expect_schema_holds("kernel-list", list, [](nlohmann::json& d) { d.erase("schema"); });
    expect_schema_holds("alloc-profile", alloc, [](nlohmann::json& d) { d["totals"].erase("inuse_space"); });
    expect_schema_holds("judgement", report + "/report.json",
                        [](nlohmann::json& d) { d["machines"][0]["rows"][0]["unit"] = "furlongs"; });
    // An instruction row's unit follows its id: a stepped count given callgrind's unit does not match.
    expect_schema_holds("judgement", report + "/report.json", [](nlohmann::json& d) {
        for (nlohmann::json& row : d["machines"][0]["rows"])
            if (row["id"].get<std::string>().ends_with(": stepped stack accesses per call")) {
                row["unit"] = "instructions per operation";
                return;
            }
        ADD_FAILURE() << "no stepped stack count in the report";
    });
    for (const auto& entry : std::filesystem::directory_iterator(std::string(BENCHFP_SOURCE_DIR) + "/results/baselines"))
        for (const auto& file : std::filesystem::directory_iterator(entry.path()))
            expect_schema_holds("baseline", file.path().string(), [](nlohmann::json& d) {
                d["benchmarks"].begin().value()["min_ns"] = -1;
            });
}

TEST(CliJsonSchemas, TheValidatorRefusesAnUnknownSchemaAndAFileThatIsNotJson) {
    EXPECT_EQ(validate("nope", "results/tolerances.json").status, 2);
    EXPECT_EQ(validate("baseline", "README.md").status, 2);
    // What Python's json reads and JSON is not (NaN and Infinity: "matches", exit 0, before), a key
    // given twice (the last kept), nesting past Python's recursion limit (a traceback), and a FIFO
    // with no writer (a hang): each exit 2 with the reason (scripts/lib/strict_json.py).
    const std::string path = temp_path("not_json.json");
    for (const auto& [text, reason] : std::vector<std::pair<std::string, std::string>>{
             {R"({"alloc_space": NaN})", "NaN is not a JSON number"},
             {R"({"alloc_space": -Infinity})", "-Infinity is not a JSON number"},
             {R"({"schema": 1, "schema": 2})", "the key 'schema' is given twice in one object"},
             {std::string(100000, '[') + std::string(100000, ']'), "nested deeper than this reader holds"}}) {
        std::ofstream(path) << text;
        const CommandRun refused = validate("alloc-profile", path);
        EXPECT_EQ(refused.status, 2) << text.substr(0, 40) << ": " << refused.output;
        EXPECT_NE(refused.output.find(reason), std::string::npos) << refused.output;
        EXPECT_EQ(refused.output.find("Traceback"), std::string::npos) << refused.output;
    }
    const std::string fifo = temp_path("no_writer.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const CommandRun fifo_run = run_shell("timeout 20 scripts/validate_json.py alloc-profile " + fifo);
    EXPECT_EQ(fifo_run.status, 2) << fifo_run.output;
    EXPECT_NE(fifo_run.output.find("not a regular file"), std::string::npos) << fifo_run.output;
}

// scripts/carry_stepped_counts.py: another machine's baseline takes the stepped
// kernel counts at the ISAs it has, loses its own there that the source no
// longer has, and keeps everything else; its commit names the source's own
// commit, however often counts are carried; its mode stays and a link stays a
// link. Anything else is exit 2 with the reason, and leaves the target as it was.
TEST(CliGateTools, CarriedCountsAreTheSteppedOnesAtTheTargetsIsas) {
    const std::string sum512 = "kernel/reduce/sum/avx512/5x33/clobber: stepped instructions per call, nops apart";
    const std::string sum2 = "kernel/reduce/sum/avx2/5x33/clobber: stepped stack accesses per call";
    const std::string dropped = "kernel/reduce/sum/avx2/2x65/clobber: stepped stack accesses per call";
    const std::string hook = "pool_alloc: byte sampling at 512 KiB, minus compiled out (instructions per allocation)";
    const nlohmann::json source = {{"schema", "benchfp.baseline/1"},
                                   {"fingerprint", {{"cpu", "Zen 4"}, {"isa", "avx512"}, {"cores", 2}}},
                                   {"commit", "aaa, stepped kernel counts zzz (carried from Zen 9)"},
                                   {"benchmarks", {{"b", {{"min_ns", 1.0}}}}},
                                   {"instructions", {{sum512, 225.0}, {sum2, 3.0}, {hook, 11.0}}}};
    nlohmann::json target = source;
    target["fingerprint"] = {{"cpu", "Zen 3"}, {"isa", "avx2"}, {"cores", 2}};
    target["commit"] = "bbb";
    target["benchmarks"]["b"]["min_ns"] = 2.0;
    target["instructions"] = {{sum2, 5.0}, {dropped, 4.0}, {hook, 12.0}};
    const std::string from = temp_path("from.json"), to = temp_path("to.json"), link = temp_path("to_link.json");
    std::ofstream(from) << source.dump();
    std::ofstream(to) << target.dump();
    ASSERT_EQ(::chmod(to.c_str(), 0644), 0);
    std::filesystem::remove(link);
    std::filesystem::create_symlink(to, link);
    const std::string carry = "scripts/carry_stepped_counts.py " + from + " " + link;
    for (const std::string said : {"1 stepped counts changed, 0 added, 1 removed, 0 the same",
                                   "0 stepped counts changed, 0 added, 0 removed, 1 the same"}) {
        const CommandRun run = run_shell(carry);
        ASSERT_EQ(run.status, 0) << run.output;
        EXPECT_NE(run.output.find(said), std::string::npos) << run.output;
        const nlohmann::json carried = nlohmann::json::parse(read_text(to));
        EXPECT_EQ(carried["instructions"], (nlohmann::json{{sum2, 3.0}, {hook, 12.0}}));  // no avx512 row, its own hook count
        EXPECT_EQ(carried["benchmarks"], target["benchmarks"]);
        EXPECT_EQ(carried["commit"], "bbb, stepped kernel counts aaa (carried from Zen 4)");
        EXPECT_TRUE(std::filesystem::is_symlink(link));
        EXPECT_EQ(std::filesystem::status(to).permissions() & std::filesystem::perms::all,
                  std::filesystem::perms::owner_read | std::filesystem::perms::owner_write |
                      std::filesystem::perms::group_read | std::filesystem::perms::others_read);
    }
    const std::string kept = read_text(to);
    const auto refused = [&](const nlohmann::json& from_doc, const std::string& to_path, const std::string& reason) {
        std::ofstream(from) << from_doc.dump();
        const CommandRun run = run_shell("scripts/carry_stepped_counts.py " + from + " " + to_path);
        EXPECT_EQ(run.status, 2) << run.output;
        EXPECT_NE(run.output.find(reason), std::string::npos) << run.output;
        EXPECT_EQ(run.output.find("Traceback"), std::string::npos) << run.output;
        EXPECT_EQ(read_text(to), kept);
    };
    nlohmann::json other_schema = source;
    other_schema["schema"] = "benchfp.baseline/0";
    refused(other_schema, to, from + ": not a baseline: schema");
    nlohmann::json text_count = source;
    text_count["instructions"][sum2] = "abc";
    refused(text_count, to, from + ": not a baseline: instructions/" + sum2);
    refused(nlohmann::json::array(), to, from + ": not a baseline: (document)");
    nlohmann::json no_steps = source;
    no_steps["instructions"] = {{hook, 11.0}};
    refused(no_steps, to, "holds no stepped kernel counts");
    refused(source, from, "FROM and TO are the same file");
    refused(source, temp_path("none.json"), "none.json: [Errno 2]");
}

// The gate's scripts: help is exit 0, a bad argument exit 2 naming it, and
// before any long work (vs.sh built both trees before it read ROUNDS).
TEST(CliGateTools, TheScriptsCheckTheirArgumentsFirst) {
    for (const std::string script : {"scripts/vs.sh", "scripts/perf_crosscheck.sh", "scripts/validate_json.py",
                                     "scripts/failed_groups.py", "scripts/carry_stepped_counts.py"}) {
        const CommandRun help = run_shell(script + " --help");
        EXPECT_EQ(help.status, 0) << script << ": " << help.output;
        EXPECT_NE(help.output.find("sage"), std::string::npos) << script << ": " << help.output;  // Usage, usage
    }
    const CommandRun bare = run_shell("scripts/vs.sh");
    EXPECT_EQ(bare.status, 2) << bare.output;
    EXPECT_NE(bare.output.find("usage: scripts/vs.sh REF [ROUNDS]"), std::string::npos) << bare.output;
    for (const std::string rounds : {"abc", "0", "-1", "1.5", "1000"}) {
        const CommandRun run = run_shell("timeout 20 scripts/vs.sh HEAD " + rounds);
        EXPECT_EQ(run.status, 2) << rounds << ": " << run.output;
        EXPECT_NE(run.output.find("ROUNDS '" + rounds + "' is not a whole number from 1 to 999"), std::string::npos)
            << run.output;
    }
}

// scripts/perf_crosscheck.sh with a benchfp that fails after its first policy:
// exit 0 before, the later policies judged on the first one's record (a
// probe's finding). Now exit 2, naming the run.
TEST(CliGateTools, PerfCrosscheckFailsWhereBenchfpFails) {
    const std::string wrapper = temp_path("fails_after_clobber.sh");
    std::ofstream(wrapper) << "#!/bin/sh\ncase \"$*\" in *--frame=clobber*) exec " << BENCHFP_BIN
                           << " \"$@\";; esac\necho 'simulated failure' >&2; exit 2\n";
    std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
    const CommandRun run = run_shell("BENCHFP_BIN=" + wrapper + " DURATION_MS=200 scripts/perf_crosscheck.sh eltwise");
    if ((run.output.find("--frame=clobber:") != std::string::npos ||
         run.output.find("(apt-get install linux-perf)") != std::string::npos) &&
        !perf_required())
        GTEST_SKIP() << "perf record cannot run here:\n" << run.output;
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_NE(run.output.find("eltwise --frame=preserve: benchfp under perf record exited 2 and wrote no record"),
              std::string::npos)
        << run.output;
    EXPECT_EQ(run.output.find("eltwise    preserve"), std::string::npos) << run.output;
}

// The allocator benchmark programs (bench/): bad input said as such, exit 2,
// where a probe found SIGABRT (the pool's own stop on a bad
// BENCHFP_POOL_RELEASE_BYTES), a count of 0 (atol's) or a run of hours, and
// exit 0 beside an empty output file (a filter that matches no benchmark).
TEST(CliGateTools, TheBenchProgramsSayBadInputAsSuch) {
    const std::string bench = std::string(BENCHFP_BIN_DIR) + "/bench/";
    for (const std::string program : {"benchfp_alloc_gate --benchmark_list_tests", "benchfp_alloc_instructions hook-off 10",
                                      "benchfp_alloc_bench --benchmark_list_tests"}) {
        const CommandRun run = run_shell("BENCHFP_POOL_RELEASE_BYTES=abc " + bench + program);
        EXPECT_EQ(run.status, 2) << program << ": " << run.output;
        EXPECT_NE(run.output.find("BENCHFP_POOL_RELEASE_BYTES='abc' is not a byte count"), std::string::npos) << run.output;
    }
    for (const std::string n : {"abc", "''", "-5", "+3", "12x", "007", "' 7'", "1000000001", "99999999999999999999"}) {
        const CommandRun run = run_shell(bench + "benchfp_alloc_instructions hook-off " + n);
        EXPECT_EQ(run.status, 2) << n << ": " << run.output;
        EXPECT_NE(run.output.find("is not a count from 0 to 10^9"), std::string::npos) << run.output;
    }
    EXPECT_EQ(run_shell(bench + "benchfp_alloc_instructions hook-off 0").status, 0);
    for (const std::string variant : {"compiled-out-big", "hook-off-big"})
        EXPECT_EQ(run_shell(bench + "benchfp_alloc_instructions " + variant + " 10").status, 0) << variant;
    const CommandRun unknown = run_shell(bench + "benchfp_alloc_instructions hook-off-huge 10");
    EXPECT_EQ(unknown.status, 2) << unknown.output;
    EXPECT_NE(unknown.output.find("usage:"), std::string::npos) << unknown.output;
    // Values Google Benchmark would abort on (-1), run nothing with and pass (0),
    // never finish (nan), or print its usage for and exit 0 (xml).
    for (const std::string program : {"benchfp_alloc_gate", "benchfp_alloc_bench"})
        for (const auto& [flag, said] : std::vector<std::pair<std::string, std::string>>{
                 {"--benchmark_repetitions=-1", "is not a count from 1"},
                 {"--benchmark_repetitions=0", "is not a count from 1"},
                 {"--benchmark_repetitions=", "is not a count from 1"},
                 {"--benchmark_repetitions=1001", "is not a count from 1 to 1000"},
                 {"--benchmark_repetitions=010", "is not a count from 1 to 1000 (digits, no leading 0)"},
                 {"--benchmark_min_time=nan", "is not seconds"},
                 {"--benchmark_min_time=1e400", "is not seconds"},
                 {"--benchmark_min_time=60.001", "is not seconds: a finite number from 0 to 60"},
                 {"--benchmark_min_warmup_time=-1", "is not seconds"},
                 {"--benchmark_format=xml", "is not console or json"},
                 {"--benchmark_format=csv", "is not console or json"},
                 {"--benchmark_out_format=xml", "is not json"},
                 {"--benchmark_out_format=csv", "is not json"},
                 {"--benchmark_perf_counters=CYCLES", "is not available"},
                 {"--benchmark_time_unit=h", "is not ns, us, ms or s"},
                 {"--benchmark_enable_random_interleaving=maybe", "is not true or false"}}) {
            const CommandRun run = run_shell("timeout 60 " + bench + program + " --benchmark_filter=strings " + flag);
            EXPECT_EQ(run.status, 2) << program << " " << flag << ": " << run.output;
            const std::string name = flag.substr(0, flag.find('=')), value = flag.substr(flag.find('=') + 1);
            EXPECT_NE(run.output.find(name + "='" + value + "' " + said), std::string::npos)
                << program << " " << flag << ": " << run.output;
            // The same value in the environment variable Google Benchmark reads the flag's default from.
            std::string variable = name.substr(2);
            std::transform(variable.begin(), variable.end(), variable.begin(), ::toupper);
            const CommandRun from_environment =
                run_shell(variable + "='" + value + "' timeout 60 " + bench + program + " --benchmark_filter=strings");
            EXPECT_EQ(from_environment.status, 2) << variable << ": " << from_environment.output;
            EXPECT_NE(from_environment.output.find(variable + "='" + value + "' (Google Benchmark's default for " +
                                                   name + ") " + said),
                      std::string::npos)
                << from_environment.output;
        }
    // A flag given overrides its variable, which is then not checked.
    const CommandRun overridden = run_shell("BENCHMARK_REPETITIONS=0 BENCHMARK_FORMAT=csv " + bench +
                                            "benchfp_alloc_gate --benchmark_list_tests=true --benchmark_repetitions=3 "
                                            "--benchmark_format=console");
    EXPECT_EQ(overridden.status, 0) << overridden.output;
    // A filter from the environment that matches nothing is said as the variable's.
    const CommandRun filter = run_shell("BENCHMARK_FILTER=nothing " + bench + "benchfp_alloc_gate --benchmark_min_time=0");
    EXPECT_EQ(filter.status, 2) << filter.output;
    EXPECT_NE(filter.output.find("no benchmark matches BENCHMARK_FILTER='nothing' (its default)"), std::string::npos)
        << filter.output;
    // The limits themselves, and the empty defaults, are accepted (listing runs nothing).
    for (const std::string program : {"benchfp_alloc_gate", "benchfp_alloc_bench"}) {
        const CommandRun limits = run_shell(bench + program + " --benchmark_list_tests=true --benchmark_repetitions=1000 "
                                            "--benchmark_min_time=60 --benchmark_min_warmup_time=0 "
                                            "--benchmark_perf_counters= --benchmark_time_unit= --benchmark_format=json");
        EXPECT_EQ(limits.status, 0) << program << ": " << limits.output;
    }
    const std::string kept = temp_path("kept.json");
    std::ofstream(kept) << "{\"kept\": 1}";
    const CommandRun environment_out =
        run_shell("BENCHMARK_OUT=" + kept + " " + bench + "benchfp_alloc_gate --benchmark_filter='^alloc/nothing/'");
    EXPECT_EQ(environment_out.status, 2) << environment_out.output;
    EXPECT_NE(environment_out.output.find("BENCHMARK_OUT='" + kept + "' is set"), std::string::npos)
        << environment_out.output;
    EXPECT_EQ(read_text(kept), "{\"kept\": 1}");
    // --benchmark_out overrides it: the file given is written, the variable's left alone.
    const std::string given = temp_path("given.json");
    const CommandRun overriding = run_shell("BENCHMARK_OUT=" + kept + " " + bench +
                                            "benchfp_alloc_gate --benchmark_filter='^alloc/strings/off/' "
                                            "--benchmark_min_time=0 --benchmark_repetitions=1 --benchmark_out=" + given);
    EXPECT_EQ(overriding.status, 0) << overriding.output;
    EXPECT_NE(read_text(given).find("\"benchmarks\""), std::string::npos);
    EXPECT_EQ(read_text(kept), "{\"kept\": 1}");
    // The last --benchmark_out is the one, as Google Benchmark reads it: empty, no file is written
    // (the first one's was, through the temporary file both were pointed at).
    const std::string unasked = temp_path("unasked.json");
    const CommandRun last_empty = run_shell(bench + "benchfp_alloc_gate --benchmark_filter='^alloc/strings/off/' "
                                            "--benchmark_min_time=0 --benchmark_repetitions=1 --benchmark_out=" +
                                            unasked + " --benchmark_out=");
    EXPECT_EQ(last_empty.status, 0) << last_empty.output;
    EXPECT_FALSE(std::filesystem::exists(unasked)) << last_empty.output;
    // Listing runs nothing: a --benchmark_out file it would leave as it was is exit 2 (scripts/vs.sh
    // would have judged a stale file as the new run's).
    const CommandRun listed = run_shell("BENCHMARK_LIST_TESTS=1 " + bench +
                                        "benchfp_alloc_gate --benchmark_filter=strings/off --benchmark_out=" + kept);
    EXPECT_EQ(listed.status, 2) << listed.output;
    EXPECT_NE(listed.output.find("--benchmark_out: no results were written"), std::string::npos) << listed.output;
    EXPECT_EQ(read_text(kept), "{\"kept\": 1}");
    // No usable temporary directory is bad input, not SIGABRT.
    const CommandRun no_tmp = run_shell("TMPDIR=/nonexistent/dir " + bench +
                                        "benchfp_alloc_gate --benchmark_filter=strings/off --benchmark_out=" + kept);
    EXPECT_EQ(no_tmp.status, 2) << no_tmp.output;
    EXPECT_NE(no_tmp.output.find("--benchmark_out: no directory for a temporary file (TMPDIR?)"), std::string::npos)
        << no_tmp.output;
    // Interrupted, the run leaves no temporary file behind.
    const std::string tmp = temp_path("tmpdir");
    std::filesystem::create_directories(tmp);
    const CommandRun interrupted =
        run_shell("TMPDIR=" + tmp + " timeout -s INT 2 " + bench +
                  "benchfp_alloc_gate --benchmark_filter=strings --benchmark_min_time=5 --benchmark_out=" + kept);
    EXPECT_NE(interrupted.status, 0) << interrupted.output;
    EXPECT_TRUE(std::filesystem::is_empty(tmp)) << std::filesystem::directory_iterator(tmp)->path();
    EXPECT_EQ(read_text(kept), "{\"kept\": 1}");
    const std::string out = temp_path("gate_out.json");
    std::filesystem::remove(out);
    for (const std::string filter : {"'^alloc/nothing/'", "'('"}) {
        const CommandRun run = run_shell(bench + "benchfp_alloc_gate --benchmark_filter=" + filter + " --benchmark_out=" + out);
        EXPECT_EQ(run.status, 2) << filter << ": " << run.output;
        EXPECT_NE(run.output.find("no benchmark matches --benchmark_filter"), std::string::npos) << run.output;
        EXPECT_FALSE(std::filesystem::exists(out)) << filter;
    }
    const CommandRun unwritable = run_shell(bench + "benchfp_alloc_gate --benchmark_filter='^alloc/strings/off/' "
                                            "--benchmark_out=/nonexistent/gate.json");
    EXPECT_EQ(unwritable.status, 2) << unwritable.output;
    EXPECT_NE(unwritable.output.find("--benchmark_out: cannot write '/nonexistent/gate.json'"), std::string::npos)
        << unwritable.output;
    // Written whole from the run's own temporary, in place where it is a device, and nothing left behind.
    const CommandRun to_stdout = run_shell(bench + "benchfp_alloc_gate --benchmark_filter='^alloc/strings/off/' "
                                           "--benchmark_min_time=0.01 --benchmark_repetitions=1 --benchmark_out=/dev/stdout");
    EXPECT_EQ(to_stdout.status, 0) << to_stdout.output;
    EXPECT_NE(to_stdout.output.find("\"benchmarks\""), std::string::npos) << to_stdout.output;
    // A listing runs nothing: a results file asked for beside it is not written, and said so.
    const CommandRun list_only = run_shell(bench + "benchfp_alloc_gate --benchmark_list_tests --benchmark_out=" + out);
    EXPECT_EQ(list_only.status, 2) << list_only.output;
    EXPECT_FALSE(std::filesystem::exists(out)) << "a listing writes no results file";
}

// scripts/failed_groups.py, what ci/gate.sh re-runs: the groups of measured
// failures and of times the machine's move excused (unresolved time rows), by
// what produced them; never a passed row, a deterministic one, or an
// unresolved ratio (its interval straddles a limit: a longer run of the same
// process is not what it needs). A failed row with no group, or rows that are
// not objects, are exit 2.
TEST(CliGateTools, FailedGroupsNamesFailuresAndExcusedTimesOnly) {
    const auto report_of = [](const nlohmann::json& rows) {
        const std::string path = temp_path("judged.json");
        std::ofstream(path) << nlohmann::json{{"machines", {{{"rows", rows}}}}}.dump();
        return run_shell("scripts/failed_groups.py " + path);
    };
    const auto row = [](const std::string& group, const std::string& kind, const std::string& verdict) {
        return nlohmann::json{{"id", group + "/v"}, {"group", group}, {"kind", kind}, {"verdict", verdict}};
    };
    const CommandRun groups = report_of({row("alloc/arrays", "time", "unresolved"),
                                         row("alloc/structs", "time", "regression"),
                                         row("alloc/strings", "time", "invariant"),
                                         row("alloc/grow_array", "memory", "regression"),
                                         row("kernel/gemm/f32/avx2/m1024n1024k1024", "ratio", "unresolved"),
                                         row("kernel/gemm/f32/avx2/m16n4096k1024@2t", "time", "regression"),
                                         row("kernel/conv/f32/avx512/mb1ic64ih56oc64kh3ph1", "ratio", "over limit")});
    EXPECT_EQ(groups.status, 0) << groups.output;
    EXPECT_EQ(groups.output, "kernel conv avx512\nkernel gemm avx2\nalloc arrays|structs\n");
    // A failed row's group that is neither shape would re-run nothing, or a
    // workload filter of nothing: exit 2 (a probe found these dropped, exit 0).
    for (const std::string malformed : {"kernel/eltwise", "alloc/", "alloc", "kernel/elt wise/relu/avx2/64",
                                         "kernel/../relu/avx2/64", "bogus/x/y/z", ""}) {
        const CommandRun refused = report_of(nlohmann::json::array({row(malformed, "time", "regression")}));
        EXPECT_EQ(refused.status, 2) << malformed << ": " << refused.output;
        EXPECT_NE(refused.output.find("a failed row names no group"), std::string::npos) << refused.output;
    }
    nlohmann::json nameless = row("alloc/arrays", "time", "unresolved");
    nameless.erase("group");
    const CommandRun bad = report_of(nlohmann::json::array({nameless}));
    EXPECT_EQ(bad.status, 2) << bad.output;
    EXPECT_NE(bad.output.find("a failed row names no group: alloc/arrays/v"), std::string::npos) << bad.output;
    // Rows that are not rows: exit 2 with the reason, never a traceback.
    const CommandRun not_rows = report_of(nameless);
    EXPECT_EQ(not_rows.status, 2) << not_rows.output;
    EXPECT_NE(not_rows.output.find("cannot read the judgement"), std::string::npos) << not_rows.output;
    EXPECT_EQ(not_rows.output.find("Traceback"), std::string::npos) << not_rows.output;
    nlohmann::json listed_verdict = row("alloc/arrays", "time", "unresolved");
    listed_verdict["verdict"] = nlohmann::json::array({"regression"});
    const CommandRun odd = report_of(nlohmann::json::array({listed_verdict}));
    EXPECT_EQ(odd.status, 2) << odd.output;
    EXPECT_NE(odd.output.find("row 'alloc/arrays/v': its verdict is not a string"), std::string::npos) << odd.output;
    EXPECT_EQ(odd.output.find("Traceback"), std::string::npos) << odd.output;
    // No judgement at all (exit 0 and nothing re-run, before), and JSON nested
    // deeper than Python's recursion limit (a traceback): exit 2 with the reason.
    const std::string path = temp_path("not_judged.json");
    for (const std::string& text : {std::string(R"({"machines": {}})"), std::string(R"({"machines": [{"rows": ""}]})"),
                                    std::string("[]"), std::string(100000, '[') + std::string(100000, ']')}) {
        std::ofstream(path) << text;
        const CommandRun refused = run_shell("scripts/failed_groups.py " + path);
        EXPECT_EQ(refused.status, 2) << text.substr(0, 40) << ": " << refused.output;
        EXPECT_NE(refused.output.find("cannot read the judgement"), std::string::npos) << refused.output;
        EXPECT_EQ(refused.output.find("Traceback"), std::string::npos) << refused.output;
    }
    // A key given twice (the last "machines" kept: its failures dropped, exit 0, before), a verdict
    // the schema does not name (skipped, exit 0), and a FIFO with no writer (a hang).
    for (const auto& [text, reason] : std::vector<std::pair<std::string, std::string>>{
             {R"({"machines": [{"rows": [{"kind": "time", "verdict": "regression", "group": "alloc/a"}]}],)"
              R"( "machines": []})",
              "the key 'machines' is given twice"},
             {R"({"machines": [{"rows": [{"kind": "time", "verdict": "Regression", "group": "alloc/a"}]}]})",
              "its verdict 'Regression' is none of the schema's"},
             {R"({"machines": [{"rows": [{"kind": "speed", "verdict": "regression", "group": "alloc/a"}]}]})",
              "its kind 'speed' is none of the schema's"}}) {
        std::ofstream(path) << text;
        const CommandRun refused = run_shell("scripts/failed_groups.py " + path);
        EXPECT_EQ(refused.status, 2) << text << ": " << refused.output;
        EXPECT_NE(refused.output.find(reason), std::string::npos) << refused.output;
    }
    const std::string fifo = temp_path("judgement.fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const CommandRun fifo_run = run_shell("timeout 20 scripts/failed_groups.py " + fifo);
    EXPECT_EQ(fifo_run.status, 2) << fifo_run.output;
    EXPECT_NE(fifo_run.output.find("cannot read the judgement: not a regular file"), std::string::npos)
        << fifo_run.output;
}

}  // namespace
