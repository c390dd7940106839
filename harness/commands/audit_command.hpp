#pragma once
// `benchfp audit`: what a fleet profiler (`perf record -a -g`, frame pointers)
// sees in a running process it did not start and that does not cooperate:
// every thread, attached mid-run, JIT code found from the process's mappings.
// Three ways to name the process: --pid, `-- CMD ARGS` (started, attached
// after --delay-ms), or --target=onednn (a oneDNN program built with benchfp,
// next to benchfp's own kernels in each frame policy).
#include <CLI/CLI.hpp>

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace benchfp::harness {

struct AuditOptions {
    pid_t pid = 0;
    std::vector<std::string> command;  // after --
    std::string target;                // "onednn"
    uint64_t delay_ms = 300;
    uint64_t duration_ms = 1000;
    bool system_wide = false;
    std::vector<std::string> expect;  // innermost first; empty: "reaches the thread's start"
    std::string report_dir;
    std::optional<std::string> event;
    uint64_t frequency = 4000;

    void add_to(CLI::App& app);
};

// Returns the exit status: 0 a report was made (also when no JIT code was
// seen), 2 bad usage or input (no such process, not traceable, gone before any sample).
int run_audit(const AuditOptions& options);

}  // namespace benchfp::harness
