#pragma once
// The family table: everything the harness knows of a kernel family, in one
// entry. Case expansion, help texts, `benchfp kernel --list` (which the CI
// scripts read) and the test sweeps all read it. A new family is its own
// folder under families/ (kernel builder, problem parser, workload with its
// reference, tolerance and oneDNN peer, and its entry) plus its line in
// family_table.cpp; nothing else names families.
#include "families/kernel_case.hpp"
#include "jit/generator.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace benchfp::harness {

class Workload;

struct Family {
    std::string name;
    std::string summary;            // what it computes, one line
    std::vector<std::string> algs;  // the names of its alg enum; the first is the default
    std::vector<jit::Isa> isas;     // the ISAs it has code for
    std::string problem_syntax;     // how its problems are written: help and error messages
    // Builds the kernel of a spec whose alg and ISA are the family's.
    std::unique_ptr<jit::Generator> (*build)(const KernelSpec& spec);
    // Parses a problem for an alg; throws UsageError prefixed with `where`.
    void (*validate)(const std::string& alg, const std::string& problem, const std::string& where);
    // The case's workload: data, driver, reference and tolerance (check()), oneDNN peer.
    std::unique_ptr<Workload> (*make_workload)(const KernelCase& c);
    // A small random problem of an alg: the test sweeps' and fuzzers' shapes.
    std::string (*random_problem)(const std::string& alg, std::mt19937& rng);
    bool onednn_peer = false;  // --vs=onednn has an equivalent
    // The bytes a case's buffers take (inputs, outputs, and in corr mode the
    // reference), computed before anything is allocated: the expansion refuses
    // what cannot fit in memory, rather than ending in std::bad_alloc or the
    // OOM killer mid-run. In double, so that no product of sizes can wrap.
    double (*bytes_needed)(const KernelCase& c) = nullptr;

    bool supports(jit::Isa isa) const;
    bool has_alg(const std::string& alg) const;
};

const std::vector<Family>& families();
const Family* find_family(const std::string& name);
std::string family_names();  // "eltwise, reduce, ..." for messages and help
nlohmann::json families_json();  // the table as data: benchfp kernel --list --json

// The kernel of a spec. Throws std::invalid_argument for an unknown family or
// alg, or an ISA the family has no code for.
std::unique_ptr<jit::Generator> build_kernel(const KernelSpec& spec);

// The ISAs of `all_isas` for which `has_code` is true (a family's isas list).
std::vector<jit::Isa> isas_where(bool (*has_code)(jit::Isa));

// For entries: the names of an alg enum's values, in order.
template <typename Enum, size_t N>
std::vector<std::string> names_of(const Enum (&values)[N]) {
    std::vector<std::string> out;
    for (Enum value : values) out.emplace_back(to_string(value));
    return out;
}

// For entries whose problem form does not depend on the alg: the parser as validator.
template <auto parse>
void validate_with(const std::string&, const std::string& problem, const std::string& where) {
    parse(problem, where);
}

// BENCHFP_STREAM_FLOATS, the stream_floats reduce's and eltwise's kernels are
// built with (jit/stream_floats.hpp): unset, jit::default_stream_floats; else
// a whole number in decimal digits from 1 to jit::max_stream_floats, or
// UsageError naming the value. So that the threshold measured on one CPU can
// be measured again on another, and a test can step both loops on small problems.
int64_t stream_floats_setting();
// validate_with, and the setting: a bad value is bad usage when cases are
// expanded, before any kernel is built.
template <auto parse>
void validate_streaming(const std::string& alg, const std::string& problem, const std::string& where) {
    validate_with<parse>(alg, problem, where);
    stream_floats_setting();
}

// For entries: the workload factory of a workload type.
template <typename W>
std::unique_ptr<Workload> make(const KernelCase& c) {
    return std::make_unique<W>(c);
}

}  // namespace benchfp::harness
