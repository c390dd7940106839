#pragma once
// Side-by-side timing: every variant (frame policies of one kernel, a peer
// library) runs once per round, rounds alternate until the time budget is
// spent, so load on a shared machine hits all variants alike and their ratio
// holds even when absolute times drift.
#include <functional>
#include <vector>

namespace benchfp::harness {

struct PerfStats {
    double min_ms = 0;  // per call: the estimate ratios are taken on (least disturbed)
    double avg_ms = 0;
    int rounds = 0;
    long calls_per_sample = 1;  // calls timed together, so a sample is not dominated by the clock
};

std::vector<PerfStats> measure_interleaved(const std::vector<std::function<void()>>& variants, double budget_ms,
                                           int min_rounds = 5);

}  // namespace benchfp::harness
