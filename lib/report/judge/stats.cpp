#include "report/judge/stats.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

namespace benchfp::report {

std::string fixed(double v, int digits) {
    if (std::isnan(v)) return "NaN";
    std::ostringstream out;
    out.precision(digits);
    out << std::fixed << v;
    return out.str();
}

std::string bracketed(const Interval& interval) {
    return "[" + fixed(interval.lo, 4) + ", " + fixed(interval.hi, 4) + "]";
}

std::string interval_text(const Interval& interval) {
    const std::string what =
        interval.runs > 1 ? "hull of " + std::to_string(interval.runs) + " runs' 95% intervals " : "95% interval ";
    return what + bracketed(interval);
}

bool one_of_several_runs(const PairedRecord& record, const RunResults& results) {
    return record.run_in_file > 0 || record.file != results.source;
}

double median(std::vector<double> values) {
    if (values.empty()) return NAN;
    std::sort(values.begin(), values.end());
    const size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double MedianInterval::half_width() const {
    if (!(lo <= median && median <= hi) || median <= 0) return INFINITY;
    return std::max(hi - median, median - lo) / median;
}

namespace {

// P(Binomial(n, 1/2) = i), in logs so that n in the millions stays finite.
double binomial_half(size_t n, size_t i) {
    return std::exp(std::lgamma(n + 1.0) - std::lgamma(i + 1.0) - std::lgamma(n - i + 1.0) - n * std::log(2.0));
}

}  // namespace

MedianInterval median_interval(std::vector<double> values, double confidence) {
    MedianInterval out;
    out.n = values.size();
    out.median = median(values);
    std::sort(values.begin(), values.end());
    const double tail = (1 - confidence) / 2;
    // The rank k (1-based) of the lower end: the largest with P(B < k) <= tail.
    // below = P(B < k + 1) grows with k: walk up while the next rank still fits.
    size_t k = 0;
    double below = binomial_half(out.n, 0);
    while (k < out.n / 2 && below <= tail) below += binomial_half(out.n, ++k);
    if (k == 0) return out;  // too few values for this confidence
    out.lo = values[k - 1];
    out.hi = values[out.n - k];
    return out;
}

std::pair<std::string, std::string> split_benchmark_name(const std::string& name) {
    const size_t slash = name.rfind('/');
    if (slash == std::string::npos) return {name, ""};
    return {name.substr(0, slash), name.substr(slash + 1)};
}

std::string ratio_group(const std::string& id) { return id.substr(0, id.find(": ")); }
std::string ratio_rule_name(const std::string& id) {
    const size_t at = id.find(": ");
    return at == std::string::npos ? std::string() : id.substr(at + 2);
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

// The interval of a rule's ratio, where the numerator was paired directly with
// the denominator (a chain has none), and the records behind it. Where runs
// were merged (or one file holds the case twice), each brought its own: the
// ratio is the median of the runs' and the interval their hull, which holds
// it, so a limit is failed only where every run's interval lies over it
// (before, two intervals left none: "too few pairs", and a failing frame cost
// given twice passed). A run without an interval among them leaves the row
// without one, as that run alone would.
void add_interval(RunResults& r, const std::string& group, const RatioRule& rule) {
    const auto it = r.benchmarks.find(group + "/" + rule.numerator);
    if (it == r.benchmarks.end()) return;
    const auto records = it->second.paired_records.find(rule.denominator);
    const auto ratios = it->second.paired_ratios.find(rule.denominator);
    if (records == it->second.paired_records.end() || records->second.empty() ||
        ratios == it->second.paired_ratios.end() || ratios->second.size() != records->second.size())
        return;
    const std::string id = group + ": " + rule.name;
    r.ratio_records[id] = records->second;
    std::optional<Interval> hull;
    for (const PairedRecord& record : records->second) {
        if (!record.interval) return;
        hull = hull ? Interval{std::min(hull->lo, record.interval->lo), std::max(hull->hi, record.interval->hi)}
                    : *record.interval;
    }
    hull->runs = records->second.size();
    r.ratio_intervals[id] = *hull;
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
            if (rule.metric == RatioMetric::resident_bytes_per_live_object) {
                // Both measured, or no ratio (a limit that needs one reports it missing); a zero
                // on either side gives a ratio that is judged invalid, never one that passes.
                const double a = num->second.resident_bytes_per_live_object;
                const double b = den->second.resident_bytes_per_live_object;
                if (a >= 0 && b >= 0) r.ratios[group + ": " + rule.name] = a > 0 && b > 0 ? a / b : NAN;
                continue;
            }
            add_interval(r, group, rule);
            double ratio = paired_ratio(r, group, rule.numerator, rule.denominator);
            if (std::isnan(ratio)) ratio = 1 / paired_ratio(r, group, rule.denominator, rule.numerator);
            if (std::isnan(ratio)) ratio = num->second.min_ns / den->second.min_ns;
            r.ratios[group + ": " + rule.name] = ratio;
        }
}

}  // namespace benchfp::report
