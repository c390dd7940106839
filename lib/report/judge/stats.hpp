#pragma once
// The numbers of a run: how they are printed, medians, and the in-run ratios
// the tolerance rules ask for.
#include "report/judge/model.hpp"

#include <string>
#include <utility>
#include <vector>

namespace benchfp::report {

// How every number in a report is written: `digits` after the point, "NaN" for NaN.
std::string fixed(double v, int digits = 3);
// The middle value (the mean of the two middle ones for an even count); NaN for none.
double median(std::vector<double> values);
// "alloc/structs/off" -> group "alloc/structs", variant "off".
std::pair<std::string, std::string> split_benchmark_name(const std::string& name);
// Adds the in-run ratios of the rules to results.ratios: from the medians of
// paired measurements where the suite made them (directly, inverted, or
// through a chain of pairings), else the ratio of the minimum times.
void compute_ratios(RunResults& results, const Tolerances& tolerances);

}  // namespace benchfp::report
