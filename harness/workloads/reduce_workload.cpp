#include "workloads/reduce_workload.hpp"

#include "jit_call.hpp"
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

std::unique_ptr<Peer> ReduceWorkload::onednn_peer() { return onednn_reduce(jit::to_string(alg_), src_.data(), dst_.data(), shape_.rows, shape_.cols, threads()); }

CorrOutcome ReduceWorkload::check() {
    run(0);
    std::vector<float> want(dst_.size());
    jit::reduce_reference(alg_, src_.data(), want.data(), shape_.rows, shape_.cols);
    const bool per_row = alg_ != jit::ReduceAlg::softmax;
    const jit::Isa isa = kernel().isa();
    std::vector<jit::ReduceRowStats> rows;
    for (size_t r = 0; r < shape_.rows; ++r) rows.push_back(jit::reduce_row_stats(&src_[r * shape_.cols], shape_.cols));
    auto bound = [&](size_t i) {
        const size_t row = per_row ? i : i / shape_.cols;
        return jit::reduce_bound(alg_, isa, rows[row], per_row ? 0.0f : src_[i], want[i]);
    };
    const char* tolerance = alg_ == jit::ReduceAlg::max    ? "exact"
                            : alg_ == jit::ReduceAlg::sum ? "(cols/4+4) ulp of sum|x|"
                                                          : "(2 exp + |x-m| + cols/4 + 6) ulp";
    return compare_outputs(dst_, want, bound, tolerance);
}

}  // namespace benchfp::harness
