#include "stepped_frame_cost.hpp"

#include <cstdint>
#include <iomanip>
#include <map>
#include <optional>
#include <sstream>

namespace benchfp::harness {

namespace {

struct Counts {
    int64_t instructions = 0, nops = 0, stack_accesses = 0;
};

// A step record whose counts cover the whole call, or nothing.
std::optional<Counts> whole_counts(const nlohmann::json& record) {
    const auto step = record.find("step");
    if (step == record.end() || !step->is_object() || !step->contains("stack_accesses")) return std::nullopt;
    if (step->value("budget_spent", true) || step->value("unstepped_calls", uint64_t{1}) != 0) return std::nullopt;
    return Counts{(*step)["instructions"].get<int64_t>(), (*step)["nops"].get<int64_t>(),
                  (*step)["stack_accesses"].get<int64_t>()};
}

std::string group_name(const nlohmann::json& spec) {
    std::ostringstream name;
    name << "kernel";
    for (const char* key : {"kernel", "alg", "isa", "problem"}) name << '/' << spec.value(key, std::string{});
    if (const int threads = spec.value("threads", 1); threads > 1) name << '@' << threads << 't';
    return name.str();
}

int64_t besides_nops(const Counts& c) { return c.instructions - c.nops; }

// "; frame +1 (+0.02%) and nops +227, stack +34"
std::string difference_text(const std::string& policy, const Counts& c, const Counts& clobber) {
    const int64_t more = besides_nops(c) - besides_nops(clobber);
    const double percent =
        besides_nops(clobber) ? 100.0 * static_cast<double>(more) / static_cast<double>(besides_nops(clobber)) : 0.0;
    std::ostringstream out;
    out << "; " << policy << ' ' << std::showpos << more << " (" << std::fixed << std::setprecision(2) << percent
        << "%) and nops " << c.nops - clobber.nops << ", stack " << c.stack_accesses - clobber.stack_accesses;
    return out.str();
}

}  // namespace

std::vector<std::string> stepped_frame_cost_lines(const std::vector<report::CaseResult>& results) {
    std::map<std::string, std::map<std::string, Counts>> groups;  // by group, then policy (the last case of each)
    for (const report::CaseResult& r : results) {
        const nlohmann::json& spec = r.record.value("spec", nlohmann::json::object());
        if (r.state == report::State::skipped || spec.value("mode", std::string{}) != "step") continue;
        if (const auto counts = whole_counts(r.record)) groups[group_name(spec)][spec.value("frame", std::string{})] = *counts;
    }
    std::vector<std::string> lines;
    for (const auto& [group, policies] : groups) {
        const auto clobber = policies.find("clobber");
        if (clobber == policies.end() || policies.size() < 2) continue;
        std::ostringstream line;
        line << group << ": clobber " << besides_nops(clobber->second) << " instructions and " << clobber->second.nops
             << " nops, " << clobber->second.stack_accesses << " on the stack";
        for (const char* policy : {"frame", "preserve"})
            if (const auto it = policies.find(policy); it != policies.end())
                line << difference_text(policy, it->second, clobber->second);
        lines.push_back(line.str());
    }
    return lines;
}

}  // namespace benchfp::harness
