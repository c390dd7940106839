#include "families/reorder/reorder_workload.hpp"

#include "families/family.hpp"
#include "jit/enum_names.hpp"
#include "peers/onednn.hpp"
#include "quoted.hpp"
#include "usage_error.hpp"

namespace benchfp::harness {

const char* to_string(ReorderAlg alg) {
    switch (alg) {
    case ReorderAlg::transpose: return "transpose";
    case ReorderAlg::nchw2nhwc: return "nchw2nhwc";
    case ReorderAlg::nhwc2nchw: return "nhwc2nchw";
    }
    return "?";
}

std::optional<ReorderAlg> parse_reorder_alg(std::string_view name) { return jit::parse_name(name, all_reorder_algs); }

TransposeShape parse_reorder_problem(ReorderAlg alg, const std::string& problem, const std::string& where) {
    const std::string name = to_string(alg);
    if (alg == ReorderAlg::transpose) {
        const auto d = parse_dims(problem, where, "RxC or BxRxC for transpose");
        if (d.size() == 2) return {1, d[0], d[1]};
        if (d.size() == 3) return {d[0], d[1], d[2]};
        throw UsageError(where + ": malformed problem " + quoted_token(problem) + ": expected RxC or BxRxC for transpose");
    }
    const auto d = parse_dims(problem, where, "NxCxHxW for " + name);
    if (d.size() != 4) throw UsageError(where + ": malformed problem " + quoted_token(problem) + ": expected NxCxHxW for " + name);
    if (alg == ReorderAlg::nchw2nhwc) return {d[0], d[1], d[2] * d[3]};
    return {d[0], d[2] * d[3], d[1]};  // nhwc2nchw: rows H*W of C channels each
}

ReorderWorkload::ReorderWorkload(const KernelCase& c)
    : SlicedWorkload(c.threads), s_(parse_reorder_problem(*parse_reorder_alg(c.spec.alg), c.problem, "problem")) {
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

// The same logical tensor in two layouts: cols-major within a batch is the transpose.
std::unique_ptr<Peer> ReorderWorkload::onednn_peer() {
    const std::vector<dnnl_dim_t> dims = {static_cast<dnnl_dim_t>(s_.batch), static_cast<dnnl_dim_t>(s_.rows),
                                          static_cast<dnnl_dim_t>(s_.cols)};
    const auto src_md = onednn::plain_desc(dims, dnnl_abc);
    const auto dst_md = onednn::plain_desc(dims, dnnl_acb);
    dnnl_primitive_desc_t pd;
    onednn::set_threads(threads());  // before the descriptor: see set_threads in onednn.hpp
    onednn::check(dnnl_reorder_primitive_desc_create(&pd, &src_md, onednn::engine(), &dst_md, onednn::engine(), nullptr),
                  "reorder descriptor");
    auto peer = std::make_unique<onednn::PrimitivePeer>(pd, threads());
    peer->bind(DNNL_ARG_FROM, src_md, src_.data());
    peer->bind(DNNL_ARG_TO, dst_md, dst_.data());
    return peer;
}

namespace {

std::unique_ptr<jit::Generator> build(const KernelSpec& spec) { return jit::make_reorder_kernel(spec.isa, spec.frame); }

std::string random_problem(const std::string& alg, std::mt19937& rng) {
    auto pick = [&](int lo, int hi) { return std::to_string(std::uniform_int_distribution<int>(lo, hi)(rng)); };
    std::vector<std::string> dims;
    if (alg == "transpose")
        for (int hi : {3, 23, 23}) dims.push_back(pick(1, hi));
    else
        for (int hi : {2, 9, 7, 7}) dims.push_back(pick(1, hi));
    std::string p;
    for (const std::string& d : dims) p += (p.empty() ? "" : "x") + d;
    return p;
}

// Source and destination; corr adds the reference.
double bytes_needed(const KernelCase& c) {
    const TransposeShape s = parse_reorder_problem(*parse_reorder_alg(c.spec.alg), c.problem, "problem");
    const double n = double(s.batch) * s.rows * s.cols;
    return buffer_bytes(c, 2 * n, n);
}

}  // namespace

Family reorder_family() {
    return {"reorder",
            "batched transposes: transpose, and NCHW <-> NHWC",
            names_of(all_reorder_algs),
            {std::begin(jit::all_isas), std::end(jit::all_isas)},
            "RxC or BxRxC for transpose, NxCxHxW for nchw2nhwc and nhwc2nchw",
            build,
            [](const std::string& alg, const std::string& problem, const std::string& where) {
                parse_reorder_problem(*parse_reorder_alg(alg), problem, where);
            },
            make<ReorderWorkload>,
            random_problem,
            true,
            bytes_needed};
}

}  // namespace benchfp::harness
