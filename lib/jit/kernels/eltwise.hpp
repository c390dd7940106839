#pragma once
// eltwise: dst[i] = f(src[i]) over f32 arrays, f in {relu, exp, gelu_tanh, tanh},
// for sse41, avx2 and avx512, from one source under every frame policy.
#include "jit/generator.hpp"
#include "jit/stream_floats.hpp"

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace benchfp::jit {

enum class EltwiseAlg { relu, exp, gelu_tanh, tanh };
inline constexpr EltwiseAlg all_eltwise_algs[] = {EltwiseAlg::relu, EltwiseAlg::exp, EltwiseAlg::gelu_tanh,
                                                  EltwiseAlg::tanh};

const char* to_string(EltwiseAlg alg);
std::optional<EltwiseAlg> parse_eltwise_alg(std::string_view name);

// The kernel's argument block (the one pointer it receives).
struct EltwiseArgs {
    const float* src;
    float* dst;
    size_t len;
};

// stream_floats: from how many elements a call relu at avx2 and avx512 reads
// one vector a step (stream_floats.hpp); check_stream_floats's range, else
// std::invalid_argument.
std::unique_ptr<Generator> make_eltwise_kernel(EltwiseAlg alg, Isa isa, FramePolicy policy,
                                               int64_t stream_floats = default_stream_floats);

}  // namespace benchfp::jit
