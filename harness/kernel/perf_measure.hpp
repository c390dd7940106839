#pragma once
// Side-by-side timing of the variants of one problem (the frame policies of a
// kernel, an A/A copy of the first, peer libraries), each paired with the
// reference (variant 0) as the allocator gate pairs its variants
// (bench/alloc_gate.cpp):
// - a pair is a chunk of the variant and a chunk of the reference back to back,
//   replaying the same call on the same warm buffers; the order within a pair
//   alternates from round to round (AB, BA: ABBA), so a drift in machine speed
//   cancels instead of favouring whichever runs second;
// - a variant's ratio is the median of its pairs' time ratios, with the
//   order-statistic 95% interval of report::median_interval. Both halves of a
//   pair see the same load, so the ratio holds still where times drift;
// - rounds (one pair per variant) go on until the interval of every same-work
//   variant is within the target half-width, or the budget is spent: then the
//   width reached is what is reported, never the target. The intervals are
//   looked at when the pair count has grown by half (8, 12, 18, 27, ...), not
//   after every pair: stopping the first time an interval looks narrow would
//   bias its coverage, and a few looks bias it little.
#include "report/judge/stats.hpp"

#include <functional>
#include <vector>

namespace benchfp::harness {

struct PerfStats {
    double min_ms = 0;  // per call, over every chunk of the variant (the least disturbed); with
                        // placements, a chunk runs one: the fastest placement's
    double avg_ms = 0;  // per call, over every chunk (placements weighted by their chunks)
    int rounds = 0;             // chunks timed
    long calls_per_sample = 1;  // calls in a chunk, so a chunk is not dominated by the clock
    // Time per call over the reference's, from the pairs; n = 0 for the reference.
    report::MedianInterval to_reference;
};

struct TimedVariant {
    std::function<void()> run;
    // The reference's problem with other code (a frame policy, the A/A copy):
    // timed with the reference's call count, and its interval must reach the
    // target. A peer (oneDNN, a copy) times its own count and only informs.
    bool same_work = true;
};

struct PairedOptions {
    double budget_ms = 500;            // timed chunks of one problem, at least min_pairs rounds
    double target_half_width = 0.002;  // relative: 0.2%
    double chunk_ms = 1.0;             // a chunk at least this long: the clock's cost vanishes in it
    size_t min_pairs = 8;              // the fewest with a 95% interval is 6
    // The code placements of every same-work variant (perf mode builds each
    // kernel at several addresses): place(j) makes every variant run its
    // placement j until the next place(). Round r's pairs all run placement
    // (r / 2) % placements, so a pair compares two variants' code at the same
    // placement, and each placement is timed in both orders (ABBA) and equally
    // often when the pairs are a multiple of 2 * placements (else the first
    // placements have a pair or two more: the run stops where its budget or its
    // intervals say). An instance that runs slow for a whole process (reduce sum avx2
    // 256x256: one of about ten instances of identical code 3-35% slower, per
    // row, whichever it is changing from process to process) then moves only
    // its placement's pairs, which the median sets aside; when a chunk took the
    // placements in turn, it moved every pair (frame / clobber 1.09 [1.089,
    // 1.092] where the code is the same). place is called before the warm-up's
    // calls (one call of each same-work variant at every placement, untimed and
    // outside the budget) and before every round; unset (or one placement), it
    // is never called.
    size_t placements = 1;
    std::function<void(size_t placement)> place;
};

struct PairedRun {
    std::vector<PerfStats> stats;  // per variant
    bool target_met = false;       // every same-work interval within the target
    double timed_ms = 0;           // the chunks' time: what the budget counts
    size_t pairs = 0;              // per variant
    size_t placements_timed = 1;   // the placements the pairs ran (PairedOptions::placements)
};

// Times `calls` calls of `variant` and returns the ms they took: the clock in
// production, synthetic timings in the tests.
using ChunkTimer = std::function<double(size_t variant, long calls)>;

PairedRun measure_paired(const std::vector<bool>& same_work, const ChunkTimer& timer, const PairedOptions& options);
PairedRun measure_paired(const std::vector<TimedVariant>& variants, const PairedOptions& options);

}  // namespace benchfp::harness
