#include "perf/verdict.hpp"

#include <algorithm>
#include <limits>

namespace benchfp::perf {

const char* to_string(Verdict verdict) {
    switch (verdict) {
    case Verdict::full: return "full";
    case Verdict::skipped_caller: return "skipped-caller";
    case Verdict::broken: return "broken";
    case Verdict::prologue: return "prologue";
    }
    return "?";
}

Verdict classify_callers(std::span<const std::string> callers, const ExpectedCallers& expected) {
    const std::span<const std::string> outer(expected.outer);
    auto starts_with = [&](std::span<const std::string> want) {
        return callers.size() >= want.size() && std::equal(want.begin(), want.end(), callers.begin());
    };
    auto contains = [&](std::span<const std::string> want) {
        return !want.empty() && std::search(callers.begin(), callers.end(), want.begin(), want.end()) != callers.end();
    };
    if (expected.anywhere) {
        if (contains(outer)) return Verdict::full;
        if (outer.size() >= 2 && contains(outer.subspan(1))) return Verdict::skipped_caller;
        return Verdict::broken;
    }
    if (expected.direct.empty()) {
        if (!outer.empty() && starts_with(outer)) return Verdict::full;
        if (outer.size() >= 2 && starts_with(outer.subspan(1))) return Verdict::skipped_caller;
        return Verdict::broken;
    }
    if (!contains(outer)) return Verdict::broken;
    return callers.front() == expected.direct ? Verdict::full : Verdict::skipped_caller;
}

std::optional<Verdict> verdict(const Sample& sample, const JitCode& code, const ExpectedCallers& expected,
                               const Symbols& symbols) {
    if (!code.region.contains(sample.ip)) return std::nullopt;
    for (const auto& [begin, end] : code.frameless_windows)
        if (sample.ip >= begin && sample.ip < end) return Verdict::prologue;
    const std::vector<std::string> names = symbols.frame_names(sample);
    std::span<const std::string> callers(names);
    return classify_callers(callers.empty() ? callers : callers.subspan(1), expected);
}

void Tally::add(std::optional<Verdict> v) {
    if (!v) {
        ++outside;
        return;
    }
    switch (*v) {
    case Verdict::full: ++full; break;
    case Verdict::skipped_caller: ++skipped_caller; break;
    case Verdict::broken: ++broken; break;
    case Verdict::prologue: ++prologue; break;
    }
}

uint64_t Tally::count(Verdict v) const {
    switch (v) {
    case Verdict::full: return full;
    case Verdict::skipped_caller: return skipped_caller;
    case Verdict::broken: return broken;
    case Verdict::prologue: return prologue;
    }
    return 0;
}

double Tally::unwind_rate() const {
    return judged() ? static_cast<double>(full) / static_cast<double>(judged())
                    : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace benchfp::perf
