#include "families/eltwise/eltwise_workload.hpp"

#include "families/eltwise/eltwise_reference.hpp"
#include "families/family.hpp"
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

std::unique_ptr<Peer> EltwiseWorkload::onednn_peer() {
    const dnnl_alg_kind_t kind = alg_ == jit::EltwiseAlg::relu        ? dnnl_eltwise_relu
                                 : alg_ == jit::EltwiseAlg::exp       ? dnnl_eltwise_exp
                                 : alg_ == jit::EltwiseAlg::gelu_tanh ? dnnl_eltwise_gelu_tanh
                                                                      : dnnl_eltwise_tanh;
    const auto md = onednn::plain_desc({static_cast<dnnl_dim_t>(src_.size())}, dnnl_a);
    dnnl_eltwise_desc_t desc;
    onednn::check(dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, kind, &md, 0.0f, 0.0f),
                  "eltwise descriptor");
    auto peer = onednn::make_peer(&desc, threads());
    peer->bind(DNNL_ARG_SRC, md, src_.data());
    peer->bind(DNNL_ARG_DST, md, dst_.data());
    return peer;
}

CorrOutcome EltwiseWorkload::check() {
    run(0);
    std::vector<float> want(src_.size());
    for (size_t i = 0; i < src_.size(); ++i) want[i] = eltwise_reference(alg_, src_[i]);
    const jit::Isa isa = kernel().isa();
    auto bound = [&](size_t i) {
        const Tolerance tol = eltwise_tolerance(alg_, isa, src_[i]);
        return tol.rel * std::fabs(want[i]) + tol.abs;
    };
    const Tolerance at_zero = eltwise_tolerance(alg_, isa, 0.0f);
    std::ostringstream tolerance;
    tolerance << "rel " << at_zero.rel << (alg_ == jit::EltwiseAlg::gelu_tanh ? "+4|2u|ulp" : "") << " abs "
              << at_zero.abs;
    return compare_outputs(dst_, want, bound, tolerance.str());
}

namespace {

std::unique_ptr<jit::Generator> build(const KernelSpec& spec) {
    return jit::make_eltwise_kernel(*jit::parse_eltwise_alg(spec.alg), spec.isa, spec.frame, stream_floats_setting());
}

std::string random_problem(const std::string&, std::mt19937& rng) {
    return std::to_string(std::uniform_int_distribution<int>(1, 300)(rng));
}

// Source and destination; corr adds the reference.
double bytes_needed(const KernelCase& c) {
    const double n = double(parse_eltwise_problem(c.problem, "problem"));
    return buffer_bytes(c, 2 * n, n);
}

}  // namespace

Family eltwise_family() {
    return {"eltwise",
            "dst = f(src) over f32 arrays",
            names_of(jit::all_eltwise_algs),
            {std::begin(jit::all_isas), std::end(jit::all_isas)},
            "an element count like 1048576 or dims like 64x1024",
            build,
            validate_streaming<parse_eltwise_problem>,
            make<EltwiseWorkload>,
            random_problem,
            true,
            bytes_needed};
}

}  // namespace benchfp::harness
