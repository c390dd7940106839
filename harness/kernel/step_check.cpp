#include "kernel/step_check.hpp"

#include "callers.hpp"
#include "kernel/unwind_check.hpp"
#include "parallel.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace benchfp::harness {

namespace {

struct Offender {
    const step::ChainCount* chain = nullptr;
    perf::Verdict verdict = perf::Verdict::broken;
    bool main_thread = false;
};

perf::Sample sample_of(const step::ChainCount& c) {
    perf::Sample s;
    s.ip = c.frames[0];
    s.chain.assign(c.frames, c.frames + c.depth);
    return s;
}

std::string hex(uint64_t offset) {
    std::ostringstream out;
    out << "+0x" << std::hex << offset;
    return out.str();
}

std::string instruction_text(const jit::Verification& code, uint64_t offset) {
    const jit::Instruction* insn = code.at(offset);
    return hex(offset) + " `" + (insn ? insn->text : std::string("(not decoded by the verifier)")) + "`";
}

std::string chain_text(const perf::Symbols& symbols, const step::ChainCount& c) {
    std::string out;
    for (const std::string& name : symbols.frame_names(sample_of(c))) out += (out.empty() ? "" : " <- ") + name;
    return out;
}

// A count over every stepped thread (steps, stack_accesses, nops).
uint64_t total(const std::vector<step::ThreadSteps>& threads, uint64_t step::ThreadSteps::*count) {
    uint64_t n = 0;
    for (const auto& t : threads) n += t.*count;
    return n;
}

std::string rate_text(uint64_t steps, double seconds) {
    std::ostringstream out;
    out << static_cast<uint64_t>(seconds > 0 ? steps / seconds / 1000 : 0) << "k/s";
    return out.str();
}

// Why a session that missed calls fails: those calls' instructions were never judged.
std::string unstepped_text(uint64_t calls) {
    return " " + std::to_string(calls) + " kernel calls ran on threads the session could not step";
}

// The same for a call longer than the budget: its rest was never judged either.
bool budget_spent(const SteppedCall& call) {
    return std::any_of(call.threads.begin(), call.threads.end(), [](const step::ThreadSteps& t) { return t.budget_spent; });
}
std::string budget_text(uint64_t max_steps) {
    return " a thread reached --max-steps=" + std::to_string(max_steps) +
           " and the rest of the call ran unstepped, unjudged (step a smaller problem, or raise --max-steps)";
}

}  // namespace

perf::Verdict step_expectation(jit::FramePolicy policy, std::optional<perf::Verdict> expect) {
    if (expect) return *expect;
    return policy == jit::FramePolicy::preserve ? perf::Verdict::skipped_caller : perf::Verdict::full;
}

StepOutcome judge_step(const SteppedCall& call, jit::FramePolicy policy, perf::Verdict wanted) {
    const perf::JitCode windowed = jit_code_of(call.layout);
    perf::JitCode bare = windowed;
    bare.frameless_windows.clear();  // the chain as it is, wherever the IP
    const perf::ExpectedCallers main_expected = calling_thread_callers(call.jit_caller);
    const perf::ExpectedCallers worker_expected = worker_callers();

    uint64_t by_verdict[4] = {}, lost = 0;
    std::set<uint64_t> stepped, frameless;  // offsets executed; those whose chain is not the wanted one
    Offender first;
    for (const step::ThreadSteps& t : call.threads) {
        lost += t.lost;
        const perf::ExpectedCallers& expected = t.main_thread ? main_expected : worker_expected;
        for (const step::ChainCount& c : t.chains) {
            const perf::Sample s = sample_of(c);
            const perf::Verdict v = *perf::verdict(s, windowed, expected, call.symbols);
            by_verdict[static_cast<int>(v)] += c.count;
            stepped.insert(c.offset);
            if (*perf::verdict(s, bare, expected, call.symbols) != wanted) frameless.insert(c.offset);
            const bool earlier = !first.chain || (t.main_thread && !first.main_thread) ||
                                 (t.main_thread == first.main_thread && c.first_step < first.chain->first_step);
            if (v != perf::Verdict::prologue && v != wanted && earlier) first = {&c, v, t.main_thread};
        }
    }
    // The instructions that may be frameless: before the link and after the unlink.
    std::set<uint64_t> allowed;
    if (policy == jit::FramePolicy::frame)
        for (uint64_t o : stepped)
            if (o < call.code.frame_from || (call.code.frame_until != jit::Verification::npos && o > call.code.frame_until))
                allowed.insert(o);
    std::vector<uint64_t> window_mismatch;
    std::set_symmetric_difference(frameless.begin(), frameless.end(), allowed.begin(), allowed.end(),
                                  std::back_inserter(window_mismatch));
    const bool windows_checked = policy != jit::FramePolicy::clobber;
    const size_t prologue_window = std::count_if(frameless.begin(), frameless.end(),
                                                 [&](uint64_t o) { return o < call.layout.epilogue_begin; });

    const uint64_t steps = total(call.threads, &step::ThreadSteps::steps);
    const uint64_t stack_accesses = total(call.threads, &step::ThreadSteps::stack_accesses);
    const uint64_t nops = total(call.threads, &step::ThreadSteps::nops);
    std::ostringstream detail;
    detail << "step instructions:" << steps << " full:" << by_verdict[0] << " skipped-caller:" << by_verdict[1]
           << " broken:" << by_verdict[2] << " prologue:" << by_verdict[3] << " windows:" << prologue_window << '+'
           << frameless.size() - prologue_window << " stack:" << stack_accesses << " nops:" << nops
           << " threads:" << call.threads.size() << " rate:" << rate_text(steps, call.seconds);
    StepOutcome out;
    out.state = report::State::failed;
    if (steps == 0) detail << " no instruction of the kernel was stepped";
    else if (call.unstepped_calls)
        detail << unstepped_text(call.unstepped_calls);
    else if (lost) detail << " " << lost << " steps did not fit the chain table";
    else if (first.chain)  // a breakage within the budget is named before the budget
        detail << " expected " << perf::to_string(wanted) << "; first offending " << instruction_text(call.code, first.chain->offset)
               << " (" << perf::to_string(first.verdict) << "): " << chain_text(call.symbols, *first.chain);
    else if (budget_spent(call))
        detail << budget_text(call.max_steps);
    else if (windows_checked && !window_mismatch.empty())
        detail << " the frameless instructions are not exactly entry..`mov rbp, rsp` and after `pop rbp`: "
               << instruction_text(call.code, window_mismatch.front())
               << (frameless.count(window_mismatch.front()) ? " is frameless" : " has a full chain");
    else out.state = report::State::passed;
    out.detail = detail.str();
    out.record = {{"instructions", steps},
                  {"stack_accesses", stack_accesses},
                  {"nops", nops},
                  {"verdicts", {{"full", by_verdict[0]}, {"skipped_caller", by_verdict[1]}, {"broken", by_verdict[2]},
                                {"prologue", by_verdict[3]}}},
                  {"expected_verdict", perf::to_string(wanted)},
                  {"distinct_instructions", stepped.size()},
                  {"window_instructions", {{"prologue", prologue_window}, {"epilogue", frameless.size() - prologue_window}}},
                  {"threads", call.threads.size()},
                  {"unstepped_calls", call.unstepped_calls},
                  {"budget_spent", budget_spent(call)},
                  {"seconds", call.seconds},
                  {"steps_per_second", call.seconds > 0 ? steps / call.seconds : 0.0}};
    if (first.chain) out.record["first_offending"] = {{"offset", first.chain->offset},
                                                     {"instruction", instruction_text(call.code, first.chain->offset)},
                                                     {"chain", chain_text(call.symbols, *first.chain)}};
    return out;
}

StepOutcome judge_abi(const SteppedCall& call, const std::string& probe_mismatches) {
    StepOutcome out;
    std::ostringstream detail;
    const uint64_t steps = total(call.threads, &step::ThreadSteps::steps);
    detail << "abi probe:" << (probe_mismatches.empty() ? "ok" : "FAILED") << " stepped:" << steps
           << " rate:" << rate_text(steps, call.seconds);
    nlohmann::json violations = nlohmann::json::object();
    for (int k = 0; k < step::Violation::count_; ++k)
        for (const step::ThreadSteps& t : call.threads) {
            const step::Violation& v = t.violations[k];
            if (!v.seen || violations.contains(step::to_string(step::Violation::Kind(k)))) continue;
            std::ostringstream what;
            what << instruction_text(call.code, v.offset) << " rsp=0x" << std::hex << v.rsp;
            if (v.address) what << " address=0x" << v.address;
            violations[step::to_string(step::Violation::Kind(k))] = what.str();
            detail << ' ' << step::to_string(step::Violation::Kind(k)) << ": " << what.str();
        }
    if (!probe_mismatches.empty()) detail << " changed across the call: " << probe_mismatches;
    if (steps == 0) detail << " no instruction of the kernel was stepped";
    if (call.unstepped_calls) detail << unstepped_text(call.unstepped_calls);
    if (budget_spent(call)) detail << budget_text(call.max_steps);
    out.state = probe_mismatches.empty() && violations.empty() && steps && !call.unstepped_calls && !budget_spent(call)
                    ? report::State::passed
                    : report::State::failed;
    out.detail = detail.str();
    out.record = {{"probe", probe_mismatches.empty() ? "ok" : probe_mismatches},
                  {"violations", violations},
                  {"instructions", steps},
                  {"unstepped_calls", call.unstepped_calls},
                  {"budget_spent", budget_spent(call)},
                  {"seconds", call.seconds}};
    return out;
}

}  // namespace benchfp::harness
