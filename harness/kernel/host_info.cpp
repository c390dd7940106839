#include "kernel/host_info.hpp"

#include "peers/onednn.hpp"
#include "report/machine.hpp"
#include "version.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace benchfp::harness {

nlohmann::json host_info(std::optional<jit::Isa> isa_cap) {
    utsname uts{};
    uname(&uts);
    const auto isa = jit::host_isa();
    // The machine's fingerprint as the judge reads it, plus what else results depend on.
    nlohmann::json host = report::to_json(report::this_machine(isa ? jit::to_string(*isa) : "none"));
    host.update({{"isa_cap", isa_cap ? nlohmann::json(jit::to_string(*isa_cap)) : nlohmann::json(nullptr)},
                 {"kernel", std::string(uts.sysname) + " " + uts.release},
                 {"onednn_isa", onednn::effective_isa()},
                 {"build", build_info()}});
    return host;
}

std::optional<double> mem_available_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key, unit;
    for (double kib; meminfo >> key >> kib;) {
        std::getline(meminfo, unit);
        if (key == "MemAvailable:") return kib * 1024;
    }
    return std::nullopt;
}

}  // namespace benchfp::harness
