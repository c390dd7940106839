#include "jit/kernels/conv.hpp"

#include "jit/vector_generator.hpp"

#include <stdexcept>

namespace benchfp::jit {

using namespace Xbyak::util;

bool conv_supports(Isa isa) { return isa == Isa::avx2 || isa == Isa::avx512; }

namespace {

template <typename Vmm>
class ConvKernel final : public VectorGenerator<Vmm> {
    using Base = VectorGenerator<Vmm>;
    static constexpr int width = Base::width;
    static constexpr int block = 4;  // oc vectors per pass: each input broadcast feeds 4 FMAs
    using Label = Xbyak::Label;
    static constexpr auto near = Xbyak::CodeGenerator::T_NEAR;

public:
    explicit ConvKernel(FramePolicy policy)
        : Base(Base::kernel_name("conv", policy), policy) {
        auto& pool = this->pool();
        // Hot values first, in registers: the inner ic loop and the scratch.
        p_src_ = pool.take_register("src tap cursor");
        p_wei_ = pool.take_register("wei tap cursor");
        ic_left_ = pool.take_register("ic left");
        t0_ = pool.take_register("scratch 0");
        t1_ = pool.take_register("scratch 1");
        oc4_ = pool.take("oc stride (bytes)");
        // Loop indices and the shape: registers while they last, then stack slots.
        for (auto* v : {&oh_, &ow_, &oc_off_, &kh_, &kw_, &ih_, &src_, &wei_, &dst_})
            *v = pool.take(role_of(v));
        for (size_t i = 0; i < shape_count; ++i) shape_[i] = pool.take(shape_names[i]);
    }

private:
    // The shape values, in ConvArgs order from ih.
    static constexpr size_t shape_count = 15;
    static constexpr const char* shape_names[shape_count] = {"ih", "iw", "ic",  "oc",  "ow",  "kh",       "kw",    "sh",
                                                             "sw", "ph", "pw", "dh1", "dw1", "oh_begin", "oh_end"};
    enum Shape { IH, IW, IC, OC, OW, KH, KW, SH, SW, PH, PW, DH1, DW1, OH_BEGIN, OH_END };
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

    Vmm acc(int i) const { return Vmm(i); }
    Vmm bcast() const { return Vmm(block); }
    Vmm wtmp() const { return Vmm(block + 1); }
    Vmm mask() const { return Vmm(block + 2); }

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

    // One pass over all taps for `nv` oc vectors at oc_off; `tail`: the last vector is partial.
    void pass(int nv, bool tail) {
        for (int v = 0; v < nv; ++v) this->uni_zero(acc(v));
        Label kh_loop, kh_next, kh_done, kw_loop, kw_next, kw_done, ic_loop;
        set_zero(kh_);
        this->L(kh_loop);
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
        this->L(kw_loop);
        this->mov(t0_, kw_.operand());
        this->cmp(t0_, shape(KW));
        this->jge(kw_done, near);
        coordinate(ow_, SW, PW, kw_, DW1);
        this->cmp(t0_, 0);
        this->jl(kw_next, near);
        this->cmp(t0_, shape(IW));
        this->jge(kw_next, near);
        // p_src = src + ((ih * IW + iw) * IC) * 4
        this->mov(p_src_, ih_.operand());
        this->imul(p_src_, shape(IW));
        this->add(p_src_, t0_);
        this->imul(p_src_, shape(IC));
        this->shl(p_src_, 2);
        this->add(p_src_, src_.operand());
        // p_wei = wei + (((kh * KW + kw) * IC) * OC + oc_off) * 4
        this->mov(p_wei_, kh_.operand());
        this->imul(p_wei_, shape(KW));
        this->add(p_wei_, kw_.operand());
        this->imul(p_wei_, shape(IC));
        this->imul(p_wei_, shape(OC));
        this->add(p_wei_, oc_off_.operand());
        this->shl(p_wei_, 2);
        this->add(p_wei_, wei_.operand());
        this->mov(ic_left_, shape(IC));
        this->L(ic_loop);
        this->uni_broadcast(bcast(), this->ptr[p_src_]);
        for (int v = 0; v < nv; ++v) {
            const auto w = this->ptr[p_wei_ + v * width * 4];
            if (tail && v == nv - 1) {
                this->load_tail(wtmp(), w);
                this->vfmadd231ps(acc(v), bcast(), wtmp());
            } else {
                this->vfmadd231ps(acc(v), bcast(), w);
            }
        }
        this->add(p_src_, 4);
        this->add(p_wei_, oc4_.operand());
        this->dec(ic_left_);
        this->jnz(ic_loop, near);
        this->L(kw_next);
        this->inc(kw_.operand());
        this->jmp(kw_loop, near);
        this->L(kw_done);
        this->L(kh_next);
        this->inc(kh_.operand());
        this->jmp(kh_loop, near);
        this->L(kh_done);
        // dst + ((oh * OW + ow) * OC + oc_off) * 4
        this->mov(t0_, oh_.operand());
        this->imul(t0_, shape(OW));
        this->add(t0_, ow_.operand());
        this->imul(t0_, shape(OC));
        this->add(t0_, oc_off_.operand());
        this->shl(t0_, 2);
        this->add(t0_, dst_.operand());
        for (int v = 0; v < nv; ++v) {
            const auto d = this->ptr[t0_ + v * width * 4];
            if (tail && v == nv - 1) this->store_tail(d, acc(v));
            else this->uni_store(d, acc(v));
        }
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
        this->mov(t0_, shape(OC));
        this->shl(t0_, 2);
        this->mov(oc4_.operand(), t0_);
        // The first register handed out (rbp under clobber) holds kernel data from
        // here on, as the prologue window assumes: the tap cursor starts at src.
        this->mov(p_src_, src_.operand());
        this->setup_done();

        Label oh_loop, oh_done, ow_loop, ow_done, oc_loop, oc_single, oc_tail, oc_done;
        copy(oh_, shape(OH_BEGIN));
        this->L(oh_loop);
        this->mov(t0_, oh_.operand());
        this->cmp(t0_, shape(OH_END));
        this->jge(oh_done, near);
        set_zero(ow_);
        this->L(ow_loop);
        this->mov(t0_, ow_.operand());
        this->cmp(t0_, shape(OW));
        this->jge(ow_done, near);
        set_zero(oc_off_);
        this->L(oc_loop);  // t1 = oc left
        this->mov(t1_, shape(OC));
        this->sub(t1_, oc_off_.operand());
        this->cmp(t1_, block * width);
        this->jl(oc_single, near);
        pass(block, false);
        this->add(oc_off_.operand(), block * width);
        this->jmp(oc_loop, near);
        this->L(oc_single);
        this->cmp(t1_, width);
        this->jl(oc_tail, near);
        pass(1, false);
        this->add(oc_off_.operand(), width);
        this->jmp(oc_loop, near);
        this->L(oc_tail);
        this->test(t1_, t1_);
        this->jle(oc_done, near);
        this->prepare_tail(t1_, mask());
        pass(1, true);
        this->L(oc_done);
        this->inc(ow_.operand());
        this->jmp(ow_loop, near);
        this->L(ow_done);
        this->inc(oh_.operand());
        this->jmp(oh_loop, near);
        this->L(oh_done);
    }

    Xbyak::Reg64 p_src_, p_wei_, ic_left_, t0_, t1_;
    GprValue oc4_, oh_, ow_, oc_off_, kh_, kw_, ih_, src_, wei_, dst_;
    GprValue shape_[shape_count];
};

}  // namespace

std::unique_ptr<Generator> make_conv_kernel(Isa isa, FramePolicy policy) {
    if (!conv_supports(isa)) throw std::invalid_argument(std::string("conv has no ") + to_string(isa) + " implementation");
    return make_for_isa<ConvKernel>(isa, policy);
}

}  // namespace benchfp::jit
