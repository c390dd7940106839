#include "kernel/perf_template.hpp"

#include "usage_error.hpp"

#include <cstdio>
#include <map>
#include <sstream>

namespace benchfp::harness {

namespace {

const char* default_template =
    "perf,%kernel%,%alg%,%isa%,%frame%,%problem%,min:%-time%ms,avg:%0time%ms,%-Gflops%GFLOP/s,%-GBps%GB/s,"
    "frame-ratio:%frame-ratio%,vs-onednn:%vs-onednn%,vs-copy:%vs-copy%,vs-peak:%vs-peak%";
const char* csv_columns = "kernel,alg,isa,frame,threads,problem,min_ms,avg_ms,gflops_min,gflops_avg,gbps_min,gbps_avg,"
                          "frame_ratio,vs_onednn,vs_copy,vs_peak,rounds";
const char* csv_template = "%kernel%,%alg%,%isa%,%frame%,%threads%,%problem%,%-time%,%0time%,%-Gflops%,%0Gflops%,"
                           "%-GBps%,%0GBps%,%frame-ratio%,%vs-onednn%,%vs-copy%,%vs-peak%,%rounds%";

std::string number(double value, const char* format = "%.4g") {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

std::string optional_number(const std::optional<double>& value) { return value ? number(*value, "%.4f") : "n/a"; }

}  // namespace

std::string resolve_perf_template(const std::string& name) {
    if (name == "default" || name.empty()) return default_template;
    if (name == "csv") return csv_template;
    if (name.find('%') == std::string::npos)
        throw UsageError("--perf-template '" + name + "' has no %token% (or use default, csv)");
    return name;
}

std::string csv_perf_header() { return csv_columns; }

std::string format_perf_line(const std::string& perf_template, const PerfLine& line) {
    const KernelCase& c = *line.c;
    const double min_s = line.stats.min_ms / 1e3, avg_s = line.stats.avg_ms / 1e3;
    const std::map<std::string, std::string> tokens = {
        {"prb", repro(c)},
        {"kernel", c.spec.kernel},
        {"alg", c.spec.alg},
        {"isa", jit::to_string(c.spec.isa)},
        {"frame", jit::to_string(c.spec.frame)},
        {"problem", c.problem},
        {"threads", std::to_string(c.threads)},
        {"-time", number(line.stats.min_ms)},
        {"0time", number(line.stats.avg_ms)},
        {"Gops", number(line.flops / 1e9)},
        {"GB", number(line.bytes / 1e9)},
        {"-Gflops", number(line.flops / min_s / 1e9, "%.2f")},
        {"0Gflops", number(line.flops / avg_s / 1e9, "%.2f")},
        {"-GBps", number(line.bytes / min_s / 1e9, "%.2f")},
        {"0GBps", number(line.bytes / avg_s / 1e9, "%.2f")},
        {"frame-ratio", optional_number(line.frame_ratio)},
        {"vs-onednn", optional_number(line.vs_onednn)},
        {"vs-copy", optional_number(line.vs_copy)},
        {"vs-peak", optional_number(line.vs_peak)},
        {"rounds", std::to_string(line.stats.rounds)},
    };
    std::string out;
    for (size_t pos = 0; pos < perf_template.size();) {
        const size_t open = perf_template.find('%', pos);
        const size_t close = open == std::string::npos ? open : perf_template.find('%', open + 1);
        if (close == std::string::npos) {
            out += perf_template.substr(pos);
            break;
        }
        out += perf_template.substr(pos, open - pos);
        const std::string name = perf_template.substr(open + 1, close - open - 1);
        const auto it = tokens.find(name);
        if (it == tokens.end()) throw UsageError("--perf-template: unknown token %" + name + "%");
        out += it->second;
        pos = close + 1;
    }
    return out;
}

}  // namespace benchfp::harness
