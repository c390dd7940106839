#include "kernel/perf_template.hpp"

#include "quoted.hpp"
#include "usage_error.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace benchfp::harness {

namespace {

const char* default_template =
    "perf,%kernel%,%alg%,%isa%,%frame%,%problem%,min:%-time%ms,avg:%0time%ms,%-Gflops%GFLOP/s,%-GBps%GB/s,"
    "frame-ratio:%frame-ratio%,frame-cost:%frame-cost%%frame-ci%,aa:%aa%%aa-ci%,vs-onednn:%vs-onednn%,vs-copy:%vs-copy%,vs-peak:%vs-peak%";
const char* csv_columns = "kernel,alg,isa,frame,threads,problem,min_ms,avg_ms,gflops_min,gflops_avg,gbps_min,gbps_avg,"
                          "frame_ratio,vs_onednn,vs_copy,vs_peak,rounds,frame_cost,frame_lo,frame_hi,aa,aa_lo,aa_hi,pairs";
const char* csv_template = "%kernel%,%alg%,%isa%,%frame%,%threads%,%problem%,%-time%,%0time%,%-Gflops%,%0Gflops%,"
                           "%-GBps%,%0GBps%,%frame-ratio%,%vs-onednn%,%vs-copy%,%vs-peak%,%rounds%,"
                           "%frame-cost%,%frame-lo%,%frame-hi%,%aa%,%aa-lo%,%aa-hi%,%pairs%";

std::string number(double value, const char* format = "%.4g") {
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, format, value);
    return buffer;
}

std::string optional_number(const std::optional<double>& value) { return value ? number(*value, "%.4f") : "n/a"; }

// The tokens of a paired ratio: its median, "[lo;hi]", lo and hi ("n/a" for
// an end the pairs were too few to give).
void add_interval_tokens(std::map<std::string, std::string>& tokens, const std::string& name,
                         const std::string& prefix, const std::optional<report::MedianInterval>& m) {
    const auto end = [&](double v) { return m ? optional_number(std::isfinite(v) ? std::optional(v) : std::nullopt) : "n/a"; };
    tokens[name] = m ? optional_number(m->median) : "n/a";
    tokens[prefix + "-lo"] = end(m ? m->lo : NAN);
    tokens[prefix + "-hi"] = end(m ? m->hi : NAN);
    tokens[prefix + "-ci"] = m ? "[" + tokens[prefix + "-lo"] + ";" + tokens[prefix + "-hi"] + "]" : "";
}

}  // namespace

std::string resolve_perf_template(const std::string& name) {
    if (name == "default" || name.empty()) return default_template;
    if (name == "csv") return csv_template;
    if (name.find('%') == std::string::npos)
        throw UsageError("--perf-template " + quoted_token(name) + " has no %token% (or use default, csv)");
    return name;
}

std::string csv_perf_header() { return csv_columns; }

std::string format_perf_line(const std::string& perf_template, const PerfLine& line) {
    const KernelCase& c = *line.c;
    const double min_s = line.stats.min_ms / 1e3, avg_s = line.stats.avg_ms / 1e3;
    std::map<std::string, std::string> tokens = {
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
        {"pairs", line.aa ? std::to_string(line.aa->n) : "n/a"},
    };
    add_interval_tokens(tokens, "frame-cost", "frame", line.frame_cost);
    add_interval_tokens(tokens, "aa", "aa", line.aa);
    std::string out;
    for (size_t pos = 0; pos < perf_template.size();) {
        const size_t open = perf_template.find('%', pos);
        const size_t close = open == std::string::npos ? open : perf_template.find('%', open + 1);
        if (open == std::string::npos) {
            out += perf_template.substr(pos);
            break;
        }
        // A lone '%' is a token left open ("%-time ms"), never text: printed as
        // it stands, the column the reader asked for would be missing unnoticed.
        if (close == std::string::npos)
            throw UsageError("--perf-template: the '%' at offset " + std::to_string(open) +
                             " opens a token that no '%' closes (tokens are %name%, and %% is a '%')");
        out += perf_template.substr(pos, open - pos);
        const std::string name = perf_template.substr(open + 1, close - open - 1);
        if (name.empty()) {  // "%%": a literal '%'
            out += '%';
            pos = close + 1;
            continue;
        }
        const auto it = tokens.find(name);
        if (it == tokens.end()) throw UsageError("--perf-template: unknown token " + quoted_token("%" + name + "%"));
        out += it->second;
        pos = close + 1;
    }
    return out;
}

}  // namespace benchfp::harness
