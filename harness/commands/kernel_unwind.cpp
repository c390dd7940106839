// KernelRun's unwind mode: a case's kernel called by main -> foo -> bar while
// the sampler records main's thread, then every JIT sample's chain judged.
#include "commands/kernel_command.hpp"

#include "commands/kernel_run_state.hpp"
#include "families/family.hpp"
#include "kernel/unwind_check.hpp"

#include <unistd.h>

namespace benchfp::harness {

namespace {

// The workers' samples, together, judged against the pool's entry: the case
// fails when they fail, and the line and record show them apart.
void judge_workers(UnwindOutcome& outcome, const std::vector<std::unique_ptr<perf::Sampler>>& workers,
                   const jit::CodeRegionInfo& code, const perf::Symbols& symbols, perf::Verdict wanted,
                   int min_samples) {
    std::vector<perf::Sample> samples;
    perf::RingStats stats;
    for (const auto& w : workers) {
        samples.insert(samples.end(), w->samples().begin(), w->samples().end());
        stats += w->stats();
    }
    const UnwindOutcome of_workers = judge_unwind(samples, stats, code, symbols, worker_callers(), wanted, min_samples);
    outcome.detail += "; " + std::to_string(workers.size()) + " worker(s): " + of_workers.detail;
    outcome.record["workers"] = of_workers.record;
    if (of_workers.state == report::State::failed) outcome.state = report::State::failed;
}

}  // namespace

SampledCall* KernelRun::begin_unwind(const KernelCase& c) {
    auto pending = std::make_unique<PendingUnwind>();
    pending->begun = Clock::now();
    pending->c = c;
    pending->workload = find_family(c.spec.kernel)->make_workload(c);
    if (!symbols_) symbols_ = std::make_unique<perf::Symbols>();

    perf::SamplerOptions options;
    options.event = event().event;
    options.tid = gettid();  // main's thread: the one that runs foo and bar
    options.frequency = options_.frequency;
    options.period = options_.period.value_or(0);
    pending->sampler = std::make_unique<perf::Sampler>(options);
    // Every thread of the parallel section is sampled too: a worker's chain must
    // reach the pool's entry, as the calling thread's reaches main.
    for (pid_t tid : pending->workload->worker_tids()) {
        options.tid = tid;
        pending->workers.push_back(std::make_unique<perf::Sampler>(options));
    }

    const WorkloadCall call = pending->workload->call();
    pending->call.kernel = call.fn;
    pending->call.args = call.arg;
    pending->jit_caller = call.jit_caller;
    pending->call.kernel(pending->call.args);  // warm up: fault the pages in before sampling
    pending->sampler->start();
    for (auto& worker : pending->workers) worker->start();
    // --duration-ms of CPU time; up to 20 times that on a starved machine.
    pending->call.start(std::chrono::milliseconds(c.duration_ms), std::chrono::milliseconds(20 * c.duration_ms));
    pending_ = std::move(pending);
    return &pending_->call;
}

void KernelRun::finish_unwind() {
    std::unique_ptr<PendingUnwind> p = std::move(pending_);
    p->sampler->stop();
    for (auto& worker : p->workers) worker->stop();
    const jit::CodeRegionInfo& code = p->workload->kernel().layout();
    symbols_->clear_regions();
    symbols_->add_region({code.name, code.begin, code.begin + code.size});
    const perf::Verdict wanted = p->c.expect.value_or(policy_verdict(p->c.spec.frame));
    UnwindOutcome outcome = judge_unwind(p->sampler->samples(), p->sampler->stats(), code, *symbols_,
                                         calling_thread_callers(p->jit_caller), wanted, p->c.min_samples);
    if (!p->workers.empty()) judge_workers(outcome, p->workers, code, *symbols_, wanted, p->c.min_samples);
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

}  // namespace benchfp::harness
