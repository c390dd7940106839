#include "jit/kernels/reduce.hpp"

#include "jit/enum_names.hpp"
#include "jit/vector_math.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace benchfp::jit {

using namespace Xbyak::util;

const char* to_string(ReduceAlg alg) {
    switch (alg) {
    case ReduceAlg::sum: return "sum";
    case ReduceAlg::max: return "max";
    case ReduceAlg::softmax: return "softmax";
    }
    return "?";
}

std::optional<ReduceAlg> parse_reduce_alg(std::string_view name) { return parse_name(name, all_reduce_algs); }

namespace {

template <typename Vmm>
class ReduceKernel final : public VectorMath<Vmm> {
    using Base = VectorMath<Vmm>;
    using Reduce = typename Base::Reduce;

public:
    ReduceKernel(ReduceAlg alg, FramePolicy policy, int64_t stream_floats)
        : Base(Base::kernel_name(std::string("reduce_") + to_string(alg), policy), policy),
          alg_(alg),
          stream_floats_(stream_floats),
          // In this order the loops are laid out alike under every policy
          // (tests/jit_policy_layout_test.cpp): len, a count, takes clobber's
          // rbp, the cursors (the loops' bases) the same kind of register
          // under every policy, and the dst row, the base of sum and max's
          // store per row, one that needs no REX prefix under any (with the
          // src row before it, r8 under preserve and frame: a byte longer).
          len_(this->pool().take_register("len")),
          p_src_(this->pool().take_register("src cursor")),
          p_dst_(this->pool().take_register("dst cursor")),
          dst_row_(this->pool().take_register("dst row")),
          src_row_(this->pool().take_register("src row")),
          rows_(this->pool().take("rows")),
          cols_(this->pool().take("cols")) {}

private:
    // Vector registers: scratch, broadcast, mask, fill, then U accumulators, U
    // values and, for softmax, U x 2 exp scratch.
    int unroll() const { return alg_ == ReduceAlg::softmax ? std::min(4, (Base::vreg_count - 4) / 4) : 4; }
    // avx512 sum and max have a second row loop, one vector a step into one
    // accumulator (the shape of oneDNN's reduction kernel), chosen per call:
    //   - for rows shorter than one unrolled step: the unrolled loop never runs
    //     there, and its accumulators only cost instructions (5x33: 8 a row);
    //   - for calls of at least stream_floats_ floats (stream_floats.hpp). Sum
    //     4096x4096, in-run ratio to oneDNN at avx512: unrolled 0.83-1.04 (6
    //     processes), one vector a step 0.99-1.12 (6); at 1024x4096
    //     (16 MiB) 0.97-1.01 against 1.05-1.07; 768x4096 (12 MiB) 1.01
    //     against 1.05-1.06; 512x4096 (8 MiB) 1.23-1.25 against 1.12-1.14.
    //     In cache the unrolled loop is faster (8x16384 sum: 4.5 against
    //     6.5 us: one accumulator waits on each add's latency).
    // avx2 showed no such gap (4096x4096 against oneDNN at avx2, four
    // processes each: 0.97-1.08 unrolled, 1.01-1.06 one vector a step), nor
    // sse41: one loop there.
    bool two_row_loops() const { return Base::is_avx512 && alg_ != ReduceAlg::softmax; }
    // The four fixed registers come first: on avx512 the horizontal steps need
    // registers below 16 (VEX-only extracts).
    Vmm scratch() const { return Vmm(0); }
    Vmm bcast() const { return Vmm(1); }
    Vmm mask() const { return Vmm(2); }
    static constexpr int fixed = 4;  // scratch, bcast, mask, fill
    Vmm acc(int i) const { return Vmm(fixed + i); }
    Vmm x(int i) const { return Vmm(fixed + unroll() + i); }
    std::vector<Vmm> xs(int n, int group) const {
        std::vector<Vmm> out;
        for (int i = 0; i < n; ++i) out.push_back(Vmm(fixed + group * unroll() + i));
        return out;
    }

    void combine(Reduce op, const Vmm& d, const Vmm& s) {
        if (op == Reduce::add) this->uni_add(d, d, s);
        else this->uni_max(d, d, s);
    }

    // acc(0) lane 0 = op over the row at src_row, `vectors` vectors a step.
    void reduce_row(Reduce op, int vectors) {
        for (int i = 0; i < vectors; ++i) {
            if (op == Reduce::add) this->uni_zero(acc(i));
            else this->uni_mov(acc(i), fill_);
        }
        this->mov(p_src_, src_row_);
        this->mov(len_, cols_.operand());
        this->stream_loop(
            len_, {p_src_}, vectors,
            [&](int n, bool tail) {
                for (int i = 0; i < n; ++i) {
                    const auto src = this->ptr[p_src_ + i * Base::vector_bytes];
                    if (tail) this->load_tail(x(i), src, op == Reduce::max ? &fill_ : nullptr);
                    else this->uni_load(x(i), src);
                }
                for (int i = 0; i < n; ++i) combine(op, acc(i), x(i));
            },
            mask());
        for (int i = 1; i < vectors; ++i) combine(op, acc(0), acc(i));
        this->horizontal(op, acc(0), scratch());
    }

    void softmax_row() {
        reduce_row(Reduce::max, unroll());
        this->broadcast_lane0(bcast(), acc(0));
        for (int i = 0; i < unroll(); ++i) this->uni_zero(acc(i));
        this->mov(p_src_, src_row_);
        this->mov(p_dst_, dst_row_);
        this->mov(len_, cols_.operand());
        this->stream_loop(
            len_, {p_src_, p_dst_}, unroll(),
            [&](int n, bool tail) {
                const auto v = xs(n, 1);
                for (int i = 0; i < n; ++i) {
                    const auto src = this->ptr[p_src_ + i * Base::vector_bytes];
                    if (tail) this->load_tail(v[i], src, &fill_);  // -inf: 2^64 e^-104 = 1e-26 beside a sum >= 2^64
                    else this->uni_load(v[i], src);
                }
                for (int i = 0; i < n; ++i) this->uni_sub(v[i], v[i], bcast());
                this->exp_times_2_64(v, xs(n, 2), xs(n, 3));  // the sum carries the same 2^64
                for (int i = 0; i < n; ++i) {
                    const auto dst = this->ptr[p_dst_ + i * Base::vector_bytes];
                    if (tail) this->store_tail(dst, v[i]);
                    else this->uni_store(dst, v[i]);
                }
                for (int i = 0; i < n; ++i) this->uni_add(acc(i), acc(i), v[i]);
            },
            mask());
        for (int i = 1; i < unroll(); ++i) this->uni_add(acc(0), acc(0), acc(i));
        this->horizontal(Reduce::add, acc(0), scratch());
        this->broadcast_lane0(bcast(), acc(0));
        this->uni_load(scratch(), this->cst(1.0f));
        this->uni_div(scratch(), scratch(), bcast());
        this->mov(p_dst_, dst_row_);
        this->mov(len_, cols_.operand());
        this->stream_loop(
            len_, {p_dst_}, unroll(),
            [&](int n, bool tail) {
                for (int i = 0; i < n; ++i) {
                    const auto dst = this->ptr[p_dst_ + i * Base::vector_bytes];
                    if (tail) this->load_tail(x(i), dst);
                    else this->uni_load(x(i), dst);
                    this->uni_mul(x(i), x(i), scratch());
                    if (tail) this->store_tail(dst, x(i));
                    else this->uni_store(dst, x(i));
                }
            },
            mask());
    }

    void generate_body() override {
        const auto& p = this->abi_param;
        this->mov(src_row_, this->ptr[p + offsetof(ReduceArgs, src)]);
        this->mov(dst_row_, this->ptr[p + offsetof(ReduceArgs, dst)]);
        this->mov(len_, this->ptr[p + offsetof(ReduceArgs, rows)]);
        this->store(rows_, len_);
        this->mov(len_, this->ptr[p + offsetof(ReduceArgs, cols)]);
        this->store(cols_, len_);
        this->setup_done();
        this->uni_load(fill_, this->cst(-std::numeric_limits<float>::infinity()));
        if (!two_row_loops()) return row_loop(unroll());

        this->unrolled_or_one_vector(
            unroll(),
            [&](Xbyak::Label& one_vector) {  // len_ holds cols here
                this->cmp(len_, unroll() * Base::width);
                this->jl(one_vector, Xbyak::CodeGenerator::T_NEAR);
                this->imul(len_, rows_.operand());
                this->cmp(len_, static_cast<uint32_t>(stream_floats_));  // <= INT32_MAX: sign-extends to itself
                this->jge(one_vector, Xbyak::CodeGenerator::T_NEAR);
            },
            [&](int vectors) { row_loop(vectors); });
    }

    // Every row, `vectors` vectors a step (softmax: its own unroll()).
    void row_loop(int vectors) {
        Xbyak::Label row, done;
        this->loop_head(row);
        this->cmp(rows_.operand(), 0);
        this->je(done, Xbyak::CodeGenerator::T_NEAR);
        if (alg_ == ReduceAlg::softmax) {
            softmax_row();
        } else {
            reduce_row(alg_ == ReduceAlg::sum ? Reduce::add : Reduce::max, vectors);
            this->store_lane0(this->ptr[dst_row_], acc(0));
        }
        // Next row: rows are contiguous, cols floats apart.
        this->mov(len_, cols_.operand());
        this->shl(len_, 2);
        this->add(src_row_, len_);
        if (alg_ == ReduceAlg::softmax) this->add(dst_row_, len_);
        else this->add(dst_row_, 4);
        this->dec(rows_.operand());
        this->jmp(row, Xbyak::CodeGenerator::T_NEAR);
        this->L(done);
    }

    ReduceAlg alg_;
    int64_t stream_floats_;
    const Vmm fill_ = Vmm(3);  // -inf: the identity of max
    Xbyak::Reg64 len_, p_src_, p_dst_, dst_row_, src_row_;
    GprValue rows_, cols_;
};

}  // namespace

std::unique_ptr<Generator> make_reduce_kernel(ReduceAlg alg, Isa isa, FramePolicy policy, int64_t stream_floats) {
    check_stream_floats(stream_floats);
    return make_for_isa<ReduceKernel>(isa, alg, policy, stream_floats);
}

}  // namespace benchfp::jit
