#include "jit/kernels/reorder.hpp"

#include "jit/vector_generator.hpp"

namespace benchfp::jit {

using namespace Xbyak::util;

namespace {

template <typename Vmm>
class ReorderKernel final : public VectorGenerator<Vmm> {
    using Base = VectorGenerator<Vmm>;
    using Label = Xbyak::Label;
    using Xmm = Xbyak::Xmm;
    static constexpr auto near = Xbyak::CodeGenerator::T_NEAR;

public:
    explicit ReorderKernel(FramePolicy policy)
        : Base(Base::kernel_name("reorder", policy), policy) {
        auto& pool = this->pool();
        src_ = pool.take_register("src batch");
        dst_ = pool.take_register("dst batch");
        r_ = pool.take_register("r");
        c_ = pool.take_register("c");
        ps_ = pool.take_register("src cursor");
        pd_ = pool.take_register("dst cursor");
        row_bytes_ = pool.take_register("src row bytes (cols * 4)");
        col_bytes_ = pool.take_register("dst row bytes (rows * 4)");
        // Innermost first: what runs per block keeps a register when a policy
        // that gives up rbp leaves one fewer, and the stack slots go to values
        // read once per tile or per batch.
        tile_r_end_ = pool.take("tile's row end");
        tile_c_end_ = pool.take("tile's column end");
        tile_r_ = pool.take("tile's first row");
        tile_c_ = pool.take("tile's first column");
        rows_ = pool.take("rows");
        cols_ = pool.take("cols");
        batch_ = pool.take("batch left");
    }

private:
    // 128-bit steps in the encoding of the ISA.
    void load_xmm(const Xmm& x, const Xbyak::Address& a) { Base::is_sse ? this->movups(x, a) : this->vmovups(x, a); }
    void store_xmm(const Xbyak::Address& a, const Xmm& x) { Base::is_sse ? this->movups(a, x) : this->vmovups(a, x); }
    void unpack(bool high, const Xmm& d, const Xmm& a, const Xmm& b) {
        if (Base::is_sse) {
            if (d.getIdx() != a.getIdx()) this->movaps(d, a);
            high ? this->unpckhps(d, b) : this->unpcklps(d, b);
        } else {
            high ? this->vunpckhps(d, a, b) : this->vunpcklps(d, a, b);
        }
    }
    // d = a.lo64 : b.lo64 (high false) or a.hi64 : b.hi64 (high true)
    void halves(bool high, const Xmm& d, const Xmm& a, const Xmm& b) {
        if (Base::is_sse) {
            if (d.getIdx() != a.getIdx()) this->movaps(d, a);
            high ? this->unpckhpd(d, b) : this->unpcklpd(d, b);
        } else {
            high ? this->vunpckhpd(d, a, b) : this->vunpcklpd(d, a, b);
        }
    }
    // ps = src + (r*cols + c)*4 and pd = dst + (c*rows + r)*4: element (r, c) and its place.
    void point_cursors() {
        this->mov(ps_, r_);
        this->imul(ps_, row_bytes_);
        this->lea(ps_, this->ptr[ps_ + c_ * 4]);
        this->add(ps_, src_);
        this->mov(pd_, c_);
        this->imul(pd_, col_bytes_);
        this->lea(pd_, this->ptr[pd_ + r_ * 4]);
        this->add(pd_, dst_);
    }

    // The 4 x 4 block at (r, c) of the current batch.
    void block() {
        const Xmm x0(0), x1(1), x2(2), x3(3), t0(4), t1(5), t2(6), t3(7);
        point_cursors();
        load_xmm(x0, this->ptr[ps_]);
        this->add(ps_, row_bytes_);
        load_xmm(x1, this->ptr[ps_]);
        this->add(ps_, row_bytes_);
        load_xmm(x2, this->ptr[ps_]);
        this->add(ps_, row_bytes_);
        load_xmm(x3, this->ptr[ps_]);
        unpack(false, t0, x0, x1);  // a0 b0 a1 b1
        unpack(true, t1, x0, x1);   // a2 b2 a3 b3
        unpack(false, t2, x2, x3);  // c0 d0 c1 d1
        unpack(true, t3, x2, x3);   // c2 d2 c3 d3
        halves(false, x0, t0, t2);  // a0 b0 c0 d0
        halves(true, x1, t0, t2);
        halves(false, x2, t1, t3);
        halves(true, x3, t1, t3);
        for (const Xmm& x : {x0, x1, x2, x3}) {
            store_xmm(this->ptr[pd_], x);
            this->add(pd_, col_bytes_);
        }
    }

    // dst[c][r] = src[r][c] for one element (the value passes through ps).
    void element() {
        point_cursors();
        this->mov(ps_.cvt32(), this->ptr[ps_]);
        this->mov(this->ptr[pd_], ps_.cvt32());
    }

    // for (r = r0; r + r_step <= rows; r += r_step) for (c = c0; c + c_step <= c_end; c += c_step) body,
    // where r0, c0 are 0 or the end of the 4 x 4 blocks, and c_end is cols or the end of the blocks.
    template <typename Body>
    void loops(int r_step, int c_step, bool r_from_block_end, bool c_from_block_end, bool c_to_block_end,
               Body body) {
        Label r_loop, r_done, c_loop, c_done;
        start(r_, rows_, r_from_block_end);
        this->loop_head(r_loop);
        this->lea(ps_, this->ptr[r_ + r_step]);
        this->cmp(ps_, rows_.operand());
        this->jg(r_done, near);
        start(c_, cols_, c_from_block_end);
        this->loop_head(c_loop);
        this->lea(ps_, this->ptr[c_ + c_step]);
        this->mov(pd_, cols_.operand());
        if (c_to_block_end) this->and_(pd_, ~int64_t{3});
        this->cmp(ps_, pd_);
        this->jg(c_done, near);
        body();
        this->add(c_, c_step);
        this->jmp(c_loop, near);
        this->L(c_done);
        this->add(r_, r_step);
        this->jmp(r_loop, near);
        this->L(r_done);
    }
    // The 4 x 4 blocks by tiles of tile_rows x tile_cols: inside a tile, columns
    // outer and rows inner, so consecutive blocks fill the same 4 dst rows and each
    // dst cache line is written whole (tile_rows floats = 64 bytes) before the next;
    // the tile's src lines (tile_rows rows x tile_cols columns) stay in L1 meanwhile.
    //
    // Cached stores only. Non-temporal 16-byte stores (one line filled across
    // four blocks) took transpose 4096x4096 from 0.28 to 0.69 of copy's
    // bandwidth, but made its policies differ by 3-4% in paired runs (clobber
    // fastest, in either order; frame/clobber [1.0305, 1.0519] at avx2): the
    // write-combining buffers react to the code around them, which a frame-cost
    // gate cannot tell from a frame cost. The cached path shows none (2000x2000:
    // 1.0009 [0.9961, 1.0099]). Streaming returns once its stores write whole lines.
    void tiled_blocks() {
        Label r_tiles, r_tiles_done, c_tiles, c_tiles_done;
        this->mov(tile_r_.operand(), 0);
        this->loop_head(r_tiles);
        clamp_tile_end(tile_r_end_, tile_r_, rows_, tile_rows);
        this->cmp(ps_, tile_r_.operand());
        this->jle(r_tiles_done, near);
        this->mov(tile_c_.operand(), 0);
        this->loop_head(c_tiles);
        clamp_tile_end(tile_c_end_, tile_c_, cols_, tile_cols);
        this->cmp(ps_, tile_c_.operand());
        this->jle(c_tiles_done, near);
        tile_loops();
        this->add(tile_c_.operand(), tile_cols);
        this->jmp(c_tiles, near);
        this->L(c_tiles_done);
        this->add(tile_r_.operand(), tile_rows);
        this->jmp(r_tiles, near);
        this->L(r_tiles_done);
    }
    // end = min(first + step, n rounded down to 4), left in ps_ too.
    void clamp_tile_end(const GprValue& end, const GprValue& first, const GprValue& n, int step) {
        this->mov(pd_, n.operand());
        this->and_(pd_, ~int64_t{3});
        this->mov(ps_, first.operand());
        this->add(ps_, step);
        this->cmp(ps_, pd_);
        this->cmovg(ps_, pd_);
        this->store(end, ps_);
    }
    void tile_loops() {
        Label c_loop, c_done, r_loop, r_done;
        this->mov(c_, tile_c_.operand());
        this->loop_head(c_loop);
        this->cmp(c_, tile_c_end_.operand());
        this->jge(c_done, near);
        this->mov(r_, tile_r_.operand());
        this->loop_head(r_loop);
        this->cmp(r_, tile_r_end_.operand());
        this->jge(r_done, near);
        block();
        this->add(r_, 4);
        this->jmp(r_loop, near);
        this->L(r_done);
        this->add(c_, 4);
        this->jmp(c_loop, near);
        this->L(c_done);
    }
    // index = 0, or the first index past the 4 x 4 blocks (n rounded down to 4).
    void start(const Xbyak::Reg64& index, const GprValue& n, bool from_block_end) {
        if (!from_block_end) {
            this->xor_(index, index);
            return;
        }
        this->mov(index, n.operand());
        this->and_(index, ~int64_t{3});
    }

    void generate_body() override {
        const auto& p = this->abi_param;
        this->mov(src_, this->ptr[p + offsetof(ReorderArgs, src)]);
        this->mov(dst_, this->ptr[p + offsetof(ReorderArgs, dst)]);
        this->mov(ps_, this->ptr[p + offsetof(ReorderArgs, batch)]);
        this->store(batch_, ps_);
        this->mov(ps_, this->ptr[p + offsetof(ReorderArgs, rows)]);
        this->store(rows_, ps_);
        this->lea(col_bytes_, this->ptr[ps_ * 4]);
        this->mov(ps_, this->ptr[p + offsetof(ReorderArgs, cols)]);
        this->store(cols_, ps_);
        this->lea(row_bytes_, this->ptr[ps_ * 4]);
        this->setup_done();

        Label batch_loop, done;
        this->loop_head(batch_loop);
        this->cmp(batch_.operand(), 0);
        this->je(done, near);
        tiled_blocks();
        loops(1, 1, false, true, false, [&] { element(); });  // the columns right of the blocks, every row
        loops(1, 1, true, false, true, [&] { element(); });   // the rows below the blocks, block columns
        // next batch: src and dst advance by rows * cols floats
        this->mov(ps_, rows_.operand());
        this->imul(ps_, row_bytes_);
        this->add(src_, ps_);
        this->add(dst_, ps_);
        this->dec(batch_.operand());
        this->jmp(batch_loop, near);
        this->L(done);
    }

    static constexpr int tile_rows = 16, tile_cols = 16;
    Xbyak::Reg64 src_, dst_, r_, c_, ps_, pd_, row_bytes_, col_bytes_;
    GprValue batch_, rows_, cols_, tile_r_, tile_c_, tile_r_end_, tile_c_end_;
};

}  // namespace

std::unique_ptr<Generator> make_reorder_kernel(Isa isa, FramePolicy policy) {
    return make_for_isa<ReorderKernel>(isa, policy);
}

}  // namespace benchfp::jit
