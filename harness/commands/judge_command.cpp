#include "commands/judge_command.hpp"

#include "report/file.hpp"
#include "report/judge.hpp"
#include "source_tree.hpp"
#include "version.hpp"

#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <map>
#include <optional>
#include <system_error>

namespace benchfp::harness {

namespace fs = std::filesystem;

void JudgeOptions::add_to(CLI::App& app) {
    app.add_option("--current", current,
                   "this build's run(s): Google Benchmark JSON (--benchmark_out) or benchfp kernel --mode=perf --json; "
                   "repeatable, of one or several machines (each judged against its own baseline)")
        ->required();
    CLI::Option* rerun = app.add_option("--confirm", confirm,
                   "a re-run of the benchmarks that failed in --current (same kinds, new processes): a time or "
                   "in-run ratio that failed fails the judgement only if it fails here too; a time the machine's "
                   "move excused (unresolved) is judged by it, a regression if it fails here (unless this re-run "
                   "had too few peers to measure the machine by); repeatable");
    CLI::Option* rerun_again = app.add_option("--confirm-again", confirm_again,
                   "a second round of re-runs (new processes again) of what still failed after --confirm: a failure "
                   "must fail here too; an excused time failing only here stays unresolved; repeatable");
    CLI::Option* other_runs = app.add_option("--baseline-runs", baseline_runs,
                   "the other build's runs (same kinds), judged against instead of a stored baseline (scripts/vs.sh)");
    CLI::Option* stored = app.add_option("--baselines", baselines_dir,
                   "directory of stored baselines, one folder per machine: <dir>/<machine>/<suite>.json "
                   "(default results/baselines)");
    CLI::Option* suite_name = app.add_option("--suite", suite, "the suite's baseline file name in a machine's folder (default alloc)")
        ->check(CLI::Validator(
            [](const std::string& name) {
                const bool plain = !name.empty() && name.find_first_not_of("abcdefghijklmnopqrstuvwxyz"
                                                                           "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
                                                        std::string::npos;
                return plain ? std::string() : "'" + name + "' is not a plain name (letters, digits, _ and -)";
            },
            "NAME"));
    // What is judged against comes from one place: --baseline, --baseline-runs or
    // --baselines (with --suite); given together, one of them was silently unused.
    CLI::Option* one_file = app.add_option("--baseline", baseline, "one baseline file for every machine, instead of --baselines");
    app.add_option("--tolerances", tolerances, "tolerances and in-run ratio rules (default results/tolerances.json)");
    app.add_option("--instructions", instructions, "callgrind counts of this run: JSON object id -> count");
    app.add_option("--cases", cases,
                   "benchfp kernel --json records (corr, unwind, verify, step...) to summarize in the report; a "
                   "failed case fails it, and so does a run of them in which nothing ran; the counts of step "
                   "records are judged against the baseline (with --update-baseline: recorded); repeatable");
    CLI::Option* untested =
        app.add_option("--untested-isas", untested_isas, "ISAs the run could not test on this machine, named in the report")
        ->delimiter(',')
        ->check(CLI::IsMember(report::known_isa_names()));
    CLI::Option* report = app.add_option("--report", report_dir,
                                         "directory of report.md, report.json, report.html (default results/report)");
    app.add_option("--commit", commit, "the commit judged, for the report (with --update-baseline: the baseline's)");
    CLI::Option* label =
        app.add_option("--baseline-label", baseline_label, "what the baseline is, for the report (e.g. main@abc123)");
    CLI::Option* triggered = app.add_option("--triggered-by", triggered_by,
                   "who or what ran the judge, for the report's Job Properties (e.g. \"ci/gate.sh --quick\")");
    // Recording a baseline judges nothing and writes no report: re-runs, and
    // what only a report shows, would go unused (of --cases, the step counts are recorded).
    app.add_flag("--update-baseline", update_baseline,
                 "record each machine's baseline from --current, --instructions and the step records of --cases "
                 "(into --baselines, or --baseline) instead of judging")
        ->excludes(other_runs)
        ->excludes(rerun)
        ->excludes(rerun_again)
        ->excludes(report)
        ->excludes(untested)
        ->excludes(label)
        ->excludes(triggered);
    one_file->excludes(other_runs)->excludes(stored)->excludes(suite_name);
    other_runs->excludes(stored)->excludes(suite_name);
}

namespace {

std::string today() {
    const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
    char buffer[32];
    std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
    return buffer;
}

std::string find_stored(const std::string& name, const std::string& option) {
    if (const auto path = locate_stored(name, StoredKind::any)) return path->string();
    throw report::InputError(name + ": cannot open: not found here or in the source tree " +
                             std::string(BENCHFP_SOURCE_DIR) + " (pass " + option + "=PATH)");
}

report::MadeDirectories make_directory(const fs::path& dir, const std::string& what) {
    try {
        return report::make_directories(dir.string(), what);
    } catch (const std::runtime_error& e) {
        throw report::InputError(e.what());
    }
}

std::vector<report::RunResults> read_by_machine(const std::vector<std::string>& paths, const report::Tolerances& t) {
    std::vector<report::RunResults> runs;
    for (const std::string& path : paths) runs.push_back(report::read_run(path));
    std::vector<report::RunResults> machines = report::merge_by_machine(runs);
    for (report::RunResults& m : machines) report::compute_ratios(m, t);
    return machines;
}

// The re-runs (--confirm), by machine: each must be of a machine judged here,
// or it would confirm nothing and say nothing.
std::map<std::string, report::RunResults> reruns_by_machine(const std::vector<std::string>& paths,
                                                            const std::vector<report::RunResults>& machines,
                                                            const report::Tolerances& t) {
    std::map<std::string, report::RunResults> by_machine;
    for (report::RunResults& rerun : read_by_machine(paths, t)) {
        const std::string key = report::run_machine_key(rerun.fingerprint);
        const bool judged_here = std::any_of(machines.begin(), machines.end(), [&](const report::RunResults& m) {
            return report::run_machine_key(m.fingerprint) == key;
        });
        if (!judged_here)
            throw report::InputError(rerun.source + ": --confirm ran on " + rerun.fingerprint.describe() +
                                     ", a machine no --current file ran on: it would confirm nothing");
        by_machine.emplace(key, std::move(rerun));
    }
    return by_machine;
}

// Where a machine's baseline is read from (or recorded to: into the folder
// found as for reading, else the one given, created).
std::string baseline_file(const JudgeOptions& o, const report::Fingerprint& machine) {
    if (!o.baseline.empty()) return o.baseline;
    const std::string dir = o.update_baseline ? locate_stored(o.baselines_dir, StoredKind::any).value_or(o.baselines_dir).string()
                                              : find_stored(o.baselines_dir, "--baselines");
    return report::baseline_path(dir, machine, o.suite);
}

// The baseline each machine is judged against: one given file (--baseline),
// read first, since a broken baseline is the error to report whatever the run;
// else the other build's runs of the same machine (or of the only machine
// there is); else the machine's stored file, when there is one.
class Baselines {
public:
    Baselines(const JudgeOptions& o, const report::Tolerances& t) : o_(o) {
        if (!o.baseline.empty()) given_ = report::read_baseline(find_stored(o.baseline, "--baseline"));
        other_build_ = read_by_machine(o.baseline_runs, t);
        if (o.baseline.empty() && o.baseline_runs.empty()) check_stored_suite(o);
    }

    // A stored baselines directory that is not there, or a suite no machine
    // has, is a mistake (a typo), not "no baseline for this machine": that
    // judges the absolute limits alone, and would pass.
    static void check_stored_suite(const JudgeOptions& o) {
        const fs::path dir = find_stored(o.baselines_dir, "--baselines");
        std::error_code ec;
        if (!fs::is_directory(dir, ec)) throw report::InputError(dir.string() + ": --baselines is not a directory");
        try {
            for (const fs::directory_entry& machine : fs::directory_iterator(dir))
                if (fs::is_regular_file(machine.path() / (o.suite + ".json"), ec)) return;
        } catch (const fs::filesystem_error& e) {
            throw report::InputError(dir.string() + ": --baselines cannot be read: " + e.code().message());
        }
        throw report::InputError("--suite=" + o.suite + ": no machine folder of " + dir.string() + " holds " + o.suite +
                                 ".json (record one with --update-baseline)");
    }

    // Where the baseline of `machine` is, for the report: a file, or what stands in for one.
    std::string where(const report::Fingerprint& machine) const {
        if (given_) return given_->source;
        if (!o_.baseline_runs.empty()) return "--baseline-runs";
        return baseline_file(o_, machine);
    }

    std::optional<report::RunResults> of(const report::RunResults& current) const {
        if (given_) return given_;
        if (!o_.baseline_runs.empty()) {
            for (const report::RunResults& b : other_build_)
                if (report::same_machine(b.fingerprint, current.fingerprint)) return b;
            if (other_build_.size() == 1) return other_build_.front();
            return std::nullopt;
        }
        // No folder for an unknown machine: its times could never be judged against one.
        const std::string path = where(current.fingerprint);
        std::error_code ec;
        if (!current.fingerprint.known() || !fs::exists(path, ec)) return std::nullopt;
        return report::read_baseline(path);
    }

private:
    const JudgeOptions& o_;
    std::optional<report::RunResults> given_;
    std::vector<report::RunResults> other_build_;
};

using NamedPaths = std::vector<std::pair<const char*, const std::vector<std::string>*>>;
std::vector<report::NamedInput> inputs_of(const NamedPaths& options) {
    std::vector<report::NamedInput> inputs;
    for (const auto& [option, paths] : options)
        for (const std::string& path : *paths) inputs.push_back({option, path});
    return inputs;
}

// The runs: this build's, its re-runs, the other build's.
NamedPaths run_options(const JudgeOptions& o) {
    return {{"--current", &o.current},
            {"--confirm", &o.confirm},
            {"--confirm-again", &o.confirm_again},
            {"--baseline-runs", &o.baseline_runs}};
}

// Each a file of its own (check_distinct_inputs): the runs (a file given twice
// is read as two runs, as its own re-run, or as the other build's, every ratio
// 1), and the case records. A perf run's file is both a run and case records
// (ci/gate.sh passes it so).
std::vector<std::vector<report::NamedInput>> distinct_input_groups(const JudgeOptions& o) {
    return {inputs_of(run_options(o)), inputs_of({{"--cases", &o.cases}})};
}

// Every file the judge reads, by its option: no output may replace one.
std::vector<report::NamedInput> judge_inputs(const JudgeOptions& o) {
    NamedPaths read = run_options(o);
    read.push_back({"--cases", &o.cases});
    std::vector<report::NamedInput> inputs = inputs_of(read);
    const auto add = [&](const char* option, const std::string& path) { inputs.push_back({option, path}); };
    // Read where locate_stored finds them (here, or in the source tree).
    const auto stored = [](const std::string& name) {
        const auto found = name.empty() ? std::nullopt : locate_stored(name, StoredKind::any);
        return found ? found->string() : name;
    };
    if (!o.update_baseline) add("--baseline", stored(o.baseline));  // else where the baseline goes
    add("--tolerances", stored(o.tolerances));
    add("--instructions", o.instructions);
    return inputs;
}

void check_inputs_kept(const std::vector<report::NamedOutput>& outputs, const JudgeOptions& o) {
    try {
        report::check_inputs_kept(outputs, judge_inputs(o));
    } catch (const std::runtime_error& e) {
        throw report::InputError(e.what());
    }
}

// Every machine's path checked before the first is written: a refusal leaves
// no baseline of the set recorded.
int record_baselines(const JudgeOptions& o, const std::vector<report::RunResults>& machines) {
    std::vector<std::string> paths;
    for (const report::RunResults& m : machines) {
        if (!m.fingerprint.known())
            throw report::InputError(m.source + ": the machine is unknown (" + m.fingerprint.describe() +
                                     "): a baseline needs the CPU model, ISA and cores (benchfp_cpu, benchfp_isa, "
                                     "benchfp_cores in the Google Benchmark context)");
        paths.push_back(baseline_file(o, m.fingerprint));
        check_inputs_kept({{"the baseline of " + m.fingerprint.describe(), paths.back()}}, o);
    }
    for (size_t i = 0; i < machines.size(); ++i) {
        const report::RunResults& m = machines[i];
        const report::MadeDirectories made = make_directory(fs::path(paths[i]).parent_path(), "baseline");
        try {
            report::write_baseline(paths[i], m, build_info());
        } catch (...) {
            report::remove_made_directories(made);
            throw;
        }
        std::cout << "benchfp: baseline " << paths[i] << " recorded from " << m.source << " (" << m.benchmarks.size()
                  << " benchmarks, " << m.ratios.size() << " ratios, " << m.instructions.size() << " instruction counts; " << m.fingerprint.describe() << ")\n";
    }
    return 0;
}

// All three rendered before the first is written, as one set (report::write_file_set).
void write_reports(const std::string& dir, const report::Report& r) {
    const std::vector<report::NamedText> files = {{"report.md", report::render_markdown(r)},
                                                  {"report.json", report::render_json(r).dump(2) + "\n"},
                                                  {"report.html", report::render_html(r)}};
    try {
        report::write_file_set(dir, files);
    } catch (const std::runtime_error& e) {
        throw report::InputError(e.what());
    }
    std::cout << files[0].text << "\nbenchfp: report written to " << dir << "/report.{md,json,html}\n";
}

int judge(const JudgeOptions& o) {
    try {
        for (const auto& group : distinct_input_groups(o)) report::check_distinct_inputs(group);
    } catch (const std::runtime_error& e) {
        throw report::InputError(e.what());
    }
    if (!o.update_baseline) {
        std::vector<report::NamedOutput> reports;
        for (const char* name : {"report.md", "report.json", "report.html"})
            reports.push_back({"--report", (fs::path(o.report_dir) / name).string()});
        check_inputs_kept(reports, o);
    }
    const report::Tolerances tolerances = report::read_tolerances(find_stored(o.tolerances, "--tolerances"));
    const std::optional<Baselines> baselines =
        o.update_baseline ? std::nullopt : std::optional<Baselines>(std::in_place, o, tolerances);
    std::vector<report::RunResults> machines = read_by_machine(o.current, tolerances);
    if (!o.instructions.empty()) {
        // Callgrind counts are the build's, not a machine's: every machine gets them.
        const auto counts = report::read_instructions(o.instructions);
        for (report::RunResults& m : machines) m.instructions.insert(counts.begin(), counts.end());
    }
    report::CaseSummary cases;
    for (const std::string& path : o.cases) report::add_cases(cases, path);
    // So are the stepped counts (the JIT code of an ISA, not the machine's speed).
    const auto stepped = report::stepped_instruction_counts(cases.stepped);
    for (report::RunResults& m : machines) m.instructions.insert(stepped.begin(), stepped.end());
    for (report::RunResults& m : machines) {
        m.commit = o.commit;
        if (m.date.empty()) m.date = today();
    }
    if (o.update_baseline) return record_baselines(o, machines);
    report::Report r{{o.commit, o.baseline_label, today(), build_info(), o.triggered_by}, {}, std::move(cases)};
    r.cases.untested_isas = o.untested_isas;
    for (auto it = o.untested_isas.begin(); it != o.untested_isas.end(); ++it)  // as the kernel's lists refuse one
        if (std::find(o.untested_isas.begin(), it, *it) != it)
            throw report::InputError("--untested-isas names '" + *it + "' twice");
    if (!o.confirm_again.empty() && o.confirm.empty())
        throw report::InputError("--confirm-again is a second round of re-runs: it needs --confirm, the first");
    const std::map<std::string, report::RunResults> reruns = reruns_by_machine(o.confirm, machines, tolerances);
    const std::map<std::string, report::RunResults> reruns_again = reruns_by_machine(o.confirm_again, machines, tolerances);
    for (report::RunResults& m : machines) {
        std::optional<report::RunResults> baseline = baselines->of(m);
        const auto judged = [&](const report::RunResults& run) {
            return baseline ? report::judge(run, *baseline, tolerances) : report::judge_limits_only(run, tolerances);
        };
        report::Judgement j = judged(m);
        // Each round in turn: a failure stands only if every round shows it.
        std::string rerun_sources;
        for (const auto* round : {&reruns, &reruns_again}) {
            const auto rerun = round->find(report::run_machine_key(m.fingerprint));
            if (rerun == round->end()) continue;
            report::confirm(j, judged(rerun->second),
                            round == &reruns_again ? report::ConfirmRound::last : report::ConfirmRound::first);
            rerun_sources += (rerun_sources.empty() ? "" : "; then ") + rerun->second.source;
        }
        const std::string where = baselines->where(m.fingerprint);
        r.machines.push_back({std::move(m), std::move(baseline), where, std::move(j), rerun_sources});
    }
    write_reports(o.report_dir, r);
    return r.failed() ? 1 : 0;
}

}  // namespace

int run_judge(const JudgeOptions& o) {
    try {
        return judge(o);
    } catch (const report::InputError& e) {
        std::cerr << "benchfp: " << e.what() << '\n';
        return 2;
    } catch (const std::exception& e) {
        // Every reader checks its input, so this is a bug; still an exit status, never an abort.
        std::cerr << "benchfp: judge: unexpected error (please report): " << e.what() << '\n';
        return 2;
    }
}

}  // namespace benchfp::harness
