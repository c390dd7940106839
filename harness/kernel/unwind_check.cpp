#include "kernel/unwind_check.hpp"

#include "callers.hpp"
#include "parallel.hpp"

#include <map>
#include <sstream>

namespace benchfp::harness {

perf::Verdict policy_verdict(jit::FramePolicy policy) {
    switch (policy) {
    case jit::FramePolicy::clobber: return perf::Verdict::broken;
    case jit::FramePolicy::preserve: return perf::Verdict::skipped_caller;
    case jit::FramePolicy::frame: return perf::Verdict::full;
    }
    return perf::Verdict::full;
}

perf::JitCode jit_code_of(const jit::CodeRegionInfo& code) {
    perf::JitCode jit;
    jit.region = {code.name, code.begin, code.begin + code.size};
    jit.frameless_windows = {{code.begin, code.begin + code.prologue_end},
                             {code.begin + code.epilogue_begin, code.begin + code.size}};
    return jit;
}

perf::ExpectedCallers calling_thread_callers(const std::string& jit_caller) {
    return {{std::begin(expected_callers), std::end(expected_callers)}, jit_caller};
}

perf::ExpectedCallers worker_callers() { return {{worker_entry_function}, "benchfp_call_jit"}; }

std::string folded_stack(const std::vector<std::string>& innermost_first) {
    std::string stack;
    for (auto frame = innermost_first.rbegin(); frame != innermost_first.rend(); ++frame) {
        std::string name = *frame;
        for (char& ch : name)
            if (ch == ';') ch = ':';  // ';' separates frames in the folded format
        stack += (stack.empty() ? "" : ";") + name;
    }
    return stack.empty() ? "[no frames]" : stack;
}

UnwindOutcome judge_unwind(const std::vector<perf::Sample>& samples, const perf::RingStats& stats,
                           const jit::CodeRegionInfo& code, const perf::Symbols& symbols,
                           const perf::ExpectedCallers& expected, std::optional<perf::Verdict> expect,
                           int min_samples) {
    const perf::JitCode jit = jit_code_of(code);
    perf::Tally tally;
    std::map<std::string, std::vector<std::string>> example_chains;  // first chain seen per verdict
    std::map<std::string, uint64_t> folded;                           // every JIT sample's chain, root first
    for (const perf::Sample& sample : samples) {
        const auto v = perf::verdict(sample, jit, expected, symbols);
        tally.add(v);
        if (!v) continue;
        const std::vector<std::string> names = symbols.frame_names(sample);
        if (!example_chains.count(perf::to_string(*v))) example_chains[perf::to_string(*v)] = names;
        ++folded[folded_stack(names)];
    }

    const perf::Verdict wanted = expect.value_or(perf::Verdict::full);
    UnwindOutcome out;
    std::ostringstream detail;
    detail << "unwind full:" << tally.full << '/' << tally.judged() << " prologue:" << tally.prologue
           << " skipped-caller:" << tally.skipped_caller << " broken:" << tally.broken;
    if (stats.lost) detail << " lost:" << stats.lost;
    if (tally.judged() < static_cast<uint64_t>(min_samples)) {
        detail << " inconclusive: " << tally.judged() << " judged JIT samples < --min-samples=" << min_samples;
        out.state = report::State::failed;
    } else if (tally.count(wanted) == tally.judged()) {
        out.state = report::State::passed;
    } else {
        detail << " expected every sample " << perf::to_string(wanted);
        out.state = report::State::failed;
    }
    out.detail = detail.str();
    out.record = {
        {"tally",
         {{"full", tally.full},
          {"skipped_caller", tally.skipped_caller},
          {"broken", tally.broken},
          {"prologue", tally.prologue},
          {"outside_jit", tally.outside},
          {"judged", tally.judged()}}},
        {"unwind_rate", tally.judged() ? nlohmann::json(tally.unwind_rate()) : nlohmann::json(nullptr)},
        {"expected_verdict", perf::to_string(wanted)},
        {"expected_callers", expected.outer},
        {"expected_direct_caller", expected.direct},
        {"ring",
         {{"samples", stats.samples},
          {"lost", stats.lost},
          {"lost_records", stats.lost_records},
          {"throttled", stats.throttled},
          {"unthrottled", stats.unthrottled},
          {"other_records", stats.other}}},
        {"example_chains", example_chains},
        {"folded", folded},
        {"jit", {{"name", code.name}, {"size", code.size}, {"prologue_end", code.prologue_end},
                 {"epilogue_begin", code.epilogue_begin}}},
    };
    return out;
}

}  // namespace benchfp::harness
