// The allocator regression gate's suites (Google Benchmark): every workload in
// every variant of the pool and next to peer allocators, in one binary, so
// ratios are measured side by side in one run (use
// --benchmark_enable_random_interleaving=true with repetitions).
//
//   alloc/<workload>/<variant>
//   variants: compiled_out (hook compiled out), off (hook compiled in, profiler
//   stopped), counting (byte sampling that never samples: what the count alone
//   costs), sampled_512k (byte sampling, 512 KiB), probability (p = 0.001),
//   record_all; peers: glibc, jemalloc, mimalloc, tcmalloc.
//
// Peers are loaded with dlopen(RTLD_LOCAL) and called through their own symbols,
// so none replaces glibc's malloc for the others (Debian builds jemalloc and
// tcmalloc as malloc replacements); jemalloc, which dlopen refuses, runs in a
// process of its own under LD_PRELOAD. A peer that cannot be loaded is reported
// as an error for its benchmarks, never silently dropped.
// Counter bytes_per_iteration: usable bytes allocated per iteration (class
// rounding included), measured in an untimed pass: the memory ratio.
// Counter ns_per_iteration: the mean time of one iteration (Google Benchmark's
// own time is per chunk of iterations). Counter ratio_to_compiled_out: see run().
// Counter resident_bytes_per_live_object: what the allocator holds at the
// workload's peak over the live objects then, measured in a child forked from
// a zygote made before any benchmark ran (lib/alloc/footprint.hpp), with
// live_objects_at_peak beside it; for the pool's compiled_out and off variants
// and every peer (the sampling variants would add the profiler's tables, which
// are not the allocator's footprint), on every workload but producer_consumer
// (workloads.cpp says why). A measurement that fails is the benchmark's error.
//
// The workloads are lib/alloc/workloads.hpp's, the same code `benchfp alloc
// profile` runs; each variant is an AllocatorTable. The pool's variants take
// every pool path the workload takes (typed, big, managed: see workloads.hpp);
// a peer, which has only malloc/free, does the same work through those.
#include "alloc/allocator_table.hpp"
#include "alloc/footprint.hpp"
#include "alloc/profiler.hpp"
#include "alloc/workloads.hpp"
#include "jit/isa.hpp"
#include "report/judge.hpp"
#include "report/machine.hpp"
#include "bench_main.hpp"

#include <benchmark/benchmark.h>
#include <cmath>
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace {

using namespace benchfp;
using alloc::AllocatorTable;
using alloc::workloads::AllocWorkload;
using alloc::workloads::AllocWorkloadState;

size_t glibc_usable(void* p) { return malloc_usable_size(p); }  // also jemalloc's, when preloaded

struct Variant {
    std::string name;
    std::optional<AllocatorTable> api;
    alloc::profiler::Options profiling;
    bool profiled = false;
    std::string paired_with;  // the variant each chunk is paired with (see run()), or none
    std::string unavailable;  // why api is empty
};

// A peer from its shared library, by symbol names; without api (and with the
// loader's reason) when it cannot be loaded.
Variant load_peer(const char* name, const char* library, const char* alloc, const char* free, const char* usable) {
    Variant v{name, std::nullopt, {}, false, "", ""};
    void* handle = dlopen(library, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        v.unavailable = std::string(name) + " cannot be loaded in-process: " + dlerror();
        return v;
    }
    AllocatorTable api{reinterpret_cast<void* (*)(size_t)>(dlsym(handle, alloc)),
                       reinterpret_cast<void (*)(void*)>(dlsym(handle, free)),
                       reinterpret_cast<size_t (*)(void*)>(dlsym(handle, usable))};
    if (!api.alloc || !api.free || !api.usable_size) v.unavailable = std::string(name) + ": symbols missing in " + library;
    else v.api = api;
    return v;
}

bool jemalloc_preloaded() { return dlsym(RTLD_DEFAULT, "mallctl") != nullptr; }

Variant glibc() {
    Variant v{"glibc", AllocatorTable{std::malloc, std::free, glibc_usable}, {}, false, "", ""};
    if (jemalloc_preloaded()) v.api.reset(), v.unavailable = "glibc's malloc is replaced by the preloaded jemalloc";
    return v;
}

// Debian's jemalloc uses initial-exec TLS, so dlopen refuses it ("static TLS
// block"); it is measured in a run of its own with LD_PRELOAD, where malloc is
// jemalloc's (ci/gate.sh makes that run). Elsewhere its rows say why
// they are empty.
Variant preloaded_jemalloc() {
    Variant v{"jemalloc", std::nullopt, {}, false, "", ""};
    if (jemalloc_preloaded()) v.api = AllocatorTable{std::malloc, std::free, glibc_usable};
    else v.unavailable = "jemalloc cannot be loaded in-process (initial-exec TLS): run with LD_PRELOAD=libjemalloc.so.2";
    return v;
}

std::vector<Variant> variants() {
    using alloc::profiler::Sampling;
    // Every pool path with the hook and with it compiled out (lib/alloc/pool_table.cpp).
    const AllocatorTable& hooked = alloc::pool_table();
    const AllocatorTable& bare = alloc::pool_table_unprofiled();
    return {
        // The hook against no hook; sampling against the same code stopped.
        {"compiled_out", bare, {}, false, "", ""},
        {"off", hooked, {}, false, "compiled_out", ""},
        // Byte sampling with a mean gap of 2^62 bytes: every allocation counted
        // (the count sites' sub and branch), none sampled. Sampling's cost over
        // hook off is this ratio's (the count's) and the samples' own.
        {"counting", hooked, {Sampling::bytes, 1.0, size_t{1} << 62}, true, "off", ""},
        {"sampled_512k", hooked, {Sampling::bytes, 1.0, 512 * 1024}, true, "off", ""},
        {"probability", hooked, {Sampling::probability, 0.001, 0}, true, "off", ""},
        {"record_all", hooked, {Sampling::all}, true, "off", ""},
        glibc(),
        preloaded_jemalloc(),
        load_peer("mimalloc", "libmimalloc.so.2", "mi_malloc", "mi_free", "mi_usable_size"),
        load_peer("tcmalloc", "libtcmalloc_minimal.so.4", "tc_malloc", "tc_free", "tc_malloc_size"),
    };
}

// What compute() gives for a benchmark, computed at its first run and kept in
// `known`: every repetition of the benchmark then sees the same value.
template <typename T, typename Compute>
const T& once_per_benchmark(std::map<std::string, T>& known, const std::string& benchmark, Compute compute) {
    if (const auto it = known.find(benchmark); it != known.end()) return it->second;
    return known.emplace(benchmark, compute()).first->second;
}

// The iterations that take the workload's chunk time, measured.
int64_t calibrate_chunk(const AllocWorkload& w, const AllocatorTable& api) {
    using clock = std::chrono::steady_clock;
    const double target_ns = w.min_chunk_us * 1e3;
    AllocWorkloadState warm_up(api);
    const auto time_iterations = [&](int64_t n) {
        const auto start = clock::now();
        for (int64_t i = 0; i < n; ++i) w.iteration(api, warm_up);
        return std::chrono::duration<double, std::nano>(clock::now() - start).count();
    };
    int64_t n = 1;
    while (n < (int64_t{1} << 20) && time_iterations(n) < target_ns) n *= 2;
    const double ns = time_iterations(n);  // again, warm: the first pass paid for page faults
    return std::max<int64_t>(1, static_cast<int64_t>(n * target_ns / ns));
}

// Iterations per timed chunk: enough for the workload's chunk time. Measured once per benchmark, so
// every repetition times the same chunks.
int64_t chunk_iterations(const std::string& benchmark, const AllocWorkload& w, const AllocatorTable& api) {
    static std::map<std::string, int64_t> known;
    return once_per_benchmark(known, benchmark, [&] { return calibrate_chunk(w, api); });
}

// Iterations that record about records_per_chunk allocations.
int64_t chunk_of_records(const AllocWorkload& w, const Variant& v) {
    constexpr double records_per_chunk = 32768;
    constexpr int probe_iterations = 16;
    AllocWorkloadState probe(*v.api);
    alloc::profiler::clear();
    alloc::profiler::start(v.profiling);
    for (int i = 0; i < probe_iterations; ++i) w.iteration(*v.api, probe);
    alloc::profiler::stop();
    const double per_iteration = static_cast<double>(alloc::profiler::fetch().allocations.size()) / probe_iterations;
    alloc::profiler::clear();
    return static_cast<int64_t>(std::ceil(records_per_chunk / std::max(1.0, per_iteration)));
}

// Iterations per timed chunk for a variant that records every allocation: a
// chunk's cost grows with the records it holds (the profile is cleared per
// chunk), so a chunk calibrated per process, as chunk_iterations does, made
// record all / hook off depend on the process (small_churn 3.2-3.4 in two
// processes and 6.3-6.4 in a third, structs 14.5-19.2, AMD Zen 5 guest). A
// fixed count of records per chunk instead, counted in a short run; at least
// the calibrated chunk (the workload's shortest time). Once per benchmark.
int64_t record_all_chunk(const std::string& benchmark, const AllocWorkload& w, const Variant& v, int64_t calibrated) {
    static std::map<std::string, int64_t> known;
    return once_per_benchmark(known, benchmark, [&] { return std::max(chunk_of_records(w, v), calibrated); });
}

// The footprint of one benchmark, measured once (its first run: repetitions
// report the same figure, as they report the same bytes_per_iteration), or why
// there is none.
struct Footprint {
    std::optional<alloc::footprint::Figure> figure;
    std::string error;
};
std::optional<alloc::footprint::Zygote> zygote;  // made in main(), before any benchmark runs
std::string no_zygote;                           // why there is none
const Footprint& footprint_of(const std::string& benchmark, const AllocWorkload& w, const AllocatorTable& api) {
    static std::map<std::string, Footprint> known;
    return once_per_benchmark(known, benchmark, [&] {
        Footprint f;
        try {
            if (!zygote) throw alloc::footprint::Error(no_zygote);
            f.figure = zygote->measure(w, api);
        } catch (const alloc::footprint::Error& e) {
            f.error = e.what();
        }
        return f;
    });
}

// One benchmark: the workload with v, in chunks; one Google Benchmark iteration
// per chunk, timed by hand. With a reference (another variant of the pool, so
// the same free()), each chunk of v is paired with a chunk of the reference
// that replays the same operations on the same live blocks, in alternating
// order (ABBA), and counter ratio_to_<reference> is the median of the pairs'
// time ratios. Both halves of a pair see the same heap and the same load on
// this shared machine: the ratio keeps still where separate runs drift by
// several percent. The profiler runs during v's chunks only.
void run(benchmark::State& state, const AllocWorkload& w, const Variant& v, const Variant* reference) {
    using clock = std::chrono::steady_clock;
    if (!v.api) {
        state.SkipWithError(v.unavailable.c_str());
        return;
    }
    // Before anything of this benchmark runs in this process; no thread of a workload is alive here.
    const bool measured = !v.profiled && w.footprint_copies > 0;
    const std::string id = std::string(w.name) + "/" + v.name;
    const Footprint* footprint = measured ? &footprint_of(id, w, *v.api) : nullptr;
    if (footprint && !footprint->figure) {
        state.SkipWithError(footprint->error.c_str());
        return;
    }
    double bytes = 0;
    {
        AllocWorkloadState counting(*v.api);
        counting.count_bytes = &bytes;
        w.iteration(*v.api, counting);  // untimed: the memory counter
    }
    int64_t chunk = chunk_iterations(id, w, *v.api);
    if (v.profiled && v.profiling.sampling == alloc::profiler::Sampling::all) chunk = record_all_chunk(id, w, v, chunk);
    AllocWorkloadState run_state(*v.api);
    // Each chunk of a profiled variant starts from an empty profile (cleared
    // untimed): recording every allocation, a chunk's cost grows with the
    // records the profile holds (cleared every 4096 iterations instead,
    // small_churn's record all / hook off spread 2.4-12.2 between gate runs on
    // the AMD Zen 5 guest); record_all_chunk fixes how many a chunk makes.
    const auto time_chunk = [&](const Variant& variant) {
        if (variant.profiled) {
            alloc::profiler::clear();
            alloc::profiler::start(variant.profiling);
        }
        const auto start = clock::now();
        for (int64_t i = 0; i < chunk; ++i) w.iteration(*variant.api, run_state);
        const double ns = std::chrono::duration<double, std::nano>(clock::now() - start).count();
        if (variant.profiled) alloc::profiler::stop();
        return ns;
    };
    std::vector<double> ratios;
    double total_ns = 0;
    int64_t chunks = 0;
    for (auto _ : state) {
        // Both chunks of a pair start from the same place in the workload's sequence.
        const size_t replay_from = run_state.at;
        const auto chunk_from_start = [&](const Variant& variant) {
            run_state.at = replay_from;
            return time_chunk(variant);
        };
        double ns, reference_ns = 0;
        if (reference && (chunks & 1)) {
            reference_ns = chunk_from_start(*reference);
            ns = chunk_from_start(v);
        } else {
            ns = chunk_from_start(v);
            if (reference) reference_ns = chunk_from_start(*reference);
        }
        state.SetIterationTime(ns * 1e-9);
        total_ns += ns;
        ++chunks;
        if (reference) ratios.push_back(ns / reference_ns);
    }
    alloc::profiler::clear();  // the last chunk's records: not kept across benchmarks
    state.counters["bytes_per_iteration"] = bytes;
    state.counters["ns_per_iteration"] = total_ns / static_cast<double>(std::max<int64_t>(1, chunks * chunk));
    if (reference) state.counters["ratio_to_" + reference->name] = report::median(ratios);
    if (footprint) {
        state.counters["resident_bytes_per_live_object"] = footprint->figure->per_live_object();
        state.counters["live_objects_at_peak"] = footprint->figure->live_objects;
    }
}

}  // namespace

int main(int argc, char** argv) {
    benchfp::bench::exit_on_bad_pool_environment(argv[0]);
    static const std::vector<Variant> all = variants();
    for (const AllocWorkload& w : alloc::workloads::all())
        for (const Variant& v : all) {
            const auto reference = std::find_if(all.begin(), all.end(), [&](const Variant& r) { return r.name == v.paired_with; });
            benchmark::RegisterBenchmark(("alloc/" + std::string(w.name) + "/" + v.name).c_str(),
                                         [&w, &v, reference](benchmark::State& s) {
                                             run(s, w, v, reference == all.end() ? nullptr : &*reference);
                                         })
                ->UseManualTime();
        }
    // Every allocator initialised (one block each), then the footprint zygote
    // forked: every measurement starts from this state, whatever ran before it.
    for (const Variant& v : all)
        if (v.api) v.api->free(v.api->alloc(64));
    try {
        zygote.emplace();
    } catch (const alloc::footprint::Error& e) {
        no_zygote = e.what();
    }
    // The machine fingerprint the judge compares with the baseline's.
    const auto isa = benchfp::jit::host_isa();
    const auto machine = benchfp::report::this_machine(isa ? benchfp::jit::to_string(*isa) : "none");
    for (const auto& [key, value] : benchfp::report::google_benchmark_context(machine))
        benchmark::AddCustomContext(key, value);
    // Which path the sampled variants time: the hooked entries' count sites, or
    // (refused) the slower one; in the run's context, and on stderr when refused.
    alloc::profiler::start({alloc::profiler::Sampling::bytes});
    const std::string refusal = alloc::profiler::count_sites_refusal();
    const std::string warning = alloc::profiler::count_sites_warning();
    alloc::profiler::stop();
    alloc::profiler::clear();
    benchmark::AddCustomContext("benchfp_allocator_count_sites", refusal.empty() ? "counting" : "refused: " + refusal);
    if (!warning.empty()) std::fprintf(stderr, "benchfp_alloc_gate: %s\n", warning.c_str());
    return benchfp::bench::run_benchmarks(argc, argv);
}
