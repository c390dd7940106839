// libFuzzer target: the judge's readers on any bytes. The first byte picks the
// reader (current run, baseline, tolerances, instruction counts); the rest is
// the file. Bad input must be an InputError and nothing else: any other
// exception escapes and libFuzzer reports it, as it does a crash or UB.
//
// Standalone (no CMake needed), from the source tree:
//   clang++ -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -I lib \
//     tests/fuzz/judge_readers_fuzz.cpp lib/report/json_input.cpp lib/report/machine.cpp \
//     lib/report/file.cpp lib/report/judge/*.cpp -o /tmp/judge_readers_fuzz
//   /tmp/judge_readers_fuzz -max_total_time=60 tests/fuzz/corpus/judge_readers_fuzz
#include "report/judge.hpp"

#include <cstddef>
#include <cstdint>
#include <string_view>

using namespace benchfp::report;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
    try {
        const nlohmann::json doc = parse_json_text(text, "fuzz.json", "input");
        switch (data[0] % 4) {
        case 0: {
            RunResults r = parse_run(doc, "fuzz.json");
            Tolerances t;
            t.ratio_rules = {{"off / co", "off", "compiled_out", 1.02, {}, 0}};
            compute_ratios(r, t);
            judge_limits_only(r, t);
            break;
        }
        case 1: {
            const RunResults b = parse_baseline(doc, "fuzz.json");
            judge(b, b, Tolerances{});
            break;
        }
        case 2: parse_tolerances(doc, "fuzz.json"); break;
        case 3: parse_instructions(doc, "fuzz.json"); break;
        }
    } catch (const InputError&) {
        // the one way bad input may end
    }
    return 0;
}
