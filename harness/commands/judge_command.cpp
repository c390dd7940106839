#include "commands/judge_command.hpp"

#include "report/file.hpp"
#include "report/judge.hpp"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>

namespace benchfp::harness {

void JudgeOptions::add_to(CLI::App& app) {
    app.add_option("--current", current, "this build's run(s): Google Benchmark JSON (--benchmark_out) or benchfp kernel --mode=perf --json; repeatable")
        ->required();
    app.add_option("--baseline-runs", baseline_runs,
                   "the other build's runs (same kinds), judged against instead of --baseline (scripts/vs.sh)");
    app.add_option("--baseline", baseline, "stored baseline (default results/baselines/alloc.json)");
    app.add_option("--tolerances", tolerances, "tolerances and in-run ratio rules (default results/tolerances.json)");
    app.add_option("--instructions", instructions, "callgrind counts of this run: JSON object id -> count");
    app.add_option("--report", report_dir, "directory of report.md, report.json, report.html (default results/report)");
    app.add_option("--commit", commit, "the commit judged, for the report");
    app.add_option("--baseline-label", baseline_label, "what the baseline is, for the report (e.g. main@abc123)");
    app.add_flag("--update-baseline", update_baseline, "rewrite the baseline from --current instead of judging");
}

namespace {

std::string today() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    return buffer;
}

void write(const std::filesystem::path& path, const std::string& text) {
    try {
        report::write_file(path.string(), text);
    } catch (const std::runtime_error& e) {
        throw report::InputError(e.what());
    }
}

}  // namespace

int run_judge(const JudgeOptions& o) {
    try {
        const report::Tolerances tolerances = report::read_tolerances(o.tolerances);
        // The baseline first: a broken baseline is the error to report, whatever the run.
        auto read_runs = [](const std::vector<std::string>& paths) {
            std::vector<report::RunResults> runs;
            for (const std::string& path : paths) runs.push_back(report::read_run(path));
            return report::merge_runs(runs);
        };
        report::RunResults baseline;
        if (!o.baseline_runs.empty()) {
            baseline = read_runs(o.baseline_runs);
            report::compute_ratios(baseline, tolerances);
        } else if (!o.update_baseline) {
            baseline = report::read_baseline(o.baseline);
        }
        report::RunResults current = read_runs(o.current);
        report::compute_ratios(current, tolerances);
        if (!o.instructions.empty()) {
            std::ifstream file(o.instructions);
            nlohmann::json counts;
            try {
                counts = nlohmann::json::parse(file);
            } catch (const nlohmann::json::exception& e) {
                throw report::InputError(o.instructions + ": instruction counts are not valid JSON: " + e.what());
            }
            for (const auto& [id, v] : counts.items()) current.instructions[id] = v.get<double>();
        }
        current.commit = o.commit;
        if (current.date.empty()) current.date = today();
        if (o.update_baseline) {
            std::filesystem::create_directories(std::filesystem::path(o.baseline).parent_path());
            report::write_baseline(o.baseline, current);
            std::cout << "benchfp: baseline " << o.baseline << " rewritten from " << current.source << " ("
                      << current.benchmarks.size() << " benchmarks, " << current.ratios.size() << " ratios)\n";
            return 0;
        }
        const report::Judgement judgement = report::judge(current, baseline, tolerances);
        const report::ReportContext context{o.commit, o.baseline_label, today(), current.source,
                                            o.baseline_runs.empty() ? o.baseline : baseline.source};
        std::filesystem::create_directories(o.report_dir);
        const std::string markdown = report::render_markdown(judgement, current, baseline, context);
        write(std::filesystem::path(o.report_dir) / "report.md", markdown);
        write(std::filesystem::path(o.report_dir) / "report.json",
              report::render_json(judgement, current, baseline, context).dump(2) + "\n");
        write(std::filesystem::path(o.report_dir) / "report.html",
              report::render_html(judgement, current, baseline, context));
        std::cout << markdown << "\nbenchfp: report written to " << o.report_dir << "/report.{md,json,html}\n";
        return judgement.failed() ? 1 : 0;
    } catch (const report::InputError& e) {
        std::cerr << "benchfp: " << e.what() << '\n';
        return 2;
    }
}

}  // namespace benchfp::harness
