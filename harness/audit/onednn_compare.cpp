#include "audit/onednn_compare.hpp"

#include "audit/audit_render.hpp"
#include "audit/audit_run.hpp"
#include "report/file.hpp"

#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <sstream>

namespace benchfp::harness {

namespace {

struct Subject {
    std::string name;               // row label and report subdirectory
    std::vector<std::string> argv;  // what to start
};

std::filesystem::path own_directory() { return std::filesystem::read_symlink("/proc/self/exe").parent_path(); }

std::vector<Subject> subjects(const AuditOptions& o) {
    // Each child runs well past the window, so the audit never sees it exit.
    const std::string run_ms = std::to_string(o.delay_ms + o.duration_ms + 3000);
    const std::string target = (own_directory() / "benchfp_onednn_target").string();
    const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
    std::vector<Subject> out;
    for (const char* primitive : {"sgemm", "eltwise", "conv", "reorder"})
        out.push_back({std::string("onednn-") + primitive, {target, primitive, run_ms, "1"}});
    for (const char* frame : {"clobber", "preserve", "frame"})
        out.push_back({std::string("benchfp-eltwise-") + frame,
                       {self, "kernel", "--kernel=eltwise", "--alg=exp", "--frame=" + std::string(frame),
                        "--mode=unwind", "--min-samples=1", "--duration-ms=" + run_ms, "1048576"}});
    return out;
}

AuditReport audit_subject(const AuditOptions& o, const Subject& s, const std::vector<std::string>& expect) {
    const pid_t child = start_child(s.argv);
    if (!child_survives(child, o.delay_ms)) throw std::runtime_error(s.name + ": '" + s.argv[0] + "' exited at start");
    AuditReport report;
    try {
        report = audit_process({child, true, o.duration_ms, o.system_wide, expect, o.event, o.frequency});
    } catch (...) {
        stop_child(child);
        throw;
    }
    stop_child(child);
    for (const auto& a : s.argv) report.command += (report.command.empty() ? "" : " ") + a;
    return report;
}

// One row per thread that had JIT samples; the top culprit is the process's.
void rows(std::ostringstream& md, const std::string& name, const AuditReport& r) {
    const std::string culprit = r.culprits.empty() ? "-"
                                                   : "`" + r.culprits[0].rbp_written_by + "` (rbp: " +
                                                         r.culprits[0].rbp.begin()->first + ")";
    if (r.threads.empty()) md << "| " << name << " | - | 0 | | | | | - | - | - |\n";
    for (const auto& [tid, t] : r.threads) {
        const std::string thread = tid == static_cast<uint32_t>(r.pid) ? "main" : "thread " + std::to_string(tid);
        const auto comm = r.thread_names.find(tid);
        md << "| " << name << " | " << thread << (comm != r.thread_names.end() ? " (" + comm->second + ")" : "")
           << " | " << t.tally.jit() << " | " << t.tally.full << " | " << t.tally.skipped_caller << " | "
           << t.tally.broken << " | " << t.tally.prologue << " | " << percent(t.tally.full, t.tally.judged()) << " | "
           << percent(t.reached_start, t.tally.jit()) << " | " << culprit << " |\n";
    }
}

}  // namespace

int run_onednn_comparison(const AuditOptions& o) {
    // bar, foo: the callers every thread of both programs runs the code under
    // (main only calls foo on the main thread), unless the user says otherwise.
    const std::vector<std::string> expect = o.expect.empty() ? std::vector<std::string>{"bar", "foo"} : o.expect;
    std::ostringstream md;
    md << "# What a fleet profiler sees: oneDNN next to benchfp's kernels\n\n"
       << "Each program audited from outside for " << o.duration_ms << " ms after " << o.delay_ms
       << " ms, every thread, expecting `" << comma_list(expect) << "` above the JIT frame.\n\n"
       << "| program | thread | JIT samples | full | skipped-caller | broken | prologue | unwind rate | "
          "reaches main/thread start | most broken samples: rbp last written by (what rbp held) |\n"
       << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    for (const Subject& s : subjects(o)) {
        std::cerr << "benchfp audit: " << s.name << " ...\n";
        const AuditReport report = audit_subject(o, s, expect);
        rows(md, s.name, report);
        if (!o.report_dir.empty()) write_audit_report(report, o.report_dir + "/" + s.name);
    }
    std::cout << md.str();
    if (!o.report_dir.empty()) {
        std::filesystem::create_directories(o.report_dir);
        report::write_file(o.report_dir + "/summary.md", md.str());
    }
    return 0;
}

}  // namespace benchfp::harness
