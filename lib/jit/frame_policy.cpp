#include "jit/frame_policy.hpp"

#include "jit/enum_names.hpp"

namespace benchfp::jit {

const char* to_string(FramePolicy policy) {
    switch (policy) {
    case FramePolicy::clobber: return "clobber";
    case FramePolicy::preserve: return "preserve";
    case FramePolicy::frame: return "frame";
    }
    return "?";
}

std::optional<FramePolicy> parse_frame_policy(std::string_view name) {
    return parse_name(name, all_frame_policies);
}

std::string known_frame_policies() { return join_names(all_frame_policies); }

}  // namespace benchfp::jit
