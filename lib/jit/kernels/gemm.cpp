#include "jit/kernels/gemm.hpp"

#include "jit/vector_generator.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace benchfp::jit {

using namespace Xbyak::util;

GemmTile gemm_tile(Isa isa, size_t m, size_t n) {
    if (isa == Isa::avx512) return m <= 16 || n <= 16 ? GemmTile{16, 16} : GemmTile{12, 32};
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
    static constexpr int a_in_place_prefetch_bytes = 256;  // 4 lines ahead in each row of A (256-1024 alike)
    static constexpr int max_pass_rows = 8;                // rows of A in place at once (in_place_passes)
    static constexpr int b_next_panels = 4;                // B streamed: the panel whose line goes to L2 (k_step)

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
          reg_b_ahead_(this->pool().take_register("ldb * prefetch distance")),
          reg_lda_(this->pool().take_register("lda")),
          reg_lda3_(this->pool().take_register("lda * 3")) {
        // A in place: a base pointer per 4 rows of a pass, the first being reg_a_.
        int most_rows = in_place_pass_rows(16);
        if (Base::is_avx512) most_rows = std::max(most_rows, in_place_pass_rows(tile_.nr));
        for (int r = 4; r < most_rows; r += 4) reg_a_rows_.push_back(this->pool().take_register("a row " + std::to_string(r)));
    }

private:
    int nv() const { return nr_ / width; }  // vectors per C row of the body being written
    // The row counts with a body of their own, ascending; the last is the A
    // panel's (gemm_tile's mr for nr columns). A short last M panel (m64 at MR 12
    // is five panels and 4 rows) then costs its rows rounded up to 4 (2 at avx2),
    // not a whole tile.
    std::vector<int> row_counts(int nr) const {
        if (!Base::is_avx512) return {2, 4, 6};
        return nr == 16 ? std::vector{4, 8, 12, 16} : std::vector{4, 8, 12};
    }
    // The most rows a pass over A in place computes for nr columns: the
    // 16-column panel's up to max_pass_rows, the 32-column one's (12) whole.
    int in_place_pass_rows(int nr) const {
        return nr == 16 ? std::min(row_counts(16).back(), max_pass_rows) : row_counts(nr).back();
    }
    // Registers: accumulators first, then B vectors, then the A broadcast, laid
    // out for the most rows a body of the group being written has (avx512:
    // 16 x 1 + 1 + 2, 12 x 2 + 2 + 2, or A in place 8 x 1 + 1 + 2 and 12 x 2 + 2 + 2).
    Vmm acc(int i, int j) const { return Vmm(i * nv() + j); }
    Vmm bvec(int j) const { return Vmm(acc_rows_ * nv() + j); }
    Vmm abcast(int i) const { return Vmm(acc_rows_ * nv() + nv() + (i % 2)); }

    // One k step; reg_b_ moves on by ldb. Every line of B is prefetched
    // prefetch_distance steps ahead (b_streamed bodies: see there): in place,
    // each k step is another row of B (a stride the hardware prefetchers follow
    // badly), packed, the next lines.
    void k_step(int step) {
        const int a_bytes = a_in_place_ ? 4 : panel_rows_ * 4;  // from one k step to the next
        for (int j = 0; j < nv(); ++j) this->vmovups(bvec(j), this->ptr[reg_b_ + j * width * 4]);
        if (b_streamed()) {
            this->prefetcht0(this->ptr[reg_b_ + reg_ldb_ * 8]);
            this->prefetcht1(this->ptr[reg_b_ + reg_b_ahead_ + b_next_panels * 64]);
        } else {
            for (int line = 0; line < nr_ * 4; line += 64) this->prefetcht0(this->ptr[reg_b_ + reg_b_ahead_ + line]);
        }
        // Packed A: a line per step at 16 rows; at 12 (48 bytes) or 6, one per two
        // steps is enough. A in place is a stream per row, each row a line per 16
        // steps: step s of the unrolled 4 prefetches rows 4s..4s+3, so every row
        // is asked for once per 4 steps (Zen 5, avx512 m4096n16k1024 in one pass
        // of 16 rows, mean ms per run: 1.17-1.19 with the hardware prefetchers
        // alone, 1.04-1.07 with these; once per 16 steps, min 1.21-1.25 against 0.98-1.01).
        if (a_in_place_) {
            for (int i = step * 4; i < std::min(step * 4 + 4, rows_); ++i)
                this->prefetcht0(this->ptr[a_row(i) + a_in_place_prefetch_bytes]);
        } else if (a_bytes >= 64 || step % 2 == 0) {
            this->prefetcht0(this->ptr[reg_a_ + (step + prefetch_distance) * a_bytes]);
        }
        this->add(reg_b_, reg_ldb_);
        for (int i = 0; i < rows_; ++i) {
            const Xbyak::RegExp a = a_row(i) + step * a_bytes;
            // One load per element of A: an embedded broadcast where a row has one
            // vector, a broadcast register shared by the row's FMAs where it has two
            // (embedded there, each FMA loads A again: 26 loads per 24 FMAs at 12 x 32,
            // and on Zen 5 the tile ran at 0.82 of the FMA peak against 0.90 this way).
            if (Base::is_avx512 && nv() == 1) {
                this->vfmadd231ps(acc(i, 0), bvec(0), this->ptr_b[a]);
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
        Xbyak::Label done, packed;
        // A in place (lda != 0): the full panel height only, 16 columns (and at avx512 32).
        this->mov(reg_lda_, this->ptr[p + offsetof(GemmArgs, lda)]);
        this->test(reg_lda_, reg_lda_);
        this->jz(packed, Xbyak::CodeGenerator::T_NEAR);
        this->lea(reg_lda3_, this->ptr[reg_lda_ + reg_lda_ * 2]);
        for_each_width(narrow, [&](int nr) { in_place_passes(nr, done); });
        this->L(packed);
        for_each_width(narrow, [&](int nr) { bodies(nr, done); });
        this->L(done);
    }

    // Writes emit(nr) for each tile width: at avx512 the 16-column one (`narrow`)
    // for args.nr == narrow, then the widest (tile_.nr) for any other.
    template <typename Emit>
    void for_each_width(int narrow, Emit emit) {
        if (narrow) {
            Xbyak::Label wide;
            this->cmp(this->qword[this->abi_param + offsetof(GemmArgs, nr)], narrow);
            this->jne(wide, Xbyak::CodeGenerator::T_NEAR);
            emit(narrow);
            this->L(wide);
        }
        emit(tile_.nr);
    }

    // A in place, a full panel of nr columns, in passes of up to
    // in_place_pass_rows rows: every row of A is a stream from memory, and 8
    // streams at once read faster than 16. Zen 5 guest, avx512 m4096n16k1024,
    // 1 thread, min ms per run: 0.93-1.01 as one pass of 16 rows, 0.78-0.83 as
    // two of 8 (each pass reads the B panel, 64 KiB, from L2). avx2's panel is
    // 6 rows, avx512's 32-column one 12 (24 accumulators): one pass.
    void in_place_passes(int nr, const Xbyak::Label& done) {
        a_in_place_ = true;
        panel_rows_ = row_counts(nr).back();
        acc_rows_ = in_place_pass_rows(nr);
        for (int first = 0; first < panel_rows_; first += acc_rows_) {
            if (first > 0) restart_at_row(first);
            else set_a_row_bases();
            body(std::min(acc_rows_, panel_rows_ - first), nr, first);
        }
        this->jmp(done, Xbyak::CodeGenerator::T_NEAR);
        a_in_place_ = false;
    }

    // A in place: a base per 4 rows after reg_a_'s, lda * 4 bytes apart.
    void set_a_row_bases() {
        for (size_t r = 0; r < a_row_bases(); ++r)
            this->lea(reg_a_rows_[r], this->ptr[(r == 0 ? reg_a_ : reg_a_rows_[r - 1]) + reg_lda_ * 4]);
    }

    // The next pass of A in place, from row `first` (a multiple of 4): k, B and A from the start.
    void restart_at_row(int first) {
        const auto& p = this->abi_param;
        this->mov(reg_k_, this->ptr[p + offsetof(GemmArgs, k)]);
        this->mov(reg_b_, this->ptr[p + offsetof(GemmArgs, b)]);
        load_at_row(reg_a_, offsetof(GemmArgs, a), reg_lda_, first);
        set_a_row_bases();
    }

    // reg_c_ at row `first` of the tile of C.
    void point_c_at_row(int first) { load_at_row(reg_c_, offsetof(GemmArgs, c), reg_ldc_, first); }

    // reg = the argument at `arg` plus `first` (a multiple of 4) rows of `stride` bytes.
    void load_at_row(const Xbyak::Reg64& reg, size_t arg, const Xbyak::Reg64& stride, int first) {
        this->mov(reg, this->ptr[this->abi_param + arg]);
        for (int r = 0; r < first; r += 4) this->lea(reg, this->ptr[reg + stride * 4]);
    }

    // One body per row count for nr columns, the smallest that covers args.mr
    // taken.
    void bodies(int nr, const Xbyak::Label& done) {
        const std::vector<int> rows = row_counts(nr);
        panel_rows_ = acc_rows_ = rows.back();
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

    // `rows` rows of the tile from row `first` (reg_a_ at that row of A), for
    // nr columns: C[rows x nr] = A * B + beta * C.
    void body(int rows, int nr, int first = 0) {
        rows_ = rows;
        nr_ = nr;
        for (int i = 0; i < rows_; ++i)
            for (int j = 0; j < nv(); ++j) this->uni_zero(acc(i, j));
        // Prefetch the C tile for writing while the k loop runs.
        if (first > 0) point_c_at_row(first);
        for (int i = 0; i < rows_; ++i) {
            this->prefetchw(this->ptr[reg_c_]);
            this->prefetchw(this->ptr[reg_c_ + nr * 4 - 4]);
            this->add(reg_c_, reg_ldc_);
        }
        point_c_at_row(first);

        Xbyak::Label unrolled, single, done;
        this->loop_head(unrolled);
        this->cmp(reg_k_, k_unroll);
        this->jl(single, Xbyak::CodeGenerator::T_NEAR);
        for (int s = 0; s < k_unroll; ++s) k_step(s);
        advance_a(k_unroll);
        this->sub(reg_k_, k_unroll);
        this->jmp(unrolled, Xbyak::CodeGenerator::T_NEAR);
        this->loop_head(single);
        this->test(reg_k_, reg_k_);
        this->jz(done, Xbyak::CodeGenerator::T_NEAR);
        k_step(0);
        advance_a(1);
        this->dec(reg_k_);
        this->jmp(single, Xbyak::CodeGenerator::T_NEAR);
        this->L(done);
        store_tile();
    }

    // avx512's 16-column bodies over packed A serve short M (M <= 16 and N >
    // 16: the driver reads B in place), so B streams from memory a line per row,
    // the rows a row of B apart (16 KiB at n4096). Their prefetches differ:
    // - Into L1 8 rows ahead, not prefetch_distance: every line of the panel
    //   falls in one L1 set (12 ways, a third of them the A panel's), so lines
    //   asked for 16 rows ahead were evicted before their turn.
    // - Into L2 the line of the panel b_next_panels on, prefetch_distance rows
    //   ahead (row k + 16 of panel q + 4): b_next_panels panels' k loops early,
    //   since the hardware prefetchers do not follow the stride, and from
    //   memory 16 rows ahead is too late. (Row k of panel q + 4 instead read
    //   0.88-0.99x oneDNN against 0.92-0.99x.)
    // Zen 5 guest, m16n4096k1024, 1 thread, vs oneDNN (median of paired
    // ratios, 3-8 runs each): 0.71-0.86 before; L2 prefetch and K blocks of
    // 512 (the driver's), 0.92-0.97; with L1 8 rows ahead, 0.97-1.03.
    // Where B is packed or copied (a partial last B panel; a partial A panel
    // at N <= 16) the same prefetches ask for lines 8 and 20 steps ahead.
    bool b_streamed() const { return Base::is_avx512 && nr_ == 16 && !a_in_place_; }

    // Row i of the A panel at the current k step: packed, i floats in; in place,
    // its row base (one per 4 rows) plus 0, 1, 2 or 3 times lda.
    Xbyak::RegExp a_row(int i) const {
        if (!a_in_place_) return reg_a_ + i * 4;
        const Xbyak::Reg64& base = i < 4 ? reg_a_ : reg_a_rows_[i / 4 - 1];
        switch (i % 4) {
            case 0: return Xbyak::RegExp(base);
            case 1: return base + reg_lda_;
            case 2: return base + reg_lda_ * 2;
            default: return base + reg_lda3_;
        }
    }

    // A moves on by `steps` k steps: a panel's rows of floats, or a float per row base.
    void advance_a(int steps) {
        if (!a_in_place_) {
            this->add(reg_a_, steps * panel_rows_ * 4);
            return;
        }
        this->add(reg_a_, steps * 4);
        for (size_t r = 0; r < a_row_bases(); ++r) this->add(reg_a_rows_[r], steps * 4);
    }
    // The row bases after reg_a_ that the pass being written uses.
    size_t a_row_bases() const { return static_cast<size_t>((acc_rows_ - 1) / 4); }

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

    GemmTile tile_;       // the widest tile: its nr
    int panel_rows_ = 0;  // the A panel's rows for the bodies being written
    int acc_rows_ = 0;    // the most rows of a body of the group being written: its accumulators
    int rows_ = 0;        // the rows of the body being written
    bool a_in_place_ = false;  // the bodies being written read A in place
    int nr_ = 0;     // the columns of the body being written
    Xbyak::Reg64 reg_a_, reg_b_, reg_c_, reg_ldc_, reg_k_, reg_ldb_, reg_b_ahead_, reg_lda_, reg_lda3_;
    std::vector<Xbyak::Reg64> reg_a_rows_;  // A in place: rows 4 and 8 of a pass (avx2: row 4)
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
