#include "jit/kernels/eltwise.hpp"

#include "jit/enum_names.hpp"
#include "jit/vector_math.hpp"

#include <cmath>
#include <limits>
#include <vector>

namespace benchfp::jit {

using namespace Xbyak::util;

const char* to_string(EltwiseAlg alg) {
    switch (alg) {
    case EltwiseAlg::relu: return "relu";
    case EltwiseAlg::exp: return "exp";
    case EltwiseAlg::gelu_tanh: return "gelu_tanh";
    case EltwiseAlg::tanh: return "tanh";
    }
    return "?";
}

std::optional<EltwiseAlg> parse_eltwise_alg(std::string_view name) { return parse_name(name, all_eltwise_algs); }

namespace {

template <typename Vmm>
class EltwiseKernel final : public VectorMath<Vmm> {
    using Base = VectorMath<Vmm>;
    using Base::width;

public:
    EltwiseKernel(EltwiseAlg alg, FramePolicy policy, int64_t stream_floats)
        : Base(Base::kernel_name(std::string("eltwise_") + to_string(alg), policy), policy),
          alg_(alg),
          stream_floats_(stream_floats),
          // len first: under clobber the pool's first register is rbp, and
          // as the loads' base ([rbp] takes a displacement byte that [rax]
          // does not) it made clobber's loop a byte longer than the other
          // policies' from its first load on, so every instruction after it
          // sat elsewhere in its cache lines: exp avx2 65536 read frame and
          // preserve 0.4-0.8% slower than clobber in 3 of 3 processes on the
          // Zen 4 guest (README, frame cost). A count has no such encoding
          // (tests/jit_policy_layout_test.cpp).
          reg_len_(this->pool().take_register("len")),
          reg_src_(this->pool().take_register("src")),
          reg_dst_(this->pool().take_register("dst")) {}

private:
    int registers_per_vector() const {
        switch (alg_) {
        case EltwiseAlg::relu: return 1;
        case EltwiseAlg::exp: return Base::exp_registers;
        case EltwiseAlg::tanh: return Base::tanh_registers;
        case EltwiseAlg::gelu_tanh: return Base::gelu_registers;
        }
        return 1;
    }
    // Up to 4 vectors in flight, as many as the vector registers allow with two
    // kept aside (zero for relu, the tail mask).
    int unroll() const { return std::min(4, (Base::vreg_count - 2) / registers_per_vector()); }
    std::vector<Vmm> group(int which, int n) const {
        std::vector<Vmm> regs;
        for (int i = 0; i < n; ++i) regs.push_back(Vmm(which * unroll() + i));
        return regs;
    }
    Vmm zero() const { return Vmm(Base::vreg_count - 1); }
    Vmm tail_mask() const { return Vmm(Base::vreg_count - 2); }

    void compute(int n) {
        const auto x = group(0, n);
        switch (alg_) {
        case EltwiseAlg::relu:
            for (const Vmm& v : x) this->uni_max(v, v, zero());
            break;
        case EltwiseAlg::exp: this->exp(x, group(1, n), group(2, n)); break;
        case EltwiseAlg::tanh: this->tanh(x, group(1, n), group(2, n)); break;
        case EltwiseAlg::gelu_tanh: this->gelu_tanh(x, group(1, n), group(2, n), group(3, n)); break;
        }
    }

    void generate_body() override {
        this->mov(reg_src_, this->ptr[this->abi_param + offsetof(EltwiseArgs, src)]);
        this->mov(reg_dst_, this->ptr[this->abi_param + offsetof(EltwiseArgs, dst)]);
        this->mov(reg_len_, this->ptr[this->abi_param + offsetof(EltwiseArgs, len)]);
        this->setup_done();
        if (alg_ == EltwiseAlg::relu) this->uni_zero(zero());
        if (!two_loops()) return loop(unroll());
        this->unrolled_or_one_vector(
            unroll(),
            [&](Xbyak::Label& one_vector) {
                this->cmp(reg_len_, static_cast<uint32_t>(stream_floats_));  // <= INT32_MAX: sign-extends to itself
                this->jge(one_vector, Xbyak::CodeGenerator::T_NEAR);
            },
            [&](int vectors) { loop(vectors); });
    }

    // relu at avx2 and avx512 has a second loop, one vector a step, for calls
    // of at least stream_floats_ elements (stream_floats.hpp). relu 16777216
    // (64 MiB), in-run ratio to oneDNN at avx512 on the Zen 4 guest: avx512
    // 0.82-0.93 unrolled (3 processes), 1.00-1.07 one vector a step (4); avx2
    // 0.85-1.01 and 1.05-1.16. At 65536 (in L2) and 1048576-2097152 (4-8 MiB)
    // the two were alike. sse41 (1.01-1.14 either way), and exp, tanh and gelu_tanh,
    // which compute more than they read: one loop.
    bool two_loops() const { return alg_ == EltwiseAlg::relu && !Base::is_sse; }

    // Every element, `vectors` vectors a step.
    void loop(int vectors) {
        this->stream_loop(
            reg_len_, {reg_src_, reg_dst_}, vectors,
            [&](int n, bool tail) {
                const auto x = group(0, n);
                for (int i = 0; i < n; ++i) {
                    const auto src = this->ptr[reg_src_ + i * Base::vector_bytes];
                    if (tail) this->load_tail(x[i], src);
                    else this->uni_load(x[i], src);
                }
                compute(n);
                for (int i = 0; i < n; ++i) {
                    const auto dst = this->ptr[reg_dst_ + i * Base::vector_bytes];
                    if (tail) this->store_tail(dst, x[i]);
                    else this->uni_store(dst, x[i]);
                }
            },
            tail_mask());
    }

    EltwiseAlg alg_;
    int64_t stream_floats_;
    Xbyak::Reg64 reg_len_, reg_src_, reg_dst_;
};

}  // namespace

std::unique_ptr<Generator> make_eltwise_kernel(EltwiseAlg alg, Isa isa, FramePolicy policy, int64_t stream_floats) {
    check_stream_floats(stream_floats);
    return make_for_isa<EltwiseKernel>(isa, alg, policy, stream_floats);
}

}  // namespace benchfp::jit
