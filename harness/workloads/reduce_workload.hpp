#pragma once
#include "jit/kernels/reduce.hpp"
#include "workloads/workload.hpp"

#include <vector>

namespace benchfp::harness {

struct ReduceShape {
    size_t rows, cols;
};
// "COLS" (one row) or "AxBx...xCOLS": reduced over the last dim. Throws UsageError.
ReduceShape parse_reduce_problem(const std::string& problem, const std::string& where);

class ReduceWorkload final : public Workload {
public:
    explicit ReduceWorkload(const KernelCase& c);
    WorkloadCall call() const override { return {kernel_->entry(), &args_, ""}; }
    CorrOutcome check() override;
    double bytes() const override { return 4.0 * (src_.size() + dst_.size()); }

private:
    jit::ReduceAlg alg_;
    ReduceShape shape_;
    std::vector<float> src_, dst_;
    jit::ReduceArgs args_{};
};

}  // namespace benchfp::harness
