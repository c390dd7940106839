#pragma once
#include "jit/isa.hpp"

#include <nlohmann/json.hpp>

#include <optional>

namespace benchfp::harness {

// What the results depend on: CPU model, ISA and cap, cores, kernel release.
nlohmann::json host_info(std::optional<jit::Isa> isa_cap);

}  // namespace benchfp::harness
