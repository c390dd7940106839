#include "workloads/eltwise_workload.hpp"

#include "usage_error.hpp"

#include <charconv>
#include <random>

namespace benchfp::harness {

namespace {
constexpr size_t max_elements = size_t{1} << 31;  // 8 GiB of src: more is surely a typo
}

size_t parse_eltwise_problem(const std::string& problem, const std::string& where) {
    const std::string hint = "' for eltwise: expected an element count like 1048576 or dims like 64x1024";
    size_t total = 1;
    size_t pos = 0;
    while (true) {
        const size_t end = std::min(problem.find('x', pos), problem.size());
        size_t dim = 0;
        const char* first = problem.data() + pos;
        const char* last = problem.data() + end;
        auto [ptr, ec] = std::from_chars(first, last, dim);
        if (first == last || ec != std::errc() || ptr != last || dim == 0 || dim > max_elements / total)
            throw UsageError(where + ": malformed problem '" + problem + hint);
        total *= dim;
        if (end == problem.size()) return total;
        pos = end + 1;
    }
}

EltwiseWorkload::EltwiseWorkload(const KernelCase& c)
    : alg_(*jit::parse_eltwise_alg(c.spec.alg)) {
    const size_t n = parse_eltwise_problem(c.problem, "problem");
    src_.resize(n);
    dst_.assign(n, 0.0f);
    // relu: symmetric around 0, so both branches are taken. exp: mostly [-20, 20],
    // with every 61st element across the clamps and the subnormal range.
    std::mt19937 rng(c.seed);
    std::uniform_real_distribution<float> body(alg_ == jit::EltwiseAlg::relu ? -4.0f : -20.0f,
                                               alg_ == jit::EltwiseAlg::relu ? 4.0f : 20.0f);
    std::uniform_real_distribution<float> extremes(-110.0f, 95.0f);
    for (size_t i = 0; i < n; ++i)
        src_[i] = (alg_ == jit::EltwiseAlg::exp && i % 61 == 0) ? extremes(rng) : body(rng);
    args_ = {src_.data(), dst_.data(), n};
    kernel_ = jit::build_kernel(c.spec);
}

CorrOutcome EltwiseWorkload::check() {
    kernel_->entry()(&args_);
    std::vector<float> want(src_.size());
    for (size_t i = 0; i < src_.size(); ++i) want[i] = jit::eltwise_reference(alg_, src_[i]);
    const jit::Tolerance tol = jit::eltwise_tolerance(alg_);
    return compare_outputs(dst_, want, tol.rel, tol.abs);
}

}  // namespace benchfp::harness
