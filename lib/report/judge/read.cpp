#include "report/judge/read.hpp"

#include "report/case_result.hpp"
#include "report/file.hpp"
#include "report/judge/stats.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>

namespace benchfp::report {

namespace {

constexpr const char* baseline_schema = "benchfp.baseline/1";
constexpr const char* tolerances_schema = "benchfp.tolerances/1";

void expect_schema(const In& doc, const std::string& schema) {
    const std::string found = doc.expect_object().string_or("schema", "");
    if (found != schema) doc.fail("schema mismatch: expected \"" + schema + "\", found \"" + found + "\"");
}

double time_in_ns(const In& entry, const char* key) {
    const std::string unit = entry.string_or("time_unit", "ns");
    const double scale = unit == "ns" ? 1 : unit == "us" ? 1e3 : unit == "ms" ? 1e6 : unit == "s" ? 1e9 : 0;
    if (scale == 0) entry.at("time_unit").fail("unknown time unit \"" + unit + "\" (known: ns, us, ms, s)");
    const double ns = entry.number(key, {0, 1e30}) * scale;
    if (!(ns >= ranges::time_ns.lo && ns <= ranges::time_ns.hi))
        entry.at(key).fail("a time of " + fixed(ns) + " ns per iteration is out of range");
    return ns;
}

void add_time(Measurement& m, double ns, int repetitions) {
    m.min_ns = m.repetitions ? std::min(m.min_ns, ns) : ns;
    m.repetitions += repetitions;
}

// One entry of Google Benchmark's "benchmarks" list, checked.
struct Entry {
    std::string name, aggregate;  // aggregate: "" for an iteration
    double ns = 0, bytes = -1, footprint = -1;
    int repetitions = 1;
    std::map<std::string, double> paired;  // ratio_to_<variant>
};

std::optional<Entry> entry_of(const In& b) {
    b.expect_object();
    const std::string run_type = b.string_or("run_type", "iteration");
    if (run_type != "iteration" && run_type != "aggregate")
        b.at("run_type").fail("expected \"iteration\" or \"aggregate\", found \"" + run_type + "\"");
    if (b.boolean_or("error_occurred", false)) return std::nullopt;  // not run (say, a peer not loadable)
    Entry e;
    e.name = b.has("run_name") ? b.string("run_name") : b.string("name");
    if (e.name.ends_with("/manual_time")) e.name.resize(e.name.size() - 12);  // Google Benchmark's mark of UseManualTime
    if (run_type == "aggregate") {
        e.aggregate = b.string("aggregate_name");
        if (e.aggregate != "min" && e.aggregate != "median" && e.aggregate != "mean") return std::nullopt;  // stddev, cv
        e.repetitions = static_cast<int>(b.whole_number_or("repetitions", 1, ranges::repetitions));
    }
    // A suite that times chunks of iterations says the time of one in
    // ns_per_iteration; Google Benchmark's own fields are checked all the same
    // (a file that says "parsec" or -5 is not a file to judge).
    const double real_ns = b.has("real_time") || !b.has("ns_per_iteration") ? time_in_ns(b, "real_time") : 0;
    e.ns = b.has("ns_per_iteration") ? b.number("ns_per_iteration", ranges::time_ns) : real_ns;
    b.whole_number_or("iterations", 1, {1, 1e18});
    e.bytes = b.number_or("bytes_per_iteration", -1, ranges::bytes);
    e.footprint = b.number_or("resident_bytes_per_live_object", -1, ranges::bytes);
    for (const auto& [key, value] : b.members())
        if (key.starts_with("ratio_to_")) e.paired[key.substr(9)] = value.as_number(ranges::ratio);
    return e;
}

// Aggregates stand in for a benchmark's iterations only where it has none; of
// them the minimum, else the median, else the mean (the order of preference).
int aggregate_rank(const std::string& aggregate) {
    return aggregate == "min" ? 0 : aggregate == "median" ? 1 : 2;
}

RunResults google_benchmark_results(const In& doc) {
    RunResults r;
    r.source = doc.file();
    doc.expect_object();
    if (const auto context = doc.find("context")) {
        r.fingerprint = fingerprint_from_google_benchmark(*context);
        r.date = context->string_or("date", "");
        if (const std::string compiler = context->string_or("benchfp_compiler", ""); !compiler.empty())
            r.build["compiler"] = compiler;
        if (const std::string gb = context->string_or("library_version", ""); !gb.empty()) r.build["google_benchmark"] = gb;
    }
    std::map<std::string, Entry> best_aggregate;
    for (const In& b : doc.at("benchmarks").elements()) {
        const auto e = entry_of(b);
        if (!e) continue;
        if (!e->aggregate.empty()) {
            auto [it, added] = best_aggregate.emplace(e->name, *e);
            if (!added && aggregate_rank(e->aggregate) < aggregate_rank(it->second.aggregate)) it->second = *e;
            continue;
        }
        Measurement& m = r.benchmarks[e->name];
        add_time(m, e->ns, 1);
        if (e->bytes >= 0) m.bytes_per_iteration = e->bytes;
        if (e->footprint >= 0) m.resident_bytes_per_live_object = e->footprint;
        for (const auto& [reference, ratio] : e->paired) m.paired_ratios[reference].push_back(ratio);
    }
    std::set<std::string> used;
    for (const auto& [name, e] : best_aggregate) {
        if (r.benchmarks.count(name)) continue;  // its iterations are in the file
        Measurement& m = r.benchmarks[name];
        add_time(m, e.ns, e.repetitions);
        m.bytes_per_iteration = e.bytes;
        m.resident_bytes_per_live_object = e.footprint;
        for (const auto& [reference, ratio] : e.paired) m.paired_ratios[reference].push_back(ratio);
        used.insert(e.aggregate);
    }
    if (r.benchmarks.empty()) doc.fail("no benchmark results in the file (iterations, or min, median or mean aggregates)");
    r.time_from = used.empty() ? "the minimum over repetitions"
                               : "Google Benchmark's aggregates (the file holds no iterations): " +
                                     std::string(used.count("min") ? "min " : "") +
                                     (used.count("median") ? "median " : "") + (used.count("mean") ? "mean " : "") +
                                     "per benchmark, preferring min, then median, then mean";
    return r;
}

// A paired ratio's interval: "lo" and "hi" (absent when the pairs were too few),
// holding the ratio, their median (a median outside its interval would be
// judged on the wrong side of 1 by the A/A's excuse).
std::optional<Interval> interval_of(const In& paired, double ratio) {
    if (!paired.has("lo") && !paired.has("hi")) return std::nullopt;
    Interval i{paired.number("lo", ranges::ratio), paired.number("hi", ranges::ratio)};
    if (!(i.lo <= i.hi)) paired.at("lo").fail("above hi (" + fixed(i.hi) + ")");
    if (!(i.lo <= ratio && ratio <= i.hi))
        paired.at("ratio").fail("outside its interval " + bracketed(i));
    return i;
}

// Names a file may hold: the JIT library's (a value judge does not know would judge nothing).
using Names = std::initializer_list<const char*>;
constexpr Names frame_policies = {"clobber", "preserve", "frame"}, isa_names = {"sse41", "avx2", "avx512"};

bool is_one_of(const std::string& value, Names known) {
    return std::any_of(known.begin(), known.end(), [&](const char* k) { return value == k; });
}
std::string joined(Names names) {
    std::string list;
    for (const char* n : names) list += (list.empty() ? "" : ", ") + std::string(n);
    return list;
}

// A field whose value must be one of `known`.
std::string one_of(const In& object, const char* key, Names known) {
    const std::string value = object.string(key);
    if (!is_one_of(value, known)) object.at(key).fail("unknown value \"" + value + "\" (known: " + joined(known) + ")");
    return value;
}

// What a file says built it (a version, a compiler): its scalar members only,
// which the report prints as they are. A nested value is dropped, not kept:
// the report would dump() it, which recurses once per level (an input nested
// 100000 deep ran out of stack).
nlohmann::json build_of(const In& parent) {
    nlohmann::json build = nlohmann::json::object();
    if (const auto given = parent.find("build"); given && given->json().is_object())
        for (const auto& [key, value] : given->json().items())
            if (value.is_primitive()) build[key] = value;
    return build;
}

// A perf record's A/A control ("aa"), where it has one.
std::optional<Control> control_of(const In& perf) {
    const auto aa = perf.find("aa");
    if (!aa) return std::nullopt;
    const double ratio = aa->number("ratio", ranges::ratio);
    return Control{ratio, interval_of(*aa, ratio)};
}

// The group of a case as its spec names it, read without checks (a failed
// case's spec is not checked): the fields a benchmark's name is made of
// (kernel, alg, isa, problem, threads: 1 where left out).
std::string group_key(const nlohmann::json& spec) {
    std::string key;
    for (const char* field : {"kernel", "alg", "isa", "problem"})
        key += (spec.contains(field) ? spec[field].dump() : "-") + "/";
    const auto threads = spec.find("threads");
    return key + (threads == spec.end() ? "1" : threads->dump());
}

// Which run of its group each case of a file is: a group's run ends where a
// policy it has already had comes again (benchfp kernel writes a group's
// policies together, once per run). Failed cases count too, so every policy's
// record of one run gets the same number; 0 for every case of a group the
// file holds once.
std::vector<int> runs_in_file(const std::vector<In>& cases) {
    std::map<std::string, std::set<std::string>> policies;  // of the group's current run
    std::map<std::string, int> runs;                        // by group
    std::vector<int> run_of;
    std::vector<std::string> group_of;
    for (const In& c : cases) {
        const auto spec = c.json().find("spec");
        const bool named = spec != c.json().end() && spec->is_object();
        const std::string group = named ? group_key(*spec) : "";
        const std::string frame = named && spec->contains("frame") ? (*spec)["frame"].dump() : "";
        int& run = runs[group];
        if (run == 0 || !policies[group].insert(frame).second) {
            ++run;
            policies[group] = {frame};
        }
        run_of.push_back(run);
        group_of.push_back(group);
    }
    for (size_t i = 0; i < run_of.size(); ++i)
        if (runs[group_of[i]] == 1) run_of[i] = 0;
    return run_of;
}

// benchfp's own results (benchfp kernel --mode=perf --json=FILE): a benchmark
// per passed perf case, "kernel/<kernel>/<alg>/<isa>/<problem>/<frame>" (the
// problem followed by "@<threads>t" for a case on more than one thread: the
// same problem on 1 and 2 threads is two cases, whose times were merged into
// one, the 2-thread one judged against the 1-thread one's baseline), with
// its minimum time per call; a case's frame policies are its group's variants,
// paired with the first policy ("paired": median ratio and interval), and the
// group's A/A control in the same run ("aa", kept beside the case's own
// interval: PairedRecord).
RunResults benchfp_results(const In& doc) {
    if (const std::string problem = results_schema_problem(doc.json()); !problem.empty()) doc.fail(problem);
    RunResults r;
    r.source = doc.file();
    r.time_from = "the minimum time per call of each perf case";
    r.fingerprint = fingerprint_from_json(doc.at("host"));
    r.build = build_of(doc.at("host"));
    const std::vector<In> cases = doc.at("cases").elements();
    for (const In& c : cases) c.expect_object();
    const std::vector<int> run_of = runs_in_file(cases);
    for (size_t i = 0; i < cases.size(); ++i) {
        const In& c = cases[i];
        if (c.string_or("state", "") != "PASSED" || !c.has("perf")) continue;
        const In spec = c.at("spec");
        if (const std::string mode = spec.string("mode"); mode != "perf")  // another mode's times judged as perf times
            spec.at("mode").fail("\"" + mode + "\" in a record with perf times");
        std::string name = "kernel";
        one_of(spec, "isa", isa_names);
        for (const char* key : {"kernel", "alg", "isa", "problem"}) name.append("/").append(spec.string(key));
        const auto threads = static_cast<long>(spec.whole_number_or("threads", 1, {1, 1 << 20}));
        if (threads > 1) name.append("@").append(std::to_string(threads)).append("t");
        const std::string frame = one_of(spec, "frame", frame_policies);
        name.append("/").append(frame);
        const In perf = c.at("perf");
        const double ms = perf.number("min_ms", {ranges::time_ns.lo * 1e-6, ranges::time_ns.hi * 1e-6});
        Measurement& m = r.benchmarks[name];
        add_time(m, ms * 1e6, 1);
        const std::optional<Control> aa = control_of(perf);  // read on every case: a bad one is bad input anywhere
        if (const auto paired = perf.find("paired")) {
            const std::string reference = one_of(*paired, "reference", frame_policies);
            if (reference == frame)  // its ratio to itself: 1, whatever the policy costs
                paired->at("reference").fail("the case's own policy: a policy is paired with another");
            const double ratio = paired->number("ratio", ranges::ratio);
            m.paired_ratios[reference].push_back(ratio);
            m.paired_records[reference].push_back({interval_of(*paired, ratio), aa, doc.file(), run_of[i]});
        }
    }
    if (r.benchmarks.empty())
        doc.fail("no passed perf case in the file (benchfp kernel --mode=perf --json=FILE writes them)");
    return r;
}

RatioMetric metric_of(const In& rule) {
    const std::string metric = rule.string_or("metric", "time");
    if (metric == "time") return RatioMetric::time;
    if (metric == "resident_bytes_per_live_object") return RatioMetric::resident_bytes_per_live_object;
    rule.at("metric").fail("unknown metric \"" + metric + "\" (known: time, resident_bytes_per_live_object)");
}

// A target the report would not show (a rule with a machine control, or of
// footprints), or one its limit holds already, says nothing: bad input.
void check_target(const In& rule, const RatioRule& parsed, const Tolerances& t) {
    if (parsed.target <= 0) return;
    if (!between_own_variants(t, parsed))
        rule.at("target").fail("a target is for a time ratio of two of this project's own variants (none a machine "
                               "control): the report's Profiler cost table shows no other");
    if (parsed.limit > 0 && parsed.target >= parsed.limit)
        rule.at("target").fail("not below the rule's limit " + fixed(parsed.limit) + ": the limit holds it already");
}

std::map<std::string, double> numbers_of(const In& object, Range range) {
    std::map<std::string, double> out;
    for (const auto& [key, v] : object.members()) out[key] = v.as_number(range);
    return out;
}

}  // namespace

RunResults parse_run(const nlohmann::json& doc, const std::string& path) {
    const In in(doc, path, "");
    if (claims_results_json(doc)) return benchfp_results(in);
    return google_benchmark_results(in);
}

RunResults read_run(const std::string& path) { return parse_run(read_json_file(path, "results"), path); }

RunResults merge_runs(const std::vector<RunResults>& runs) {
    if (runs.empty()) throw InputError("no results to merge");
    RunResults merged = runs.front();
    for (size_t i = 1; i < runs.size(); ++i) {
        const RunResults& r = runs[i];
        if (!(r.fingerprint == merged.fingerprint))
            throw InputError(r.source + ": ran on " + r.fingerprint.describe() + ", not on " +
                             merged.fingerprint.describe() + " like " + merged.source);
        merged.source += " " + r.source;
        for (const auto& [key, value] : r.build.items())  // a suite's build adds what the others lack
            if (!merged.build.contains(key)) merged.build[key] = value;
        if (r.time_from != merged.time_from) merged.time_from += "; " + r.source + ": " + r.time_from;
        for (const auto& [name, m] : r.benchmarks) {
            auto [it, added] = merged.benchmarks.emplace(name, m);
            if (added) continue;
            it->second.min_ns = std::min(it->second.min_ns, m.min_ns);
            it->second.repetitions += m.repetitions;
            // A footprint measured in several runs: the least, like the time (each run measured it once).
            if (m.resident_bytes_per_live_object >= 0 &&
                (it->second.resident_bytes_per_live_object < 0 ||
                 m.resident_bytes_per_live_object < it->second.resident_bytes_per_live_object))
                it->second.resident_bytes_per_live_object = m.resident_bytes_per_live_object;
            for (const auto& [reference, ratios] : m.paired_ratios) {
                auto& all = it->second.paired_ratios[reference];
                all.insert(all.end(), ratios.begin(), ratios.end());
            }
            for (const auto& [reference, records] : m.paired_records) {
                auto& all = it->second.paired_records[reference];
                all.insert(all.end(), records.begin(), records.end());
            }
        }
    }
    return merged;
}

std::string run_machine_key(const Fingerprint& f) { return f.known() ? f.slug() : f.slug() + "@" + f.host; }

std::vector<RunResults> merge_by_machine(const std::vector<RunResults>& runs) {
    const auto key = run_machine_key;
    std::vector<std::string> order;
    std::map<std::string, std::vector<RunResults>> by_machine;
    for (const RunResults& r : runs) {
        auto& group = by_machine[key(r.fingerprint)];
        if (group.empty()) order.push_back(key(r.fingerprint));
        group.push_back(r);
    }
    std::vector<RunResults> merged;
    for (const std::string& k : order) merged.push_back(merge_runs(by_machine[k]));
    return merged;
}

RunResults parse_baseline(const nlohmann::json& doc, const std::string& path) {
    const In in(doc, path, "");
    expect_schema(in, baseline_schema);
    RunResults r;
    r.source = path;
    r.time_from = "the stored minimum";
    r.fingerprint = fingerprint_from_json(in.at("fingerprint"));
    r.date = in.string_or("date", "");
    r.commit = in.string_or("commit", "");
    r.build = build_of(in);
    for (const auto& [name, b] : in.at("benchmarks").members()) {
        Measurement& m = r.benchmarks[name];
        m.min_ns = b.number("min_ns", ranges::time_ns);
        // -1: not reported (what write_baseline stores for a benchmark without bytes).
        const auto bytes = b.find("bytes_per_iteration");
        m.bytes_per_iteration = bytes && bytes->json() == -1 ? -1 : b.number_or("bytes_per_iteration", -1, ranges::bytes);
        m.repetitions = static_cast<int>(b.whole_number_or("repetitions", 0, ranges::repetitions));
    }
    if (r.benchmarks.empty()) in.at("benchmarks").fail("the baseline holds no benchmark");
    if (const auto ratios = in.find("ratios")) r.ratios = numbers_of(*ratios, ranges::ratio);
    if (const auto counts = in.find("instructions")) r.instructions = numbers_of(*counts, ranges::instructions);
    return r;
}

RunResults read_baseline(const std::string& path) { return parse_baseline(read_json_file(path, "baseline"), path); }

void write_baseline(const std::string& path, const RunResults& r, const nlohmann::json& build) {
    nlohmann::json doc = {{"schema", baseline_schema}, {"fingerprint", to_json(r.fingerprint)},
                          {"date", r.date},            {"commit", r.commit},
                          {"ratios", r.ratios},        {"instructions", r.instructions}};
    if (!build.is_null()) doc["build"] = build;
    for (const auto& [name, m] : r.benchmarks)
        doc["benchmarks"][name] = {{"min_ns", m.min_ns}, {"bytes_per_iteration", m.bytes_per_iteration},
                                   {"repetitions", m.repetitions}};
    try {
        write_file(path, doc.dump(2) + "\n");
    } catch (const std::runtime_error& e) {
        throw InputError(std::string(e.what()) + " (the baseline)");
    }
}

// Every key of `object` is one of `known`, or a note ("note", "<anything>_note"):
// a misspelled key ("tme") would be ignored and its default judged instead.
void only_known_keys(const In& object, Names known) {
    for (const auto& [key, value] : object.members())
        if (key != "note" && !key.ends_with("_note") && !is_one_of(key, known))
            value.fail("unknown key \"" + key + "\" (known: " + joined(known) + ", or a note: note, <key>_note)");
}

Tolerances parse_tolerances(const nlohmann::json& doc, const std::string& path) {
    const In in(doc, path, "");
    expect_schema(in, tolerances_schema);
    only_known_keys(in, {"schema", "time", "memory", "ratio", "instructions", "groups", "ratios", "reported_only",
                         "machine_controls", "instruction_limits"});
    Tolerances t;
    t.time = in.number_or("time", t.time, ranges::tolerance);
    t.memory = in.number_or("memory", t.memory, ranges::tolerance);
    t.ratio = in.number_or("ratio", t.ratio, ranges::tolerance);
    t.instructions = in.number_or("instructions", t.instructions, ranges::tolerance);
    if (const auto groups = in.find("groups"))
        for (const auto& [group, g] : groups->members()) {
            only_known_keys(g, {"time", "memory"});
            if (const auto v = g.find("time")) t.time_by_group[group] = v->as_number(ranges::tolerance);
            if (const auto v = g.find("memory")) t.memory_by_group[group] = v->as_number(ranges::tolerance);
        }
    // Before the rules: a rule's target is checked against the machine controls.
    t.reported_only = in.strings_or("reported_only");
    t.machine_controls = in.strings_or("machine_controls");
    if (const auto rules = in.find("ratios"))
        for (const In& rule : rules->elements()) {
            only_known_keys(rule, {"name", "numerator", "denominator", "limit", "groups", "tolerance",
                                   "limit_needs_interval", "metric", "target"});
            // A variant named by nothing, or a variant over itself (1 whatever it
            // costs), would judge nothing and pass.
            for (const char* side : {"name", "numerator", "denominator"})
                if (rule.string(side).empty()) rule.at(side).fail("empty");
            if (rule.string("numerator") == rule.string("denominator"))
                rule.at("denominator").fail("the numerator's variant: a ratio of a variant to itself is always 1");
            t.ratio_rules.push_back({rule.string("name"), rule.string("numerator"), rule.string("denominator"),
                                     rule.number_or("limit", 0, ranges::limit), rule.strings_or("groups"),
                                     rule.number_or("tolerance", 0, ranges::tolerance),
                                     rule.boolean_or("limit_needs_interval", false), metric_of(rule),
                                     rule.number_or("target", 0, ranges::limit)});
            check_target(rule, t.ratio_rules.back(), t);
        }
    // A control is code this project does not change: judged too, a slower peer
    // would fail its own rows and excuse the pool's in one run.
    if (const auto controls = in.find("machine_controls"))
        for (const In& control : controls->elements())
            if (!reported_only(t, control.as_string()))
                control.fail("\"" + control.as_string() +
                             "\" is not in reported_only: a machine control is code this project does not change, "
                             "reported, never judged");
    if (const auto limits = in.find("instruction_limits")) t.instruction_limits = numbers_of(*limits, ranges::limit);
    return t;
}

Tolerances read_tolerances(const std::string& path) {
    return parse_tolerances(read_json_file(path, "tolerances"), path);
}

std::map<std::string, double> parse_instructions(const nlohmann::json& doc, const std::string& path) {
    return numbers_of(In(doc, path, ""), ranges::instructions);
}

std::map<std::string, double> read_instructions(const std::string& path) {
    return parse_instructions(read_json_file(path, "instruction counts"), path);
}

}  // namespace benchfp::report

namespace benchfp::report {

std::string baseline_path(const std::string& dir, const Fingerprint& machine, const std::string& suite) {
    return dir + "/" + machine.slug() + "/" + suite + ".json";
}

const std::vector<std::string>& known_isa_names() {
    static const std::vector<std::string> names(isa_names.begin(), isa_names.end());
    return names;
}

}  // namespace benchfp::report
