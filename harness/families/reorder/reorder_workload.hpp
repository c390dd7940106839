#pragma once
// reorder: batched transposes. Algs: transpose (problem RxC or BxRxC),
// nchw2nhwc and nhwc2nchw (problem NxCxHxW, the logical tensor). One JIT kernel
// serves all three: the algs differ in how the problem maps to a transpose.
#include "families/workload.hpp"
#include "jit/kernels/reorder.hpp"

#include <optional>
#include <string_view>

namespace benchfp::harness {

enum class ReorderAlg { transpose, nchw2nhwc, nhwc2nchw };
inline constexpr ReorderAlg all_reorder_algs[] = {ReorderAlg::transpose, ReorderAlg::nchw2nhwc,
                                                  ReorderAlg::nhwc2nchw};
const char* to_string(ReorderAlg alg);
std::optional<ReorderAlg> parse_reorder_alg(std::string_view name);

struct TransposeShape {
    size_t batch, rows, cols;
};
TransposeShape parse_reorder_problem(ReorderAlg alg, const std::string& problem, const std::string& where);

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
