// KernelRun's step and abi modes: one call of a case's kernel made by main ->
// foo -> bar with the trap flag set (every thread of a parallel section too),
// each executed JIT instruction judged (kernel/step_check.hpp). abi mode first
// calls the kernel through the ABI probe (abi_probe.hpp), then steps it for the
// stack and vector rules.
#include "commands/kernel_command.hpp"

#include "abi_probe.hpp"
#include "commands/kernel_run_state.hpp"
#include "families/family.hpp"
#include "kernel/step_check.hpp"

namespace benchfp::harness {

namespace {

// abi: every kernel call of one run of the problem through the probe.
std::string probe_once(const WorkloadCall& call, unsigned seed) {
    if (!call.jit_caller.empty()) {  // a driver: benchfp_call_jit probes each call it makes
        set_jit_call_way(JitCallWay::probed);
        call.fn(call.arg);
        set_jit_call_way(JitCallWay::plain);
        return take_probe_mismatches();
    }
    abi::Probe probe;
    abi::probe_call(probe, call.fn, call.arg, seed);
    return probe.mismatches();
}

}  // namespace

SampledCall* KernelRun::begin_step(const KernelCase& c) {
    auto p = std::make_unique<PendingStep>();
    p->begun = Clock::now();
    p->c = c;
    p->workload = find_family(c.spec.kernel)->make_workload(c);
    const jit::Generator& kernel = p->workload->kernel();
    // Built with --no-verify the kernel has no decoded code yet: decode it now,
    // whatever the verifier thinks of it (step mode judges it on its own).
    p->code = kernel.verification() ? *kernel.verification() : jit::verify(kernel.layout(), c.spec.frame);
    const WorkloadCall call = p->workload->call();
    p->jit_caller = call.jit_caller;
    call.fn(call.arg);  // warm up: fault the pages in, so the stepped call is the kernel's own path
    if (c.mode == Mode::abi) p->abi_mismatch = probe_once(call, c.seed);

    const jit::CodeRegionInfo& layout = kernel.layout();
    p->session = std::make_unique<step::Session>(p->code, layout.begin, layout.size, p->workload->threads(),
                                                 static_cast<uint64_t>(c.max_steps));
    if (!call.jit_caller.empty()) set_jit_call_way(JitCallWay::stepped);
    p->call.kernel = call.fn;
    p->call.args = call.arg;
    p->call.step = call.jit_caller.empty();
    p->call.start(std::chrono::milliseconds(0), std::chrono::milliseconds(0));  // bar makes one call
    p->stepping_began = Clock::now();
    step_pending_ = std::move(p);
    return &step_pending_->call;
}

void KernelRun::finish_step() {
    std::unique_ptr<PendingStep> p = std::move(step_pending_);
    const double seconds = std::chrono::duration<double>(Clock::now() - p->stepping_began).count();
    set_jit_call_way(JitCallWay::plain);
    const std::vector<step::ThreadSteps> threads = p->session->stop();
    const uint64_t unstepped = p->session->unstepped_calls();
    p->session.reset();

    const jit::CodeRegionInfo& layout = p->workload->kernel().layout();
    if (!symbols_) symbols_ = std::make_unique<perf::Symbols>();
    symbols_->clear_regions();
    symbols_->add_region({layout.name, layout.begin, layout.begin + layout.size});
    const SteppedCall stepped{threads, layout, p->code, *symbols_, p->jit_caller, seconds, unstepped,
                              static_cast<uint64_t>(p->c.max_steps)};
    const StepOutcome outcome = p->c.mode == Mode::abi
                                    ? judge_abi(stepped, p->abi_mismatch)
                                    : judge_step(stepped, p->c.spec.frame, step_expectation(p->c.spec.frame, p->c.expect));
    record(p->c, outcome.state, outcome.detail, ms_since(p->begun), {{to_string(p->c.mode), outcome.record}});
}

}  // namespace benchfp::harness
