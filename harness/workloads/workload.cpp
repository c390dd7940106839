#include "workloads/workload.hpp"

#include "jit_call.hpp"
#include "usage_error.hpp"
#include "jit/kernels/gemm.hpp"
#include "workloads/conv_workload.hpp"
#include "workloads/gemm_workload.hpp"
#include "workloads/eltwise_workload.hpp"
#include "workloads/reduce_workload.hpp"
#include "workloads/reorder_workload.hpp"

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>

namespace benchfp::harness {

namespace {
constexpr size_t max_elements = size_t{1} << 31;  // 8 GiB of f32: more is surely a typo
}

void validate_problem(const KernelCase& c, const std::string& where) {
    const std::string& kernel = c.spec.kernel;
    const std::string& problem = c.problem;
    if (kernel == "eltwise") return (void)parse_eltwise_problem(problem, where);
    if (kernel == "reduce") return (void)parse_reduce_problem(problem, where);
    if (kernel == "gemm") return (void)parse_gemm_problem(problem, where);
    if (kernel == "conv") return (void)parse_conv_problem(problem, where);
    if (kernel == "reorder") return (void)parse_reorder_problem(c.spec.alg, problem, where);
    throw UsageError(where + ": no problem parser for kernel '" + kernel + "'");
}

std::unique_ptr<Workload> make_workload(const KernelCase& c) {
    if (c.spec.kernel == "eltwise") return std::make_unique<EltwiseWorkload>(c);
    if (c.spec.kernel == "reduce") return std::make_unique<ReduceWorkload>(c);
    if (c.spec.kernel == "gemm") return std::make_unique<GemmWorkload>(c);
    if (c.spec.kernel == "conv") return std::make_unique<ConvWorkload>(c);
    if (c.spec.kernel == "reorder") return std::make_unique<ReorderWorkload>(c);
    throw UsageError("no workload for kernel '" + c.spec.kernel + "'");
}

std::unique_ptr<Peer> Workload::onednn_peer() {
    throw UsageError("--vs=onednn: no oneDNN equivalent for " + kernel().name());
}

Workload::Workload(int threads) : pool_(std::make_unique<ThreadPool>(threads)) {}

WorkloadCall Workload::call(size_t variant) const {
    if (const void* args = direct_args()) return {kernel(variant).entry(), args, ""};
    while (contexts_.size() <= variant) contexts_.push_back(std::make_unique<VariantContext>(VariantContext{this, contexts_.size()}));
    return {benchfp_workload_driver, contexts_[variant].get(), "benchfp_call_jit"};
}

size_t Workload::add_variant(const jit::KernelSpec& spec) {
    kernels_.push_back(jit::build_kernel(spec));
    return kernels_.size() - 1;
}

namespace {
class CopyPeer final : public Peer {
public:
    explicit CopyPeer(size_t bytes) : src_(bytes / 4, 1.0f), dst_(bytes / 4, 0.0f) {}
    void run() override { std::memcpy(dst_.data(), src_.data(), src_.size() * sizeof(float)); }

private:
    FloatBuffer src_, dst_;
};
}  // namespace

std::unique_ptr<Peer> make_copy_peer(size_t bytes) { return std::make_unique<CopyPeer>(bytes); }

namespace {
class FmaPeakPeer final : public Peer {
public:
    explicit FmaPeakPeer(jit::Isa isa) : kernel_(jit::make_fma_peak_kernel(isa)) {}
    void run() override { benchfp_call_jit(kernel_->entry(), &args_); }
    static constexpr size_t iterations = 100000;

private:
    std::unique_ptr<jit::Generator> kernel_;
    jit::FmaPeakArgs args_{iterations};
};
}  // namespace

std::unique_ptr<Peer> make_fma_peak_peer(jit::Isa isa, double& flops_per_run) {
    flops_per_run = FmaPeakPeer::iterations * jit::fma_peak_flops_per_iteration(isa);
    return std::make_unique<FmaPeakPeer>(isa);
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
        if (first == last || ec != std::errc() || ptr != last || dim == 0 || dim > max_elements / total)
            throw UsageError(where + ": malformed problem '" + problem + "': expected " + expected);
        total *= dim;
        dims.push_back(dim);
        if (end == problem.size()) return dims;
        pos = end + 1;
    }
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
