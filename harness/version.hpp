#pragma once
// What build of benchfp this is: version, git commit (at configure time),
// build type, compiler, and the versions of Xbyak, libpfm4 and oneDNN found.
// `benchfp --version` prints it; JSON records and reports carry it.
#include <nlohmann/json.hpp>

#include <string>

namespace benchfp::harness {

nlohmann::json build_info();
std::string version_text();  // one "key: value" line each

}  // namespace benchfp::harness
