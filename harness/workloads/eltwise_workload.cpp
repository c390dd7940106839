#include "workloads/eltwise_workload.hpp"

#include "peers/onednn.hpp"

#include <cmath>
#include <sstream>
#include <random>

namespace benchfp::harness {

size_t parse_eltwise_problem(const std::string& problem, const std::string& where) {
    size_t total = 1;
    for (size_t d : parse_dims(problem, where, "an element count like 1048576 or dims like 64x1024")) total *= d;
    return total;
}

EltwiseWorkload::EltwiseWorkload(const KernelCase& c)
    : SlicedWorkload(c.threads), alg_(*jit::parse_eltwise_alg(c.spec.alg)) {
    const size_t n = parse_eltwise_problem(c.problem, "problem");
    src_.resize(n);
    dst_.assign(n, 0.0f);
    // relu: symmetric around 0, so both branches are taken. The others: mostly [-20, 20],
    // with every 61st element across the clamps and the subnormal range.
    std::mt19937 rng(c.seed);
    std::uniform_real_distribution<float> body(alg_ == jit::EltwiseAlg::relu ? -4.0f : -20.0f,
                                               alg_ == jit::EltwiseAlg::relu ? 4.0f : 20.0f);
    std::uniform_real_distribution<float> extremes(-110.0f, 95.0f);
    for (size_t i = 0; i < n; ++i)
        src_[i] = (alg_ != jit::EltwiseAlg::relu && i % 61 == 0) ? extremes(rng) : body(rng);
    for (int t = 0; t < c.threads; ++t) {
        const auto [begin, end] = split_range(n, t, c.threads);
        slices_.push_back({src_.data() + begin, dst_.data() + begin, end - begin});
    }
    add_variant(c.spec);
}

std::unique_ptr<Peer> EltwiseWorkload::onednn_peer() { return onednn_eltwise(jit::to_string(alg_), src_.data(), dst_.data(), src_.size(), threads()); }

CorrOutcome EltwiseWorkload::check() {
    run(0);
    std::vector<float> want(src_.size());
    for (size_t i = 0; i < src_.size(); ++i) want[i] = jit::eltwise_reference(alg_, src_[i]);
    const jit::Isa isa = kernel().isa();
    auto bound = [&](size_t i) {
        const jit::Tolerance tol = jit::eltwise_tolerance(alg_, isa, src_[i]);
        return tol.rel * std::fabs(want[i]) + tol.abs;
    };
    const jit::Tolerance at_zero = jit::eltwise_tolerance(alg_, isa, 0.0f);
    std::ostringstream tolerance;
    tolerance << "rel " << at_zero.rel << (alg_ == jit::EltwiseAlg::gelu_tanh ? "+4|2u|ulp" : "") << " abs "
              << at_zero.abs;
    return compare_outputs(dst_, want, bound, tolerance.str());
}

}  // namespace benchfp::harness
