#include "kernel/perf_measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace benchfp::harness {

namespace {

using Clock = std::chrono::steady_clock;
constexpr double target_sample_ms = 1.0;

double time_ms(const std::function<void()>& run, long calls) {
    const auto start = Clock::now();
    for (long i = 0; i < calls; ++i) run();
    return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

}  // namespace

std::vector<PerfStats> measure_interleaved(const std::vector<std::function<void()>>& variants, double budget_ms,
                                           int min_rounds) {
    std::vector<PerfStats> stats(variants.size());
    std::vector<double> total(variants.size(), 0.0);
    for (size_t v = 0; v < variants.size(); ++v) {
        const double once = std::max(time_ms(variants[v], 1), 1e-6);  // also the warm-up
        stats[v].calls_per_sample = std::max(1L, std::lround(std::ceil(target_sample_ms / once)));
        stats[v].min_ms = std::numeric_limits<double>::infinity();
    }
    const auto start = Clock::now();
    auto elapsed_ms = [&] { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); };
    for (int round = 0; round < min_rounds || elapsed_ms() < budget_ms; ++round) {
        // Alternate the order every round, so no variant always runs first.
        for (size_t k = 0; k < variants.size(); ++k) {
            const size_t v = round % 2 ? variants.size() - 1 - k : k;
            const double per_call = time_ms(variants[v], stats[v].calls_per_sample) / stats[v].calls_per_sample;
            stats[v].min_ms = std::min(stats[v].min_ms, per_call);
            total[v] += per_call;
            ++stats[v].rounds;
        }
    }
    for (size_t v = 0; v < variants.size(); ++v) stats[v].avg_ms = total[v] / stats[v].rounds;
    return stats;
}

}  // namespace benchfp::harness
