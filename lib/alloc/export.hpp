#pragma once
// Exports of an allocation profile: pprof (protobuf, gzip) with alloc_objects,
// alloc_space, inuse_objects and inuse_space; folded stacks for flame graphs; a
// JSON summary. Values are the samples' weights, so byte sampling is unbiased:
// space is weight x requested bytes. Names come from the caller's symbolizer
// (the harness passes lib/perf's), so lib/alloc knows nothing of ELF.
#include "alloc/profiler.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace benchfp::alloc {

using Symbolizer = std::function<std::string(uintptr_t address)>;

// The gzip-compressed pprof protobuf. Return addresses are symbolized at address - 1.
std::string to_pprof_gz(const profiler::Profile& profile, const Symbolizer& name_of);
// One line per distinct stack: "outer;...;inner;type bytes" (alloc_space).
std::string to_folded(const profiler::Profile& profile, const Symbolizer& name_of);
nlohmann::json to_json_summary(const profiler::Profile& profile, const Symbolizer& name_of);

}  // namespace benchfp::alloc
