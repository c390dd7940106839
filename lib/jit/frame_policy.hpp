#pragma once
// The frame policy of a generated kernel (--frame): clobber, preserve or frame, as the README tables them.
#include <optional>
#include <ostream>
#include <string>
#include <string_view>

namespace benchfp::jit {

enum class FramePolicy {
    clobber,   // rbp is a working register: the chain through the kernel is broken
    preserve,  // rbp untouched, no frame: the kernel's caller drops out of the chain
    frame,     // push rbp; mov rbp, rsp first, pop rbp last: the full chain
};

inline constexpr FramePolicy all_frame_policies[] = {FramePolicy::clobber, FramePolicy::preserve, FramePolicy::frame};

const char* to_string(FramePolicy policy);
inline void PrintTo(FramePolicy policy, std::ostream* os) { *os << to_string(policy); }  // readable test names
std::optional<FramePolicy> parse_frame_policy(std::string_view name);
std::string known_frame_policies();

}  // namespace benchfp::jit
