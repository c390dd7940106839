#include "commands/kernel_command.hpp"

#include "jit_profile.hpp"

#include "commands/kernel_run_state.hpp"
#include "families/family.hpp"
#include "families/workload.hpp"
#include "kernel/host_info.hpp"
#include "kernel/perf_template.hpp"
#include "perf/error.hpp"
#include "perf/event.hpp"
#include "perf/sampler.hpp"
#include "quoted.hpp"
#include "report/file.hpp"
#include "report/stepped_cost.hpp"
#include "stdout_check.hpp"
#include "usage_error.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <set>
#include <sstream>

namespace benchfp::harness {

namespace {

nlohmann::json spec_json(const KernelCase& c) {
    nlohmann::json spec = {{"kernel", c.spec.kernel}, {"alg", c.spec.alg},
                           {"isa", jit::to_string(c.spec.isa)}, {"frame", jit::to_string(c.spec.frame)},
                           {"mode", to_string(c.mode)}, {"problem", c.problem}, {"threads", c.threads}};
    if (c.expect) spec["expect"] = perf::to_string(*c.expect);
    return spec;
}

}  // namespace

void KernelRunOptions::add_to(CLI::App& app) {
    cases.add_to(app);
    app.add_option("--json", json_path, "write every case's record to this JSON file (with --list: the table, - for stdout)");
    app.add_option("--max-isa", max_isa, "highest ISA to use (also BENCHFP_MAX_CPU_ISA)");
    app.add_option("--event", event,
                   "libpfm4 event to sample (default cycles, falling back to perf::task-clock without a PMU)");
    app.add_option("--freq", frequency,
                   "samples per second (default 4000; at most /proc/sys/kernel/perf_event_max_sample_rate)")
        ->check(CLI::Range(1, 1000000));
    app.add_option("--period", period, "fixed sample period in event units (overrides --freq)")
        ->check(CLI::Range(int64_t{1}, std::numeric_limits<int64_t>::max()));
    app.add_option("--max-cases", max_cases, "refuse a run that expands to more cases (default 100000)")
        ->check(CLI::Range(size_t{1}, size_t{100000000}));
    std::vector<std::string> isa_names;
    for (jit::Isa isa : jit::all_isas) isa_names.push_back(jit::to_string(isa));
    app.add_option("--allow-untested", allow_untested,
                   "ISAs (list) asked for with --isa that may be skipped here without failing the run")
        ->delimiter(',')
        ->check(CLI::IsMember(isa_names));
    app.add_option("--perf-template", perf_template,
                   "perf: line template with %tokens% (see README), or default, csv; any but default makes stdout "
                   "the rows alone (status lines, the summary and notes go to stderr)");
    app.add_option("--csv", csv_path, "perf: also write the rows as CSV (the csv template, with its header) to this file");
    app.add_flag("--no-verify", no_verify, "build kernels without the static frame verifier (verify mode still runs it)");
    app.add_option("--jit-profile", jit_profile,
                   "announce every kernel to /tmp/perf-PID.map (map) and/or /tmp/jit-PID.dump (jitdump) for perf; "
                   "off by default (also BENCHFP_JIT_PROFILE)");
    app.add_flag("--list", list_families, "list the kernel families, their algs, ISAs and problem forms; run nothing");
}

KernelRun::KernelRun(const KernelRunOptions& options) : options_(options) {
    if (options_.max_isa == "max") {
        isa_cap_ = std::nullopt;  // as --isa=max: no cap but the host's, whatever BENCHFP_MAX_CPU_ISA says
    } else if (!options_.max_isa.empty()) {
        isa_cap_ = jit::parse_isa(options_.max_isa);
        if (!isa_cap_)
            throw UsageError("unknown --max-isa " + quoted_token(options_.max_isa) + " (known: " + jit::known_isas() +
                             ", max)");
    } else {
        isa_cap_ = jit::isa_cap_from_env();
    }
    jit::set_verify_on_build(!options_.no_verify);
    isa_tally_ = IsaTally(isa_cap_);
    check_run_options();
    std::vector<std::string> batch_files;
    cases_ = expand_cases(options_.cases, isa_cap_, {options_.max_cases, mem_available_bytes()}, &batch_files);
    check_batches_kept(batch_files);
    run_repro_ = run_repro_options();
    options_.perf_template = resolve_perf_template(options_.perf_template);
    rows_only_stdout_ = options_.perf_template != resolve_perf_template("default");
    if (!options_.csv_path.empty()) csv_rows_ = csv_perf_header() + '\n';
    PerfLine probe;
    probe.c = &cases_.front();
    format_perf_line(options_.perf_template, probe);  // unknown tokens: exit 2 now, not later
    const char* env_profile = std::getenv("BENCHFP_JIT_PROFILE");
    const bool from_env = options_.jit_profile.empty() && env_profile;
    const JitProfileChoice profile = parse_jit_profile(from_env ? env_profile : options_.jit_profile,
                                                       from_env ? "BENCHFP_JIT_PROFILE" : "command line");
    start_jit_profile(profile);
}

KernelRun::~KernelRun() = default;

// What would otherwise fail only after the first case, or after the whole run.
void KernelRun::check_run_options() const {
    try {
        report::check_outputs({{"--json", options_.json_path}, {"--csv", options_.csv_path}});
    } catch (const std::exception& e) {
        throw UsageError(e.what() + std::string(options_.json_path == "-" ? " (--json=- is stdout for --list only)" : ""));
    }
    if (!options_.period)
        if (const std::string problem = perf::frequency_problem(options_.frequency); !problem.empty())
            throw UsageError(problem);
    // A misspelled event stops the run now, not at its first sampled case after
    // the others ran (whether the host can open it is known only there).
    if (options_.event) {
        try {
            perf::encode_event(*options_.event);
        } catch (const perf::Error& e) {
            throw UsageError(e.what());
        }
    }
}

// Every batch file the cases came from, nested ones included: no output may replace one.
void KernelRun::check_batches_kept(const std::vector<std::string>& batch_files) const {
    std::vector<report::NamedInput> batches;
    for (const std::string& path : batch_files) batches.push_back({"--batch", path});
    try {
        report::check_inputs_kept({{"--json", options_.json_path}, {"--csv", options_.csv_path}}, batches);
    } catch (const std::exception& e) {
        throw UsageError(e.what());
    }
}

std::string KernelRun::run_repro_options() const {
    const KernelRunOptions defaults;
    std::string out;
    if (options_.period) out += " --period=" + std::to_string(*options_.period);
    else if (options_.frequency != defaults.frequency) out += " --freq=" + std::to_string(options_.frequency);
    if (options_.event) out += " --event=" + *options_.event;
    if (isa_cap_) out += std::string(" --max-isa=") + jit::to_string(*isa_cap_);  // from BENCHFP_MAX_CPU_ISA too
    return out;
}

const perf::EventChoice& KernelRun::event() {
    if (!event_) {
        event_ = perf::choose_event(options_.event, perf::probe_open);
        if (!event_->note.empty()) std::cerr << "benchfp: note: " << event_->note << std::endl;
    }
    return *event_;
}

SampledCall* KernelRun::next_sampled_call() {
    // Judging the call main just made can fail too (a corrupt ring, libdw): that case fails, the run goes on.
    try {
        if (pending_) finish_unwind();
        if (step_pending_) finish_step();
    } catch (const std::exception& e) {
        const KernelCase& c = cases_[next_case_ - 1];
        pending_.reset();
        step_pending_.reset();
        record(c, report::State::failed, std::string("error: ") + e.what(), 0, {});
    }
    while (!done_ && next_case_ < cases_.size()) {
        const KernelCase& c = cases_[next_case_++];
        try {
            if (!c.skip_reason.empty()) {
                record(c, report::State::skipped, c.skip_reason, 0, {});
                continue;
            }
            switch (c.mode) {
            case Mode::corr: run_corr(c); continue;
            case Mode::list: run_list(c); continue;
            case Mode::perf: {
                const size_t end = perf_group_end(next_case_ - 1);
                run_perf_group(next_case_ - 1, end);
                next_case_ = end;
                continue;
            }
            case Mode::unwind: return begin_unwind(c);
            case Mode::verify: run_verify(c); continue;
            case Mode::step:
            case Mode::abi: return begin_step(c);
            }
        } catch (const perf::Error& e) {
            // No sampling at all here (refused, absent, bad event): a usage error, status 2. Anything
            // else of perf (mmap, ioctl, a corrupt ring) fails the case, below.
            if (e.kind() == perf::ErrorKind::system) {
                pending_.reset();
                record(c, report::State::failed, std::string("error: ") + e.what(), 0, {});
                continue;
            }
            pending_.reset();
            std::cerr << "benchfp: " << e.what() << "\nbenchfp: stopped at case " << next_case_ - 1 << ": "
                      << repro(c) << '\n';
            exit_status_ = 2;
            done_ = true;
        } catch (const std::exception& e) {
            pending_.reset();
            step_pending_.reset();
            record(c, report::State::failed, std::string("error: ") + e.what(), 0, {});
        }
    }
    if (!finished_) {
        finished_ = true;
        if (exit_status_ != 2) finish();
        exit_status_ = checked_stdout(exit_status_);
    }
    return nullptr;
}

void KernelRun::run_corr(const KernelCase& c) {
    const auto begun = Clock::now();
    auto workload = find_family(c.spec.kernel)->make_workload(c);
    CorrOutcome outcome = workload->check();
    const report::State state = !outcome.passed      ? report::State::failed
                                : outcome.mistrusted ? report::State::mistrusted
                                                     : report::State::passed;
    record(c, state, outcome.detail, ms_since(begun), {{"corr", outcome.record}});
}

void KernelRun::run_list(const KernelCase& c) {
    const auto begun = Clock::now();
    const auto kernel = build_kernel(c.spec);
    const jit::CodeRegionInfo& layout = kernel->layout();
    std::ostringstream detail;
    detail << kernel->gprs().summary() << " code:" << layout.size << "B prologue:" << layout.prologue_end
           << "B epilogue-at:" << layout.epilogue_begin << "B";
    nlohmann::json grants = nlohmann::json::array();
    for (const auto& g : kernel->gprs().grants())
        grants.push_back({{"role", g.role},
                          {"where", g.value.spilled() ? "slot " + std::to_string(g.value.slot())
                                                      : g.value.reg().toString()}});
    record(c, report::State::listed, detail.str(), ms_since(begun),
           {{"list", {{"gprs", grants}, {"spilled", kernel->gprs().spilled()}, {"code_bytes", layout.size}}}});
}

std::ostream& KernelRun::human() const { return rows_only_stdout_ ? std::cerr : std::cout; }

void KernelRun::record(const KernelCase& c, report::State state, std::string detail, double ms, nlohmann::json extra,
                       const PerfLine* line) {
    report::CaseResult result;
    result.index = static_cast<int>(results_.size());
    result.state = state;
    result.detail = std::move(detail);
    result.ms = ms;
    result.repro = repro(c, run_repro_);
    result.record = std::move(extra);
    result.record["spec"] = spec_json(c);
    if (!c.skip_reason.empty()) result.record["skip_reason"] = c.skip_reason;
    if (line) {
        std::cout << format_perf_line(options_.perf_template, *line) << std::endl;
        if (!options_.csv_path.empty()) csv_rows_ += format_perf_line(resolve_perf_template("csv"), *line) + '\n';
    } else {
        human() << report::status_line(result) << std::endl;
    }
    summary_.add(state);
    isa_tally_.add(c, state != report::State::skipped);
    results_.push_back(std::move(result));
}

// What each frame policy adds to clobber's call, where the run stepped both (report/stepped_cost.hpp).
void KernelRun::print_stepped_costs() const {
    report::SteppedCosts costs;
    for (const report::CaseResult& r : results_) report::add_stepped(costs, report::In(r.record, "this run", ""));
    const std::vector<std::string> lines = report::stepped_cost_lines(costs);
    if (lines.empty()) return;
    human() << "frame cost per call, stepped (every instruction counted, beside clobber's):\n";
    for (const std::string& line : lines) human() << "  " << line << '\n';
}

void KernelRun::finish() {
    if (cases_.empty()) return;  // --help: nothing was to run
    print_stepped_costs();
    human() << summary_.line() << '\n' << isa_tally_.line() << std::endl;
    exit_status_ = summary_.exit_status();
    const std::set<std::string> allowed(options_.allow_untested.begin(), options_.allow_untested.end());
    if (const std::string failure = isa_tally_.untested_failure(allowed); !failure.empty()) {
        human() << "benchfp: " << failure << std::endl;
        exit_status_ = std::max(exit_status_, 1);
    }
    if (jit_profile_failed()) {
        human() << "benchfp: --jit-profile: a write failed (see the warning above): the profile lacks kernels" << std::endl;
        exit_status_ = 2;
    }
    try {
        // Both or neither (report::write_files; a path written in place, such as /dev/stdout, is
        // written first): a new results file beside an old CSV would read as one run.
        std::vector<report::NamedText> outputs;
        if (!options_.json_path.empty())
            outputs.push_back({options_.json_path, report::results_json(host_info(isa_cap_), results_, summary_)});
        if (!options_.csv_path.empty()) outputs.push_back({options_.csv_path, csv_rows_});
        report::write_files(outputs);
    } catch (const std::exception& e) {
        std::cerr << "benchfp: " << e.what() << '\n';
        exit_status_ = 2;
    }
}

namespace {

// This host's ISA and the levels it can run (none above the host's).
nlohmann::json host_isas_json() {
    nlohmann::json usable = nlohmann::json::array();
    for (jit::Isa isa : jit::all_isas)
        if (jit::isa_usable(isa, std::nullopt)) usable.push_back(jit::to_string(isa));
    const auto isa = jit::host_isa();
    return {{"isa", isa ? jit::to_string(*isa) : "none"}, {"usable", usable}};
}

std::string joined(const nlohmann::json& names) {
    std::string out;
    for (const auto& name : names) out += (out.empty() ? "" : ",") + name.get<std::string>();
    return out;
}

}  // namespace

int list_families(const std::string& json_path) {
    const nlohmann::json table = {
        {"schema", "benchfp.kernel-list/1"}, {"host", host_isas_json()}, {"families", families_json()}};
    if (!json_path.empty()) {
        const std::string text = table.dump(2) + "\n";
        if (json_path == "-") {
            std::cout << text;
        } else {
            try {
                report::write_file(json_path, text);
            } catch (const std::exception& e) {
                std::cerr << "benchfp: " << e.what() << '\n';
                return 2;
            }
        }
        return 0;
    }
    std::cout << "host: " << table["host"]["isa"].get<std::string>() << " (runs " << joined(table["host"]["usable"])
              << ")\n";
    for (const auto& f : table["families"])
        std::cout << f["name"].get<std::string>() << ": " << f["summary"].get<std::string>() << "\n  --alg="
                  << joined(f["algs"]) << "  --isa=" << joined(f["isas"])
                  << (f["onednn_peer"].get<bool>() ? "  --vs=onednn" : "") << "\n  problem: "
                  << f["problem"].get<std::string>() << '\n';
    return 0;
}

}  // namespace benchfp::harness
