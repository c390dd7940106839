#include "kernel/host_info.hpp"

#include "report/machine.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <string>

namespace benchfp::harness {

nlohmann::json host_info(std::optional<jit::Isa> isa_cap) {
    utsname uts{};
    uname(&uts);
    const auto isa = jit::host_isa();
    return {{"cpu", report::cpu_model()},
            {"isa", isa ? jit::to_string(*isa) : "none"},
            {"isa_cap", isa_cap ? nlohmann::json(jit::to_string(*isa_cap)) : nlohmann::json(nullptr)},
            {"cores", sysconf(_SC_NPROCESSORS_ONLN)},
            {"kernel", std::string(uts.sysname) + " " + uts.release}};
}

}  // namespace benchfp::harness
