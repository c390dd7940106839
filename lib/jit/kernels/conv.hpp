#pragma once
// conv: direct 2D convolution, f32, NHWC source and destination, HWIO weights,
// stride, padding and dilation, no bias. One call computes output rows
// [oh_begin, oh_end) of one image. Every loop bound, stride and pointer is a
// runtime value: more live values than there are registers, so the GPR pool
// spills the cold ones (loop bounds, shape) under every frame policy.
// The kernel blocks output columns x output channels in vector registers (as
// oneDNN's direct convolutions do) where every tap of a block of columns lies
// inside the image, and computes the columns that reach into the padding one
// at a time.
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
    // The output columns whose every tap lies inside the image: conv_set_interior
    // derives them from the fields above (the kernel trusts them).
    int64_t ow_full_begin, ow_full_end;
};

// Sets ow_full_begin and ow_full_end from the shape fields.
void conv_set_interior(ConvArgs& args);

bool conv_supports(Isa isa);
std::unique_ptr<Generator> make_conv_kernel(Isa isa, FramePolicy policy);

}  // namespace benchfp::jit
