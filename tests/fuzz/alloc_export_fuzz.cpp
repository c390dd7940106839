// The allocation profile exporters (pprof, folded stacks, JSON summary) over a
// fuzzed Profile: any stacks, sizes, weights, threads, type names and symbol
// names (the symbolizer returns bytes from the input). The profiler's own
// guarantee is kept: a free names an allocation of the profile.
#include "alloc/export.hpp"
#include "fuzz_input.hpp"

#include <deque>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace benchfp;
    fuzz::Input in(data, size);
    std::deque<alloc::TypeInfo> types;  // records point at them
    std::vector<std::string> names;
    for (int i = in.take<uint8_t>() % 4; i >= 0; --i) names.push_back(in.take_string(24));

    alloc::profiler::Profile profile;
    profile.dropped_frames = in.take<uint8_t>();
    for (int n = in.take<uint8_t>() % 16; n > 0 && !in.empty(); --n) {
        alloc::profiler::AllocationRecord r{};
        types.push_back({in.take_string(16)});
        r.type = in.take<uint8_t>() % 4 == 0 ? &alloc::unknown_type : &types.back();
        r.requested = in.take<uint32_t>();
        r.allocated = r.requested + in.take<uint8_t>();
        for (int depth = in.take<uint8_t>() % 8; depth > 0; --depth) r.stack.push_back(in.take<uint16_t>());
        r.thread = in.take<uint8_t>();
        r.time_ns = in.take<uint64_t>();
        r.address = in.take<uint64_t>();
        r.weight = in.take<double>();
        profile.allocations.push_back(std::move(r));
    }
    for (int n = in.take<uint8_t>() % 8; n > 0 && !profile.allocations.empty(); --n)
        profile.frees.push_back({in.take<uint64_t>(), in.take<uint8_t>(), in.take<uint8_t>() % profile.allocations.size()});

    const alloc::Naming naming{[&](uintptr_t address) {
                                   return alloc::SourceFrame{names[address % names.size()], names[(address / 3) % names.size()],
                                                             static_cast<int>(address % 100)};
                               },
                               [](const std::string& type) { return type; }};
    alloc::to_pprof_gz(profile, naming, {int64_t(in.take<uint32_t>()), int64_t(in.take<uint32_t>()), "fuzz"});
    alloc::to_folded(profile, naming, in.take<uint8_t>() % 2 ? alloc::FoldedUnit::bytes : alloc::FoldedUnit::objects);
    // Names need not be UTF-8: nlohmann's dump() throws on them unless told to replace,
    // as the harness's `alloc profile --json` does (found here: regression-utf8-*).
    alloc::to_json_summary(profile, naming).dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
    return 0;
}
