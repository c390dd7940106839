#include "version.hpp"

#include "git_commit.hpp"  // generated at build time (cmake/git_commit_stamp.cmake)

#include <dnnl.h>
#include <perfmon/pfmlib.h>
#include <xbyak/xbyak.h>

#include <cstdio>

namespace benchfp::harness {

namespace {

// Xbyak::VERSION is 0xABCD for A.BC(.D), hex digits.
std::string xbyak_version() {
    char text[32];
    const unsigned v = Xbyak::VERSION;
    if (v & 0xf) std::snprintf(text, sizeof text, "%x.%02x.%x", v >> 12, (v >> 4) & 0xff, v & 0xf);
    else std::snprintf(text, sizeof text, "%x.%02x", v >> 12, (v >> 4) & 0xff);
    return text;
}

}  // namespace

nlohmann::json build_info() {
    const dnnl_version_t* dnnl = dnnl_version();
    const int pfm = pfm_get_version();
    return {{"version", BENCHFP_VERSION},
            {"commit", BENCHFP_GIT_COMMIT},
            {"build_type", BENCHFP_BUILD_TYPE},
            {"compiler", std::string(BENCHFP_COMPILER_ID) + " " + __VERSION__},
            {"xbyak", xbyak_version()},
            {"libpfm4", std::to_string(PFM_MAJ_VERSION(pfm)) + "." + std::to_string(PFM_MIN_VERSION(pfm))},
            {"onednn", std::to_string(dnnl->major) + "." + std::to_string(dnnl->minor) + "." +
                           std::to_string(dnnl->patch) + " (" + dnnl->hash + ")"}};
}

std::string version_text() {
    std::string out;
    const nlohmann::json info = build_info();  // items() refers to it: a temporary would die before the loop
    for (const auto& [key, value] : info.items()) out += key + ": " + value.get<std::string>() + "\n";
    return out;
}

}  // namespace benchfp::harness
