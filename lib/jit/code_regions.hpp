#pragma once
// The process-wide list of live generated code, by name, so that a profiler
// (the harness, through lib/perf) can name samples that land in it.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace benchfp::jit {

struct CodeRegionInfo {
    std::string name;
    uintptr_t begin = 0;
    size_t size = 0;
    // [begin + prologue_end, begin + epilogue_begin) is where the frame policy holds.
    size_t prologue_end = 0;
    size_t epilogue_begin = 0;
};

void register_code_region(const CodeRegionInfo& info);
void unregister_code_region(uintptr_t begin);
std::vector<CodeRegionInfo> code_regions();  // a snapshot

}  // namespace benchfp::jit
