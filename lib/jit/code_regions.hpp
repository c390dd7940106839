#pragma once
// Where a generated kernel's code is, by name, and where its frame policy
// holds: what a profiler (the harness, through lib/perf) needs to name and
// judge samples that land in it.
#include <cstddef>
#include <cstdint>
#include <string>

namespace benchfp::jit {

struct CodeRegionInfo {
    std::string name;
    uintptr_t begin = 0;
    size_t size = 0;
    // [begin + prologue_end, begin + epilogue_begin) is where the frame policy holds.
    size_t prologue_end = 0;
    size_t epilogue_begin = 0;
};
// Called by Generator::build() with every kernel's region once its code is
// final and executable: the seam through which a JIT profile (perf map,
// jitdump) learns of the kernels, without lib/jit knowing of profilers. The
// observer runs on the building thread; null (the default) costs nothing.
using CodeObserver = void (*)(const CodeRegionInfo& region);
void set_code_observer(CodeObserver observer);

}  // namespace benchfp::jit
