#include "kernel/perf_measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>

namespace benchfp::harness {

namespace {

// Every chunk of every variant, and the pairs' ratios.
class Pairing {
public:
    Pairing(const std::vector<bool>& same_work, const ChunkTimer& timer, const PairedOptions& options)
        : same_work_(same_work), timer_(timer), options_(options), total_(same_work.size(), 0.0),
          ratios_(same_work.size()) {
        run_.stats.resize(same_work.size());
        for (PerfStats& s : run_.stats) s.min_ms = std::numeric_limits<double>::infinity();
    }

    // One call of each same-work variant at every placement but the first
    // (untimed: their code and its pages are warm), calls per chunk from one
    // call of each at the first, then one chunk of each untimed: caches, TLB
    // and page tables are warm before the first pair.
    void warm_up() {
        for (size_t j = placements(); j-- > 1;) {
            place(j);
            for (size_t v = 0; v < same_work_.size(); ++v)
                if (same_work_[v]) timer_(v, 1);
        }
        place(0);
        for (size_t v = 0; v < same_work_.size(); ++v) {
            const double once = std::max(timer_(v, 1), 1e-6);
            run_.stats[v].calls_per_sample = std::max(1L, std::lround(std::ceil(options_.chunk_ms / once)));
        }
        for (size_t v = 1; v < same_work_.size(); ++v)
            if (same_work_[v]) run_.stats[v].calls_per_sample = run_.stats[0].calls_per_sample;
        for (size_t v = 0; v < same_work_.size(); ++v) timer_(v, run_.stats[v].calls_per_sample);
    }

    // One pair per variant, in the order and with the halves' order of
    // `round`, all at its placement (see PairedOptions::placements).
    void round(size_t round) {
        place(round / 2 % placements());
        const size_t n = same_work_.size();
        if (n == 1) chunk(0);
        for (size_t k = 1; k < n; ++k) {
            const size_t v = round % 2 ? n - k : k;
            double variant, reference;
            if (round % 2) reference = chunk(0), variant = chunk(v);
            else variant = chunk(v), reference = chunk(0);
            ratios_[v].push_back(variant / reference);
        }
        ++run_.pairs;
    }

    bool converged() const {
        for (size_t v = 1; v < same_work_.size(); ++v)
            if (same_work_[v] && !(report::median_interval(ratios_[v]).half_width() <= options_.target_half_width))
                return false;
        return true;
    }

    double timed_ms() const { return run_.timed_ms; }

    PairedRun finish(bool target_met) {
        for (size_t v = 0; v < same_work_.size(); ++v) {
            PerfStats& s = run_.stats[v];
            s.avg_ms = total_[v] / std::max(1, s.rounds);
            if (v) s.to_reference = report::median_interval(ratios_[v]);
        }
        run_.target_met = target_met;
        run_.placements_timed = std::min(placements(), (run_.pairs + 1) / 2);
        return run_;
    }

private:
    size_t placements() const { return options_.place ? std::max<size_t>(options_.placements, 1) : 1; }
    void place(size_t j) const {
        if (placements() > 1) options_.place(j);
    }

    // One timed chunk of v: its time per call.
    double chunk(size_t v) {
        PerfStats& s = run_.stats[v];
        const double ms = timer_(v, s.calls_per_sample);
        const double per_call = ms / s.calls_per_sample;
        run_.timed_ms += ms;
        s.min_ms = std::min(s.min_ms, per_call);
        total_[v] += per_call;
        ++s.rounds;
        return per_call;
    }

    const std::vector<bool>& same_work_;
    const ChunkTimer& timer_;
    const PairedOptions& options_;
    std::vector<double> total_;
    std::vector<std::vector<double>> ratios_;
    PairedRun run_;
};

}  // namespace

PairedRun measure_paired(const std::vector<bool>& same_work, const ChunkTimer& timer, const PairedOptions& options) {
    Pairing pairing(same_work, timer, options);
    pairing.warm_up();
    size_t next_look = std::max<size_t>(options.min_pairs, 6);
    for (size_t round = 0;; ++round) {
        pairing.round(round);
        const size_t pairs = round + 1;
        if (pairs >= next_look) {
            if (pairing.converged()) return pairing.finish(true);
            next_look += std::max<size_t>(1, next_look / 2);
        }
        if (pairs >= options.min_pairs && pairing.timed_ms() >= options.budget_ms)
            return pairing.finish(pairing.converged());
    }
}

PairedRun measure_paired(const std::vector<TimedVariant>& variants, const PairedOptions& options) {
    using Clock = std::chrono::steady_clock;
    std::vector<bool> same_work;
    for (const TimedVariant& v : variants) same_work.push_back(v.same_work);
    const ChunkTimer clock = [&](size_t v, long calls) {
        const auto start = Clock::now();
        for (long i = 0; i < calls; ++i) variants[v].run();
        return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    };
    return measure_paired(same_work, clock, options);
}

}  // namespace benchfp::harness
