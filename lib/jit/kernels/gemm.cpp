#include "jit/kernels/gemm.hpp"

#include "jit/vector_generator.hpp"

#include <stdexcept>
#include <vector>

namespace benchfp::jit {

using namespace Xbyak::util;

GemmTile gemm_tile(Isa isa, size_t n) {
    if (isa == Isa::avx512) return {12, n <= 16 ? 16 : 32};
    if (isa == Isa::avx2) return {6, 16};
    throw std::invalid_argument(std::string("gemm has no ") + to_string(isa) + " implementation");
}

bool gemm_supports(Isa isa) { return isa == Isa::avx2 || isa == Isa::avx512; }

namespace {

template <typename Vmm>
class GemmKernel final : public VectorGenerator<Vmm> {
    using Base = VectorGenerator<Vmm>;
    static constexpr int width = Base::width;
    static constexpr int k_unroll = 4;
    static constexpr int prefetch_distance = 16;  // k steps ahead
    static constexpr bool embedded_broadcast = true;

public:
    explicit GemmKernel(FramePolicy policy)
        : Base(Base::kernel_name("gemm", policy), policy),
          tile_(gemm_tile(Base::isa_of())),
          reg_a_(this->pool().take_register("a panel")),
          reg_b_(this->pool().take_register("b panel")),
          reg_c_(this->pool().take_register("c row")),
          reg_ldc_(this->pool().take_register("ldc")),
          reg_k_(this->pool().take_register("k left")),
          reg_ldb_(this->pool().take_register("ldb")),
          reg_b_ahead_(this->pool().take_register("ldb * prefetch distance")) {}

private:
    int nv() const { return nr_ / width; }  // vectors per C row of the body being written
    // The row counts with a body of their own, ascending; the last is the tile's.
    // A short last M panel (m64 at MR 12 is five panels and 4 rows) then costs
    // its rows rounded up to 4 (2 at avx2), not a whole tile.
    std::vector<int> row_counts() const { return Base::is_avx512 ? std::vector{4, 8, 12} : std::vector{2, 4, 6}; }
    // Registers: accumulators first, then B vectors, then the A broadcast.
    Vmm acc(int i, int j) const { return Vmm(i * nv() + j); }  // registers as laid out for the full tile
    Vmm bvec(int j) const { return Vmm(tile_.mr * nv() + j); }
    Vmm abcast(int i) const { return Vmm(tile_.mr * nv() + nv() + (i % 2)); }

    // One k step; reg_b_ moves on by ldb. Every line of B is prefetched
    // prefetch_distance steps ahead: in place, each k step is another row of B
    // (a stride the hardware prefetchers follow badly), packed, the next lines.
    void k_step(int step) {
        const int a_bytes = tile_.mr * 4;
        for (int j = 0; j < nv(); ++j) this->vmovups(bvec(j), this->ptr[reg_b_ + j * width * 4]);
        for (int line = 0; line < nr_ * 4; line += 64) this->prefetcht0(this->ptr[reg_b_ + reg_b_ahead_ + line]);
        if (step % 2 == 0) this->prefetcht0(this->ptr[reg_a_ + (step + prefetch_distance) * a_bytes]);
        this->add(reg_b_, reg_ldb_);
        for (int i = 0; i < rows_; ++i) {
            const auto a = reg_a_ + step * a_bytes + i * 4;
            if constexpr (Base::is_avx512 && embedded_broadcast) {
                for (int j = 0; j < nv(); ++j) this->vfmadd231ps(acc(i, j), bvec(j), this->ptr_b[a]);
            } else {
                this->vbroadcastss(abcast(i), this->ptr[a]);
                for (int j = 0; j < nv(); ++j) this->vfmadd231ps(acc(i, j), bvec(j), abcast(i));
            }
        }
    }

    void generate_body() override {
        const auto& p = this->abi_param;
        this->mov(reg_a_, this->ptr[p + offsetof(GemmArgs, a)]);
        this->mov(reg_b_, this->ptr[p + offsetof(GemmArgs, b)]);
        this->mov(reg_c_, this->ptr[p + offsetof(GemmArgs, c)]);
        this->mov(reg_ldc_, this->ptr[p + offsetof(GemmArgs, ldc)]);
        this->mov(reg_k_, this->ptr[p + offsetof(GemmArgs, k)]);
        this->mov(reg_ldb_, this->ptr[p + offsetof(GemmArgs, ldb)]);
        this->imul(reg_b_ahead_, reg_ldb_, prefetch_distance);
        this->setup_done();

        // avx512: the one-vector-per-row bodies where the tile is 16 columns wide.
        const int narrow = Base::is_avx512 ? tile_.nr / 2 : 0;
        Xbyak::Label done;
        if (narrow) {
            Xbyak::Label wide;
            this->cmp(this->qword[p + offsetof(GemmArgs, nr)], narrow);
            this->jne(wide, Xbyak::CodeGenerator::T_NEAR);
            bodies(narrow, done);
            this->L(wide);
        }
        bodies(tile_.nr, done);
        this->L(done);
    }

    // One body per row count for nr columns, the smallest that covers args.mr taken.
    void bodies(int nr, const Xbyak::Label& done) {
        const std::vector<int> rows = row_counts();
        for (size_t r = 0; r < rows.size(); ++r) {
            Xbyak::Label next;
            if (r + 1 < rows.size()) {
                this->cmp(this->qword[this->abi_param + offsetof(GemmArgs, mr)], rows[r]);
                this->ja(next, Xbyak::CodeGenerator::T_NEAR);
            }
            body(rows[r], nr);
            this->jmp(done, Xbyak::CodeGenerator::T_NEAR);
            this->L(next);
        }
    }

    // The tile's first `rows` rows for nr columns: C[rows x nr] = A * B + beta * C.
    void body(int rows, int nr) {
        rows_ = rows;
        nr_ = nr;
        const auto& p = this->abi_param;
        for (int i = 0; i < rows_; ++i)
            for (int j = 0; j < nv(); ++j) this->uni_zero(acc(i, j));
        // Prefetch the C tile for writing while the k loop runs.
        for (int i = 0; i < rows_; ++i) {
            this->prefetchw(this->ptr[reg_c_]);
            this->prefetchw(this->ptr[reg_c_ + nr * 4 - 4]);
            this->add(reg_c_, reg_ldc_);
        }
        this->mov(reg_c_, this->ptr[p + offsetof(GemmArgs, c)]);

        Xbyak::Label unrolled, single, done;
        this->loop_head(unrolled);
        this->cmp(reg_k_, k_unroll);
        this->jl(single, Xbyak::CodeGenerator::T_NEAR);
        for (int s = 0; s < k_unroll; ++s) k_step(s);
        this->add(reg_a_, k_unroll * tile_.mr * 4);
        this->sub(reg_k_, k_unroll);
        this->jmp(unrolled, Xbyak::CodeGenerator::T_NEAR);
        this->loop_head(single);
        this->test(reg_k_, reg_k_);
        this->jz(done, Xbyak::CodeGenerator::T_NEAR);
        k_step(0);
        this->add(reg_a_, tile_.mr * 4);
        this->dec(reg_k_);
        this->jmp(single, Xbyak::CodeGenerator::T_NEAR);
        this->L(done);
        store_tile();
    }

    // c = acc when beta == 0 (c is never read: it may hold NaN), else c = acc + beta * c.
    void store_tile() {
        const Vmm beta = abcast(0), zero = abcast(1);
        Xbyak::Label overwrite, stored;
        this->vbroadcastss(beta, this->ptr[this->abi_param + offsetof(GemmArgs, beta)]);
        this->vxorps(Xbyak::Xmm(zero.getIdx()), Xbyak::Xmm(zero.getIdx()), Xbyak::Xmm(zero.getIdx()));
        this->vucomiss(Xbyak::Xmm(beta.getIdx()), Xbyak::Xmm(zero.getIdx()));
        this->je(overwrite, Xbyak::CodeGenerator::T_NEAR);
        for (int i = 0; i < rows_; ++i) {
            for (int j = 0; j < nv(); ++j) {
                const auto c = this->ptr[reg_c_ + j * width * 4];
                this->vfmadd231ps(acc(i, j), beta, c);
                this->vmovups(c, acc(i, j));
            }
            this->add(reg_c_, reg_ldc_);
        }
        this->jmp(stored, Xbyak::CodeGenerator::T_NEAR);
        this->L(overwrite);
        for (int i = 0; i < rows_; ++i) {
            for (int j = 0; j < nv(); ++j) this->vmovups(this->ptr[reg_c_ + j * width * 4], acc(i, j));
            this->add(reg_c_, reg_ldc_);
        }
        this->L(stored);
    }

    GemmTile tile_;  // the widest tile: its nr, and the A panel's rows
    int rows_ = 0;   // the rows of the body being written
    int nr_ = 0;     // the columns of the body being written
    Xbyak::Reg64 reg_a_, reg_b_, reg_c_, reg_ldc_, reg_k_, reg_ldb_, reg_b_ahead_;
};

// Independent accumulators, twice the FMA latency times the FMA ports' width,
// all fed from two registers: nothing but FMAs in the loop.
template <typename Vmm>
class FmaPeakKernel final : public VectorGenerator<Vmm> {
    using Base = VectorGenerator<Vmm>;

public:
    static constexpr int accumulators = Base::is_avx512 ? 24 : 12;

    FmaPeakKernel()
        : Base(std::string("fma_peak_") + to_string(Base::isa_of()), FramePolicy::frame),
          reg_n_(this->pool().take_register("iterations")) {}

private:
    void generate_body() override {
        this->mov(reg_n_, this->ptr[this->abi_param + offsetof(FmaPeakArgs, iterations)]);
        this->setup_done();
        const Vmm x(accumulators), y(accumulators + 1);
        for (int i = 0; i < accumulators + 2; ++i) this->uni_zero(Vmm(i));
        Xbyak::Label loop, done;
        this->loop_head(loop);
        this->test(reg_n_, reg_n_);
        this->jz(done, Xbyak::CodeGenerator::T_NEAR);
        for (int i = 0; i < accumulators; ++i) this->vfmadd231ps(Vmm(i), x, y);
        this->dec(reg_n_);
        this->jmp(loop, Xbyak::CodeGenerator::T_NEAR);
        this->L(done);
    }

    Xbyak::Reg64 reg_n_;
};

}  // namespace

std::unique_ptr<Generator> make_gemm_kernel(Isa isa, FramePolicy policy) {
    if (!gemm_supports(isa)) gemm_tile(isa);  // throws, naming the ISA
    return make_for_isa<GemmKernel>(isa, policy);
}

std::unique_ptr<Generator> make_fma_peak_kernel(Isa isa) {
    if (!gemm_supports(isa)) gemm_tile(isa);
    return make_for_isa<FmaPeakKernel>(isa);
}

double fma_peak_flops_per_iteration(Isa isa) {
    return isa == Isa::avx512 ? 2.0 * 16 * FmaPeakKernel<Xbyak::Zmm>::accumulators
                              : 2.0 * 8 * FmaPeakKernel<Xbyak::Ymm>::accumulators;
}

}  // namespace benchfp::jit
