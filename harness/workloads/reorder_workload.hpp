#pragma once
// reorder: batched transposes. Algs: transpose (problem RxC or BxRxC),
// nchw2nhwc and nhwc2nchw (problem NxCxHxW, the logical tensor).
#include "jit/kernels/reorder.hpp"
#include "workloads/workload.hpp"

#include <vector>

namespace benchfp::harness {

struct TransposeShape {
    size_t batch, rows, cols;
};
TransposeShape parse_reorder_problem(const std::string& alg, const std::string& problem, const std::string& where);

class ReorderWorkload final : public SlicedWorkload<jit::ReorderArgs> {
public:
    explicit ReorderWorkload(const KernelCase& c);
    CorrOutcome check() override;
    double bytes() const override { return 8.0 * src_.size(); }
    size_t input_bytes() const override { return 4 * src_.size(); }
    std::unique_ptr<Peer> onednn_peer() override;

private:
    TransposeShape s_;
    FloatBuffer src_, dst_;
};

}  // namespace benchfp::harness
