#pragma once
// User input echoed in a message: quoted, cut to its first bytes and with
// non-printable bytes escaped, so a 1 MB token or binary garbage read from a
// batch file gives a readable one-line message rather than flooding or
// corrupting the terminal.
#include <cstdio>
#include <string>
#include <string_view>

namespace benchfp::harness {

// `text` cut to `max_bytes`, non-printable bytes as \xNN, the cut said.
inline std::string escaped(std::string_view text, size_t max_bytes) {
    std::string out;
    for (size_t i = 0; i < text.size() && i < max_bytes; ++i) {
        const auto byte = static_cast<unsigned char>(text[i]);
        if (byte >= 0x20 && byte < 0x7f && byte != '\\') {
            out += static_cast<char>(byte);
        } else {
            char hex[5];
            std::snprintf(hex, sizeof hex, "\\x%02x", byte);
            out += hex;
        }
    }
    if (text.size() > max_bytes) out += "... (" + std::to_string(text.size()) + " bytes)";
    return out;
}

// 'text', escaped and cut to its first 64 bytes: a token echoed in a message.
inline std::string quoted_token(std::string_view text) { return "'" + escaped(text, 64) + "'"; }

}  // namespace benchfp::harness
