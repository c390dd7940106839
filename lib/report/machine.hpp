#pragma once
// Facts of this machine that results depend on (part of a fingerprint).
#include <string>

namespace benchfp::report {

// The CPU model from /proc/cpuinfo ("unknown" where there is none).
std::string cpu_model();

}  // namespace benchfp::report
