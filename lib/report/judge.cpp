#include "report/judge.hpp"

#include "report/file.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

namespace benchfp::report {

namespace {

constexpr const char* baseline_schema = "benchfp.baseline/1";
constexpr const char* tolerances_schema = "benchfp.tolerances/1";

nlohmann::json read_json(const std::string& path, const char* what) {
    std::ifstream file(path);
    if (!file) throw InputError(path + ": cannot open " + what);
    try {
        return nlohmann::json::parse(file);
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError(path + ": " + what + " is not valid JSON (truncated or corrupt): " + e.what());
    }
}

template <typename T>
T field(const nlohmann::json& j, const char* key, const std::string& path, const std::string& where) {
    if (!j.is_object() || !j.contains(key)) throw InputError(path + ": " + where + " has no \"" + key + "\"");
    try {
        return j.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw InputError(path + ": " + where + " \"" + key + "\" has the wrong type");
    }
}

double to_ns(double value, const std::string& unit) {
    if (unit == "ns") return value;
    if (unit == "us") return value * 1e3;
    if (unit == "ms") return value * 1e6;
    if (unit == "s") return value * 1e9;
    return NAN;
}

Verdict by_tolerance(double ratio, double tolerance) {
    if (!std::isfinite(ratio) || ratio <= 0) return Verdict::invalid;
    if (ratio - tolerance > 1) return Verdict::regression;
    if (ratio + tolerance < 1) return Verdict::improvement;
    return Verdict::invariant;
}

double group_tolerance(const std::map<std::string, double>& overrides, const std::string& group, double fallback) {
    const auto it = overrides.find(group);
    return it == overrides.end() ? fallback : it->second;
}

}  // namespace

std::string fixed(double v, int digits) {
    if (std::isnan(v)) return "NaN";
    std::ostringstream out;
    out.precision(digits);
    out << std::fixed << v;
    return out.str();
}

double median(std::vector<double> values) {
    if (values.empty()) return NAN;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

std::string Fingerprint::describe() const {
    return cpu + ", " + isa + ", " + std::to_string(cores) + " cores";
}

std::pair<std::string, std::string> split_benchmark_name(const std::string& name) {
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) return {name, ""};
    return {name.substr(0, slash), name.substr(slash + 1)};
}

namespace {

RunResults google_benchmark_results(const nlohmann::json& doc, const std::string& path) {
    RunResults r;
    r.source = path;
    const auto context = doc.value("context", nlohmann::json::object());
    r.fingerprint = {context.value("benchfp_cpu", "unknown"), context.value("benchfp_isa", "unknown"),
                     std::atoi(context.value("benchfp_cores", "0").c_str())};
    r.date = context.value("date", "");
    const auto benchmarks = field<nlohmann::json>(doc, "benchmarks", path, "the file");
    if (!benchmarks.is_array()) throw InputError(path + ": \"benchmarks\" is not a list");
    for (const auto& b : benchmarks) {
        if (b.value("run_type", "iteration") != "iteration") continue;  // aggregates: recomputed here
        if (b.value("error_occurred", false)) continue;                   // not run (say, a peer not loadable)
        std::string name = b.value("run_name", field<std::string>(b, "name", path, "a benchmark"));
        if (name.ends_with("/manual_time")) name.resize(name.size() - 12);  // Google Benchmark's mark of UseManualTime
        // A suite that times chunks of iterations says the time of one in ns_per_iteration.
        const double ns = b.contains("ns_per_iteration")
                              ? field<double>(b, "ns_per_iteration", path, name)
                              : to_ns(field<double>(b, "real_time", path, name), b.value("time_unit", "ns"));
        Measurement& m = r.benchmarks[name];
        m.min_ns = m.repetitions ? std::min(m.min_ns, ns) : ns;
        if (b.contains("bytes_per_iteration")) m.bytes_per_iteration = field<double>(b, "bytes_per_iteration", path, name);
        for (const auto& [key, value] : b.items())
            if (key.starts_with("ratio_to_")) m.paired_ratios[key.substr(9)].push_back(field<double>(b, key.c_str(), path, name));
        ++m.repetitions;
    }
    if (r.benchmarks.empty()) throw InputError(path + ": no benchmark results in the file");
    return r;
}

// benchfp's own results (benchfp kernel --mode=perf --json=FILE): a benchmark
// per passed perf case, "kernel/<kernel>/<alg>/<isa>/<problem>/<frame>", with
// its minimum time per call; a case's frame policies are its group's variants.
RunResults benchfp_results(const nlohmann::json& doc, const std::string& path) {
    if (doc["benchfp"].value("schema", "") != "benchfp.results/1")
        throw InputError(path + ": schema mismatch: expected \"benchfp.results/1\"");
    RunResults r;
    r.source = path;
    const auto host = field<nlohmann::json>(doc, "host", path, "the file");
    r.fingerprint = {field<std::string>(host, "cpu", path, "host"), field<std::string>(host, "isa", path, "host"),
                     field<int>(host, "cores", path, "host")};
    for (const auto& c : field<nlohmann::json>(doc, "cases", path, "the file")) {
        if (c.value("state", "") != "PASSED" || !c.contains("perf")) continue;
        const auto spec = field<nlohmann::json>(c, "spec", path, "a case");
        const auto part = [&](const char* key) { return field<std::string>(spec, key, path, "a case's spec"); };
        const std::string name = "kernel/" + part("kernel") + "/" + part("alg") + "/" + part("isa") + "/" +
                                 part("problem") + "/" + part("frame");
        const double ms = field<double>(c["perf"], "min_ms", path, name);
        Measurement& m = r.benchmarks[name];
        m.min_ns = m.repetitions ? std::min(m.min_ns, ms * 1e6) : ms * 1e6;
        ++m.repetitions;
    }
    if (r.benchmarks.empty())
        throw InputError(path + ": no passed perf case in the file (benchfp kernel --mode=perf --json=FILE writes them)");
    return r;
}

}  // namespace

RunResults read_run(const std::string& path) {
    const nlohmann::json doc = read_json(path, "results");
    if (doc.is_object() && doc.contains("benchfp")) return benchfp_results(doc, path);
    return google_benchmark_results(doc, path);
}

RunResults merge_runs(const std::vector<RunResults>& runs) {
    if (runs.empty()) throw InputError("no results to merge");
    RunResults merged = runs.front();
    for (size_t i = 1; i < runs.size(); ++i) {
        const RunResults& r = runs[i];
        if (!(r.fingerprint == merged.fingerprint))
            throw InputError(r.source + ": ran on " + r.fingerprint.describe() + ", not on " +
                             merged.fingerprint.describe() + " like " + merged.source);
        merged.source += " " + r.source;
        for (const auto& [name, m] : r.benchmarks) {
            auto [it, added] = merged.benchmarks.emplace(name, m);
            if (added) continue;
            it->second.min_ns = std::min(it->second.min_ns, m.min_ns);
            it->second.repetitions += m.repetitions;
            for (const auto& [reference, ratios] : m.paired_ratios) {
                auto& all = it->second.paired_ratios[reference];
                all.insert(all.end(), ratios.begin(), ratios.end());
            }
        }
    }
    return merged;
}

RunResults read_baseline(const std::string& path) {
    const nlohmann::json doc = read_json(path, "baseline");
    const std::string schema = doc.is_object() ? doc.value("schema", "") : "";
    if (schema != baseline_schema)
        throw InputError(path + ": schema mismatch: expected \"" + baseline_schema + "\", found \"" + schema + "\"");
    RunResults r;
    r.source = path;
    const auto fp = field<nlohmann::json>(doc, "fingerprint", path, "the baseline");
    r.fingerprint = {field<std::string>(fp, "cpu", path, "fingerprint"), field<std::string>(fp, "isa", path, "fingerprint"),
                     field<int>(fp, "cores", path, "fingerprint")};
    r.date = doc.value("date", "");
    r.commit = doc.value("commit", "");
    const auto benchmarks = field<nlohmann::json>(doc, "benchmarks", path, "the baseline");
    if (!benchmarks.is_object()) throw InputError(path + ": \"benchmarks\" is not an object");
    for (const auto& [name, b] : benchmarks.items()) {
        Measurement m;
        m.min_ns = field<double>(b, "min_ns", path, "benchmark " + name);
        m.bytes_per_iteration = b.value("bytes_per_iteration", -1.0);
        m.repetitions = b.value("repetitions", 0);
        if (!(m.min_ns > 0)) throw InputError(path + ": benchmark " + name + " has min_ns " + fixed(m.min_ns));
        r.benchmarks[name] = m;
    }
    if (r.benchmarks.empty()) throw InputError(path + ": the baseline holds no benchmark");
    try {
        const auto ratios = doc.value("ratios", nlohmann::json::object());
        for (const auto& [id, v] : ratios.items()) r.ratios[id] = v.get<double>();
        const auto instructions = doc.value("instructions", nlohmann::json::object());
        for (const auto& [id, v] : instructions.items()) r.instructions[id] = v.get<double>();
    } catch (const nlohmann::json::exception& e) {
        throw InputError(path + ": a ratio or instruction count is not a number: " + e.what());
    }
    return r;
}

void write_baseline(const std::string& path, const RunResults& r) {
    nlohmann::json doc = {{"schema", baseline_schema},
                          {"fingerprint", {{"cpu", r.fingerprint.cpu}, {"isa", r.fingerprint.isa}, {"cores", r.fingerprint.cores}}},
                          {"date", r.date},
                          {"commit", r.commit},
                          {"ratios", r.ratios},
                          {"instructions", r.instructions}};
    for (const auto& [name, m] : r.benchmarks)
        doc["benchmarks"][name] = {{"min_ns", m.min_ns}, {"bytes_per_iteration", m.bytes_per_iteration},
                                   {"repetitions", m.repetitions}};
    try {
        write_file(path, doc.dump(2) + "\n");
    } catch (const std::runtime_error& e) {
        throw InputError(std::string(e.what()) + " (the baseline)");
    }
}

Tolerances read_tolerances(const std::string& path) {
    const nlohmann::json doc = read_json(path, "tolerances");
    if (!doc.is_object() || doc.value("schema", "") != tolerances_schema)
        throw InputError(path + ": schema mismatch: expected \"" + tolerances_schema + "\"");
    Tolerances t;
    t.time = doc.value("time", t.time);
    t.memory = doc.value("memory", t.memory);
    t.ratio = doc.value("ratio", t.ratio);
    t.instructions = doc.value("instructions", t.instructions);
    const auto groups = doc.value("groups", nlohmann::json::object());
    for (const auto& [group, g] : groups.items()) {
        if (g.contains("time")) t.time_by_group[group] = g["time"].get<double>();
        if (g.contains("memory")) t.memory_by_group[group] = g["memory"].get<double>();
    }
    const auto rules = doc.value("ratios", nlohmann::json::array());
    for (const auto& rule : rules)
        t.ratio_rules.push_back({field<std::string>(rule, "name", path, "a ratio rule"),
                                 field<std::string>(rule, "numerator", path, "a ratio rule"),
                                 field<std::string>(rule, "denominator", path, "a ratio rule"), rule.value("limit", 0.0),
                                 rule.value("groups", std::vector<std::string>{}), rule.value("tolerance", 0.0)});
    t.reported_only = doc.value("reported_only", std::vector<std::string>{});
    const auto limits = doc.value("instruction_limits", nlohmann::json::object());
    for (const auto& [id, v] : limits.items()) t.instruction_limits[id] = v.get<double>();
    return t;
}

namespace {

// Time of variant a over variant b of a group from paired measurements: a
// paired with b, or a chain of pairings (a with x, x with b: the product).
double paired_ratio(const RunResults& r, const std::string& group, const std::string& a, const std::string& b,
                    int max_links = 3) {
    const auto it = r.benchmarks.find(group + "/" + a);
    if (it == r.benchmarks.end() || max_links == 0) return NAN;
    for (const auto& [reference, ratios] : it->second.paired_ratios) {
        const double first = median(ratios);
        if (reference == b) return first;
        const double rest = paired_ratio(r, group, reference, b, max_links - 1);
        if (!std::isnan(rest)) return first * rest;
    }
    return NAN;
}

}  // namespace

void compute_ratios(RunResults& r, const Tolerances& t) {
    std::set<std::string> groups;
    for (const auto& [name, m] : r.benchmarks) groups.insert(split_benchmark_name(name).first);
    for (const RatioRule& rule : t.ratio_rules)
        for (const std::string& group : groups) {
            if (!rule.groups.empty() && std::find(rule.groups.begin(), rule.groups.end(), group) == rule.groups.end())
                continue;
            const auto num = r.benchmarks.find(group + "/" + rule.numerator);
            const auto den = r.benchmarks.find(group + "/" + rule.denominator);
            if (num == r.benchmarks.end() || den == r.benchmarks.end()) continue;
            double ratio = paired_ratio(r, group, rule.numerator, rule.denominator);
            if (std::isnan(ratio)) ratio = 1 / paired_ratio(r, group, rule.denominator, rule.numerator);
            if (std::isnan(ratio)) ratio = num->second.min_ns / den->second.min_ns;
            r.ratios[group + ": " + rule.name] = ratio;
        }
}

const char* to_string(Verdict v) {
    switch (v) {
    case Verdict::regression: return "regression";
    case Verdict::improvement: return "improvement";
    case Verdict::invariant: return "invariant";
    case Verdict::not_judged: return "not judged";
    case Verdict::added: return "new";
    case Verdict::missing: return "missing";
    case Verdict::invalid: return "invalid";
    }
    return "?";
}

bool Judgement::failed() const {
    for (const Row& r : rows)
        if (r.verdict == Verdict::regression || r.verdict == Verdict::missing || r.verdict == Verdict::invalid)
            return true;
    return false;
}

namespace {

// A value judged against its baseline and, when it has one, an absolute limit.
Row judged(const std::string& id, const std::string& kind, const double* current, const double* baseline,
           double tolerance, double limit) {
    Row row{id, kind, current ? *current : NAN, baseline ? *baseline : NAN, NAN, tolerance, limit, Verdict::invariant, ""};
    if (!current) {
        row.verdict = Verdict::missing;
        row.note = "in the baseline, not in this run";
        return row;
    }
    if (baseline) {
        row.ratio = *current / *baseline;
        row.verdict = by_tolerance(row.ratio, tolerance);
    } else {
        row.verdict = std::isfinite(*current) ? Verdict::added : Verdict::invalid;
        row.note = "no baseline";
    }
    if (limit > 0 && row.verdict != Verdict::invalid && !(*current <= limit)) {
        row.verdict = Verdict::regression;
        row.note = "over the limit " + fixed(limit);
    }
    return row;
}

template <typename Map>
std::set<std::string> keys_of(const Map& a, const Map& b) {
    std::set<std::string> keys;
    for (const auto& [k, v] : a) keys.insert(k);
    for (const auto& [k, v] : b) keys.insert(k);
    return keys;
}

bool reported_only(const Tolerances& t, const std::string& variant_or_group) {
    return std::find(t.reported_only.begin(), t.reported_only.end(), variant_or_group) != t.reported_only.end();
}

void report_without_verdict(Row& row) {
    if (row.verdict != Verdict::regression && row.verdict != Verdict::improvement) return;
    row.verdict = Verdict::not_judged;
    row.note = "reported, not judged (results/tolerances.json: reported_only)";
}

}  // namespace

Judgement judge(const RunResults& current, const RunResults& baseline, const Tolerances& t) {
    Judgement j;
    j.same_machine = current.fingerprint == baseline.fingerprint;
    for (const std::string& name : keys_of(current.benchmarks, baseline.benchmarks)) {
        const auto c = current.benchmarks.find(name);
        const auto b = baseline.benchmarks.find(name);
        const Measurement* cm = c == current.benchmarks.end() ? nullptr : &c->second;
        const Measurement* bm = b == baseline.benchmarks.end() ? nullptr : &b->second;
        const std::string group = split_benchmark_name(name).first;
        const size_t first_row = j.rows.size();
        Row time = judged(name, "time", cm ? &cm->min_ns : nullptr, bm ? &bm->min_ns : nullptr,
                          group_tolerance(t.time_by_group, group, t.time), 0);
        if (cm && bm && !j.same_machine && time.verdict != Verdict::invalid) {
            time.verdict = Verdict::not_judged;
            time.note = "machine differs from the baseline's: absolute time reported, not judged";
        }
        j.rows.push_back(time);
        if (cm && bm && cm->bytes_per_iteration >= 0 && bm->bytes_per_iteration >= 0) {
            // Equal zero byte counts are equal: ratio 1.
            const double cb = cm->bytes_per_iteration + 1e-300, bb = bm->bytes_per_iteration + 1e-300;
            j.rows.push_back(judged(name, "memory", &cb, &bb, group_tolerance(t.memory_by_group, group, t.memory), 0));
            j.rows.back().current = cm->bytes_per_iteration;
            j.rows.back().baseline = bm->bytes_per_iteration;
        }
        if (reported_only(t, split_benchmark_name(name).second) || reported_only(t, group))
            for (size_t i = first_row; i < j.rows.size(); ++i) report_without_verdict(j.rows[i]);
    }
    for (const std::string& id : keys_of(current.ratios, baseline.ratios)) {
        const auto c = current.ratios.find(id);
        const auto b = baseline.ratios.find(id);
        const auto rule = std::find_if(t.ratio_rules.begin(), t.ratio_rules.end(), [&](const RatioRule& r) {
            return id.size() > r.name.size() && id.ends_with(": " + r.name);
        });
        const bool ruled = rule != t.ratio_rules.end();
        j.rows.push_back(judged(id, "ratio", c == current.ratios.end() ? nullptr : &c->second,
                                b == baseline.ratios.end() ? nullptr : &b->second,
                                ruled && rule->tolerance > 0 ? rule->tolerance : t.ratio, ruled ? rule->limit : 0));
        if (reported_only(t, id.substr(0, id.find(": ")))) report_without_verdict(j.rows.back());
    }
    for (const std::string& id : keys_of(current.instructions, baseline.instructions)) {
        const auto c = current.instructions.find(id);
        const auto b = baseline.instructions.find(id);
        const auto limit = t.instruction_limits.find(id);
        j.rows.push_back(judged(id, "instructions", c == current.instructions.end() ? nullptr : &c->second,
                                b == baseline.instructions.end() ? nullptr : &b->second, t.instructions,
                                limit == t.instruction_limits.end() ? 0 : limit->second));
    }
    for (const Row& r : j.rows) {
        j.regressions += r.verdict == Verdict::regression;
        j.improvements += r.verdict == Verdict::improvement;
    }
    return j;
}

}  // namespace benchfp::report
