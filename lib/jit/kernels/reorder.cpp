#include "jit/kernels/reorder.hpp"

#include "jit/vector_generator.hpp"

#include <cstdint>
#include <utility>

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
        // The cursors first: every load and store of a block addresses through
        // them, and the first registers of every policy are legacy ones (rbp
        // in clobber, rax and rcx otherwise), not r8-r15. Taken fifth and sixth,
        // they were rsi and r8 in clobber and r8 and r9 in preserve and frame,
        // and avx2's streaming transpose by bands took 1.23-1.30x clobber's
        // time under preserve and frame (paired, AMD Zen 5 guest, 4096x4096),
        // with every other instruction the same but for its registers (the
        // tile code's placement and the stack frame's offset moved nothing);
        // taken first, the three policies read 0.994-1.001 [0.989, 1.010].
        // Why the cursors' registers mattered is not known; not the length of
        // the VEX prefix alone (r8 as clobber's dst cursor was fast, and rbp's
        // addresses take a displacement byte).
        ps_ = pool.take_register("src cursor");
        pd_ = pool.take_register("dst cursor");
        src_ = pool.take_register("src batch");
        dst_ = pool.take_register("dst batch");
        r_ = pool.take_register("r");
        c_ = pool.take_register("c");
        row_bytes_ = pool.take_register("src row bytes (cols * 4)");
        col_bytes_ = pool.take_register("dst row bytes (rows * 4)");
        if constexpr (Base::is_sse) scratch_ = pool.take_register("tile scratch (16 lines, 64-byte aligned)");
        // Innermost first: what runs per tile or block keeps a register when a
        // policy that gives up rbp leaves one fewer. Whole tiles and 4 x 4
        // blocks (chosen once per call, generate_body) never run in one call, so
        // the first two values serve one role in each: whole tiles read the
        // band's row end per tile and its first row per column of tiles, 4 x 4
        // blocks the tile's row end per block and its column end per column of
        // blocks; the edge loops after the blocks keep their ends there too. rows
        // and cols are not values: they are col_bytes / 4 and row_bytes / 4. So
        // at avx2 and avx512 every policy keeps every value in a register, and
        // at sse41 (the scratch area's pointer takes one) preserve and frame
        // spill the batches left, tested and decremented once a batch. When
        // each loop had values of its own, preserve and frame read the band's
        // first row (avx2) or the tile's column (sse41) from the stack per
        // tile: stepped nchw2nhwc 2x64x8x8, frame made 60 stack accesses a call
        // more than clobber at avx2 and 152 at sse41, now 2 and 6 (AMD EPYC
        // Zen 4 guest).
        row_end_ = pool.take("row end: the band's (whole tiles) or the tile's (4 x 4 blocks)");
        band_or_c_end_ = pool.take("the band's first row (whole tiles) or the tile's column end (4 x 4 blocks)");
        tile_r_ = pool.take("tile's first row (4 x 4 blocks)");
        tile_c_ = pool.take("tile's first column (4 x 4 blocks)");
        batch_ = pool.take("batch left");
        if constexpr (Base::is_sse) pool.reserve_scratch(scratch_bytes + 64);  // for whole_tile_sse
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
        const Xmm x0(0), x1(1), x2(2), x3(3);
        point_cursors();
        load_xmm(x0, this->ptr[ps_]);
        this->add(ps_, row_bytes_);
        load_xmm(x1, this->ptr[ps_]);
        this->add(ps_, row_bytes_);
        load_xmm(x2, this->ptr[ps_]);
        this->add(ps_, row_bytes_);
        load_xmm(x3, this->ptr[ps_]);
        transpose4();
        for (const Xmm& x : {x0, x1, x2, x3}) {
            store_xmm(this->ptr[pd_], x);
            this->add(pd_, col_bytes_);
        }
    }
    // xmm0..3 (4 rows of 4) become their transpose (4 columns), through xmm4..7.
    void transpose4() {
        const Xmm x0(0), x1(1), x2(2), x3(3), t0(4), t1(5), t2(6), t3(7);
        unpack(false, t0, x0, x1);  // a0 b0 a1 b1
        unpack(true, t1, x0, x1);   // a2 b2 a3 b3
        unpack(false, t2, x2, x3);  // c0 d0 c1 d1
        unpack(true, t3, x2, x3);   // c2 d2 c3 d3
        halves(false, x0, t0, t2);  // a0 b0 c0 d0
        halves(true, x1, t0, t2);
        halves(false, x2, t1, t3);
        halves(true, x3, t1, t3);
    }

    // sse41: the 16 x 16 tile at (r, c) through the scratch area, 16 lines of
    // 64 bytes on the stack. First its 16 4 x 4 blocks, band of 4 rows by band,
    // so each src line is read whole by 4 consecutive blocks, go transposed to
    // the scratch (line m: dst row c + m, rows r..r+15). Then each dst line is
    // stored whole from it, four 16-byte stores in a row: the write-combining
    // buffer of a streaming store fills before the next line's starts. (4 x 4
    // blocks stored straight to dst leave four lines a quarter filled at a time.)
    void whole_tile_sse(bool streaming) {
        point_cursors();
        for (int band = 0; band < 4; ++band) {
            this->lea(pd_, this->ptr[ps_ + row_bytes_ * 2]);  // the band's third row
            for (int cb = 0; cb < 4; ++cb) {
                load_xmm(Xmm(0), this->ptr[ps_ + 16 * cb]);
                load_xmm(Xmm(1), this->ptr[ps_ + row_bytes_ + 16 * cb]);
                load_xmm(Xmm(2), this->ptr[pd_ + 16 * cb]);
                load_xmm(Xmm(3), this->ptr[pd_ + row_bytes_ + 16 * cb]);
                transpose4();
                for (int i = 0; i < 4; ++i) this->movaps(this->ptr[scratch_ + 64 * (4 * cb + i) + 16 * band], Xmm(i));
            }
            if (band < 3) this->lea(ps_, this->ptr[ps_ + row_bytes_ * 4]);
        }
        point_cursors();
        for (int m = 0; m < 16; ++m) {
            for (int q = 0; q < 4; ++q) this->movaps(Xmm(q), this->ptr[scratch_ + 64 * m + 16 * q]);
            for (int q = 0; q < 4; ++q) {
                if (streaming) this->movntps(this->ptr[pd_ + 16 * q], Xmm(q));
                else this->movaps(this->ptr[pd_ + 16 * q], Xmm(q));
            }
            if (m < 15) this->add(pd_, col_bytes_);
        }
    }

    // avx512: the 16 x 16 tile at (r, c) in one piece. Each of its 16 src lines
    // is loaded once, whole, and each of its 16 dst lines stored once, whole: the
    // 4 x 4 blocks read every src line four times, and with a power-of-two row
    // pitch the 16 lines share one L1 set (8 ways), so those reads came from L2.
    // After interleave, two rounds of 128-bit lane shuffles gather column m's
    // four lanes into z[m].
    //
    // streaming: non-temporal stores, each a whole line (block16 runs only on
    // line-aligned rows), for calls past streaming_floats (see there).
    void block16(bool streaming) {
        using Xbyak::Zmm;
        load_rows<Zmm>(16);
        interleave<Zmm>(16);
        // vshuff32x4 d, a, b, imm: d's lanes 0, 1 are a's lanes imm[1:0], imm[3:2]
        // and its lanes 2, 3 b's lanes imm[5:4], imm[7:6].
        constexpr uint8_t lanes_01 = 0x44, lanes_23 = 0xee, evens = 0x88, odds = 0xdd;
        for (int j = 0; j < 4; ++j) {
            const Zmm a0(j), a1(4 + j), a2(8 + j), a3(12 + j);
            const Zmm b0(16 + 4 * j), b1(17 + 4 * j), b2(18 + 4 * j), b3(19 + 4 * j);
            this->vshuff32x4(b0, a0, a1, lanes_01);  // a0 L0 L1, a1 L0 L1
            this->vshuff32x4(b1, a0, a1, lanes_23);
            this->vshuff32x4(b2, a2, a3, lanes_01);
            this->vshuff32x4(b3, a2, a3, lanes_23);
            this->vshuff32x4(a0, b0, b2, evens);  // lane L = 0 of a0..a3: column j
            this->vshuff32x4(a1, b0, b2, odds);   // column 4 + j
            this->vshuff32x4(a2, b1, b3, evens);  // column 8 + j
            this->vshuff32x4(a3, b1, b3, odds);   // column 12 + j
        }
        store_rows<Zmm>(0, 16, streaming);
    }

    // avx2: the 8 x 8 block at (r, c) through ymm registers: after interleave,
    // vperm2f128 joins the two 128-bit halves of each column. Its dst rows are
    // half lines; whole_tile writes the other half right after.
    void block8(bool streaming) {
        using Xbyak::Ymm;
        load_rows<Ymm>(8);
        interleave<Ymm>(8);
        // y[j] lane L holds column 4L+j of rows 0..3, y[4+j] the same of rows 4..7.
        for (int j = 0; j < 4; ++j) {
            this->vperm2f128(Ymm(8 + j), Ymm(j), Ymm(4 + j), 0x20);   // lanes 0 of both: column j
            this->vperm2f128(Ymm(12 + j), Ymm(j), Ymm(4 + j), 0x31);  // lanes 1: column 4 + j
        }
        store_rows<Ymm>(8, 8, streaming);
    }

    // Registers 0..n-1 <- n rows of the block at (r, c), n consecutive floats each.
    template <typename R>
    void load_rows(int n) {
        point_cursors();
        for (int i = 0; i < n; ++i) {
            this->vmovups(R(i), this->ptr[ps_]);
            if (i < n - 1) this->add(ps_, row_bytes_);
        }
    }
    // 32-bit then 64-bit interleaves of rows 0..n-1 (through n..2n-1) leave a
    // transposed 4 x 4 block in every 128-bit lane: register 4k+j's lane L holds
    // column 4L+j of rows 4k..4k+3.
    template <typename R>
    void interleave(int n) {
        for (int i = 0; i < n; i += 2) {
            this->vunpcklps(R(n + i), R(i), R(i + 1));
            this->vunpckhps(R(n + i + 1), R(i), R(i + 1));
        }
        for (int k = 0; k < n; k += 4) {
            this->vunpcklpd(R(k), R(n + k), R(n + k + 2));
            this->vunpckhpd(R(k + 1), R(n + k), R(n + k + 2));
            this->vunpcklpd(R(k + 2), R(n + k + 1), R(n + k + 3));
            this->vunpckhpd(R(k + 3), R(n + k + 1), R(n + k + 3));
        }
    }
    // Registers first..first+n-1 to n dst rows from pd.
    template <typename R>
    void store_rows(int first, int n, bool streaming) {
        for (int m = 0; m < n; ++m) {
            if (streaming) this->vmovntps(this->ptr[pd_], R(first + m));
            else this->vmovups(this->ptr[pd_], R(first + m));
            if (m < n - 1) this->add(pd_, col_bytes_);
        }
    }

    // The 16 x 16 tile at (r, c), r and c its first row and column: one block16
    // (avx512) or four block8 (avx2): rows r and r + 8 one after the other, so
    // each dst line's two halves are stored one block apart (8 stores between),
    // and each src line is read in two halves, for columns c and c + 8; sse41
    // through the scratch area (whole_tile_sse).
    void whole_tile(bool streaming) {
        if constexpr (Base::is_sse) {
            whole_tile_sse(streaming);
        } else if constexpr (Base::is_avx512) {
            block16(streaming);
        } else {
            for (int half = 0; half < 2; ++half) {
                if (half == 1) this->add(c_, 8);
                block8(streaming);
                this->add(r_, 8);
                block8(streaming);
                this->sub(r_, 8);
            }
            this->sub(c_, 8);  // r_ and c_ as they were: whole_tiles' loops step them
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
    // The two ends are kept in the tile loops' first two values (free here).
    template <typename Body>
    void loops(int r_step, int c_step, bool r_from_block_end, bool c_from_block_end, bool c_to_block_end,
               Body body) {
        const GprValue& r_end = row_end_;
        const GprValue& c_end = band_or_c_end_;
        Label r_loop, r_done, c_loop, c_done;
        floats(ps_, col_bytes_, false);
        this->store(r_end, ps_);
        floats(ps_, row_bytes_, c_to_block_end);
        this->store(c_end, ps_);
        start(r_, col_bytes_, r_from_block_end);
        this->loop_head(r_loop);
        this->lea(ps_, this->ptr[r_ + r_step]);
        this->cmp(ps_, r_end.operand());
        this->jg(r_done, near);
        start(c_, row_bytes_, c_from_block_end);
        this->loop_head(c_loop);
        this->lea(ps_, this->ptr[c_ + c_step]);
        this->cmp(ps_, c_end.operand());
        this->jg(c_done, near);
        body();
        this->add(c_, c_step);
        this->jmp(c_loop, near);
        this->L(c_done);
        this->add(r_, r_step);
        this->jmp(r_loop, near);
        this->L(r_done);
    }
    // to = bytes / 4 (rows from col_bytes, cols from row_bytes), rounded down to 4 if round.
    void floats(const Xbyak::Reg64& to, const Xbyak::Reg64& bytes, bool round) {
        this->mov(to, bytes);
        this->shr(to, 2);
        if (round) this->and_(to, ~int64_t{3});
    }
    // index = 0, or the first index past the 4 x 4 blocks (n rounded down to 4, n = bytes / 4).
    void start(const Xbyak::Reg64& index, const Xbyak::Reg64& bytes, bool from_block_end) {
        if (from_block_end) floats(index, bytes, true);
        else this->xor_(index, index);
    }

    // Whole tiles (every row starts a line: rows and cols are multiples of 16)
    // go by bands: band by band, in a band column of tiles by column, down the
    // column tile by tile, r_ and c_ the tile's first row and column. Cached
    // calls take bands of one tile's rows, the plain row-by-row order (see
    // below). Streaming calls take bands of streaming_band_rows: each column of
    // a band then writes 512 consecutive floats (2 KiB) of 16 dst rows, where a
    // row of tiles wrote 64 bytes of each of 16 rows and moved 16 rows down.
    // AMD Zen 5 guest, transpose 4096x4096:
    // 0.31-0.34 of copy's bandwidth by rows of tiles (12.0-13.4 ms, the same with
    // cached stores and with 2 MiB pages: not the TLB), by bands of 64 rows
    // 0.50-0.66, 256 0.55-0.76, 512 0.67-0.78, 1024 0.47-0.67. Cached calls keep
    // rows of tiles: nchw2nhwc 8x64x56x56 (L3-resident) at sse41 took 0.25-0.27
    // ms by bands of its 64 rows, 0.21 by rows of tiles. avx2 by bands made its
    // policies differ (frame and preserve 1.23-1.30x clobber) until the cursors
    // got the first registers (see the constructor).
    //
    // The band's row end is the only value read per tile.
    void whole_tiles(bool streaming) {
        const int band_rows = streaming ? streaming_band_rows : tile_rows;
        const GprValue& band_end = row_end_;
        const GprValue& band_first = band_or_c_end_;
        Label bands, bands_done, columns, columns_done, down, down_done;
        this->mov(band_first.operand(), 0);
        this->loop_head(bands);
        next_end(band_end, band_first, col_bytes_, false, band_rows, bands_done);
        this->xor_(c_, c_);
        this->loop_head(columns);
        this->lea(ps_, this->ptr[c_ * 4]);
        this->cmp(ps_, row_bytes_);
        this->jge(columns_done, near);
        this->mov(r_, band_first.operand());
        // The tile's code starts a 64-byte line under every policy, as loop
        // heads do (Generator::loop_head).
        this->loop_head(down);
        this->cmp(r_, band_end.operand());
        this->jge(down_done, near);
        whole_tile(streaming);
        this->add(r_, tile_rows);
        this->jmp(down, near);
        this->L(down_done);
        this->add(c_, tile_cols);
        this->jmp(columns, near);
        this->L(columns_done);
        this->add(band_first.operand(), band_rows);
        this->jmp(bands, near);
        this->L(bands_done);
    }

    // The 4 x 4 blocks by tiles of tile_rows x tile_cols: inside a tile, columns
    // outer and rows inner, so consecutive blocks fill the same 4 dst rows and each
    // dst cache line is written whole (tile_rows floats = 64 bytes) before the next;
    // the tile's src lines (tile_rows rows x tile_cols columns) stay in L1 meanwhile
    // unless a power-of-two pitch puts all 16 in one set (see block16).
    //
    // The 4 x 4 blocks store cached only. Non-temporal 16-byte stores (one line
    // filled across four blocks) took transpose 4096x4096 from 0.28 to 0.69 of
    // copy's bandwidth, but made its policies differ by 3-4% in paired runs
    // (clobber fastest, in either order; frame/clobber [1.0305, 1.0519] at avx2):
    // the write-combining buffers react to the code around them, which a
    // frame-cost gate cannot tell from a frame cost. The cached path shows none
    // (2000x2000: 1.0009 [0.9961, 1.0099]). whole_tile's stores fill each line in
    // one store (avx512) or two one block apart (avx2), and stream without a
    // split of that size (4096x4096 and 4096x2048, frame and preserve over
    // clobber: 1.000-1.004 at avx512, 0.990-1.024 at avx2, both ends seen in
    // different processes of unchanged code). sse41's (whole_tile_sse) fill each
    // line in four stores in a row: 4096x4096 at 0.57-0.64 of copy's bandwidth,
    // frame / clobber 1.0031 [0.9986, 1.0079], preserve / clobber 1.0070
    // [0.9981, 1.0215] (AMD Zen 4 guest).
    //
    // The tiles go row of tiles by row of tiles.
    void tiled_blocks() {
        const GprValue& tile_r_end = row_end_;
        const GprValue& tile_c_end = band_or_c_end_;
        Label rows, rows_done, columns, columns_done, c_loop, c_done, r_loop, r_done;
        this->mov(tile_r_.operand(), 0);
        this->loop_head(rows);
        next_end(tile_r_end, tile_r_, col_bytes_, true, tile_rows, rows_done);
        this->mov(tile_c_.operand(), 0);
        this->loop_head(columns);
        next_end(tile_c_end, tile_c_, row_bytes_, true, tile_cols, columns_done);
        // The tile: columns of blocks outer, rows inner.
        this->mov(c_, tile_c_.operand());
        this->loop_head(c_loop);
        this->cmp(c_, tile_c_end.operand());
        this->jge(c_done, near);
        this->mov(r_, tile_r_.operand());
        this->loop_head(r_loop);
        this->cmp(r_, tile_r_end.operand());
        this->jge(r_done, near);
        block();
        this->add(r_, 4);
        this->jmp(r_loop, near);
        this->L(r_done);
        this->add(c_, 4);
        this->jmp(c_loop, near);
        this->L(c_done);
        this->add(tile_c_.operand(), tile_cols);
        this->jmp(columns, near);
        this->L(columns_done);
        this->add(tile_r_.operand(), tile_rows);
        this->jmp(rows, near);
        this->L(rows_done);
    }
    // The head of a loop over bands or tiles: n = bytes / 4 (rounded down to 4
    // if round); to `done` once first >= n, else end = min(first + step, n).
    // Tested before it is clamped, so the last pass computes no end.
    void next_end(const GprValue& end, const GprValue& first, const Xbyak::Reg64& bytes, bool round, int step,
                  Label& done) {
        floats(ps_, bytes, round);
        this->cmp(ps_, first.operand());
        this->jle(done, near);
        this->mov(pd_, first.operand());
        this->add(pd_, step);
        this->cmp(pd_, ps_);
        this->cmovg(pd_, ps_);
        this->store(end, pd_);
    }
    // while (batch-- > 0) { body; src and dst advance by rows * cols floats }
    template <typename Body>
    void batches(Body body) {
        Label loop, done;
        this->loop_head(loop);
        this->cmp(batch_.operand(), 0);
        this->je(done, near);
        body();
        floats(ps_, col_bytes_, false);
        this->imul(ps_, row_bytes_);
        this->add(src_, ps_);
        this->add(dst_, ps_);
        this->dec(batch_.operand());
        this->jmp(loop, near);
        this->L(done);
    }

    void generate_body() override {
        const auto& p = this->abi_param;
        this->mov(src_, this->ptr[p + offsetof(ReorderArgs, src)]);
        this->mov(dst_, this->ptr[p + offsetof(ReorderArgs, dst)]);
        this->mov(ps_, this->ptr[p + offsetof(ReorderArgs, batch)]);
        this->store(batch_, ps_);
        this->mov(ps_, this->ptr[p + offsetof(ReorderArgs, rows)]);
        this->lea(col_bytes_, this->ptr[ps_ * 4]);
        this->mov(ps_, this->ptr[p + offsetof(ReorderArgs, cols)]);
        this->lea(row_bytes_, this->ptr[ps_ * 4]);
        this->imul(ps_, this->ptr[p + offsetof(ReorderArgs, rows)]);
        this->imul(ps_, this->ptr[p + offsetof(ReorderArgs, batch)]);
        if constexpr (Base::is_sse) {  // the scratch area's first 64-byte line
            this->lea(scratch_, this->ptr[Xbyak::util::rsp + this->pool().scratch_offset() + 63]);
            this->and_(scratch_, ~int64_t{63});
        }
        this->setup_done();

        // How every tile of the call is computed, chosen once: whole tiles
        // where every row starts a cache line, streaming past streaming_floats;
        // else 4 x 4 blocks. Line-aligned rows hold for every tile of a call or
        // for none, and make every tile whole: cols (row_bytes / 4) and rows
        // (col_bytes / 4) are then multiples of 16, so there are no columns or
        // rows past the tiles, and batches start rows * row_bytes apart.
        // Unaligned rows keep the blocks: a vector access across two lines costs
        // more than whole tiles save (avx512, cached stores: transpose 4100x4100
        // 15.7 ms by whole tiles, 14.2 by blocks; 4096x4096 9.6 and 20.7). Each
        // way has a batch loop of its own, so nothing per batch reads the choice
        // (a value of its own, it took a stack slot under every policy). ps_
        // holds the call's floats (batch x rows x cols).
        static_assert(tile_rows == 16 && tile_cols == 16, "whole_tile takes a whole tile");
        Label blocks, streaming, done;
        this->mov(pd_, src_);
        for (const auto& r : {dst_, row_bytes_, col_bytes_}) this->or_(pd_, r);
        this->test(pd_, 63);
        this->jnz(blocks, near);
        this->cmp(ps_, streaming_floats);
        this->jae(streaming, near);
        batches([&] { whole_tiles(false); });
        this->jmp(done, near);
        this->L(streaming);
        batches([&] { whole_tiles(true); });
        this->jmp(done, near);
        this->L(blocks);
        batches([&] {
            tiled_blocks();
            loops(1, 1, false, true, false, [&] { element(); });  // the columns right of the blocks, every row
            loops(1, 1, true, false, true, [&] { element(); });   // the rows below the blocks, block columns
        });
        this->L(done);
        this->sfence();  // order the streaming stores before the return
    }

    static constexpr int tile_rows = 16, tile_cols = 16;
    // Streaming calls take their tiles by bands of this many rows, each band
    // column of tiles by column of tiles; the others by bands of one tile's rows
    // (row of tiles by row of tiles). See whole_tiles.
    static constexpr int streaming_band_rows = 512;
    static constexpr int scratch_bytes = tile_rows * tile_cols * 4;
    // Calls of at least this many floats (16 MiB each way; with --threads, a
    // thread's share of the batches is a call) store past the caches: transpose
    // 4096x4096 (64 MiB) took 6.1 ms with non-temporal stores and 9.6 ms with
    // cached ones, nchw2nhwc 8x64x56x56 (6.4 MB, which the 32 MiB L3 holds
    // between calls) 0.235 ms and 0.158 ms (avx512, AMD EPYC Zen 4).
    static constexpr int32_t streaming_floats = 4 << 20;
    Xbyak::Reg64 src_, dst_, r_, c_, ps_, pd_, row_bytes_, col_bytes_, scratch_;
    GprValue row_end_, band_or_c_end_, tile_r_, tile_c_, batch_;
};

}  // namespace

std::unique_ptr<Generator> make_reorder_kernel(Isa isa, FramePolicy policy) {
    return make_for_isa<ReorderKernel>(isa, policy);
}

}  // namespace benchfp::jit
