// What the Markdown and HTML reports both say: the verdict line, why a row
// failed, and each side's Version Info.
#include "report/judge/render.hpp"

#include "report/judge/stats.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

namespace benchfp::report {

bool Report::failed() const {
    // Kernel cases given but none ran: nothing was tested, which is never a pass.
    const bool nothing_ran = !cases.sources.empty() && cases.ran() == 0;
    return cases.failures() > 0 || nothing_ran ||
           std::any_of(machines.begin(), machines.end(), [](const MachineJudgement& m) { return m.judgement.failed(); });
}

namespace {

int sum(const Report& report, int Judgement::*count) {
    int n = 0;
    for (const MachineJudgement& m : report.machines) n += m.judgement.*count;
    return n;
}

std::string plural(int n, const std::string& one, const std::string& many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

// "(a, b, c, and 4 more)": the ids of the rows that match, the first few named.
std::string ids_of(const Report& report, const std::function<bool(const Row&)>& match) {
    std::vector<std::string> ids;
    for (const MachineJudgement& m : report.machines)
        for (const Row& r : m.judgement.rows)
            if (match(r) && std::find(ids.begin(), ids.end(), r.id) == ids.end()) ids.push_back(r.id);
    std::string text;
    const size_t shown = std::min<size_t>(ids.size(), 4);
    for (size_t i = 0; i < shown; ++i) text += (i ? ", " : "") + ids[i];
    if (ids.size() > shown) text += ", and " + std::to_string(ids.size() - shown) + " more";
    return " (" + text + ")";
}

}  // namespace

int Report::regressions() const { return sum(*this, &Judgement::regressions); }
int Report::improvements() const { return sum(*this, &Judgement::improvements); }

std::string verdict_text(const Report& report) {
    std::vector<std::string> failures;
    if (const int n = sum(report, &Judgement::missing))
        failures.push_back(plural(n, "benchmark", "benchmarks") + " missing from the current run" +
                           ids_of(report, [](const Row& r) { return r.verdict == RowVerdict::missing; }));
    if (const int n = sum(report, &Judgement::invalid))
        failures.push_back(plural(n, "invalid value", "invalid values") +
                           ids_of(report, [](const Row& r) { return r.verdict == RowVerdict::invalid; }));
    if (const int n = sum(report, &Judgement::over_limit))
        failures.push_back(plural(n, "value", "values") + " over an absolute limit" +
                           ids_of(report, [](const Row& r) { return r.over_limit; }));
    if (const int n = report.cases.failures()) failures.push_back(plural(n, "failed kernel case", "failed kernel cases"));
    if (!report.cases.sources.empty() && report.cases.ran() == 0)
        failures.push_back("no kernel case ran (" + plural(static_cast<int>(report.cases.sources.size()), "result file", "result files") + ")");
    std::string text = report.failed() ? "FAILED: " : "passed: ";
    for (const std::string& f : failures) text += f + "; ";
    text += plural(report.regressions(), "regression", "regressions") + ", " +
            plural(report.improvements(), "improvement", "improvements");
    // Rows neither passed nor failed: counted, the first few named.
    const auto said = [&](int Judgement::*count, RowVerdict verdict, const std::string& what) {
        if (const int n = sum(report, count))
            text += ", " + std::to_string(n) + " " + what +
                    ids_of(report, [verdict](const Row& r) { return r.verdict == verdict; });
    };
    said(&Judgement::unconfirmed, RowVerdict::unconfirmed, "not confirmed by a re-run");
    said(&Judgement::unresolved, RowVerdict::unresolved, "unresolved");
    if (!report.cases.sources.empty())
        text += ", " + std::to_string(report.cases.ran()) + " kernel cases ran";
    return text;
}

std::string failure_text(const Row& r) {
    switch (r.verdict) {
    case RowVerdict::missing: return "missing from this run (" + r.note + ")";
    case RowVerdict::invalid: return "invalid value (" + fixed(r.current) + ")";
    case RowVerdict::over_limit:
        return "over its absolute limit: " + fixed(r.current) + " > " + fixed(r.limit) +
               " (not a change from the baseline: " + (std::isnan(r.ratio) ? "none" : fixed(r.ratio) + " x its value") + ")";
    case RowVerdict::regression: {
        std::string text = "regression: " + fixed(r.ratio) + " x the baseline, beyond its tolerance of " +
                           fixed(100 * r.tolerance, 0) + "%";
        if (r.over_limit) text += ", and over its absolute limit: " + fixed(r.current) + " > " + fixed(r.limit);
        return text;
    }
    default: return to_string(r.verdict);
    }
}

namespace {

// The gate's allocators in its order: the pool's two builds, then the peers
// (whose times are the machine's controls, results/tolerances.json).
const std::vector<std::string> pool_builds = {"compiled_out", "off"};
const std::vector<std::string> peers = {"glibc", "jemalloc", "mimalloc", "tcmalloc"};

bool is_peer(const std::string& a) { return std::find(peers.begin(), peers.end(), a) != peers.end(); }

}  // namespace

WorkloadTable workload_table(const Judgement& j, const std::string& kind) {
    const bool times = kind == "time";
    std::map<std::string, WorkloadTable::Line> by_workload;
    WorkloadTable table;
    for (const Row& r : j.rows) {
        if (r.kind == kind && !std::isnan(r.current)) {
            const auto [workload, allocator] = split_benchmark_name(r.id);
            const bool pool_build = std::find(pool_builds.begin(), pool_builds.end(), allocator) != pool_builds.end();
            if (times && (!workload.starts_with("alloc/") || !(pool_build || is_peer(allocator)))) continue;
            by_workload[workload].figures[allocator] = r.current;
            if (std::find(table.allocators.begin(), table.allocators.end(), allocator) == table.allocators.end())
                table.allocators.push_back(allocator);
        }
        if (!times && r.kind == "ratio" && !r.unit.empty()) by_workload[ratio_group(r.id)].ratios.push_back(&r);
    }
    std::vector<std::string> order = pool_builds;
    order.insert(order.end(), peers.begin(), peers.end());
    const auto rank = [&](const std::string& a) { return std::find(order.begin(), order.end(), a) - order.begin(); };
    std::stable_sort(table.allocators.begin(), table.allocators.end(),
                     [&](const std::string& a, const std::string& b) { return rank(a) < rank(b); });
    for (auto& [workload, line] : by_workload) {
        line.workload = workload;
        table.lines.push_back(line);
    }
    return table;
}

std::optional<BestPeer> best_peer(const WorkloadTable::Line& line) {
    const auto pool = line.figures.find("off");
    if (pool == line.figures.end() || !(pool->second > 0)) return std::nullopt;
    std::optional<BestPeer> best;
    for (const auto& [allocator, ns] : line.figures)
        if (is_peer(allocator) && ns > 0 && (!best || ns / pool->second < best->over_pool))
            best = BestPeer{allocator, ns / pool->second};
    return best;
}

std::string best_peer_text(const WorkloadTable::Line& line) {
    const std::optional<BestPeer> best = best_peer(line);
    return best ? fixed(best->over_pool, 3) + " (" + best->peer + ")" : std::string("-");
}

std::string footprint_ratio_text(const Row& r) {
    std::string text = ratio_rule_name(r.id) + ": " + (std::isnan(r.current) ? std::string("-") : fixed(r.current));
    if (r.limit > 0) text += " (limit " + fixed(r.limit) + ")";
    return text;
}

RatioTable profiler_ratio_table(const Judgement& j) {
    std::map<std::string, RatioTable::Line> by_workload;
    RatioTable table;
    for (const Row& r : j.rows) {
        const std::string group = ratio_group(r.id), rule = ratio_rule_name(r.id);
        if (r.kind != "ratio" || !r.own_variants || !group.starts_with("alloc/")) continue;
        by_workload[group].cells[rule] = &r;
        if (std::find(table.rules.begin(), table.rules.end(), rule) == table.rules.end()) table.rules.push_back(rule);
        table.targets[rule] = std::max(table.targets[rule], r.target);  // a rule's rows share its target
    }
    for (auto& [workload, line] : by_workload) {
        line.workload = workload;
        table.lines.push_back(line);
    }
    const auto place = [&](const std::string& rule) {  // rules the judge was not given last
        return std::find(j.ratio_rules.begin(), j.ratio_rules.end(), rule) - j.ratio_rules.begin();
    };
    std::stable_sort(table.rules.begin(), table.rules.end(),
                     [&](const std::string& a, const std::string& b) { return place(a) < place(b); });
    return table;
}

const char* const profiler_cost_text =
    "Each ratio is of one run: the median of paired chunks where the gate pairs its two variants, the product of two "
    "such medians where it pairs each with a third (byte-sampled / compiled out), else the ratio of minimum times. "
    "Hook off / compiled out is what the profiler hook costs compiled in but stopped, counting / hook off what the "
    "sampling count alone costs, each sampling mode over hook off what it costs in all (the count and the samples). "
    "A target is the value issue 14 asks for where the gate judges a looser limit or none (the stopped hook's time: "
    "its limit is its instruction count), from results/tolerances.json: reported, not judged, and a ratio over it "
    "is marked; reported-only workloads are counted too. One run is one code layout: the hook's target holds for "
    "the mean over code layouts (scripts/hook_time_over_layouts.sh).";

std::string ratio_heading(const RatioTable& table, const std::string& rule) {
    const double target = table.targets.at(rule);
    return target > 0 ? rule + " (target " + fixed(target) + ")" : rule;
}

namespace {

// Whether a row has a target and a value to hold against it.
bool has_target(const Row& r) { return r.target > 0 && !std::isnan(r.current); }

}  // namespace

std::string target_text(const Row& r) {
    if (std::isnan(r.current)) return "-";
    std::string text = fixed(r.current);
    if (has_target(r) && r.current > r.target) text += " over target";
    return text;
}

std::string targets_met_text(const RatioTable& table) {
    int met = 0, set = 0;
    for (const RatioTable::Line& line : table.lines)
        for (const auto& [rule, r] : line.cells)
            if (has_target(*r)) {
                ++set;
                if (r->current <= r->target) ++met;
            }
    if (set == 0) return "";
    return "Targets met in this run: " + std::to_string(met) + " of " + std::to_string(set) + ".";
}

bool significant(const Row& r) { return r.verdict != RowVerdict::invariant && r.verdict != RowVerdict::not_judged; }

std::vector<std::pair<std::string, std::string>> version_info(const RunResults& run) {
    const auto build = [&](const char* key) {
        return run.build.contains(key) && run.build[key].is_string() ? run.build[key].get<std::string>() : std::string();
    };
    const auto or_not_recorded = [](const std::string& v) { return v.empty() ? std::string("not recorded") : v; };
    std::string benchfp = build("version");
    if (!build("commit").empty()) benchfp += (benchfp.empty() ? "" : " ") + ("commit " + build("commit"));
    if (!build("build_type").empty()) benchfp += " (" + build("build_type") + ")";
    std::string libraries;
    for (const char* key : {"xbyak", "libpfm4", "onednn", "google_benchmark"})
        if (!build(key).empty()) libraries += (libraries.empty() ? "" : ", ") + std::string(key) + " " + build(key);
    const Fingerprint& f = run.fingerprint;
    return {{"results", run.source},
            {"benchfp", or_not_recorded(benchfp)},
            {"compiler", or_not_recorded(build("compiler"))},
            {"libraries", or_not_recorded(libraries)},
            {"kernel", or_not_recorded(f.kernel)},
            {"CPU", f.describe()},
            {"CPU flags", or_not_recorded(f.flags)}};
}

}  // namespace benchfp::report
