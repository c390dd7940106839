#pragma once
#include "jit/isa.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace benchfp::harness {

// What the results depend on: CPU model, ISA and cap, cores, kernel release.
nlohmann::json host_info(std::optional<jit::Isa> isa_cap);

// MemAvailable of /proc/meminfo in bytes (what can be allocated without
// swapping), or nullopt where it cannot be read.
std::optional<double> mem_available_bytes();

}  // namespace benchfp::harness
