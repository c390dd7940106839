#include "commands/alloc_command.hpp"

#include "alloc/export.hpp"
#include "alloc/pool.hpp"
#include "alloc/workloads.hpp"
#include "perf/symbols.hpp"
#include "report/file.hpp"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>

namespace benchfp::harness {

namespace {
// CLI::Range lets NaN through: every comparison with NaN is false.
const CLI::Validator finite(
    [](std::string& text) {
        const double value = std::strtod(text.c_str(), nullptr);
        return std::isfinite(value) ? std::string() : "not a finite number: " + text;
    },
    "FINITE");
// CLI::Range's message prints its bounds with std::to_string: 1e-9 read
// "0.000000", so "1e-10 not in range 0.000000 to 1.000000".
const CLI::Validator probability_range(
    [](std::string& text) {
        const double value = std::strtod(text.c_str(), nullptr);
        return value >= 1e-9 && value <= 1.0 ? std::string() : "Value " + text + " not in range [1e-09, 1]";
    },
    "FLOAT in [1e-09, 1]");
}  // namespace

void AllocProfileOptions::add_to(CLI::App& app) {
    app.add_option("--workload", workload, "workload to run: " + alloc::workloads::names())->required();
    auto* bytes = app.add_option("--sample-bytes", sample_bytes,
                                 "sample one allocation per N bytes on average (default 524288)")
                      ->check(CLI::Range(size_t{1}, size_t{1} << 40));
    auto* rate = app.add_option("--sample-rate", sample_rate, "sample each allocation with probability P")
                     ->check(finite)
                     ->check(probability_range);
    auto* every = app.add_flag("--all", all, "record every allocation");
    bytes->excludes(rate)->excludes(every);
    rate->excludes(every);
    app.add_option("--max-depth", max_depth, "deepest stack recorded (default 64)")->check(CLI::Range(1, 1024));
    app.add_option("--scale", scale, "work multiplier of the workload (default 1)")->check(CLI::Range(1, 1000));
    app.add_option("--out", out, "pprof output (.pb.gz)")->required();
    CLI::Option* folded_file = app.add_option("--folded", folded,
                   "also write folded stacks here, FlameGraph's format (flamegraph.pl reads it): one line per stack, "
                   "root first, frames ';'-separated, the allocated type as the last frame, a space, the count "
                   "(--folded-unit)");
    app.add_option("--folded-unit", folded_unit,
                   "the count of a folded stack: bytes (alloc_space: weight x requested bytes, default) or objects "
                   "(alloc_objects: weighted allocations), rounded once per stack")
        ->check(CLI::IsMember({"bytes", "objects"}))
        ->needs(folded_file);  // without a folded file it would be unused
    app.add_option("--json", json, "also write a JSON summary here (schema benchfp.alloc-profile/1)");
    app.add_option("--inuse-at", inuse_at,
                   "when inuse_objects/inuse_space are taken: peak (default; in the last iteration, where the "
                   "workload holds the most live bytes) or end (after the last iteration, before the workload "
                   "frees what it still holds: 0 for workloads that free everything in each iteration)")
        ->check(CLI::IsMember({"peak", "end"}));
}

int run_alloc_profile(const AllocProfileOptions& o) {
    const alloc::workloads::AllocWorkload* workload = alloc::workloads::find(o.workload);
    if (!workload) {
        std::cerr << "benchfp: unknown workload '" << o.workload << "' (known: " << alloc::workloads::names() << ")\n";
        return 2;
    }
    // Read by the pool when its first allocation makes the arena, where a bad
    // value can only stop the process: bad input, said here first.
    if (const std::string problem = alloc::release_bytes_from_environment().problem; !problem.empty()) {
        std::cerr << "benchfp: " << problem << '\n';
        return 2;
    }
    try {  // before the workload runs, not after
        report::check_outputs({{"--out", o.out}, {"--folded", o.folded}, {"--json", o.json}});
    } catch (const std::exception& e) {
        std::cerr << "benchfp: " << e.what() << '\n';
        return 2;
    }
    alloc::profiler::Options options;
    if (o.all) {
        options.sampling = alloc::profiler::Sampling::all;
    } else if (o.sample_rate) {
        options.sampling = alloc::profiler::Sampling::probability;
        options.probability = *o.sample_rate;
    } else {
        options.sampling = alloc::profiler::Sampling::bytes;
        options.mean_bytes = o.sample_bytes.value_or(512 * 1024);
    }
    options.max_depth = o.max_depth;

    alloc::profiler::clear();
    const auto wall_start = std::chrono::system_clock::now();
    const auto begun = std::chrono::steady_clock::now();
    alloc::profiler::start(options);
    if (const std::string warning = alloc::profiler::count_sites_warning(); !warning.empty())
        std::fprintf(stderr, "benchfp: %s\n", warning.c_str());
    // The in-use snapshot: everything recorded up to that moment, its frees included.
    alloc::profiler::Profile snapshot;
    const auto moment = o.inuse_at == "end" ? alloc::workloads::Moment::end : alloc::workloads::Moment::peak;
    alloc::workloads::run(*workload, alloc::pool_table(), o.scale, moment,
                          [&snapshot] { snapshot = alloc::profiler::fetch(); });
    alloc::profiler::stop();
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - begun).count();
    const alloc::profiler::Profile profile = alloc::profiler::fetch();

    perf::Symbols symbols;  // after the run: every module the workload loaded is known
    const alloc::Naming naming{[&](uintptr_t address) {
                                   const perf::SourceLine source = symbols.source_line(address);
                                   return alloc::SourceFrame{perf::without_clone_suffix(symbols.name(address)),
                                                             source.file, source.line};
                               },
                               [](const std::string& type) { return perf::demangle(type.c_str()); }};
    const alloc::RunInfo run{
        std::chrono::duration_cast<std::chrono::nanoseconds>(wall_start.time_since_epoch()).count(),
        static_cast<int64_t>(ms * 1e6), std::string("benchfp alloc profile --workload=") + workload->name};
    const auto unit = o.folded_unit == "objects" ? alloc::FoldedUnit::objects : alloc::FoldedUnit::bytes;
    try {
        // All of the run's outputs rendered, then written as one set: a failed write leaves none of
        // them new (report::write_files says where a path written in place differs).
        std::vector<report::NamedText> outputs{{o.out, alloc::to_pprof_gz(profile, naming, run, &snapshot)}};
        if (!o.folded.empty()) outputs.push_back({o.folded, alloc::to_folded(profile, naming, unit)});
        const nlohmann::json summary = alloc::to_json_summary(profile, naming, &snapshot, o.inuse_at);
        // Symbol and type names are bytes from ELF files, not always UTF-8: replaced, not thrown on.
        if (!o.json.empty())
            outputs.push_back({o.json, summary.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"});
        report::write_files(outputs);
        std::cout << "alloc profile: workload=" << workload->name << " samples=" << profile.allocations.size()
                  << " sampled-frees=" << profile.frees.size() << " alloc_objects~"
                  << std::llround(summary["totals"]["alloc_objects"].get<double>()) << " alloc_space~"
                  << std::llround(summary["totals"]["alloc_space"].get<double>()) << "B (" << std::llround(ms)
                  << " ms) -> " << o.out << std::endl;
    } catch (const std::exception& e) {
        std::cerr << "benchfp: " << e.what() << '\n';
        return 2;
    }
    // Written, as pprof reads an empty profile too, but no finding: a profile
    // of nothing says nothing about where the workload allocates.
    if (profile.allocations.empty()) {
        std::cerr << "benchfp: no allocation was sampled: the profile is empty (sample more often with "
                     "--sample-bytes or --sample-rate, or run more with --scale)\n";
        return 1;
    }
    return 0;
}

}  // namespace benchfp::harness
