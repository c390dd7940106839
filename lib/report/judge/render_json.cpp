// The JSON report (schema benchfp.judgement/3, results/schemas/judgement.schema.json):
// the build, then per machine its fingerprint, its baseline's and every row with
// its verdict. A row's current and baseline are in its kind's unit (`units`),
// except where the row says its own (a ratio of footprints, a stepped call's counts).
#include "report/judge/render.hpp"

#include "report/judge/stats.hpp"

#include <cmath>
#include <map>
#include <set>

namespace benchfp::report {

namespace {

// The unit of a row's current and baseline, by its kind; its ratio is current / baseline.
const std::map<std::string, std::string> units_by_kind = {{"time", "ns per iteration"},
                                                          {"memory", "bytes per iteration"},
                                                          {"ratio", "ratio (time over time, in one run)"},
                                                          {"instructions", "instructions per operation"},
                                                          {"footprint", "resident bytes per live object at the workload's peak"}};

std::string unit_of(const std::string& kind) {
    const auto it = units_by_kind.find(kind);
    return it == units_by_kind.end() ? "" : it->second;
}

nlohmann::json number_or_null(double v) { return std::isnan(v) ? nlohmann::json(nullptr) : nlohmann::json(v); }

nlohmann::json machine_json(const MachineJudgement& m) {
    const Judgement& j = m.judgement;
    nlohmann::json rows = nlohmann::json::array();
    for (const Row& r : j.rows)
        rows.push_back({{"id", r.id},
                        {"group", r.kind == "ratio" || r.kind == "instructions" ? ratio_group(r.id)
                                                                                : split_benchmark_name(r.id).first},
                        {"kind", r.kind},
                        {"unit", r.unit.empty() ? unit_of(r.kind) : r.unit},
                        {"current", number_or_null(r.current)},
                        {"baseline", number_or_null(r.baseline)},
                        {"ratio", number_or_null(r.ratio)},
                        {"tolerance", r.tolerance},
                        {"limit", r.limit},
                        {"target", r.target},
                        {"lo", number_or_null(r.lo)},
                        {"hi", number_or_null(r.hi)},
                        {"interval_runs", r.interval_runs ? nlohmann::json(r.interval_runs) : nlohmann::json(nullptr)},
                        {"verdict", to_string(r.verdict)},
                        {"note", r.note}});
    std::set<std::string> groups;
    for (const auto& [name, _] : m.current.benchmarks) groups.insert(split_benchmark_name(name).first);
    return {{"machine", to_json(m.current.fingerprint)},
            {"machine_text", machine_line(m)},
            {"current", m.current.source},
            {"times_from", m.current.time_from},
            {"baseline", m.baseline ? nlohmann::json(m.baseline->source) : nlohmann::json(nullptr)},
            {"baseline_path", m.baseline_path},
            {"baseline_machine", m.baseline ? to_json(m.baseline->fingerprint) : nlohmann::json(nullptr)},
            {"same_machine", j.same_machine},
            {"rerun", m.rerun_source.empty() ? nlohmann::json(nullptr) : nlohmann::json(m.rerun_source)},
            {"failed", j.failed()},
            {"regressions", j.regressions},
            {"improvements", j.improvements},
            {"groups", groups},
            {"rows", rows}};
}

}  // namespace

nlohmann::json render_json(const Report& report) {
    nlohmann::json machines = nlohmann::json::array();
    for (const MachineJudgement& m : report.machines) machines.push_back(machine_json(m));
    const ReportContext& c = report.context;
    nlohmann::json cases = {{"ran", report.cases.ran()},
                            {"failed", report.cases.failed},
                            {"untested_isas", report.cases.untested_isas},
                            {"sources", report.cases.sources}};
    for (const auto& [key, n] : report.cases.by_mode_isa)
        cases["by_mode_isa"].push_back({{"mode", key.first}, {"isa", key.second}, {"ran", n.ran}, {"passed", n.passed},
                                        {"failed", n.failed}, {"skipped", n.skipped}});
    for (const auto& [key, r] : report.cases.unwind)
        cases["unwind"].push_back({{"kernel", std::get<0>(key)}, {"isa", std::get<1>(key)},
                                   {"frame", std::get<2>(key)}, {"expected", r.expected}, {"full", r.full},
                                   {"judged", r.judged}, {"passed", r.passed}});
    for (const std::string& group : compared_groups(report.cases.stepped)) {
        nlohmann::json entry = {{"group", group}};
        for (const auto& [policy, c] : report.cases.stepped.at(group))
            entry[policy] = {{"instructions", c.besides_nops()}, {"nops", c.nops}, {"stack_accesses", c.stack_accesses}};
        cases["stepped"].push_back(entry);
    }
    return {{"schema", "benchfp.judgement/3"},
            {"units", units_by_kind},
            {"commit", c.commit},
            {"baseline_label", c.baseline_label},
            {"date", c.date},
            {"build", c.build},
            {"failed", report.failed()},
            {"regressions", report.regressions()},
            {"improvements", report.improvements()},
            {"machines", machines},
            {"cases", cases}};
}

}  // namespace benchfp::report
