#include "session.hpp"

#include "host_info.hpp"
#include "perf/error.hpp"
#include "perf/sampler.hpp"
#include "perf_template.hpp"
#include "unwind_check.hpp"
#include "usage_error.hpp"
#include "workloads/workload.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace benchfp::harness {

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* default_batch = "cases/default";

double ms_since(Clock::time_point start) {
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

nlohmann::json spec_json(const KernelCase& c) {
    nlohmann::json spec = {{"kernel", c.spec.kernel}, {"alg", c.spec.alg},
                           {"isa", jit::to_string(c.spec.isa)}, {"frame", jit::to_string(c.spec.frame)},
                           {"mode", to_string(c.mode)}, {"problem", c.problem}};
    if (c.expect) spec["expect"] = perf::to_string(*c.expect);
    return spec;
}

}  // namespace

struct Session::PendingUnwind {
    KernelCase c;
    std::unique_ptr<Workload> workload;
    std::unique_ptr<perf::Sampler> sampler;
    SampledCall call;
    std::string jit_caller;
    Clock::time_point begun;
};

Session::Session(int argc, char** argv) {
    auto bad_usage = [&](const std::exception& e) {
        std::cerr << "benchfp: " << e.what() << '\n';
        exit_status_ = 2;
        done_ = true;
    };
    try {
        parse(argc, argv);
    } catch (const UsageError& e) {
        bad_usage(e);
    } catch (const std::invalid_argument& e) {  // e.g. a bad BENCHFP_MAX_CPU_ISA
        bad_usage(e);
    }
}

Session::~Session() = default;

void Session::parse(int argc, char** argv) {
    CLI::App app("benchfp: checks that JIT kernels stay profilable (frame-pointer unwinding) and what it costs.\n"
                 "With no arguments, runs the default suite (" + std::string(default_batch) + ").");
    app.require_subcommand(0, 1);
    CLI::App* kernel = app.add_subcommand("kernel", "build, check and sample JIT kernels (benchdnn-style cases)");
    command_line_.add_to(*kernel);
    kernel->add_option("--json", run_.json_path, "write every case's record to this JSON file");
    kernel->add_option("--max-isa", run_.max_isa, "highest ISA to use (also BENCHFP_MAX_CPU_ISA)");
    kernel->add_option("--event", run_.event,
                       "libpfm4 event to sample (default cycles, falling back to perf::task-clock without a PMU)");
    kernel->add_option("--freq", run_.frequency, "samples per second (default 4000)")->check(CLI::Range(1, 1000000));
    kernel->add_option("--period", run_.period, "fixed sample period in event units (overrides --freq)");
    kernel->add_option("--perf-template", run_.perf_template,
                       "perf: line template with %tokens% (see README), or default, csv");
    CLI::App* alloc = app.add_subcommand("alloc", "the pool allocator and its allocation profiler");
    alloc->require_subcommand(1);
    CLI::App* profile =
        alloc->add_subcommand("profile", "run a workload under the allocation profiler, write a pprof profile");
    alloc_profile_.add_to(*profile);
    CLI::App* judge = app.add_subcommand("judge", "judge benchmark results against the stored baseline, write the report");
    judge_.add_to(*judge);

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        app.exit(e);
        done_ = true;
        return;
    } catch (const CLI::ParseError& e) {
        throw UsageError(e.what());
    }
    if (profile->parsed()) {
        alloc_profile_requested_ = true;
        return;
    }
    if (judge->parsed()) {
        judge_requested_ = true;
        return;
    }
    if (argc == 1) command_line_.batches = {default_batch};
    else if (!kernel->parsed()) throw UsageError("give a subcommand (kernel, alloc profile, judge); see benchfp --help");

    if (!run_.max_isa.empty()) {
        isa_cap_ = jit::parse_isa(run_.max_isa);
        if (!isa_cap_) throw UsageError("unknown --max-isa '" + run_.max_isa + "' (known: " + jit::known_isas() + ")");
    } else {
        isa_cap_ = jit::isa_cap_from_env();
    }
    cases_ = expand_cases(command_line_, isa_cap_);
    run_.perf_template = resolve_perf_template(run_.perf_template);
    PerfLine probe;
    probe.c = &cases_.front();
    format_perf_line(run_.perf_template, probe);  // unknown tokens: exit 2 now, not later
}

const perf::EventChoice& Session::event() {
    if (!event_) {
        event_ = perf::choose_event(run_.event, perf::probe_open);
        if (!event_->note.empty()) std::cout << "benchfp: note: " << event_->note << std::endl;
    }
    return *event_;
}

SampledCall* Session::next_sampled_call() {
    if ((alloc_profile_requested_ || judge_requested_) && !finished_) {
        finished_ = true;
        exit_status_ = alloc_profile_requested_ ? run_alloc_profile(alloc_profile_) : run_judge(judge_);
        return nullptr;
    }
    if (pending_) finish_unwind();
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
            }
        } catch (const perf::Error& e) {
            // No sampling at all here (refused, absent, bad event): a usage error, status 2.
            pending_.reset();
            std::cerr << "benchfp: " << e.what() << "\nbenchfp: stopped at case " << next_case_ - 1 << ": "
                      << repro(c) << '\n';
            exit_status_ = 2;
            done_ = true;
        } catch (const std::exception& e) {
            pending_.reset();
            record(c, report::State::failed, std::string("error: ") + e.what(), 0, {});
        }
    }
    if (!finished_) {
        finished_ = true;
        if (exit_status_ != 2) finish();
    }
    return nullptr;
}

void Session::run_corr(const KernelCase& c) {
    const auto begun = Clock::now();
    auto workload = make_workload(c);
    CorrOutcome outcome = workload->check();
    const report::State state = !outcome.passed      ? report::State::failed
                                : outcome.mistrusted ? report::State::mistrusted
                                                     : report::State::passed;
    record(c, state, outcome.detail, ms_since(begun), {{"corr", outcome.record}});
}

void Session::run_list(const KernelCase& c) {
    const auto begun = Clock::now();
    const auto kernel = jit::build_kernel(c.spec);
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

// Perf cases that differ only in frame policy are adjacent after expansion:
// they form one group, timed side by side.
size_t Session::perf_group_end(size_t first) const {
    const KernelCase& a = cases_[first];
    size_t end = first + 1;
    for (; end < cases_.size(); ++end) {
        const KernelCase& b = cases_[end];
        if (b.mode != Mode::perf || b.spec.kernel != a.spec.kernel || b.spec.alg != a.spec.alg ||
            b.spec.isa != a.spec.isa || b.problem != a.problem || b.threads != a.threads || b.vs != a.vs)
            break;
    }
    return end;
}

void Session::run_perf_group(size_t first, size_t end) {
    const auto begun = Clock::now();
    // One workload, one kernel per policy: every variant runs on the same buffers.
    std::vector<const KernelCase*> running;
    std::unique_ptr<Workload> workload;
    for (size_t i = first; i < end; ++i) {
        const KernelCase& c = cases_[i];
        if (!c.skip_reason.empty()) {
            record(c, report::State::skipped, c.skip_reason, 0, {});
            continue;
        }
        if (!workload) workload = make_workload(c);
        else workload->add_variant(c.spec);
        running.push_back(&c);
    }
    if (running.empty()) return;
    std::vector<std::function<void()>> variants;
    for (size_t v = 0; v < running.size(); ++v)
        variants.push_back([call = workload->call(v)] { call.fn(call.arg); });
    std::unique_ptr<Peer> onednn, copy;
    const std::string& peers = running.front()->vs;
    if (peers.find("onednn") != std::string::npos) {
        onednn = workload->onednn_peer();
        variants.push_back([p = onednn.get()] { p->run(); });
    }
    if (peers.find("copy") != std::string::npos) {
        copy = make_copy_peer(workload->input_bytes());
        variants.push_back([p = copy.get()] { p->run(); });
    }
    std::unique_ptr<Peer> peak;
    double peak_flops = 0;
    if (peers.find("peak") != std::string::npos) {
        peak = make_fma_peak_peer(running.front()->spec.isa, peak_flops);
        variants.push_back([p = peak.get()] { p->run(); });
    }
    const auto stats = measure_interleaved(variants, running.front()->max_ms_per_prb);
    size_t peer_index = running.size();
    const PerfStats* onednn_stats = onednn ? &stats[peer_index++] : nullptr;
    const PerfStats* copy_stats = copy ? &stats[peer_index++] : nullptr;
    const PerfStats* peak_stats = peak ? &stats[peer_index++] : nullptr;
    const double ms = ms_since(begun);
    if (run_.perf_template == resolve_perf_template("csv") && !csv_header_printed_) {
        std::cout << csv_perf_header() << '\n';
        csv_header_printed_ = true;
    }
    for (size_t v = 0; v < running.size(); ++v) {
        PerfLine line;
        line.c = running[v];
        line.stats = stats[v];
        line.flops = workload->flops();
        line.bytes = workload->bytes();
        line.frame_ratio = stats[v].min_ms / stats[0].min_ms;
        nlohmann::json measures = {{"min_ms", stats[v].min_ms},        {"avg_ms", stats[v].avg_ms},
                                   {"rounds", stats[v].rounds},        {"calls_per_sample", stats[v].calls_per_sample},
                                   {"flops", line.flops},              {"bytes", line.bytes},
                                   {"frame_ratio", *line.frame_ratio}, {"interleaved_with", variants.size() - 1}};
        if (onednn_stats) {
            line.vs_onednn = onednn_stats->min_ms / stats[v].min_ms;
            measures["vs_onednn"] = *line.vs_onednn;
            measures["onednn_min_ms"] = onednn_stats->min_ms;
        }
        if (copy_stats) {
            const double copy_gbps = 2.0 * workload->input_bytes() / copy_stats->min_ms;
            line.vs_copy = (line.bytes / stats[v].min_ms) / copy_gbps;
            measures["vs_copy"] = *line.vs_copy;
            measures["copy_min_ms"] = copy_stats->min_ms;
        }
        if (peak_stats) {
            line.vs_peak = (line.flops / stats[v].min_ms) / (peak_flops / peak_stats->min_ms);
            measures["vs_peak"] = *line.vs_peak;
            measures["peak_gflops"] = peak_flops / peak_stats->min_ms / 1e6;
        }
        const std::string text = format_perf_line(run_.perf_template, line);
        record(*running[v], report::State::passed, "", ms / running.size(), {{"perf", measures}}, &text);
    }
}

SampledCall* Session::begin_unwind(const KernelCase& c) {
    auto pending = std::make_unique<PendingUnwind>();
    pending->begun = Clock::now();
    pending->c = c;
    pending->workload = make_workload(c);
    if (!symbols_) symbols_ = std::make_unique<perf::Symbols>();

    perf::SamplerOptions options;
    options.event = event().event;
    options.tid = gettid();  // main's thread: the one that runs foo and bar
    options.frequency = run_.frequency;
    options.period = run_.period;
    pending->sampler = std::make_unique<perf::Sampler>(options);

    const WorkloadCall call = pending->workload->call();
    pending->call.kernel = call.fn;
    pending->call.args = call.arg;
    pending->jit_caller = call.jit_caller;
    pending->call.kernel(pending->call.args);  // warm up: fault the pages in before sampling
    pending->sampler->start();
    pending->call.deadline = Clock::now() + std::chrono::milliseconds(c.duration_ms);
    pending_ = std::move(pending);
    return &pending_->call;
}

void Session::finish_unwind() {
    std::unique_ptr<PendingUnwind> p = std::move(pending_);
    p->sampler->stop();
    const jit::CodeRegionInfo& code = p->workload->kernel().layout();
    symbols_->clear_regions();
    symbols_->add_region({code.name, code.begin, code.begin + code.size});
    UnwindOutcome outcome = judge_unwind(p->sampler->samples(), p->sampler->stats(), code, *symbols_, p->jit_caller,
                                         p->c.expect, p->c.min_samples);
    const double seconds = p->sampler->seconds();
    const auto total = p->sampler->stats().samples;
    outcome.record["event"] = p->sampler->event().name;
    if (!event().note.empty()) outcome.record["event_note"] = event().note;
    outcome.record["sampled_seconds"] = seconds;
    outcome.record["sample_rate_hz"] = seconds > 0 ? total / seconds : 0.0;
    outcome.record["kernel_calls"] = p->call.calls;
    std::string detail = outcome.detail;
    if (total == 0) detail += " no samples at all: event " + p->sampler->event().name + " produced none";
    record(p->c, outcome.state, detail, ms_since(p->begun), {{"unwind", outcome.record}});
}

void Session::record(const KernelCase& c, report::State state, std::string detail, double ms, nlohmann::json extra,
                     const std::string* line) {
    report::CaseResult result;
    result.index = static_cast<int>(results_.size());
    result.state = state;
    result.detail = std::move(detail);
    result.ms = ms;
    result.repro = repro(c);
    result.record = std::move(extra);
    result.record["spec"] = spec_json(c);
    if (!c.skip_reason.empty()) result.record["skip_reason"] = c.skip_reason;
    std::cout << (line ? *line : report::status_line(result)) << std::endl;
    summary_.add(state);
    results_.push_back(std::move(result));
}

void Session::finish() {
    if (cases_.empty()) return;  // --help: nothing was to run
    std::cout << summary_.line() << std::endl;
    exit_status_ = summary_.exit_status();
    if (!run_.json_path.empty()) {
        try {
            report::write_results_json(run_.json_path, host_info(isa_cap_), results_, summary_);
        } catch (const std::exception& e) {
            std::cerr << "benchfp: " << e.what() << '\n';
            exit_status_ = 2;
        }
    }
}

}  // namespace benchfp::harness
