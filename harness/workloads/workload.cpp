#include "workloads/workload.hpp"

#include "usage_error.hpp"
#include "workloads/eltwise_workload.hpp"

#include <cmath>
#include <limits>
#include <sstream>

namespace benchfp::harness {

void validate_problem(const std::string& kernel, const std::string& problem, const std::string& where) {
    if (kernel == "eltwise") {
        parse_eltwise_problem(problem, where);
        return;
    }
    throw UsageError(where + ": no problem parser for kernel '" + kernel + "'");
}

std::unique_ptr<Workload> make_workload(const KernelCase& c) {
    if (c.spec.kernel == "eltwise") return std::make_unique<EltwiseWorkload>(c);
    throw UsageError("no workload for kernel '" + c.spec.kernel + "'");
}

CorrOutcome compare_outputs(std::span<const float> got, std::span<const float> want, double rel, double abs) {
    CorrOutcome out;
    size_t worst = 0, zeros = 0;
    double worst_excess = -1.0, max_abs = 0.0, max_rel = 0.0;
    bool failed = false;
    for (size_t i = 0; i < want.size(); ++i) {
        const double g = got[i], w = want[i];
        if (w == 0.0) ++zeros;
        double diff = std::fabs(g - w);
        if (g == w) diff = 0.0;  // equal infinities
        const double bound = rel * std::fabs(w) + abs;
        const bool bad = !(diff <= bound);  // NaN fails too
        max_abs = std::max(max_abs, std::isnan(diff) ? INFINITY : diff);
        // Relative error only where it means something: normal, finite references.
        if (std::fabs(w) >= std::numeric_limits<float>::min() && std::isfinite(w))
            max_rel = std::max(max_rel, diff / std::fabs(w));
        const double excess = std::isnan(diff) ? INFINITY : diff - bound;
        if (excess > worst_excess) worst_excess = excess, worst = i;
        failed |= bad;
    }
    out.passed = !failed;
    out.mistrusted = out.passed && !want.empty() && zeros * 100 > want.size() * 95;
    std::ostringstream detail;
    detail.precision(3);
    detail << "corr max-abs-err:" << max_abs << " max-rel-err:" << max_rel << " tol:rel " << rel << " abs " << abs;
    if (failed) detail << " first worst at [" << worst << "]: got " << got[worst] << " want " << want[worst];
    if (out.mistrusted) detail << " zeros:" << zeros << "/" << want.size();
    out.detail = detail.str();
    out.record = {{"max_abs_err", max_abs}, {"max_rel_err", max_rel}, {"tol_rel", rel},
                  {"tol_abs", abs},         {"zeros", zeros},       {"elements", want.size()}};
    if (failed) out.record["worst"] = {{"index", worst}, {"got", got[worst]}, {"want", want[worst]}};
    return out;
}

}  // namespace benchfp::harness
