#pragma once
#include "jit/kernels/eltwise.hpp"
#include "workloads/workload.hpp"

#include <vector>

namespace benchfp::harness {

// The element count of an eltwise problem: "N" or dims "AxBx...". Throws UsageError.
size_t parse_eltwise_problem(const std::string& problem, const std::string& where);

class EltwiseWorkload final : public Workload {
public:
    explicit EltwiseWorkload(const KernelCase& c);
    WorkloadCall call() const override { return {kernel_->entry(), &args_, ""}; }
    CorrOutcome check() override;
    double bytes() const override { return 2.0 * 4 * src_.size(); }

private:
    jit::EltwiseAlg alg_;
    std::vector<float> src_, dst_;
    jit::EltwiseArgs args_{};
};

}  // namespace benchfp::harness
