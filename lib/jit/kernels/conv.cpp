#include "jit/kernels/conv.hpp"

#include "jit/vector_generator.hpp"

#include <algorithm>
#include <stdexcept>
#include <vector>

namespace benchfp::jit {

using namespace Xbyak::util;

bool conv_supports(Isa isa) { return isa == Isa::avx2 || isa == Isa::avx512; }

void conv_set_blocks(ConvArgs& a) {
    // Column ow reads input columns ow*sw - pw + k*dw1 for k in [0, kw): all inside
    // [0, iw) from `first` = ceil(pw / sw) to `end` - 1 = floor((iw - 1 + pw - (kw - 1) * dw1) / sw).
    // For one tap, the columns whose input is outside are a prefix of the row no
    // longer than the first tap's (the columns before `first`) and a suffix no
    // longer than the last tap's (from `end`): the blocks start at most
    // conv_border_columns before `first` and end at most that far after `end`,
    // so that no tap leaves more than that many columns of a block out at either end.
    const int64_t first = (a.pw + a.sw - 1) / a.sw;
    const int64_t reach = a.iw - 1 + a.pw - (a.kw - 1) * a.dw1;
    const int64_t end = reach < 0 ? 0 : std::min(a.ow, reach / a.sw + 1);
    a.ow_block_end = std::min(a.ow, end + conv_border_columns);
    a.ow_block_begin = std::min(std::max<int64_t>(0, first - conv_border_columns), a.ow_block_end);
}

namespace {

// Register blocking, as oneDNN's jit_avx2_conv / jit_avx512_common_conv block:
// `ur` output columns x `nb` oc vectors of accumulators. Per input channel the
// nb weight vectors are loaded once and reused by ur columns, and each input
// value is broadcast once and feeds nb FMAs: (nb + ur) loads per nb*ur FMAs.
// avx2 (16 registers): 6 x 2 = 12 accumulators + 2 weights + 1 broadcast.
// avx512 (32 registers): 6 x 4 = 24 accumulators + 4 weights + 1 broadcast.
// Both keep at least 8 FMAs independent, the 2 pipes x 4 cycles of FMA latency.
//
// The padded columns at a row's ends join the blocks (block_tap), up to
// conv_border_columns at each end. Computed one at a time, they had no column
// to reuse weights across: each FMA took its weight vector from L2, 64 bytes
// per FMA where a block of 6 takes 11, and the two padded columns of a
// 28-column row cost 2.2 inside ones each (mb1ic128ih28oc128kh3ph1 at avx512:
// 0.94-0.96x oneDNN, 1.00-1.03x in blocks; iw30 without padding read 1.01).
// A single column (where the padding reaches further in) still takes the
// weights from memory, and blocks nb_single oc vectors, so that 8 FMAs are
// independent (with nb 2 its 2 accumulator chains ran at a quarter of the FMA rate).
template <typename Vmm>
struct Blocking {
    static constexpr int ur = 6;  // at most 6: columns are addressed from two bases (see column())
    static constexpr int nb = VectorGenerator<Vmm>::is_avx512 ? 4 : 2;
    static constexpr int nb_single = 8;
    static_assert(ur * nb + nb + 1 <= VectorGenerator<Vmm>::vreg_count);
    static_assert(nb_single + 1 <= VectorGenerator<Vmm>::vreg_count);
};

template <typename Vmm>
class ConvKernel final : public VectorGenerator<Vmm> {
    using Base = VectorGenerator<Vmm>;
    static constexpr int width = Base::width;
    static constexpr int UR = Blocking<Vmm>::ur;
    static constexpr int NB = Blocking<Vmm>::nb;
    static constexpr int NB_SINGLE = Blocking<Vmm>::nb_single;
    using Label = Xbyak::Label;
    using Reg64 = Xbyak::Reg64;
    static constexpr auto near = Xbyak::CodeGenerator::T_NEAR;

public:
    explicit ConvKernel(FramePolicy policy)
        : Base(Base::kernel_name("conv", policy), policy) {
        auto& pool = this->pool();
        // Hot values first, in registers: the inner ic loop, its strides and the scratch.
        p_src_ = pool.take_register("src tap cursor");
        p_src3_ = pool.take_register("src tap cursor, column 3");
        p_wei_ = pool.take_register("wei tap cursor");
        ic_left_ = pool.take_register("ic left");
        t0_ = pool.take_register("scratch 0");
        t1_ = pool.take_register("scratch 1");
        col_ = pool.take_register("column stride (bytes)");
        oc4_ = pool.take_register("oc stride (bytes)");
        // Loop indices and the shape: registers while they last, then stack slots,
        // most used first: ow, oc offset, kh, kw and ih are read at every tap, oh
        // once per kh and per store. frame and preserve have one register fewer
        // than clobber (no rbp), so the last of these is the one they spill:
        // with ih last, mb1 ic2ih4oc64kh3ph1 at avx2 made 160 stack accesses a
        // call more than clobber, with oh last 74 (step mode counts them).
        for (auto* v : {&ow_, &oc_off_, &kh_, &kw_, &ih_, &oh_, &src_, &wei_, &dst_})
            *v = pool.take(role_of(v));
        for (size_t i = 0; i < shape_count; ++i) shape_[i] = pool.take(shape_names[i]);
    }

private:
    // The shape values, in ConvArgs order from ih.
    static constexpr size_t shape_count = 17;
    static constexpr const char* shape_names[shape_count] = {
        "ih", "iw", "ic",  "oc",  "ow",       "kh",     "kw",            "sh",         "sw",
        "ph", "pw", "dh1", "dw1", "oh_begin", "oh_end", "ow_block_begin", "ow_block_end"};
    enum Shape { IH, IW, IC, OC, OW, KH, KW, SH, SW, PH, PW, DH1, DW1, OH_BEGIN, OH_END, OW_BLOCK_BEGIN, OW_BLOCK_END };
    const Xbyak::Operand& shape(Shape s) const { return shape_[s].operand(); }

    std::string role_of(const GprValue* v) const {
        if (v == &oh_) return "oh";
        if (v == &ow_) return "ow";
        if (v == &oc_off_) return "oc offset";
        if (v == &kh_) return "kh";
        if (v == &kw_) return "kw";
        if (v == &ih_) return "ih";
        if (v == &src_) return "src";
        if (v == &wei_) return "wei";
        return "dst";
    }

    // Per pass of ur columns x nb vectors: accumulators, then weights, the broadcast, the tail mask.
    // A single column without a tail takes its weights from memory: no weight registers.
    static bool weights_in_memory(int ur, bool tail) { return ur == 1 && !tail; }
    static Vmm acc(int nb, int col, int v) { return Vmm(col * nb + v); }
    static Vmm wvec(int ur, int nb, int v) { return Vmm(ur * nb + v); }
    static Vmm bcast(int ur, int nb, bool tail) { return Vmm(ur * nb + (weights_in_memory(ur, tail) ? 0 : nb)); }
    static Vmm mask(int ur, int nb) { return Vmm(ur * nb + nb + 1); }

    // Column c of a block: base + c * stride, from `base` for 0..2 and `base3` (= base + 3 * stride) for 3..5.
    static Xbyak::RegExp column(const Reg64& base, const Reg64& base3, const Reg64& stride, int c) {
        const Reg64& b = c < 3 ? base : base3;
        const int k = c % 3;
        return k == 0 ? Xbyak::RegExp(b) : b + stride * k;
    }
    void set_base3(const Reg64& base3, const Reg64& base, const Reg64& stride) {
        this->lea(base3, this->ptr[base + stride * 2]);
        this->add(base3, stride);
    }

    void copy(const GprValue& to, const Xbyak::Operand& from) {  // value <- operand, through t0
        this->mov(t0_, from);
        this->mov(to.operand(), t0_);
    }
    void set_zero(const GprValue& v) { this->mov(v.operand(), 0); }

    // t0 = a * b - c + d * e (all operands): an input coordinate of a tap.
    void coordinate(const GprValue& out_index, Shape stride, Shape pad, const GprValue& tap, Shape dilation) {
        this->mov(t0_, out_index.operand());
        this->imul(t0_, shape(stride));
        this->sub(t0_, shape(pad));
        this->mov(t1_, tap.operand());
        this->imul(t1_, shape(dilation));
        this->add(t0_, t1_);
    }

    // The ic loop of one tap for columns [lo, hi) of a block of ur: one broadcast
    // per column, the weights into registers (reused by every column), or for a
    // single column FMA memory operands.
    void ic_loop(int ur, int nb, bool tail, int lo, int hi) {
        if (weights_in_memory(ur, tail)) {
            Label loop;
            const Vmm b = bcast(ur, nb, tail);
            this->mov(ic_left_, shape(IC));
            this->loop_head(loop);
            this->uni_broadcast(b, this->ptr[p_src_]);
            for (int v = 0; v < nb; ++v) this->vfmadd231ps(acc(nb, 0, v), b, this->ptr[p_wei_ + v * width * 4]);
            advance(lo, hi, 1);
            this->dec(ic_left_);
            this->jnz(loop, near);
            return;
        }
        // Two input channels an iteration (the second's weights a row of oc
        // further: oc4), then the odd one: the cursors' adds and the loop's
        // count and branch take 6 instructions per two channels where they
        // took 5 per channel, beside its 20 loads and FMAs (avx2, 6 columns).
        // avx2 mb1ic256ih56oc64kh1 on the Zen 4 guest, the old and this build
        // in turn, 7 processes each (ONEDNN_MAX_CPU_ISA=AVX2 ...
        // --vs=onednn,peak --max-ms-per-prb=800): min 0.92-1.10 ms -> 0.92-0.96,
        // lower in all 7 pairs (best 0.9234 -> 0.9154); avx512 (FMAs at the
        // 256-bit rate there) the same within 0.5% on the four perf shapes.
        Label pair_loop, pairs_done, done;
        this->mov(ic_left_, shape(IC));
        this->sub(ic_left_, 2);
        this->jl(pairs_done, near);
        this->loop_head(pair_loop);
        ic_step(ur, nb, tail, lo, hi, false);
        ic_step(ur, nb, tail, lo, hi, true);
        advance(lo, hi, 2);
        this->sub(ic_left_, 2);
        this->jge(pair_loop, near);
        this->L(pairs_done);
        this->test(ic_left_, 1);  // -1: one channel left; -2: none
        this->jz(done, near);
        ic_step(ur, nb, tail, lo, hi, false);
        advance(lo, hi, 1);
        this->L(done);
    }
    // One input channel, at the cursors or (`next`) one channel past them: the
    // weights into registers, then a broadcast per column and nb FMAs each.
    void ic_step(int ur, int nb, bool tail, int lo, int hi, bool next) {
        const Vmm b = bcast(ur, nb, tail);
        for (int v = 0; v < nb; ++v) {
            const auto w = next ? this->ptr[p_wei_ + oc4_ + v * width * 4] : this->ptr[p_wei_ + v * width * 4];
            if (tail && v == nb - 1) this->load_tail(wvec(ur, nb, v), w);
            else this->uni_load(wvec(ur, nb, v), w);
        }
        for (int c = lo; c < hi; ++c) {
            this->uni_broadcast(b, this->ptr[column(p_src_, p_src3_, col_, c) + (next ? 4 : 0)]);
            for (int v = 0; v < nb; ++v) this->vfmadd231ps(acc(nb, c, v), wvec(ur, nb, v), b);
        }
    }
    // The cursors `channels` input channels on.
    void advance(int lo, int hi, int channels) {
        if (lo < 3) this->add(p_src_, 4 * channels);
        if (hi > 3) this->add(p_src3_, 4 * channels);
        for (int i = 0; i < channels; ++i) this->add(p_wei_, oc4_);
    }

    // p_src = src + ((ih * IW + t0) * IC) * 4, p_wei = wei + (((kh * KW + kw) * IC) * OC + oc_off) * 4.
    void tap_pointers(int ur) {
        this->mov(p_src_, ih_.operand());
        this->imul(p_src_, shape(IW));
        this->add(p_src_, t0_);
        this->imul(p_src_, shape(IC));
        this->shl(p_src_, 2);
        this->add(p_src_, src_.operand());
        if (ur > 3) set_base3(p_src3_, p_src_, col_);
        this->mov(p_wei_, kh_.operand());
        this->imul(p_wei_, shape(KW));
        this->add(p_wei_, kw_.operand());
        this->imul(p_wei_, shape(IC));
        this->imul(p_wei_, shape(OC));
        this->add(p_wei_, oc_off_.operand());
        this->shl(p_wei_, 2);
        this->add(p_wei_, wei_.operand());
    }

    // The ic loops of one tap for a block of ur columns, t0 the input column of
    // its column 0: the columns whose input lies inside the image are [lo, hi),
    // with lo and ur - hi at most conv_border_columns (conv_set_blocks), found by
    // stepping t0 from the first column and ic_left (free until the ic loop) from
    // the last; an ic loop for each (lo, hi), then on to `next`. One ic loop for
    // all of them, with a column's broadcast address or accumulator chosen at run
    // time, would cost every interior block's inner loop.
    void block_tap(int ur, int nb, bool tail, const Label& next) {
        constexpr int border = static_cast<int>(conv_border_columns);
        Label lo_is[border + 1], loop_for[border + 1][border + 1];  // loop_for[lo][ur - hi]
        this->mov(ic_left_, shape(SW));
        this->imul(ic_left_, ic_left_, ur - 1);
        this->add(ic_left_, t0_);
        for (int lo = 0; lo < border; ++lo) {
            if (lo > 0) this->add(t0_, shape(SW));
            this->cmp(t0_, 0);
            this->jge(lo_is[lo], near);
        }
        for (int lo = border; lo >= 0; --lo) {
            this->L(lo_is[lo]);
            for (int cut = 0; cut < border; ++cut) {
                if (cut > 0) this->sub(ic_left_, shape(SW));
                this->cmp(ic_left_, shape(IW));
                this->jl(loop_for[lo][cut], near);
            }
            this->jmp(loop_for[lo][border], near);
        }
        for (int lo = 0; lo <= border; ++lo)
            for (int cut = 0; cut <= border; ++cut) {
                this->L(loop_for[lo][cut]);
                if (lo < ur - cut) ic_loop(ur, nb, tail, lo, ur - cut);
                this->jmp(next, near);
            }
    }

    // One pass over all taps for ur columns from ow x nb oc vectors at oc_off; `tail`:
    // the last vector is partial. Rows outside the image are skipped per tap; columns
    // too: a single column (ur 1) skips the tap, a block of columns (ur > 1), which
    // lies in [ow_block_begin, ow_block_end), runs it for the columns inside (block_tap).
    void pass(int ur, int nb, bool tail) {
        for (int c = 0; c < ur; ++c)
            for (int v = 0; v < nb; ++v) this->uni_zero(acc(nb, c, v));
        Label kh_loop, kh_next, kh_done, kw_loop, kw_next, kw_done;
        set_zero(kh_);
        this->loop_head(kh_loop);
        this->mov(t0_, kh_.operand());
        this->cmp(t0_, shape(KH));
        this->jge(kh_done, near);
        coordinate(oh_, SH, PH, kh_, DH1);
        this->cmp(t0_, 0);  // padding: taps outside the image contribute nothing
        this->jl(kh_next, near);
        this->cmp(t0_, shape(IH));
        this->jge(kh_next, near);
        this->mov(ih_.operand(), t0_);
        set_zero(kw_);
        this->loop_head(kw_loop);
        this->mov(t0_, kw_.operand());
        this->cmp(t0_, shape(KW));
        this->jge(kw_done, near);
        coordinate(ow_, SW, PW, kw_, DW1);
        if (ur == 1) {
            this->cmp(t0_, 0);
            this->jl(kw_next, near);
            this->cmp(t0_, shape(IW));
            this->jge(kw_next, near);
        }
        tap_pointers(ur);
        if (ur == 1) ic_loop(1, nb, tail, 0, 1);
        else block_tap(ur, nb, tail, kw_next);
        this->L(kw_next);
        this->inc(kw_.operand());
        this->jmp(kw_loop, near);
        this->L(kw_done);
        this->L(kh_next);
        this->inc(kh_.operand());
        this->jmp(kh_loop, near);
        this->L(kh_done);
        store(ur, nb, tail);
    }

    // dst + ((oh * OW + ow) * OC + oc_off) * 4, column c oc4 bytes further each.
    void store(int ur, int nb, bool tail) {
        this->mov(t0_, oh_.operand());
        this->imul(t0_, shape(OW));
        this->add(t0_, ow_.operand());
        this->imul(t0_, shape(OC));
        this->add(t0_, oc_off_.operand());
        this->shl(t0_, 2);
        this->add(t0_, dst_.operand());
        if (ur > 3) set_base3(t1_, t0_, oc4_);
        for (int c = 0; c < ur; ++c)
            for (int v = 0; v < nb; ++v) {
                const auto d = this->ptr[column(t0_, t1_, oc4_, c) + v * width * 4];
                if (tail && v == nb - 1) this->store_tail(d, acc(nb, c, v));
                else this->uni_store(d, acc(nb, c, v));
            }
    }

    // All oc of ur columns from ow: passes of the widest block that fits what is
    // left, then single vectors, then the tail. A block of columns takes NB
    // vectors; a single column 8, then 4 (at least 4 accumulator chains while
    // 4 vectors are left), then NB.
    void oc_loop(int ur) {
        std::vector<int> widths = ur == 1 ? std::vector{NB_SINGLE, 4} : std::vector{NB};
        if (widths.back() != NB) widths.push_back(NB);
        if (NB != 1) widths.push_back(1);
        Label loop, done;
        set_zero(oc_off_);
        this->loop_head(loop);  // t1 = oc left
        this->mov(t1_, shape(OC));
        this->sub(t1_, oc_off_.operand());
        for (int nb : widths) {
            Label narrower;
            this->cmp(t1_, nb * width);
            this->jl(narrower, near);
            pass(ur, nb, false);
            this->add(oc_off_.operand(), nb * width);
            this->jmp(loop, near);
            this->L(narrower);
        }
        this->test(t1_, t1_);
        this->jle(done, near);
        this->prepare_tail(t1_, mask(ur, 1));
        pass(ur, 1, true);
        this->L(done);
    }

    // One output row: single columns outside [ow_block_begin, ow_block_end) (where
    // the taps reach further into the padding than a block takes), and
    // blocks of columns inside it: UR columns while
    // 2 * UR or more are left, then the larger and the smaller half of what is
    // left (4+3 to 6+5 columns), or all of it when UR or fewer are left. Blocks
    // of 4 or more keep 8 independent FMAs (2 pipes x 4 cycles) at avx2. Moving
    // a last UR block left to end at ow_block_end instead recomputed up to
    // UR - 1 columns: 4 of 30 on a 28-column row.
    // Block by block, each block reads all the weights (64 KiB for
    // mb1ic256ih56oc64kh1, twice L1). Tried on 2026-12-06 and left: the blocks
    // of a row oc step by oc step, so that a step's weights stay in L1 across
    // the row. Zen 4 guest, avx2, 3 processes each, old and new in turn, min ms:
    // the 1x1 shape 0.923-0.926 -> 0.928-0.933 (0.98-0.99x oneDNN either way),
    // ih28 2.04-2.15 -> 1.97-2.10, sh2 2.16-2.38 -> 2.17-2.23, ic64 ih56 the
    // same (1.97-1.98); avx512 (4 vectors: one step at oc64) the same.
    void row() {
        Label loop, done;
        Label by_size[UR + 1];  // by_size[1] is also the single padded column
        set_zero(ow_);
        this->loop_head(loop);
        this->mov(t0_, ow_.operand());
        this->cmp(t0_, shape(OW));
        this->jge(done, near);
        this->cmp(t0_, shape(OW_BLOCK_BEGIN));
        this->jl(by_size[1], near);
        this->mov(t1_, shape(OW_BLOCK_END));
        this->sub(t1_, t0_);  // t1 = block columns left
        this->jle(by_size[1], near);
        this->cmp(t1_, 2 * UR);
        this->jge(by_size[UR], near);
        Label at_most_ur;
        this->cmp(t1_, UR);
        this->jle(at_most_ur, near);
        this->inc(t1_);
        this->shr(t1_, 1);
        this->L(at_most_ur);
        for (int size = 1; size < UR; ++size) {
            this->cmp(t1_, size);
            this->je(by_size[size], near);
        }
        for (int size = UR; size >= 1; --size) {
            this->L(by_size[size]);
            oc_loop(size);
            this->add(ow_.operand(), size);
            this->jmp(loop, near);
        }
        this->L(done);
    }

    void generate_body() override {
        const auto& p = this->abi_param;
        this->mov(t0_, this->ptr[p + offsetof(ConvArgs, src)]);
        this->mov(src_.operand(), t0_);
        this->mov(t0_, this->ptr[p + offsetof(ConvArgs, wei)]);
        this->mov(wei_.operand(), t0_);
        this->mov(t0_, this->ptr[p + offsetof(ConvArgs, dst)]);
        this->mov(dst_.operand(), t0_);
        for (size_t i = 0; i < shape_count; ++i) copy(shape_[i], this->ptr[p + offsetof(ConvArgs, ih) + 8 * i]);
        this->mov(oc4_, shape(OC));
        this->shl(oc4_, 2);
        this->mov(col_, shape(SW));
        this->imul(col_, shape(IC));
        this->shl(col_, 2);
        // The first register handed out (rbp under clobber) holds kernel data from
        // here on, as the prologue window assumes: the tap cursor starts at src.
        this->mov(p_src_, src_.operand());
        this->setup_done();

        Label oh_loop, oh_done;
        copy(oh_, shape(OH_BEGIN));
        this->loop_head(oh_loop);
        this->mov(t0_, oh_.operand());
        this->cmp(t0_, shape(OH_END));
        this->jge(oh_done, near);
        row();
        this->inc(oh_.operand());
        this->jmp(oh_loop, near);
        this->L(oh_done);
    }

    Reg64 p_src_, p_src3_, p_wei_, ic_left_, t0_, t1_, col_, oc4_;
    GprValue oh_, ow_, oc_off_, kh_, kw_, ih_, src_, wei_, dst_;
    GprValue shape_[shape_count];
};

}  // namespace

std::unique_ptr<Generator> make_conv_kernel(Isa isa, FramePolicy policy) {
    if (!conv_supports(isa)) throw std::invalid_argument(std::string("conv has no ") + to_string(isa) + " implementation");
    return make_for_isa<ConvKernel>(isa, policy);
}

}  // namespace benchfp::jit
