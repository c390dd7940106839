// Google Benchmark: what the allocation profiler costs.
//   BM_AllocFree/<variant>: alloc+free of 64 bytes with the hook compiled out,
//     compiled in but off, byte-sampled at 512 KiB, and recording everything.
//   BM_RecordDeepStack: alloc+free from 32 frames deep with every allocation
//     recorded, and the same with the profiler off: the difference is the
//     cost of recording one allocation with a 32-frame stack.
#include "alloc/pool.hpp"
#include "alloc/profiler.hpp"
#include "bench_main.hpp"

#include <benchmark/benchmark.h>

namespace {

using namespace benchfp;

enum Variant { compiled_out, hook_off, sampled_512k, record_all };

void start_for(Variant v) {
    alloc::profiler::clear();
    if (v == sampled_512k) alloc::profiler::start({alloc::profiler::Sampling::bytes, 1.0, 512 * 1024});
    if (v == record_all) alloc::profiler::start({alloc::profiler::Sampling::all});
}

void BM_AllocFree(benchmark::State& state) {
    const auto variant = static_cast<Variant>(state.range(0));
    start_for(variant);
    for (auto _ : state) {
        void* p = variant == compiled_out ? alloc::pool_alloc_unprofiled(64) : alloc::pool_alloc(64);
        benchmark::DoNotOptimize(p);
        alloc::free(p);
    }
    alloc::profiler::stop();
    alloc::profiler::clear();
    state.SetLabel(variant == compiled_out ? "hook compiled out"
                   : variant == hook_off   ? "hook compiled in, off"
                   : variant == sampled_512k ? "byte-sampled 512 KiB"
                                             : "record all");
}
BENCHMARK(BM_AllocFree)->Arg(compiled_out)->Arg(hook_off)->Arg(sampled_512k)->Arg(record_all);

// Recurses to the requested depth, then allocates there.
[[gnu::noinline]] void* allocate_at_depth(int depth) {
    void* p = depth > 0 ? allocate_at_depth(depth - 1) : alloc::pool_alloc(64);
    benchmark::DoNotOptimize(p);
    return p;
}

void BM_RecordDeepStack(benchmark::State& state) {
    const bool recording = state.range(0) != 0;
    if (recording) start_for(record_all);
    int64_t done = 0;
    double frames = 0, records = 0;
    for (auto _ : state) {
        alloc::free(allocate_at_depth(30));  // + the benchmark's own frames: 32 and more in all
        if (recording && ++done % 100000 == 0) {
            state.PauseTiming();
            for (const auto& r : alloc::profiler::fetch().allocations) frames += r.stack.size(), ++records;
            alloc::profiler::clear();  // bounded memory: the buffers restart
            state.ResumeTiming();
        }
    }
    if (records) state.counters["frames_per_record"] = frames / records;
    alloc::profiler::stop();
    alloc::profiler::clear();
    state.SetLabel(recording ? "record all, 32-frame stacks" : "profiler off");
}
BENCHMARK(BM_RecordDeepStack)->Arg(0)->Arg(1);

}  // namespace

int main(int argc, char** argv) {
    benchfp::bench::exit_on_bad_pool_environment(argv[0]);
    return benchfp::bench::run_benchmarks(argc, argv);
}
