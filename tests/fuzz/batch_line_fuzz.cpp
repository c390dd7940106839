// The batch file reader and the case expansion: any bytes written as a batch
// file either expand to cases or end in a UsageError (status 2), never a crash,
// a hang or another exception. One line is also parsed alone.
#include "kernel/case_options.hpp"
#include "kernel/kernel_cases.hpp"
#include "usage_error.hpp"
#include "../scratch_dir.hpp"

#include <fstream>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace benchfp::harness;
    const std::string text(reinterpret_cast<const char*>(data), size);
    try {
        parse_batch_line(text.substr(0, text.find('\n')), "fuzz:1");
    } catch (const UsageError&) {
    }
    static const std::string path = benchfp::test::scratch_path("benchfp_fuzz_batch_", "batch");
    std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
    CaseOptions command_line;
    command_line.batches = {path};
    // Small limits keep each input fast: a self-including batch or a long list
    // product stops at the cap, and no case is allowed memory to speak of.
    const ExpandLimits limits{2000, double(64 << 20)};
    try {
        for (const KernelCase& c : expand_cases(command_line, std::nullopt, limits)) repro(c, " --freq=1");
    } catch (const UsageError&) {
    }
    return 0;
}
