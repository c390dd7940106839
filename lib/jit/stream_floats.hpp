#pragma once
// From how many floats a call reads a memory-bound kernel takes its loop of
// one vector a step over its unrolled one (VectorGenerator::
// unrolled_or_one_vector): reduce sum and max at avx512, relu at avx2 and
// avx512. On the Zen 4 guest (2026-12-06) such a loop read data from memory
// faster one vector a step than unrolled; up to 8 MiB a call the two ran
// alike or the unrolled loop was faster, from 12 MiB one vector a step (the
// kernels say by how much). The kernels' factories take another threshold:
// a test steps both loops on small problems, and benchfp reads
// BENCHFP_STREAM_FLOATS, so that another CPU's can be measured.
#include <cstdint>
#include <stdexcept>
#include <string>

namespace benchfp::jit {

inline constexpr int64_t default_stream_floats = int64_t{3} << 20;  // 12 MiB
inline constexpr int64_t max_stream_floats = INT32_MAX;             // a compare's 32-bit immediate

// Throws std::invalid_argument naming the value unless 1 <= floats <= max_stream_floats.
inline void check_stream_floats(int64_t floats) {
    if (floats < 1 || floats > max_stream_floats)
        throw std::invalid_argument("stream_floats " + std::to_string(floats) + " is not from 1 to " +
                                    std::to_string(max_stream_floats));
}

}  // namespace benchfp::jit
