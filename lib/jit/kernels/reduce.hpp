#pragma once
// reduce: over the last axis of a rows x cols f32 matrix, sum and max (dst has
// one value per row), and softmax built on them (dst has the matrix's shape):
// for sse41, avx2 and avx512, from one source under every frame policy.
#include "jit/generator.hpp"
#include "jit/stream_floats.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string_view>

namespace benchfp::jit {

enum class ReduceAlg { sum, max, softmax };
inline constexpr ReduceAlg all_reduce_algs[] = {ReduceAlg::sum, ReduceAlg::max, ReduceAlg::softmax};

const char* to_string(ReduceAlg alg);
std::optional<ReduceAlg> parse_reduce_alg(std::string_view name);

struct ReduceArgs {
    const float* src;
    float* dst;
    size_t rows;
    size_t cols;
};

// stream_floats: from how many floats a call (rows x cols) avx512 sum and max
// read one vector a step (stream_floats.hpp); check_stream_floats's range, else
// std::invalid_argument.
std::unique_ptr<Generator> make_reduce_kernel(ReduceAlg alg, Isa isa, FramePolicy policy,
                                              int64_t stream_floats = default_stream_floats);

}  // namespace benchfp::jit
