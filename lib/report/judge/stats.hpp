#pragma once
// The numbers of a run: how they are printed, medians, and the in-run ratios
// the tolerance rules ask for.
#include "report/judge/model.hpp"

#include <cmath>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace benchfp::report {

// How every number in a report is written: `digits` after the point, "NaN" for NaN.
std::string fixed(double v, int digits = 3);
// An interval as every report writes it: "[lo, hi]", four digits each.
std::string bracketed(const Interval& interval);
// "95% interval [lo, hi]", or for merged runs "hull of N runs' 95% intervals [lo, hi]".
std::string interval_text(const Interval& interval);
// The middle value (the mean of the two middle ones for an even count); NaN for none.
double median(std::vector<double> values);

// Whether a record's run is one of several in the results (merged files, or a
// file holding its group twice): notes and reports then name it (PairedRecord::run).
bool one_of_several_runs(const PairedRecord& record, const RunResults& results);

// The median of paired ratios with a distribution-free confidence interval:
// the order-statistic (sign-test) interval [x_(k), x_(n+1-k)] of the sorted
// values, k the largest rank with P(Binomial(n, 1/2) < k) <= (1 - confidence) / 2.
// It holds for any continuous distribution of the ratios (no normality, no
// resampling, so the same input always gives the same interval); its coverage
// is at least `confidence`. Below 6 values no 95% interval exists: lo and hi
// are NaN (unresolved).
struct MedianInterval {
    double median = NAN, lo = NAN, hi = NAN;
    size_t n = 0;
    // The larger distance from the median to an end, relative to the median
    // (0.002: the ratio is known to 0.2%); infinity when there is no interval.
    double half_width() const;
};
MedianInterval median_interval(std::vector<double> values, double confidence = 0.95);
// "alloc/structs/off" -> group "alloc/structs", variant "off".
std::pair<std::string, std::string> split_benchmark_name(const std::string& name);
// "alloc/structs: off / compiled_out" -> "alloc/structs": the group of an in-run
// ratio's id (an id without ": " is its own group).
std::string ratio_group(const std::string& id);
// "alloc/structs: off / compiled_out" -> "off / compiled_out": the rule's name
// in an in-run ratio's id ("" for an id without ": ").
std::string ratio_rule_name(const std::string& id);
// Adds the in-run ratios of the rules to results.ratios: from the medians of
// paired measurements where the suite made them (directly, inverted, or
// through a chain of pairings), else the ratio of the minimum times; and the
// interval of each that was paired directly in one run (ratio_intervals). A
// rule on resident bytes per live object divides the two variants' figures.
void compute_ratios(RunResults& results, const Tolerances& tolerances);

}  // namespace benchfp::report
