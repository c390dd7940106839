#pragma once
// The judge's readers and its one writer. Every reader checks its file
// against the schema as it reads (report/json_input.hpp): a wrong type, a
// value out of range, a missing field is an InputError naming the file and the
// field. The parse_* forms take a parsed document (the fuzz target's seam).
#include "report/judge/model.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace benchfp::report {

// Either kind of run:
// - Google Benchmark JSON (--benchmark_out). Per benchmark the minimum over its
//   repetitions' iterations; a file of aggregates only
//   (--benchmark_report_aggregates_only=true) gives its "min" aggregate where
//   the suite computes one, else its median, else its mean -- RunResults::time_from
//   says which. The machine comes from the context (report/machine.hpp).
// - benchfp's own results (benchfp kernel --mode=perf --json=FILE): a benchmark
//   per passed perf case, "kernel/<kernel>/<alg>/<isa>/<problem>/<frame>" (the
//   problem followed by "@<N>t" on N > 1 threads), its
//   minimum time per call.
RunResults read_run(const std::string& path);
RunResults parse_run(const nlohmann::json& doc, const std::string& path);

// The ISA names a benchfp results file may hold (the JIT library's, which the
// judge does not link): the readers check them, judge --untested-isas takes them.
const std::vector<std::string>& known_isa_names();

// Several runs of the same suites on one machine (interleaved runs of one
// build): the minimum over all of them per benchmark. Throws when machines differ.
RunResults merge_runs(const std::vector<RunResults>& runs);
// Runs of several machines: merged per machine, in the order first seen.
std::vector<RunResults> merge_by_machine(const std::vector<RunResults>& runs);
// What merge_by_machine groups runs by: a known machine's slug; an unknown one
// only with runs of its own host ("unknown" is no identity).
std::string run_machine_key(const Fingerprint& f);

RunResults read_baseline(const std::string& path);
RunResults parse_baseline(const nlohmann::json& doc, const std::string& path);
// `build`: what built the judge that wrote it (harness build_info()), stored as is.
void write_baseline(const std::string& path, const RunResults& results, const nlohmann::json& build = nullptr);

Tolerances read_tolerances(const std::string& path);
Tolerances parse_tolerances(const nlohmann::json& doc, const std::string& path);

// Callgrind counts of a run: a JSON object, id -> instructions per operation.
std::map<std::string, double> read_instructions(const std::string& path);
std::map<std::string, double> parse_instructions(const nlohmann::json& doc, const std::string& path);

}  // namespace benchfp::report

namespace benchfp::report {

// Where a machine's stored baseline of a suite lives: <dir>/<slug>/<suite>.json
// ("results/baselines/amd-epyc-family-26-model-2-avx512-2cores/alloc.json").
std::string baseline_path(const std::string& dir, const Fingerprint& machine, const std::string& suite);

}  // namespace benchfp::report
