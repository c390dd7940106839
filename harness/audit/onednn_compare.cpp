#include "audit/onednn_compare.hpp"

#include "audit/audit_render.hpp"
#include "audit/audit_run.hpp"
#include "families/family.hpp"
#include "report/file.hpp"
#include "report/html.hpp"

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

std::vector<Subject> subjects(uint64_t delay_ms, uint64_t duration_ms) {
    // The benchfp children read it: a bad value is this command's bad usage, not
    // three children that "exited before they could be audited".
    stream_floats_setting();
    // Each child runs well past the window, so the audit never sees it exit.
    const std::string run_ms = std::to_string(delay_ms + duration_ms + 3000);
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

}  // namespace

std::string onednn_comparison_rows(const std::string& name, const AuditReport& r) {
    using report::MarkdownPlace;
    const std::string culprit =
        r.culprits.empty() ? "-"
                           : report::markdown_code_span(r.culprits[0].rbp_written_by, MarkdownPlace::table_cell) +
                                 " (rbp: " + report::markdown_text(most_common(r.culprits[0].rbp)) + ")";
    const std::string program = report::markdown_text(name);
    std::ostringstream md;
    if (r.threads.empty()) md << "| " << program << " | - | 0 | | | | | - | - | - |\n";
    for (const auto& [tid, t] : r.threads) {
        const std::string thread = tid == static_cast<uint32_t>(r.pid) ? "main" : "thread " + std::to_string(tid);
        const auto comm = r.thread_names.find(tid);
        md << "| " << program << " | "
           << report::markdown_text(thread + (comm != r.thread_names.end() ? " (" + comm->second + ")" : "")) << " | "
           << tally_cells(t) << " | " << culprit << " |\n";
    }
    return md.str();
}

int run_onednn_comparison(AuditRequest request, uint64_t delay_ms, const std::string& report_dir) {
    // bar, foo: the callers every thread of both programs runs the code under
    // (main only calls foo on the main thread), unless the user says otherwise.
    if (request.expect.empty()) request.expect = {"bar", "foo"};
    std::ostringstream md;
    md << "# What a fleet profiler sees: oneDNN next to benchfp's kernels\n\n"
       << "Each program audited from outside for " << request.duration_ms << " ms after " << delay_ms
       << " ms, every thread, expecting "
       << report::markdown_code_span(comma_list(request.expect), report::MarkdownPlace::line)
       << " above the JIT frame.\n\n"
       << "| program | thread | JIT samples | full | skipped-caller | broken | prologue | unwind rate | "
          "reaches main/thread start | most broken samples: rbp last written by (what rbp held) |\n"
       << "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n";
    const std::vector<Subject> programs = subjects(delay_ms, request.duration_ms);
    // Every report's place checked before the first program is sampled; the
    // reports are written together at the end, all of them or none (a failed
    // write, or a program that fails to run, leaves no partial tree behind).
    report::MadeDirectoriesGuard made;
    if (!report_dir.empty()) {
        made.add(report::check_file_set(report_dir, {"summary.md"}));
        for (const Subject& s : programs) made.add(report::check_file_set(report_dir + "/" + s.name, audit_report_files()));
    }
    std::vector<report::NamedText> files;
    for (const Subject& s : programs) {
        std::cerr << "benchfp audit: " << s.name << " ...\n";
        const AuditReport report = audit_started(s.argv, delay_ms, request);
        md << onednn_comparison_rows(s.name, report);
        for (report::NamedText& file : audit_report_texts(report))
            files.push_back({report_dir + "/" + s.name + "/" + file.name, std::move(file.text)});
    }
    std::cout << md.str();
    if (!report_dir.empty()) {
        files.push_back({report_dir + "/summary.md", md.str()});
        report::write_files(files);
    }
    made.keep();
    return 0;
}

}  // namespace benchfp::harness
