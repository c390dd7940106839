#include "peers/onednn.hpp"

#include <dnnl.h>

#include <stdexcept>

extern "C" void omp_set_num_threads(int);  // libgomp, which libdnnl runs on

namespace benchfp::harness {

namespace {

void check(dnnl_status_t status, const char* what) {
    if (status != dnnl_success)
        throw std::runtime_error(std::string("oneDNN: ") + what + " failed (status " + std::to_string(status) + ")");
}

struct Runtime {
    dnnl_engine_t engine = nullptr;
    dnnl_stream_t stream = nullptr;
    Runtime() {
        check(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine creation");
        check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "stream creation");
    }
};
Runtime& runtime() {
    static Runtime r;
    return r;
}

dnnl_memory_desc_t plain_desc(std::vector<dnnl_dim_t> dims, dnnl_format_tag_t tag) {
    dnnl_memory_desc_t md;
    check(dnnl_memory_desc_init_by_tag(&md, static_cast<int>(dims.size()), dims.data(), dnnl_f32, tag),
          "memory descriptor");
    return md;
}

// A primitive with its memories bound to the workload's buffers.
class PrimitivePeer final : public Peer {
public:
    PrimitivePeer(dnnl_primitive_desc_t pd, int threads) : threads_(threads) {
        check(dnnl_primitive_create(&primitive_, pd), "primitive creation");
        dnnl_primitive_desc_destroy(pd);
    }
    ~PrimitivePeer() override {
        for (auto& arg : args_) dnnl_memory_destroy(arg.memory);
        dnnl_primitive_destroy(primitive_);
    }
    void bind(int arg, const dnnl_memory_desc_t& md, const void* data) {
        dnnl_memory_t memory;
        check(dnnl_memory_create(&memory, &md, runtime().engine, const_cast<void*>(data)), "memory creation");
        args_.push_back({arg, memory});
    }
    void run() override {
        omp_set_num_threads(threads_);
        check(dnnl_primitive_execute(primitive_, runtime().stream, static_cast<int>(args_.size()), args_.data()),
              "execution");
        check(dnnl_stream_wait(runtime().stream), "stream wait");
    }

private:
    int threads_;
    dnnl_primitive_t primitive_ = nullptr;
    std::vector<dnnl_exec_arg_t> args_;
};

std::unique_ptr<PrimitivePeer> make_peer(const_dnnl_op_desc_t desc, int threads) {
    dnnl_primitive_desc_t pd;
    check(dnnl_primitive_desc_create(&pd, desc, nullptr, runtime().engine, nullptr), "primitive descriptor");
    return std::make_unique<PrimitivePeer>(pd, threads);
}

class SgemmPeer final : public Peer {
public:
    SgemmPeer(size_t m, size_t n, size_t k, const float* a, const float* b, float* c, float beta, int threads)
        : m_(m), n_(n), k_(k), a_(a), b_(b), c_(c), beta_(beta), threads_(threads) {}
    void run() override {
        omp_set_num_threads(threads_);
        check(dnnl_sgemm('N', 'N', m_, n_, k_, 1.0f, a_, k_, b_, n_, beta_, c_, n_), "dnnl_sgemm");
    }

private:
    dnnl_dim_t m_, n_, k_;
    const float *a_, *b_;
    float* c_;
    float beta_;
    int threads_;
};

}  // namespace

std::unique_ptr<Peer> onednn_sgemm(size_t m, size_t n, size_t k, const float* a, const float* b, float* c, float beta,
                                   int threads) {
    return std::make_unique<SgemmPeer>(m, n, k, a, b, c, beta, threads);
}

std::unique_ptr<Peer> onednn_eltwise(const std::string& alg, const float* src, float* dst, size_t n, int threads) {
    const dnnl_alg_kind_t kind = alg == "relu"        ? dnnl_eltwise_relu
                                 : alg == "exp"       ? dnnl_eltwise_exp
                                 : alg == "gelu_tanh" ? dnnl_eltwise_gelu_tanh
                                                      : dnnl_eltwise_tanh;
    const auto md = plain_desc({static_cast<dnnl_dim_t>(n)}, dnnl_a);
    dnnl_eltwise_desc_t desc;
    check(dnnl_eltwise_forward_desc_init(&desc, dnnl_forward_inference, kind, &md, 0.0f, 0.0f), "eltwise descriptor");
    auto peer = make_peer(&desc, threads);
    peer->bind(DNNL_ARG_SRC, md, src);
    peer->bind(DNNL_ARG_DST, md, dst);
    return peer;
}

std::unique_ptr<Peer> onednn_reduce(const std::string& alg, const float* src, float* dst, size_t rows, size_t cols,
                                    int threads) {
    const dnnl_dim_t r = static_cast<dnnl_dim_t>(rows), c = static_cast<dnnl_dim_t>(cols);
    const auto src_md = plain_desc({r, c}, dnnl_ab);
    std::unique_ptr<PrimitivePeer> peer;
    dnnl_memory_desc_t dst_md = src_md;
    if (alg == "softmax") {
        dnnl_softmax_desc_t desc;
        check(dnnl_softmax_forward_desc_init(&desc, dnnl_forward_inference, &src_md, 1), "softmax descriptor");
        peer = make_peer(&desc, threads);
    } else {
        dst_md = plain_desc({r, 1}, dnnl_ab);
        dnnl_reduction_desc_t desc;
        check(dnnl_reduction_desc_init(&desc, alg == "sum" ? dnnl_reduction_sum : dnnl_reduction_max, &src_md, &dst_md,
                                       0.0f, 0.0f),
              "reduction descriptor");
        peer = make_peer(&desc, threads);
    }
    peer->bind(DNNL_ARG_SRC, src_md, src);
    peer->bind(DNNL_ARG_DST, dst_md, dst);
    return peer;
}

std::unique_ptr<Peer> onednn_transpose(const float* src, float* dst, size_t batch, size_t rows, size_t cols,
                                       int threads) {
    const std::vector<dnnl_dim_t> dims = {static_cast<dnnl_dim_t>(batch), static_cast<dnnl_dim_t>(rows),
                                          static_cast<dnnl_dim_t>(cols)};
    const auto src_md = plain_desc(dims, dnnl_abc);
    const auto dst_md = plain_desc(dims, dnnl_acb);  // same logical tensor, cols-major within a batch
    dnnl_primitive_desc_t pd;
    check(dnnl_reorder_primitive_desc_create(&pd, &src_md, runtime().engine, &dst_md, runtime().engine, nullptr),
          "reorder descriptor");
    auto peer = std::make_unique<PrimitivePeer>(pd, threads);
    peer->bind(DNNL_ARG_FROM, src_md, src);
    peer->bind(DNNL_ARG_TO, dst_md, dst);
    return peer;
}

std::unique_ptr<Peer> onednn_conv(const ConvShape& s, const float* src, const float* weights, float* dst,
                                  int threads) {
    auto d = [](size_t v) { return static_cast<dnnl_dim_t>(v); };
    const auto src_md = plain_desc({d(s.mb), d(s.ic), d(s.ih), d(s.iw)}, dnnl_nhwc);
    const auto wei_md = plain_desc({d(s.oc), d(s.ic), d(s.kh), d(s.kw)}, dnnl_hwio);
    const auto dst_md = plain_desc({d(s.mb), d(s.oc), d(s.oh), d(s.ow)}, dnnl_nhwc);
    const dnnl_dims_t strides = {d(s.sh), d(s.sw)}, dilates = {d(s.dh), d(s.dw)}, pad_l = {d(s.ph), d(s.pw)};
    // Right padding: whatever makes the output size come out, as benchdnn derives it.
    const dnnl_dims_t pad_r = {d((s.oh - 1) * s.sh + (s.kh - 1) * (s.dh + 1) + 1 - s.ih - s.ph),
                               d((s.ow - 1) * s.sw + (s.kw - 1) * (s.dw + 1) + 1 - s.iw - s.pw)};
    dnnl_convolution_desc_t desc;
    check(dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, dnnl_convolution_direct, &src_md,
                                                     &wei_md, nullptr, &dst_md, strides, dilates, pad_l, pad_r),
          "convolution descriptor");
    auto peer = make_peer(&desc, threads);
    peer->bind(DNNL_ARG_SRC, src_md, src);
    peer->bind(DNNL_ARG_WEIGHTS, wei_md, weights);
    peer->bind(DNNL_ARG_DST, dst_md, dst);
    return peer;
}

}  // namespace benchfp::harness
