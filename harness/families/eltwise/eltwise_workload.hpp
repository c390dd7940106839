#pragma once
// eltwise: dst = f(src) elementwise; problems are an element count or dims.
#include "families/workload.hpp"
#include "jit/kernels/eltwise.hpp"

namespace benchfp::harness {

// The element count of an eltwise problem: "N" or dims "AxBx...". Throws UsageError.
size_t parse_eltwise_problem(const std::string& problem, const std::string& where);

class EltwiseWorkload final : public SlicedWorkload<jit::EltwiseArgs> {
public:
    explicit EltwiseWorkload(const KernelCase& c);
    std::unique_ptr<Peer> onednn_peer() override;
    CorrOutcome check() override;
    size_t input_bytes() const override { return 4 * src_.size(); }
    double bytes() const override { return 2.0 * 4 * src_.size(); }

private:
    jit::EltwiseAlg alg_;
    FloatBuffer src_, dst_;
};

}  // namespace benchfp::harness
