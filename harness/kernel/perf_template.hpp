#pragma once
// benchdnn-style perf lines: a template with %tokens%, or a named one.
//   %prb% (the repro) %kernel% %alg% %isa% %frame% %problem% %threads%
//   %-time% %0time% (min and average ms per call) %Gops% %GB%
//   %-Gflops% %0Gflops% %-GBps% %0GBps% (from the min and average times)
//   %frame-ratio% (min time over the first policy's of the same problem)
//   %vs-onednn% (oneDNN's min time over ours: > 1 means faster than oneDNN)
//   %vs-copy% (our GB/s over a plain memcpy's of the input, same run)
//   %vs-peak% (our GFLOP/s over the register-only FMA loop's, same run)
//   %frame-cost% (the median of paired time ratios to the first policy, with
//   its 95% interval: %frame-ci% "[lo;hi]", %frame-lo% %frame-hi%; n/a on the
//   first policy's own line) %aa% %aa-ci% %aa-lo% %aa-hi% (the A/A control: the
//   first policy's kernel at code placements of its own over itself, the noise floor)
//   %pairs% (pairs behind each paired ratio)
//   %rounds%
#include "kernel/kernel_cases.hpp"
#include "kernel/perf_measure.hpp"

#include <optional>
#include <string>

namespace benchfp::harness {

struct PerfLine {
    const KernelCase* c = nullptr;
    PerfStats stats;
    double flops = 0, bytes = 0;          // per call
    std::optional<double> frame_ratio;    // vs the first policy of the group
    std::optional<double> vs_onednn;      // speed ratio
    std::optional<double> vs_copy;        // bandwidth ratio
    std::optional<double> vs_peak;        // fraction of the FMA peak
    std::optional<report::MedianInterval> frame_cost;  // paired, vs the first policy (perf_measure.hpp)
    std::optional<report::MedianInterval> aa;          // the A/A control of the group
};

// "default" and "csv" name built-in templates; anything else is a template.
std::string resolve_perf_template(const std::string& name);
std::string csv_perf_header();
std::string format_perf_line(const std::string& perf_template, const PerfLine& line);

}  // namespace benchfp::harness
