#pragma once
// Running the benchfp binary from the end-to-end tests (cli_test.cpp,
// cli_judge_test.cpp, cli_robust_test.cpp): status and combined output, and the
// perf skip rule.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>
#include <string>

// A stored allocator baseline, real data the judge tests start from (relative
// to the source tree): the one recorded on the 2-core AMD EPYC Zen 5 guest.
inline const std::string stored_alloc_baseline =
    "results/baselines/amd-epyc-family-26-model-2-avx512-2cores/alloc.json";

struct CommandRun {
    int status = -1;
    std::string output;  // stdout and stderr
};

// Runs a shell command from the source tree, capturing stdout and stderr.
inline CommandRun run_shell(const std::string& command) {
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
inline CommandRun run_benchfp(const std::string& args, const std::string& env = "") {
    return run_shell(env + " " + BENCHFP_BIN + " " + args);
}

// The digits a command printed right after `label` (the pid of `sh -c 'echo
// pid=$$; exec ...'`, or of benchfp audit's "# benchfp audit of pid "), or ""
// when its output has none.
inline std::string pid_after(const std::string& output, const std::string& label) {
    const size_t at = output.find(label);
    if (at == std::string::npos) return "";
    const size_t start = at + label.size();
    return output.substr(start, output.find_first_not_of("0123456789", start) - start);
}

// Where a process's JIT symbols are for perf (its /tmp/perf-PID.map convention).
// The map outlives the process, for perf report: a test that makes one removes it.
inline std::string perf_map_of(const std::string& pid) { return "/tmp/perf-" + pid + ".map"; }
// Its jitdump (perf inject --jit reads /tmp/jit-PID.dump): the same lifetime.
inline std::string jitdump_of(const std::string& pid) { return "/tmp/jit-" + pid + ".dump"; }

inline bool perf_required() {
    const char* value = std::getenv("BENCHFP_REQUIRE_PERF");
    return value && std::string(value) == "1";
}

inline bool perf_unavailable(const CommandRun& run) {
    return run.status == 2 && run.output.find("perf_event_open") != std::string::npos;
}

#define SKIP_OR_FAIL_WITHOUT_PERF(run)                                                                  \
    if (perf_unavailable(run)) {                                                                        \
        if (perf_required()) FAIL() << "BENCHFP_REQUIRE_PERF=1 but sampling is unavailable:\n" << (run).output; \
        GTEST_SKIP() << "sampling unavailable here:\n" << (run).output;                                 \
    }

inline void expect_usage_error(const std::string& args, const std::string& token, const std::string& env = "") {
    const CommandRun run = run_benchfp(args, env);
    EXPECT_EQ(run.status, 2) << run.output;
    EXPECT_NE(run.output.find(token), std::string::npos) << "message should name " << token << ":\n" << run.output;
}

// Runs a command that samples; checks its status and that the output holds each of `wanted`.
inline void expect_sampled_run(const std::string& args, int status, std::initializer_list<const char*> wanted) {
    const CommandRun run = run_benchfp(args);
    SKIP_OR_FAIL_WITHOUT_PERF(run);
    EXPECT_EQ(run.status, status) << run.output;
    for (const char* text : wanted) EXPECT_NE(run.output.find(text), std::string::npos) << text << " in:\n" << run.output;
}
