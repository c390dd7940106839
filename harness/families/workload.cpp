#include "families/workload.hpp"

#include "families/family.hpp"
#include "usage_error.hpp"
#include "quoted.hpp"

#include <charconv>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

namespace benchfp::harness {

namespace {
constexpr size_t max_elements = size_t{1} << 31;  // 8 GiB of f32: more is surely a typo
}

std::unique_ptr<Peer> Workload::onednn_peer() {
    throw UsageError("--vs=onednn: no oneDNN equivalent for " + kernel().name());
}

Workload::Workload(int threads) : pool_(std::make_unique<ThreadPool>(threads)) {}

WorkloadCall Workload::call(size_t variant) const {
    if (const void* args = direct_args()) return {kernel(variant).entry(), args, ""};
    auto run = [](const void* workload, size_t v) { static_cast<const Workload*>(workload)->run(v); };
    while (contexts_.size() <= variant)
        contexts_.push_back(std::make_unique<DriverContext>(DriverContext{run, this, contexts_.size()}));
    return {benchfp_workload_driver, contexts_[variant].get(), "benchfp_call_jit"};
}

size_t Workload::add_variant(const KernelSpec& spec) {
    kernels_.push_back(build_kernel(spec));
    return kernels_.size() - 1;
}

std::vector<size_t> parse_dims(const std::string& problem, const std::string& where, const std::string& expected) {
    std::vector<size_t> dims;
    size_t total = 1, pos = 0;
    while (true) {
        const size_t end = std::min(problem.find('x', pos), problem.size());
        size_t dim = 0;
        const char* first = problem.data() + pos;
        const char* last = problem.data() + end;
        auto [ptr, ec] = std::from_chars(first, last, dim);
        if (first == last || (ec != std::errc() && ec != std::errc::result_out_of_range) || ptr != last || dim == 0)
            throw UsageError(where + ": malformed problem " + quoted_token(problem) + ": expected " + expected);
        if (ec == std::errc::result_out_of_range || dim > max_elements / total)
            throw UsageError(where + ": problem " + quoted_token(problem) + " too large: more than " +
                             std::to_string(max_elements) + " elements");
        total *= dim;
        dims.push_back(dim);
        if (end == problem.size()) return dims;
        pos = end + 1;
    }
}

std::optional<size_t> checked_product(std::initializer_list<size_t> factors) {
    size_t product = 1;
    for (size_t f : factors)
        if (__builtin_mul_overflow(product, f, &product)) return std::nullopt;
    return product;
}

double buffer_bytes(const KernelCase& c, double floats, double corr_floats) {
    return 4.0 * (floats + (c.mode == Mode::corr ? corr_floats : 0.0));
}

void fill_uniform(std::span<float> values, unsigned seed, float lo, float hi) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    for (float& v : values) v = dist(rng);
}

CorrOutcome compare_outputs(std::span<const float> got, std::span<const float> want,
                            const std::function<double(size_t)>& bound_of, const std::string& tolerance) {
    CorrOutcome out;
    size_t worst = 0, zeros = 0;
    double worst_excess = -1.0, max_abs = 0.0, max_rel = 0.0;
    bool failed = false;
    for (size_t i = 0; i < want.size(); ++i) {
        const double g = got[i], w = want[i];
        if (w == 0.0) ++zeros;
        double diff = std::fabs(g - w);
        if (g == w) diff = 0.0;  // equal infinities
        const double bound = bound_of(i);
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
    detail << "corr max-abs-err:" << max_abs << " max-rel-err:" << max_rel << " tol:" << tolerance;
    if (failed) detail << " first worst at [" << worst << "]: got " << got[worst] << " want " << want[worst];
    if (out.mistrusted) detail << " zeros:" << zeros << "/" << want.size();
    out.detail = detail.str();
    out.record = {{"max_abs_err", max_abs}, {"max_rel_err", max_rel}, {"tolerance", tolerance},
                  {"zeros", zeros},         {"elements", want.size()}};
    if (failed) out.record["worst"] = {{"index", worst}, {"got", got[worst]}, {"want", want[worst]}};
    return out;
}

}  // namespace benchfp::harness
