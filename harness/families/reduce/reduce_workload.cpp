#include "families/reduce/reduce_workload.hpp"

#include "families/family.hpp"
#include "families/reduce/reduce_reference.hpp"
#include "peers/onednn.hpp"

#include <sstream>

namespace benchfp::harness {

ReduceShape parse_reduce_problem(const std::string& problem, const std::string& where) {
    const auto dims = parse_dims(problem, where, "dims like 64x1024 (reduced over the last) or a row length");
    ReduceShape shape{1, dims.back()};
    for (size_t i = 0; i + 1 < dims.size(); ++i) shape.rows *= dims[i];
    return shape;
}

ReduceWorkload::ReduceWorkload(const KernelCase& c)
    : SlicedWorkload(c.threads), alg_(*jit::parse_reduce_alg(c.spec.alg)), shape_(parse_reduce_problem(c.problem, "problem")) {
    src_.resize(shape_.rows * shape_.cols);
    dst_.assign(alg_ == jit::ReduceAlg::softmax ? src_.size() : shape_.rows, 0.0f);
    fill_uniform(src_, c.seed, -10.0f, 10.0f);
    const size_t dst_row = alg_ == jit::ReduceAlg::softmax ? shape_.cols : 1;
    for (int t = 0; t < c.threads; ++t) {
        const auto [begin, end] = split_range(shape_.rows, t, c.threads);
        slices_.push_back({src_.data() + begin * shape_.cols, dst_.data() + begin * dst_row, end - begin, shape_.cols});
    }
    add_variant(c.spec);
}

// softmax is its own primitive; sum and max are reductions to one value per row.
std::unique_ptr<Peer> ReduceWorkload::onednn_peer() {
    const dnnl_dim_t rows = static_cast<dnnl_dim_t>(shape_.rows), cols = static_cast<dnnl_dim_t>(shape_.cols);
    const auto src_md = onednn::plain_desc({rows, cols}, dnnl_ab);
    std::unique_ptr<onednn::PrimitivePeer> peer;
    dnnl_memory_desc_t dst_md = src_md;
    if (alg_ == jit::ReduceAlg::softmax) {
        dnnl_softmax_desc_t desc;
        onednn::check(dnnl_softmax_forward_desc_init(&desc, dnnl_forward_inference, &src_md, 1), "softmax descriptor");
        peer = onednn::make_peer(&desc, threads());
    } else {
        // A source of the destination's shape has nothing to reduce: oneDNN 2.6
        // refuses it (invalid arguments), where our kernel copies each element.
        if (cols == 1) throw PeerUnavailable("oneDNN's reduction refuses rows of 1 element (nothing to reduce)");
        dst_md = onednn::plain_desc({rows, 1}, dnnl_ab);
        dnnl_reduction_desc_t desc;
        const dnnl_alg_kind_t kind = alg_ == jit::ReduceAlg::sum ? dnnl_reduction_sum : dnnl_reduction_max;
        onednn::check(dnnl_reduction_desc_init(&desc, kind, &src_md, &dst_md, 0.0f, 0.0f), "reduction descriptor");
        peer = onednn::make_peer(&desc, threads());
    }
    peer->bind(DNNL_ARG_SRC, src_md, src_.data());
    peer->bind(DNNL_ARG_DST, dst_md, dst_.data());
    return peer;
}

CorrOutcome ReduceWorkload::check() {
    run(0);
    std::vector<float> want(dst_.size());
    reduce_reference(alg_, src_.data(), want.data(), shape_.rows, shape_.cols);
    const bool per_row = alg_ != jit::ReduceAlg::softmax;
    const jit::Isa isa = kernel().isa();
    std::vector<ReduceRowStats> rows;
    for (size_t r = 0; r < shape_.rows; ++r) rows.push_back(reduce_row_stats(&src_[r * shape_.cols], shape_.cols));
    auto bound = [&](size_t i) {
        const size_t row = per_row ? i : i / shape_.cols;
        return reduce_bound(alg_, isa, rows[row], per_row ? 0.0f : src_[i], want[i]);
    };
    const char* tolerance = alg_ == jit::ReduceAlg::max    ? "exact"
                            : alg_ == jit::ReduceAlg::sum ? "(cols/4+4) ulp of sum|x|"
                                                          : "(2 exp + |x-m| + cols/4 + 6) ulp";
    return compare_outputs(dst_, want, bound, tolerance);
}

namespace {

std::unique_ptr<jit::Generator> build(const KernelSpec& spec) {
    return jit::make_reduce_kernel(*jit::parse_reduce_alg(spec.alg), spec.isa, spec.frame, stream_floats_setting());
}

std::string random_problem(const std::string&, std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    const int rows = pick(1, 9), cols = pick(1, 70);
    return std::to_string(rows) + "x" + std::to_string(cols);
}

// Source and destination; corr adds the reference and each row's statistics (a few doubles).
double bytes_needed(const KernelCase& c) {
    const ReduceShape s = parse_reduce_problem(c.problem, "problem");
    const double dst = c.spec.alg == "softmax" ? double(s.rows) * s.cols : double(s.rows);
    return buffer_bytes(c, double(s.rows) * s.cols + dst, dst + 8.0 * s.rows);
}

}  // namespace

Family reduce_family() {
    return {"reduce",
            "sum, max or softmax over the last axis of a matrix",
            names_of(jit::all_reduce_algs),
            {std::begin(jit::all_isas), std::end(jit::all_isas)},
            "dims like 64x1024 (reduced over the last) or a row length",
            build,
            validate_streaming<parse_reduce_problem>,
            make<ReduceWorkload>,
            random_problem,
            true,
            bytes_needed};
}

}  // namespace benchfp::harness
