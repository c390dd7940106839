#pragma once
// Parsing and listing of the small enums named on the command line (ISA, frame
// policy, algorithm): each enum gives its values and to_string, this does the rest.
#include <optional>
#include <string>
#include <string_view>

namespace benchfp::jit {

template <typename Enum, size_t N>
std::optional<Enum> parse_name(std::string_view name, const Enum (&values)[N]) {
    for (Enum value : values)
        if (name == to_string(value)) return value;
    return std::nullopt;
}

template <typename Enum, size_t N>
std::string join_names(const Enum (&values)[N]) {
    std::string out;
    for (Enum value : values) out += (out.empty() ? "" : ", ") + std::string(to_string(value));
    return out;
}

}  // namespace benchfp::jit
