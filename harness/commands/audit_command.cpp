#include "commands/audit_command.hpp"

#include "audit/audit_render.hpp"
#include "audit/audit_run.hpp"
#include "audit/onednn_compare.hpp"
#include "perf/error.hpp"
#include "perf/process.hpp"
#include "perf/sampler.hpp"
#include "report/file.hpp"

#include <iostream>
#include <limits>
#include <string>
#include <vector>

namespace benchfp::harness {

void AuditOptions::add_to(CLI::App& app) {
    CLI::Option* attach = app.add_option("--pid", pid, "attach to this running process (every thread, mid-run)")
        ->check(CLI::Range(1, std::numeric_limits<pid_t>::max()));
    app.add_option("--target", target, "audit a built-in target: onednn (a oneDNN program, next to benchfp's kernels)")
        ->check(CLI::IsMember({"onednn"}));
    // A process named by --pid is running already: the audit attaches at once.
    app.add_option("--delay-ms", delay_ms, "with -- CMD: attach this long after starting it")
        ->capture_default_str()
        ->check(CLI::Range(uint64_t{0}, uint64_t{3600000}))
        ->excludes(attach);
    app.add_option("--duration-ms", duration_ms, "how long to sample")
        ->capture_default_str()
        ->check(CLI::Range(uint64_t{1}, uint64_t{3600000}));
    app.add_flag("--system-wide", system_wide, "sample every CPU (perf record -a) and keep the process's samples");
    app.add_option("--expect", expect,
                   "callers expected above the JIT frame, innermost first (bar,foo,main); without it the "
                   "verdict is whether the chain reaches main or the thread's start")
        ->delimiter(',')
        ->allow_extra_args(false);  // its own value only: greedy, it took "-- CMD"'s words after --expect=a
    app.add_option("--report", report_dir, "write report.md, report.json and report.html into this directory");
    app.add_option("--event", event, "libpfm4 event (default cycles, falling back to perf::task-clock)");
    app.add_option("--freq", frequency,
                   "samples per second per thread or CPU (at most /proc/sys/kernel/perf_event_max_sample_rate)")
        ->capture_default_str()
        ->check(CLI::Range(uint64_t{1}, uint64_t{1000000}));
    app.add_option("command", command, "-- CMD ARGS: start this program and audit it");
}

namespace {

int report_error(const std::string& message) {
    std::cerr << "benchfp audit: " << message << '\n';
    return 2;
}

// The report of one process to stdout (and --report-dir); 2 when the process
// left before anything could be judged, 1 when it stayed and gave no sample at
// all (it did not run in the window, or the event did not occur in it): a
// report of nothing seen is no finding.
int print_report(const AuditOptions& o, const AuditReport& report) {
    if (report.samples == 0 && report.exited)
        return report_error("process " + std::to_string(report.pid) + " exited before any sample was taken" +
                            (report.ended.empty() ? "" : " (" + report.ended + ")"));
    std::cout << render_audit_markdown(report);
    if (!o.report_dir.empty()) write_audit_report(report, o.report_dir);
    if (report.samples == 0) {
        // A clock samples a process wherever it runs; another event (cycles,
        // page-faults) only where it counts, which running may not be.
        std::cerr << "benchfp audit: no sample of process " << report.pid << " in the window: it did not run on a CPU"
                  << (report.event_is_clock ? " (idle)" : ", or no " + report.event + " event occurred in it") << '\n';
        return 1;
    }
    if (!report.jit_samples) std::cout << "JIT samples: 0 of " << report.samples << '\n';
    return 0;
}

// The audit; a signal that stopped it propagates as StoppedBySignal (run_audit).
int run_audit_unsignalled(const AuditOptions& o) {
    std::vector<std::string> sources;
    if (o.pid != 0) sources.push_back("--pid=" + std::to_string(o.pid));
    if (!o.target.empty()) sources.push_back("--target=" + o.target);
    if (!o.command.empty()) sources.push_back("-- " + o.command.front());
    if (sources.size() != 1) {
        std::string given;  // what clashed, as given
        for (const std::string& s : sources) given += (given.empty() ? "" : " and ") + s;
        return report_error("name one process: --pid=P, --target=onednn, or -- CMD ARGS" +
                            (given.empty() ? std::string() : " (given: " + given + ")"));
    }
    if (o.duration_ms == 0) return report_error("--duration-ms must be positive");
    if (const std::string problem = perf::frequency_problem(o.frequency); !problem.empty()) return report_error(problem);
    // --report's files are checked before sampling, not after it; the
    // directories the check made are taken back when no report is written there.
    report::MadeDirectoriesGuard made;
    try {
        const AuditRequest request{o.pid, nullptr, o.duration_ms, o.system_wide, o.expect, o.event, o.frequency};
        if (!o.target.empty()) return run_onednn_comparison(request, o.delay_ms, o.report_dir);
        if (o.pid && !perf::process_exists(o.pid)) return report_error("no process with pid " + std::to_string(o.pid));
        if (o.pid)
            if (const std::string why = perf::unauditable_reason(o.pid); !why.empty()) return report_error(why);
        if (!o.report_dir.empty()) made.add(report::check_file_set(o.report_dir, audit_report_files()));
        const int status = o.pid ? print_report(o, audit_process(request))
                                 : print_report(o, audit_started(o.command, o.delay_ms, request));
        if (status != 2) made.keep();
        return status;
    } catch (const StoppedBySignal&) {
        throw;  // past the guard above, which takes back what the run made
    } catch (const std::exception& e) {  // perf::Error among them
        return report_error(e.what());
    }
}

}  // namespace

int run_audit(const AuditOptions& o) {
    try {
        return run_audit_unsignalled(o);
    } catch (const StoppedBySignal& e) {
        return end_by_signal(e.signal);
    }
}

}  // namespace benchfp::harness
