#pragma once
// reduce: sum, max or softmax over the last axis of a matrix.
#include "families/workload.hpp"
#include "jit/kernels/reduce.hpp"

namespace benchfp::harness {

struct ReduceShape {
    size_t rows, cols;
};
// "COLS" (one row) or "AxBx...xCOLS": reduced over the last dim. Throws UsageError.
ReduceShape parse_reduce_problem(const std::string& problem, const std::string& where);

class ReduceWorkload final : public SlicedWorkload<jit::ReduceArgs> {
public:
    explicit ReduceWorkload(const KernelCase& c);
    std::unique_ptr<Peer> onednn_peer() override;
    CorrOutcome check() override;
    size_t input_bytes() const override { return 4 * src_.size(); }
    double bytes() const override { return 4.0 * (src_.size() + dst_.size()); }

private:
    jit::ReduceAlg alg_;
    ReduceShape shape_;
    FloatBuffer src_, dst_;
};

}  // namespace benchfp::harness
