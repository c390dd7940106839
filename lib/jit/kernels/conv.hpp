#pragma once
// conv: direct 2D convolution, f32, NHWC source and destination, HWIO weights,
// stride, padding and dilation, no bias. One call computes output rows
// [oh_begin, oh_end) of one image. Every loop bound, stride and pointer is a
// runtime value: more live values than there are registers, so the GPR pool
// spills the cold ones (loop bounds, shape) under every frame policy.
// The kernel blocks output columns x output channels in vector registers (as
// oneDNN's direct convolutions do). A block may hold up to conv_border_columns
// columns at either end of the row whose taps reach into the padding: per tap
// it runs only its columns whose input lies inside the image. Where more
// columns than that reach into the padding, those are computed one at a time.
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
    // The output columns computed in blocks: conv_set_blocks derives them from
    // the fields above (the kernel trusts them).
    int64_t ow_block_begin, ow_block_end;
};

// How many columns at either end of a row a block takes although some of their
// taps lie in the padding (a 3x3 or 5x5 layer's pad of 1 or 2).
inline constexpr int64_t conv_border_columns = 2;

// Sets ow_block_begin and ow_block_end from the shape fields: the columns whose
// every tap lies inside the image, widened by up to conv_border_columns columns
// on either side (to the row's end where fewer lie beyond them). The columns
// left outside are computed one at a time.
void conv_set_blocks(ConvArgs& args);

bool conv_supports(Isa isa);
std::unique_ptr<Generator> make_conv_kernel(Isa isa, FramePolicy policy);

}  // namespace benchfp::jit
