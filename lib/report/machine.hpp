#pragma once
// The machine fingerprint: what absolute times depend on. This is the one place
// that builds this machine's fingerprint and reads one from JSON (a baseline, a
// Google Benchmark context, benchfp's own results).
//
// Identity is the CPU model (its name, family and model: see cpu_model), the
// ISA benchfp's kernels use and the core count:
// two results compare as "the same machine" only when all three are known on
// both sides and equal. "unknown" is never a match. Host name, clock, caches and
// Google Benchmark's build type are described in reports, not compared (a
// baseline stays valid on the next VM of the same kind).
#include "report/json_input.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <utility>

namespace benchfp::report {

inline const std::string unknown = "unknown";

struct Fingerprint {
    Fingerprint() = default;
    Fingerprint(std::string cpu_model, std::string isa_name, int core_count)  // the identity
        : cpu(std::move(cpu_model)), isa(std::move(isa_name)), cores(core_count) {}

    std::string cpu = unknown;  // CPU model: cpu_model()
    std::string isa = unknown;  // highest ISA of lib/jit on this host ("none" below sse41)
    int cores = 0;              // online CPUs; 0: unknown
    // Described, not compared:
    std::string host;                // host name
    double mhz = 0;                  // 0: unknown
    std::string caches;              // "L1d 32 KiB x2, L2 ..."
    std::string library_build_type;  // Google Benchmark's own ("debug" makes times suspect)
    std::string kernel;              // "Linux 6.1.0-28-amd64" (uname)
    std::string flags;               // the CPU's flags, as /proc/cpuinfo lists them

    bool known() const { return cpu != unknown && isa != unknown && cores > 0; }
    // The identity; compare with same_machine, which refuses unknowns.
    bool operator==(const Fingerprint& o) const { return cpu == o.cpu && isa == o.isa && cores == o.cores; }
    // "AMD EPYC, avx512, 2 cores", with "unknown" spelled out where it is.
    std::string describe() const;
    // Directory name of this machine's baselines: "amd-epyc-family-26-model-2-avx512-2cores".
    std::string slug() const;
};

// Both known and equal identities.
bool same_machine(const Fingerprint& a, const Fingerprint& b);

// This machine. lib/report does not detect ISAs: the caller passes lib/jit's
// name of jit::host_isa() ("none" when below every ISA).
Fingerprint this_machine(const std::string& isa);
// The CPU model from /proc/cpuinfo: its "model name", then its family and
// model numbers where it has them ("AMD EPYC (family 26, model 2)"), or
// "unknown" where there is no name. Public only
// while harness/kernel/host_info.cpp builds its own host JSON; once it uses
// to_json(this_machine(isa)), this belongs in machine.cpp.
std::string cpu_model();

// {"cpu", "isa", "cores", and host, mhz, caches, kernel, flags where known}: the "fingerprint"
// of a baseline, the "host" of benchfp kernel --json.
nlohmann::json to_json(const Fingerprint& f);
// Reads what to_json writes; cpu, isa, cores required.
Fingerprint fingerprint_from_json(const In& in);

// The custom context a Google Benchmark suite adds (benchmark::AddCustomContext)
// so that the judge knows its machine: benchfp_cpu, benchfp_isa, benchfp_cores,
// and for the report's Version Info benchfp_kernel, benchfp_flags and
// benchfp_compiler (the compiler of this library: the suite's build).
std::map<std::string, std::string> google_benchmark_context(const Fingerprint& f);
// A Google Benchmark file's context: benchfp's keys where the suite added them,
// and Google Benchmark's own (host_name, num_cpus, mhz_per_cpu, caches,
// library_build_type). Without benchfp's keys the CPU model and ISA are unknown.
// (benchfp_compiler is the build's, not the machine's: read_run takes it.)
Fingerprint fingerprint_from_google_benchmark(const In& context);

}  // namespace benchfp::report
