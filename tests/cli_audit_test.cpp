// End to end: `benchfp audit` as a fleet engineer runs it, on benchfp's own
// kernels in a child, by pid and system-wide, on oneDNN's and LuaJIT's JIT code,
// and on bad input. Sampling skips or fails as in cli_test.cpp (BENCHFP_REQUIRE_PERF).
#include "cli_run.hpp"
#include "scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

// benchfp audit: benchfp's own kernel in a child, seen from outside as a fleet
// profiler sees it, must get the verdict the in-process check gives each policy.
struct AuditCase {
    const char* frame;
    const char* verdict;  // the key in report.json
    const char* how;      // how the process is named: "child", "delayed", "pid", "system-wide"
};

class CliAudit : public testing::TestWithParam<AuditCase> {};

// The report.json thread of `pid` (or the only one).
nlohmann::json audit_thread(const std::filesystem::path& report) {
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(report / "report.json"));
    return j["threads"].empty() ? nlohmann::json() : j["threads"][0];
}

TEST_P(CliAudit, SeesTheInProcessVerdictFromOutside) {
    const AuditCase p = GetParam();
    const std::filesystem::path report = benchfp::test::scratch_path("benchfp_cli_", std::string("audit_") + p.frame + "_" + p.how);
    const std::string child = std::string(BENCHFP_BIN) + " kernel --kernel=eltwise --alg=exp --frame=" +
                              p.frame + " --mode=unwind --min-samples=1 --duration-ms=4000 262144";
    const std::string audit = " audit --expect=bar,foo,main --duration-ms=600 --report=" + report.string();
    const std::string how = p.how;
    CommandRun run;
    if (how == "child") run = run_benchfp(audit + " --delay-ms=200 -- " + child);
    else if (how == "delayed") run = run_benchfp(audit + " --delay-ms=1500 -- " + child);
    else  // attach by pid to a process started elsewhere, mid-run
        run = run_shell(child + " >/dev/null & p=$!; sleep 0.5; " + BENCHFP_BIN + audit + " --pid=$p" +
                        (how == "system-wide" ? " --system-wide" : "") + "; s=$?; kill $p; exit $s");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    ASSERT_EQ(run.status, 0) << run.output;
    const nlohmann::json t = audit_thread(report);
    ASSERT_FALSE(t.is_null()) << "no JIT samples seen:\n" << run.output;
    const long judged = t["full"].get<long>() + t["skipped_caller"].get<long>() + t["broken"].get<long>();
    EXPECT_GE(judged, 100) << run.output;
    // The window may catch a few samples between the prologue's push of rbp and its clobbering.
    EXPECT_GE(t[p.verdict].get<long>(), judged * 95 / 100) << run.output;
    std::filesystem::remove_all(report);
}

INSTANTIATE_TEST_SUITE_P(
    Policies, CliAudit,
    testing::Values(AuditCase{"clobber", "broken", "child"}, AuditCase{"preserve", "skipped_caller", "child"},
                    AuditCase{"frame", "full", "child"}, AuditCase{"clobber", "broken", "delayed"},
                    AuditCase{"preserve", "skipped_caller", "delayed"}, AuditCase{"frame", "full", "delayed"},
                    AuditCase{"clobber", "broken", "pid"}, AuditCase{"preserve", "skipped_caller", "pid"},
                    AuditCase{"frame", "full", "pid"}, AuditCase{"frame", "full", "system-wide"},
                    AuditCase{"clobber", "broken", "system-wide"}),
    [](const testing::TestParamInfo<AuditCase>& info) {
        std::string how = info.param.how;
        std::replace(how.begin(), how.end(), '-', '_');
        return std::string(info.param.frame) + "_" + how;
    });

TEST(CliAudit, NoSuchProcessIsBadInput) { expect_usage_error("audit --pid=999999999 --duration-ms=100", "no process"); }
// A thread's id opens /proc like a process's, but its process's samples carry
// the process's id: "no sample" (exit 1) before; now said, with that id.
TEST(CliAudit, AThreadIdIsNotAProcessId) {
    // `true;` first: run_shell prefixes "cd DIR &&", and "cd DIR && python3 ... &" would put
    // both in a background subshell, whose pid $! is. Polled until the second thread exists.
    const CommandRun run = run_shell(
        "true; python3 -c 'import threading, time; threading.Thread(target=time.sleep, args=(30,), daemon=True)"
        ".start(); time.sleep(30)' & P=$!; for i in $(seq 100); do [ $(ls /proc/$P/task | wc -l) -ge 2 ] && break;"
        " sleep 0.1; done; T=$(ls /proc/$P/task | grep -vx $P | head -1); " +
        std::string(BENCHFP_BIN) + " audit --duration-ms=100 --pid=$T 2>&1; S=$?; kill $P; echo \"pid $P status $S\"");
    EXPECT_NE(run.output.find("is a thread (python3) of process "), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(": --pid takes the process's id"), std::string::npos) << run.output;
    EXPECT_NE(run.output.find(" status 2"), std::string::npos) << run.output;
}
TEST(CliAudit, NamesExactlyOneProcess) {
    expect_usage_error("audit --duration-ms=100", "name one process");
    // Two named: both said, as given.
    expect_usage_error("audit --duration-ms=100 --pid=1 -- /bin/true", "(given: --pid=1 and -- /bin/true)");
}
TEST(CliAudit, ACommandThatExitsAtOnceIsBadInput) {
    expect_usage_error("audit -- /bin/true", "exited within --delay-ms=300 (exit status 0)");
    expect_usage_error("audit -- /bin/sh -c 'exit 3'", "exited within --delay-ms=300 (exit status 3)");
    // Asleep through the attach, then gone: exit 2 "before any sample", or, where a sample caught
    // its exit, a report whose note says it; either way how it ended.
    const CommandRun slept = run_benchfp("audit --delay-ms=100 --duration-ms=3000 -- /bin/sh -c 'sleep 0.6; exit 7'");
    SKIP_OR_FAIL_WITHOUT_PERF(slept);
    EXPECT_TRUE(slept.status == 2 || slept.status == 0) << slept.output;
    EXPECT_NE(slept.output.find("(exit status 7)"), std::string::npos) << slept.output;
}
TEST(CliAudit, AProgramWithoutJitCodeIsReportedNotFailed) {
    expect_sampled_run("audit --duration-ms=200 --delay-ms=100 -- /bin/sh -c 'while :; do :; done'", 0,
                       {"No JIT code was seen", "JIT samples: 0 of "});
}
// A process that never ran in the window gave nothing to report: no green.
TEST(CliAudit, AProcessWithNoSampleAtAllIsNotAFinding) {
    expect_sampled_run("audit --duration-ms=200 --delay-ms=100 -- /bin/sleep 2", 1, {"no sample of process"});
    // An event other than a clock samples where it occurs, not wherever the process runs.
    expect_sampled_run("audit --event=perf::page-faults --duration-ms=200 --delay-ms=500 -- /bin/sleep 2", 1,
                       {"it did not run on a CPU, or no perf::page-faults event occurred in it"});
}
TEST(CliAudit, NamesJitCodeFromThePerfMapWhenTheProcessWritesOne) {
    const CommandRun run = run_benchfp("audit --duration-ms=400 --delay-ms=300 -- " + std::string(BENCHFP_BIN) +
                                       " kernel --jit-profile=map --kernel=eltwise --alg=relu --frame=frame"
                                       " --mode=unwind --duration-ms=3000 262144");
    // The child's map outlives it, for perf report (README): the test removes it.
    if (const std::string pid = pid_after(run.output, "# benchfp audit of pid "); !pid.empty())
        std::filesystem::remove(perf_map_of(pid));
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, 0) << run.output;
    for (const char* text : {"eltwise_relu_", "_frame (0x"})
        EXPECT_NE(run.output.find(text), std::string::npos) << text << " in:\n" << run.output;
}
TEST(CliAudit, AProcessThatExitsDuringTheWindowIsReportedWithANote) {
    expect_sampled_run("audit --expect=bar,foo,main --duration-ms=4000 --delay-ms=200 -- " + std::string(BENCHFP_BIN) +
                           " kernel --kernel=eltwise --frame=frame --mode=unwind --duration-ms=600 262144",
                       0, {"exited during the window (exit status ", "| full"});  // the case's own verdict: 0 or 1
    // How the command ended is said: a crash is not a clean exit (no core file left: ulimit).
    expect_sampled_run("audit --duration-ms=20000 --delay-ms=100 -- /bin/sh -c 'ulimit -c 0; i=0; while [ $i -lt "
                       "1000000 ]; do i=$((i+1)); done; kill -SEGV $$'",
                       0, {"exited during the window (killed by SIGSEGV)"});
}

// The command's input is /dev/null, also when benchfp's own is closed.
TEST(CliAudit, TheCommandReadsDevNullEvenWhenBenchfpHasNoInput) {
    for (const char* input : {"</dev/zero", "<&-"}) {
        const CommandRun run = run_benchfp("audit --delay-ms=100 --duration-ms=100 -- /bin/sh -c "
                                           "'readlink /proc/$$/fd/0 >&2 || echo no-stdin >&2; while :; do :; done' " +
                                           std::string(input));
        // Printed before the attach: a host without perf shows it all the same.
        EXPECT_NE(("\n" + run.output).find("\n/dev/null\n"), std::string::npos) << input << ":\n" << run.output;
    }
}

// oneDNN's OpenMP workers and the target's own thread start right after exec:
// attached at once, most are born after the attach and found by the re-scan.
TEST(CliAudit, SeesEveryThreadAlsoThoseBornAfterTheAttach) {
    const std::filesystem::path report = benchfp::test::scratch_path("benchfp_cli_", "audit_threads");
    const CommandRun run = run_benchfp("audit --delay-ms=0 --duration-ms=1500 --report=" + report.string() + " -- " +
                                       BENCHFP_BIN_DIR "/benchfp_onednn_target eltwise 3000 1");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    ASSERT_EQ(run.status, 0) << run.output;
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(report / "report.json"));
    EXPECT_GE(j["threads"].size(), 2u) << run.output;  // main and its own thread, at least
    std::filesystem::remove_all(report);
}

// A JIT that is neither benchfp's nor oneDNN's, from Debian (luajit): its trace
// code is found without its help, and the culprit table names rbp's use there
// (LuaJIT keeps a loop counter in ebp: every sample in the trace is broken).
TEST(CliAudit, SeesLuaJitTraces) {
    const std::filesystem::path report = benchfp::test::scratch_path("benchfp_cli_", "audit_luajit");
    const CommandRun run = run_benchfp("audit --delay-ms=300 --duration-ms=800 --report=" + report.string() +
                                       " -- luajit tests/data/hot_loop.lua");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_NE(run.output.find("| jit@0x"), std::string::npos) << run.output;  // an anonymous executable region
    EXPECT_NE(run.output.find("## Culprits"), std::string::npos) << run.output;
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(report / "report.json"));
    ASSERT_FALSE(j["threads"].empty()) << run.output;
    EXPECT_GT(j["threads"][0]["broken"].get<long>(), 100) << run.output;
    std::filesystem::remove_all(report);
}

// benchfp's own parallel section seen from outside: the calling thread's chains
// reach main, the worker's reach glibc's start_thread through the pool's entry
// (pthread_create, an entry built with frame pointers), each reported apart.
TEST(CliAudit, EveryThreadOfAParallelSectionReachesItsStart) {
    const std::filesystem::path report = benchfp::test::scratch_path("benchfp_cli_", "audit_pool");
    const CommandRun run = run_benchfp(
        "audit --delay-ms=300 --duration-ms=800 --report=" + report.string() + " -- " + BENCHFP_BIN +
        " kernel --kernel=eltwise --alg=exp --frame=frame --threads=2 --mode=unwind --duration-ms=3000 "
        "--min-samples=1 4194304");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    ASSERT_EQ(run.status, 0) << run.output;
    const nlohmann::json j = nlohmann::json::parse(std::ifstream(report / "report.json"));
    ASSERT_EQ(j["threads"].size(), 2u) << run.output;
    for (const auto& t : j["threads"]) {
        const long judged = t["full"].get<long>() + t["skipped_caller"].get<long>() + t["broken"].get<long>();
        EXPECT_GE(judged, 100) << run.output;
        EXPECT_GE(t["full"].get<long>(), judged * 95 / 100) << run.output;  // without --expect: reaches its start
    }
    std::filesystem::remove_all(report);
}

// The command line is the process's text, not markup: a line break in an
// argument made a heading of its own in report.md.
TEST(CliAudit, TheCommandIsTextInTheReport) {
    expect_sampled_run("audit --duration-ms=200 --delay-ms=100 -- /bin/sh -c 'while :; do :; done' "
                       "\"$(printf 'x\\n## Injected <b>')\"",
                       0, {"x ## Injected &lt;b&gt;"});
}

// Whether process `pid` is gone: killed, it may stay a zombie until init reaps it.
bool process_gone(pid_t pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string text;
    std::getline(stat, text);
    return text.empty() || text.find(") Z ") != std::string::npos;
}

// The pid a command wrote into `file`, or 0; the file removed.
pid_t pid_written(const std::filesystem::path& file) {
    std::ifstream in(file);
    pid_t pid = 0;
    in >> pid;
    std::filesystem::remove(file);
    return pid;
}

// What the command started stops with it: a shell's child that ignores SIGTERM
// (it gets SIGKILL after the grace period) was left running when only the
// command itself was signalled, and so was every child of a command that
// exited within --delay-ms. The children's output goes to /dev/null: on a pipe
// to the test, a survivor would hold it open and the test would wait for it.
TEST(CliAudit, WhatTheCommandStartedStopsWithIt) {
    const std::filesystem::path pid_file = benchfp::test::scratch_path("benchfp_cli_", "audit_group");
    const CommandRun run = run_benchfp("audit --duration-ms=200 --delay-ms=200 -- /bin/sh -c "
                                       "'(trap \"\" TERM; exec sleep 60) >/dev/null 2>&1 & echo $! > " +
                                       pid_file.string() + "; while :; do :; done'");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, 0) << run.output;
    const pid_t ignoring = pid_written(pid_file);
    ASSERT_GT(ignoring, 0) << run.output;
    usleep(200 * 1000);  // for init to reap it
    EXPECT_TRUE(process_gone(ignoring)) << "the command's child " << ignoring << " survived the audit";
    if (!process_gone(ignoring)) kill(ignoring, SIGKILL);

    expect_usage_error("audit --duration-ms=200 --delay-ms=300 -- /bin/sh -c '(exec sleep 60) >/dev/null 2>&1 & echo $! > " +
                           pid_file.string() + "; exit 0'",
                       "exited within --delay-ms=300");
    const pid_t orphan = pid_written(pid_file);
    ASSERT_GT(orphan, 0);
    usleep(200 * 1000);
    EXPECT_TRUE(process_gone(orphan)) << "the child " << orphan << " of a command that exited survived it";
    if (!process_gone(orphan)) kill(orphan, SIGKILL);

    // A child in a session of its own is out of the group's reach: it comes
    // back to benchfp, the subreaper, when the shell dies, and is stopped there.
    const CommandRun escaped = run_benchfp("audit --duration-ms=200 --delay-ms=200 -- /bin/sh -c "
                                           "'setsid sleep 60 >/dev/null 2>&1 & echo $! > " + pid_file.string() +
                                           "; while :; do :; done'");
    EXPECT_EQ(escaped.status, 0) << escaped.output;
    const pid_t session = pid_written(pid_file);
    ASSERT_GT(session, 0) << escaped.output;
    usleep(200 * 1000);
    EXPECT_TRUE(process_gone(session)) << "the command's setsid child " << session << " survived the audit";
    if (!process_gone(session)) kill(session, SIGKILL);
}

// A command that leaves its own process group is still the command: it is
// signalled by its pid, where a signal to the group reached nobody and the
// final wait for it hung, deaf to SIGTERM (timeout would end it with 124).
TEST(CliAudit, ACommandThatLeavesItsGroupIsStoppedAllTheSame) {
    const std::filesystem::path pid_file = benchfp::test::scratch_path("benchfp_cli_", "audit_left");
    const CommandRun run = run_shell("timeout 20 " + std::string(BENCHFP_BIN) +
                                     " audit --duration-ms=200 --delay-ms=300 -- perl -e "
                                     "'open(my $f, \">" + pid_file.string() + "\"); print $f $$; close($f); "
                                     "setpgrp(0, getpgrp(getppid())); open(STDOUT, \">/dev/null\"); "
                                     "open(STDERR, \">/dev/null\"); 1 while 1'");
    const pid_t command = pid_written(pid_file);
    const bool gone = command > 0 && process_gone(command);
    if (command > 0 && !gone) kill(command, SIGKILL);
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, 0) << run.output;
    ASSERT_GT(command, 0) << run.output;
    EXPECT_TRUE(gone) << "the command " << command << " survived the audit";
}

// A shell that exec's benchfp keeps its children, which become benchfp's: they
// are not the command's, and were killed as its orphans.
TEST(CliAudit, ChildrenBenchfpHadBeforeTheCommandAreLeftAlone) {
    const std::filesystem::path pid_file = benchfp::test::scratch_path("benchfp_cli_", "audit_earlier");
    const CommandRun run = run_shell("/bin/sh -c 'sleep 30 >/dev/null 2>&1 & echo $! > " + pid_file.string() +
                                     "; exec " + BENCHFP_BIN +
                                     " audit --duration-ms=200 --delay-ms=200 -- /bin/sh -c \"while :; do :; done\"'");
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, 0) << run.output;
    const pid_t earlier = pid_written(pid_file);
    ASSERT_GT(earlier, 0) << run.output;
    EXPECT_FALSE(process_gone(earlier)) << "benchfp killed a child it had before the command:\n" << run.output;
    kill(earlier, SIGKILL);
}

// Exited before the attach: said so, not as libdw's "No such process".
TEST(CliAudit, ACommandThatExitsBeforeTheAttachIsSaidSo) {
    const CommandRun run = run_benchfp("audit --delay-ms=0 --duration-ms=100 -- /bin/sh -c 'exit 3'");
    if (run.status == 0) {
        // The attach won the race (a loaded machine: a ctest -j2 run once saw
        // it, 1 sample): the process exited during the window, and that is said.
        EXPECT_NE(run.output.find("the process exited during the window"), std::string::npos) << run.output;
    } else {
        EXPECT_EQ(run.status, 2) << run.output;
        EXPECT_TRUE(run.output.find("exited before") != std::string::npos ||
                    run.output.find("exited within --delay-ms=0") != std::string::npos)
            << run.output;
    }
    // libdw's own words only as the detail of that, never alone.
    const size_t detail = run.output.find("No such process");
    EXPECT_TRUE(detail == std::string::npos || run.output.find("exited before it could be audited (") < detail)
        << run.output;
    expect_usage_error("audit --duration-ms=100 -- /tmp", "cannot start '/tmp': a directory");
}

// A SIGTERM to benchfp mid-window ends the audit at once, stops the command,
// takes back the report directories it made, and ends benchfp by that signal
// (status 143 in the shell), leaving no orphan.
TEST(CliAudit, ASignalToBenchfpStopsTheCommandToo) {
    const std::filesystem::path base = benchfp::test::scratch_path("benchfp_cli_", "audit_signal");
    const auto pid_file = base.string() + ".pid";
    std::filesystem::remove_all(base);
    std::filesystem::remove(pid_file);
    CommandRun run = run_shell(std::string(BENCHFP_BIN) + " audit --duration-ms=60000 --delay-ms=100 --report=" +
                               base.string() + "/sub -- /bin/sh -c 'exec >/dev/null 2>&1; echo $$ > " + pid_file +
                               "; exec sleep 600' & b=$!; for i in $(seq 100); do [ -s " + pid_file +
                               " ] && break; sleep 0.05; done; sleep 0.5; start=$(date +%s); kill -TERM $b; wait $b; "
                               "echo \"status=$?\"; echo \"took=$(( $(date +%s) - start ))\"");
    const auto status_at = run.output.find("status=");
    ASSERT_NE(status_at, std::string::npos) << run.output;
    run.status = std::stoi(run.output.substr(status_at + 7));  // benchfp's, for the skip rule
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, 143) << run.output;
    EXPECT_TRUE(run.output.find("took=0") != std::string::npos || run.output.find("took=1") != std::string::npos ||
                run.output.find("took=2") != std::string::npos)
        << run.output;
    const pid_t child = pid_written(pid_file);
    ASSERT_GT(child, 0) << run.output;
    const bool gone = kill(child, 0) != 0;  // benchfp reaped it: no zombie either
    EXPECT_TRUE(gone) << "the audited command " << child << " outlived benchfp:\n" << run.output;
    if (!gone) kill(child, SIGKILL);
    EXPECT_FALSE(std::filesystem::exists(base)) << "the report directories were left behind";
    std::filesystem::remove_all(base);
}

// A process with nothing to audit is named for what it is: libdw said only
// "No such process" of a kernel thread and of a zombie.
TEST(CliAudit, AZombieOrAKernelThreadIsBadInputSaidAsSuch) {
    const pid_t zombie = fork();
    ASSERT_GE(zombie, 0);
    if (zombie == 0) _exit(0);
    usleep(100 * 1000);  // it has exited; unreaped, it stays a zombie
    expect_usage_error("audit --duration-ms=100 --pid=" + std::to_string(zombie), "is a zombie");
    waitpid(zombie, nullptr, 0);
    std::ifstream comm("/proc/2/comm");
    std::string name;
    if (!(comm >> name) || name != "kthreadd") GTEST_SKIP() << "no kthreadd at pid 2 here (a PID namespace)";
    expect_usage_error("audit --duration-ms=100 --pid=2", "is a kernel thread");
}
