#pragma once
// Exports of an allocation profile: pprof (protobuf, gzip) with alloc_objects,
// alloc_space, inuse_objects and inuse_space; folded stacks for flame graphs; a
// JSON summary. Values are the samples' weights, so byte sampling is unbiased:
// space is weight x requested bytes.
//
// Names come from the caller (the harness passes lib/perf's symbols and
// demangler), so lib/alloc knows nothing of ELF, DWARF or C++ name mangling.
#include "alloc/profiler.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <string>

namespace benchfp::alloc {

// What the caller knows of a code address: the function (its name as a reader
// knows it: one name for all of a function's compiler clones), and the source
// line where debug info has it (empty file, line 0 where not).
struct SourceFrame {
    std::string function;
    std::string file;
    int line = 0;
};

struct Naming {
    std::function<SourceFrame(uintptr_t address)> frame;
    std::function<std::string(const std::string& type_name)> type;  // TypeInfo::name (typeid's) -> readable
};

// What a profile's run was: for pprof's time, duration and comment fields.
struct RunInfo {
    int64_t start_unix_ns = 0;
    int64_t duration_ns = 0;
    std::string comment;  // e.g. the workload
};

// Where the in-use sample types come from: `in_use`, a profile fetched while the
// objects were live (benchfp alloc profile --inuse-at), or, when null, the
// profile itself (what it never saw freed).
//
// The gzip-compressed pprof protobuf, default sample type alloc_space. Samples
// with the same stack, type and thread are one pprof sample whose weights are
// added before rounding, so the totals match the JSON summary's. Return
// addresses are named at address - 1, inside the call. The period: mean_bytes
// bytes when byte-sampling, else 1/p allocations (1 with every allocation).
std::string to_pprof_gz(const profiler::Profile& profile, const Naming& naming, const RunInfo& run = {},
                        const profiler::Profile* in_use = nullptr);

// FlameGraph's folded format: one line per distinct stack, root first,
// ';'-separated, the allocated type as the last frame, then a space and the
// count: bytes allocated (alloc_space) or objects (alloc_objects).
enum class FoldedUnit { bytes, objects };
std::string to_folded(const profiler::Profile& profile, const Naming& naming, FoldedUnit unit = FoldedUnit::bytes);

// Schema benchfp.alloc-profile/1 (results/schemas/alloc-profile.schema.json):
// objects are weighted counts, space bytes; `inuse_at` names the snapshot
// ("peak", "end"; empty: "after_run", the profile's own unfreed objects).
nlohmann::json to_json_summary(const profiler::Profile& profile, const Naming& naming,
                               const profiler::Profile* in_use = nullptr, const std::string& inuse_at = "");

}  // namespace benchfp::alloc
