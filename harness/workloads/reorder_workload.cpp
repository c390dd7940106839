#include "workloads/reorder_workload.hpp"

#include "jit_call.hpp"
#include "peers/onednn.hpp"
#include "usage_error.hpp"

namespace benchfp::harness {

TransposeShape parse_reorder_problem(const std::string& alg, const std::string& problem, const std::string& where) {
    if (alg == "transpose") {
        const auto d = parse_dims(problem, where, "RxC or BxRxC for transpose");
        if (d.size() == 2) return {1, d[0], d[1]};
        if (d.size() == 3) return {d[0], d[1], d[2]};
        throw UsageError(where + ": malformed problem '" + problem + "': expected RxC or BxRxC for transpose");
    }
    const auto d = parse_dims(problem, where, "NxCxHxW for " + alg);
    if (d.size() != 4) throw UsageError(where + ": malformed problem '" + problem + "': expected NxCxHxW for " + alg);
    if (alg == "nchw2nhwc") return {d[0], d[1], d[2] * d[3]};
    return {d[0], d[2] * d[3], d[1]};  // nhwc2nchw: rows H*W of C channels each
}

ReorderWorkload::ReorderWorkload(const KernelCase& c)
    : SlicedWorkload(c.threads), s_(parse_reorder_problem(c.spec.alg, c.problem, "problem")) {
    src_.resize(s_.batch * s_.rows * s_.cols);
    dst_.assign(src_.size(), 0.0f);
    fill_uniform(src_, c.seed, -1.0f, 1.0f);
    // Threads take whole batches, or bands of rows of the single batch.
    for (int t = 0; t < c.threads; ++t) {
        if (s_.batch > 1) {
            const auto [b0, b1] = split_range(s_.batch, t, c.threads);
            const size_t plane = s_.rows * s_.cols;
            slices_.push_back({src_.data() + b0 * plane, dst_.data() + b0 * plane, b1 - b0, s_.rows, s_.cols});
        } else {
            // A band of rows r0..r1 is the transpose of a rows x cols matrix whose
            // destination rows keep their full length: it is not expressible with
            // these args, so a single batch runs on one thread.
            slices_.push_back({src_.data(), dst_.data(), t == 0 ? size_t{1} : size_t{0}, s_.rows, s_.cols});
        }
    }
    add_variant(c.spec);
}

CorrOutcome ReorderWorkload::check() {
    run(0);
    std::vector<float> want(dst_.size());
    for (size_t b = 0; b < s_.batch; ++b)
        for (size_t r = 0; r < s_.rows; ++r)
            for (size_t c = 0; c < s_.cols; ++c)
                want[(b * s_.cols + c) * s_.rows + r] = src_[(b * s_.rows + r) * s_.cols + c];
    return compare_outputs(dst_, want, [](size_t) { return 0.0; }, "exact");
}

std::unique_ptr<Peer> ReorderWorkload::onednn_peer() {
    return onednn_transpose(src_.data(), dst_.data(), s_.batch, s_.rows, s_.cols, threads());
}

}  // namespace benchfp::harness
