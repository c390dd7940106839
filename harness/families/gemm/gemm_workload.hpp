#pragma once
// gemm: C = A * B + beta * C, f32, row-major, single precision BLAS semantics.
// The driver packs and blocks (BLIS loop order: N blocks, K blocks with B packed
// in NR-column panels, M blocks with A packed in MR-row panels, then tiles) and
// calls the JIT microkernel per MR x NR tile; edge tiles go through a small
// buffer; when A has only a few panels B is not packed by blocks: each B panel
// is read in place (one or two panels of A) or copied just before its tiles
// (how many depends on the tile's width); the kernel reads A's full panels in
// place rather than packed at avx2 (every N), and at avx512 where B is one
// 16-column panel or, on 1 thread, up to two 32-column ones (gemm_workload.cpp,
// a_read_in_place).
// With --threads every thread packs a share of B, then the tiles are split on a
// grid of M panels x N panels (N when M is too short to share).
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

// Whether avx512's B panels are read in place, not copied, from 3 to 16 A panels:
// BENCHFP_GEMM_B_PANELS (in-place, copied), else where this CPU's 512-bit FMAs
// run at no more than 1.5x the 256-bit rate (measured once per process; never
// where avx512 is not usable). Throws UsageError for another value of the variable.
bool gemm_b_panels_in_place();

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
    struct Block {  // B[pc:pc+kc, jc:jc+nc]: what one packing of B covers
        size_t jc, nc, pc, kc;
    };
    struct ThreadSplit {
        int m_ways = 1, n_ways = 1;  // m_ways * n_ways == threads
        bool b_in_place = false;     // B taken panel by panel (see b_panel) rather than packed by blocks
    };
    // m_panels MR-row panels of A, n_panels NR-column panels of a block of B;
    // B in place up to in_place_max panels of A.
    static ThreadSplit split_threads(size_t m_panels, size_t n_panels, int threads, size_t in_place_max);
    void pack_b_share(const Block& blk, int ithr, int nthr) const;
    jit::GemmArgs b_panel(const Block& blk, size_t q, float* panel) const;
    bool a_panel_in_place(size_t p) const;
    void run_blocks(jit::KernelFn kernel, const Block& blk, int ithr) const;
    void run_tile(jit::KernelFn kernel, jit::GemmArgs args, size_t i0, size_t j0, float beta) const;

    GemmShape shape_;
    jit::GemmTile tile_;
    bool a_in_place_;  // full A panels read where they lie (see a_read_in_place)
    size_t m_panels_;  // MR-row panels of A, the last one maybe partial
    size_t kc_;        // K block
    ThreadSplit split_;
    size_t straight_max_m_panels_;  // B panels read in place, not copied, up to this many A panels (see b_panel)
    FloatBuffer a_, b_, c_, c_initial_;
    mutable FloatBuffer b_packed_;
    mutable std::vector<FloatBuffer> a_packed_;  // one per thread
    mutable std::vector<FloatBuffer> b_panel_;   // one per thread: a copied B panel (see b_panel), padded
};

}  // namespace benchfp::harness
