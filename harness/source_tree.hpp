#pragma once
// Where stored inputs (batch files, baselines, tolerances) are found: named
// relative to the working directory first, else to the source tree, so that
// build/benchfp works from wherever it is started. Never throws: a name too
// long or a directory that may not be searched is "not found".
#include <filesystem>
#include <optional>
#include <string>

namespace benchfp::harness {

enum class StoredKind { any, regular_file };

// `name` itself when it exists there (an absolute name is taken as given when
// kind is any), else BENCHFP_SOURCE_DIR/name when that exists; nothing else.
std::optional<std::filesystem::path> locate_stored(const std::string& name, StoredKind kind);

}  // namespace benchfp::harness
