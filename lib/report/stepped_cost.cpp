#include "report/stepped_cost.hpp"

#include "report/judge/model.hpp"

#include <iomanip>
#include <sstream>
#include <string_view>

namespace benchfp::report {

namespace {

// The judge's range for instruction counts, which these become: a count past
// it would be recorded into a baseline that no later judge could read.
constexpr Range count_range = ranges::instructions;

std::string group_of(const In& spec) {
    std::ostringstream name;
    name << "kernel";
    for (const char* key : {"kernel", "alg", "isa", "problem"}) name << '/' << spec.string(key);
    if (const auto threads = static_cast<long>(spec.whole_number_or("threads", 1, {1, 1 << 20})); threads > 1)
        name << '@' << threads << 't';
    return name.str();
}

}  // namespace

void add_stepped(SteppedCosts& costs, const In& record) {
    const In spec = record.at("spec");
    const auto step = record.find("step");
    if (spec.string_or("mode", "") != "step" || !step || !step->has("stack_accesses")) return;
    if (step->boolean_or("budget_spent", false) || step->number_or("unstepped_calls", 0, count_range) != 0) return;
    // A record with the stack count has the other two (they came first): one
    // missing is a damaged record, not a count of 0.
    for (const char* key : {"instructions", "nops"}) step->at(key);
    SteppedCounts c;
    c.instructions = static_cast<long>(step->whole_number_or("instructions", 0, count_range));
    c.nops = static_cast<long>(step->whole_number_or("nops", 0, count_range));
    c.stack_accesses = static_cast<long>(step->whole_number_or("stack_accesses", 0, count_range));
    if (c.nops > c.instructions) step->at("nops").fail("more nops than instructions");
    if (c.stack_accesses > c.instructions) step->at("stack_accesses").fail("more stack accesses than instructions");
    // A call stepped whole executes its ret at least: an instruction that is no
    // nop, and a stack access (a count of 0 would also be judged 0 / 0, invalid).
    if (c.besides_nops() == 0) step->at("instructions").fail("no instruction but nops: a whole call executes its ret");
    if (c.stack_accesses == 0) step->at("stack_accesses").fail("0: a whole call executes its ret, a stack access");
    const std::string frame = spec.string("frame");
    if (frame != "clobber" && frame != "preserve" && frame != "frame")
        spec.at("frame").fail("'" + frame + "', expected clobber, preserve or frame");
    // The same code on the same problem counts the same: two records that
    // differ are not two runs of one build, and the judge would keep either.
    const auto [it, added] = costs[group_of(spec)].try_emplace(frame, c);
    if (!added && it->second != c)
        step->fail(group_of(spec) + " under " + frame + " is counted twice, differently (" + counts_text(it->second) +
                   "; then " + counts_text(c) + "): step records of two builds or problems?");
}

std::vector<std::string> compared_groups(const SteppedCosts& costs) {
    std::vector<std::string> groups;
    for (const auto& [group, policies] : costs)
        if (policies.count("clobber") && policies.size() > 1) groups.push_back(group);
    return groups;
}

std::string counts_text(const SteppedCounts& c) {
    std::ostringstream out;
    out << c.besides_nops() << " instructions and " << c.nops << " nops, " << c.stack_accesses << " on the stack";
    return out.str();
}

std::string difference_text(const SteppedCounts& policy, const SteppedCounts& clobber) {
    const long more = policy.besides_nops() - clobber.besides_nops();
    const double percent = clobber.besides_nops() ? 100.0 * static_cast<double>(more) / clobber.besides_nops() : 0.0;
    std::ostringstream out;
    out << std::showpos << more << " (" << std::fixed << std::setprecision(2) << percent << "%) and nops "
        << policy.nops - clobber.nops << ", stack " << policy.stack_accesses - clobber.stack_accesses;
    return out.str();
}

std::vector<std::string> stepped_cost_lines(const SteppedCosts& costs) {
    std::vector<std::string> lines;
    for (const std::string& group : compared_groups(costs)) {
        const auto& policies = costs.at(group);
        const SteppedCounts& clobber = policies.at("clobber");
        std::string line = group + ": clobber " + counts_text(clobber);
        for (const char* policy : {"frame", "preserve"})
            if (const auto it = policies.find(policy); it != policies.end())
                line += std::string("; ") + policy + " " + difference_text(it->second, clobber);
        lines.push_back(line);
    }
    return lines;
}

namespace {

constexpr std::string_view stepped_instructions = ": stepped instructions per call, nops apart";
constexpr std::string_view stepped_stack = ": stepped stack accesses per call";

}  // namespace

std::map<std::string, double> stepped_instruction_counts(const SteppedCosts& costs) {
    std::map<std::string, double> counts;
    for (const auto& [group, policies] : costs)
        for (const auto& [policy, c] : policies) {
            const std::string id = group + "/" + policy;
            counts[id + std::string(stepped_instructions)] = static_cast<double>(c.besides_nops());
            counts[id + std::string(stepped_stack)] = static_cast<double>(c.stack_accesses);
        }
    return counts;
}

bool is_stepped_count(const std::string& id) {
    return id.ends_with(stepped_instructions) || id.ends_with(stepped_stack);
}

std::string stepped_count_unit(const std::string& id) {
    constexpr std::string_view stepped = ": stepped ";  // what the ids add before their unit
    for (const std::string_view suffix : {stepped_instructions, stepped_stack})
        if (id.ends_with(suffix)) return std::string(suffix.substr(stepped.size()));
    return "";
}

}  // namespace benchfp::report
