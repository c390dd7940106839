#pragma once
// conv: direct 2D convolution, NHWC / HWIO, benchdnn-style problem descriptors.
// The driver calls the JIT kernel per image and per slice of output rows (the
// rows are split across the parallel section).
#include "families/workload.hpp"
#include "jit/kernels/conv.hpp"

namespace benchfp::harness {

struct ConvShape {
    size_t mb, ic, ih, iw, oc, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;  // dilation 0 = dense, as in benchdnn
};

// "mb2ic16ih14iw14oc32kh3kw3sh1sw1ph1pw1dh0dw0": ic, ih, oc, kh are required;
// mb 1, iw = ih, kw = kh, sh 1, sw = sh, ph 0, pw = ph, dh 0, dw = dh by default.
// oh and ow follow from the others (symmetric padding).
ConvShape parse_conv_problem(const std::string& problem, const std::string& where);

class ConvWorkload final : public Workload {
public:
    explicit ConvWorkload(const KernelCase& c);
    void run(size_t variant) const override;
    CorrOutcome check() override;
    double flops() const override { return 2.0 * s_.mb * s_.oh * s_.ow * s_.oc * s_.ic * s_.kh * s_.kw; }
    double bytes() const override { return 4.0 * (src_.size() + wei_.size() + dst_.size()); }
    size_t input_bytes() const override { return 4 * src_.size(); }
    std::unique_ptr<Peer> onednn_peer() override;

private:
    // The kernel's rows [row_begin, row_end) of one image, each `merged` rows
    // of the image side by side (rows_merged).
    jit::ConvArgs args_for(size_t image, size_t row_begin, size_t row_end, size_t merged) const;
    // How many of the image's rows one row of the kernel's call takes: 1, or
    // for a pointwise convolution (1x1, stride 1, no padding), whose output
    // pixel is the input pixel at the same place and whose NHWC rows lie one
    // after the other, as many as leave each of `threads` as many rows (oneDNN's
    // 1x1 kernels likewise take an image's pixels as one dimension). Longer
    // rows leave fewer short blocks at their ends (conv.cpp blocks 6 columns):
    // mb1ic256ih56oc64kh1 at avx2 has 2 blocks of 4 columns in every 10 of a
    // 56-column row, 2 in 262 as 2 rows of 1568.
    size_t rows_merged(int threads) const;

    ConvShape s_;
    FloatBuffer src_, wei_, dst_;
};

}  // namespace benchfp::harness
