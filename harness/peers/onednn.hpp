#pragma once
// oneDNN (Debian's libdnnl) doing the same problem on a workload's buffers, for
// --vs=onednn: dnnl_sgemm and primitives through the C API. Its OpenMP thread
// count is set to the case's --threads before each run.
#include "workloads/workload.hpp"

#include <memory>
#include <string>
#include <vector>

namespace benchfp::harness {

std::unique_ptr<Peer> onednn_sgemm(size_t m, size_t n, size_t k, const float* a, const float* b, float* c, float beta,
                                   int threads);

// eltwise alg: relu, exp, gelu_tanh, tanh over n floats.
std::unique_ptr<Peer> onednn_eltwise(const std::string& alg, const float* src, float* dst, size_t n, int threads);

// reduce alg over the last axis of rows x cols: sum, max (dst: rows), softmax (dst: rows x cols).
std::unique_ptr<Peer> onednn_reduce(const std::string& alg, const float* src, float* dst, size_t rows, size_t cols,
                                    int threads);

// Reorder of batch x rows x cols to batch x cols x rows (a transpose per batch).
std::unique_ptr<Peer> onednn_transpose(const float* src, float* dst, size_t batch, size_t rows, size_t cols,
                                       int threads);

struct ConvShape {
    size_t mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;  // dilation 0 = dense, as in benchdnn
};
// NHWC source and destination, HWIO weights, no bias.
std::unique_ptr<Peer> onednn_conv(const ConvShape& shape, const float* src, const float* weights, float* dst,
                                  int threads);

}  // namespace benchfp::harness
