#pragma once
// gemm: C = A * B + beta * C, f32, row-major, single precision BLAS semantics.
// The driver packs and blocks (BLIS loop order: N blocks, K blocks with B packed
// in NR-column panels, M blocks with A packed in MR-row panels, then tiles) and
// calls the JIT microkernel per MR x NR tile; edge tiles go through a small
// buffer. With --threads the M blocks are split across the parallel section.
#include "families/workload.hpp"
#include "jit/kernels/gemm.hpp"

#include <memory>
#include <vector>

namespace benchfp::harness {

struct GemmShape {
    size_t m, n, k;
    float beta;
};
// "m1024n1024k1024", optionally followed by "beta0.5" (default beta 0).
GemmShape parse_gemm_problem(const std::string& problem, const std::string& where);

class GemmWorkload final : public Workload {
public:
    explicit GemmWorkload(const KernelCase& c);
    CorrOutcome check() override;
    double flops() const override { return 2.0 * shape_.m * shape_.n * shape_.k; }
    double bytes() const override { return 4.0 * (a_.size() + b_.size() + 2 * c_.size()); }
    size_t input_bytes() const override { return 4 * a_.size(); }
    std::unique_ptr<Peer> onednn_peer() override;

    void run(size_t variant) const override;

private:
    void run_blocks(jit::KernelFn kernel, size_t jc, size_t nc, size_t pc, size_t kc, int ithr, int nthr) const;

    GemmShape shape_;
    jit::GemmTile tile_;
    FloatBuffer a_, b_, c_, c_initial_;
    mutable FloatBuffer b_packed_;
    mutable std::vector<FloatBuffer> a_packed_;  // one per thread
};

}  // namespace benchfp::harness
