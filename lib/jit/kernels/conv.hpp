#pragma once
// conv: direct 2D convolution, f32, NHWC source and destination, HWIO weights,
// stride, padding and dilation, no bias. One call computes output rows
// [oh_begin, oh_end) of one image. Every loop bound, stride and pointer is a
// runtime value: more live values than there are registers, so the GPR pool
// spills the cold ones (loop bounds, shape) under every frame policy.
#include "jit/generator.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>

namespace benchfp::jit {

struct ConvArgs {
    const float* src;  // one image: ih x iw x ic
    const float* wei;  // kh x kw x ic x oc
    float* dst;        // one image: oh x ow x oc
    int64_t ih, iw, ic, oc, ow, kh, kw, sh, sw, ph, pw;
    int64_t dh1, dw1;  // dilation + 1: the distance between taps
    int64_t oh_begin, oh_end;
};

bool conv_supports(Isa isa);
std::unique_ptr<Generator> make_conv_kernel(Isa isa, FramePolicy policy);

}  // namespace benchfp::jit
