#include "host_info.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace benchfp::harness {

namespace {
std::string cpu_model() {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
        if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
    return "unknown";
}
}  // namespace

nlohmann::json host_info(std::optional<jit::Isa> isa_cap) {
    utsname uts{};
    uname(&uts);
    const auto isa = jit::host_isa();
    return {{"cpu", cpu_model()},
            {"isa", isa ? jit::to_string(*isa) : "none"},
            {"isa_cap", isa_cap ? nlohmann::json(jit::to_string(*isa_cap)) : nlohmann::json(nullptr)},
            {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
            {"kernel", std::string(uts.sysname) + " " + uts.release}};
}

}  // namespace benchfp::harness
