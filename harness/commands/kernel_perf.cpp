// KernelRun's perf mode: the cases of one problem that differ only in frame
// policy, timed side by side with the peers --vs asks for.
#include "commands/kernel_command.hpp"

#include "commands/kernel_run_state.hpp"
#include "families/family.hpp"
#include "kernel/perf_measure.hpp"
#include "kernel/perf_template.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <iostream>
#include <optional>
#include <vector>

namespace benchfp::harness {

// Perf cases that differ only in frame policy are adjacent after expansion:
// they form one group, timed side by side. A policy already in the group starts
// the next one (a problem given twice, `--frame=clobber,frame 4096 4096`):
// one group of both copies paired the second clobber with the first, a ratio
// of a policy to itself that the judge refuses.
size_t KernelRun::perf_group_end(size_t first) const {
    const KernelCase& a = cases_[first];
    size_t end = first + 1;
    for (; end < cases_.size(); ++end) {
        const KernelCase& b = cases_[end];
        if (b.mode != Mode::perf || b.spec.kernel != a.spec.kernel || b.spec.alg != a.spec.alg ||
            b.spec.isa != a.spec.isa || b.problem != a.problem || b.threads != a.threads || !(b.vs == a.vs))
            break;
        const auto same_policy = [&](const KernelCase& c) { return c.spec.frame == b.spec.frame; };
        if (std::any_of(cases_.begin() + static_cast<std::ptrdiff_t>(first), cases_.begin() + static_cast<std::ptrdiff_t>(end),
                        same_policy))
            break;
    }
    return end;
}

namespace {

// Code placement moves a kernel's time by up to 1.6% on the machines measured
// (README, "Frame cost per kernel x ISA"), and a single instance by up to 35%
// (reduce sum avx2 256x256, for the whole process): the same instructions at
// another address, a fact of the instance, not of its policy, and it changes
// from process to process. So every timed kernel, each policy's and the A/A
// copy's, is built at code_placements places, each its own code buffer, its
// entry placement_stride_bytes further in than the one before (4 apart modulo
// 16: the placements put every instruction at 4 different offsets within its
// 16-, 32- and 64-byte blocks; the loops the kernels align stay aligned, since
// Xbyak aligns absolute addresses). Each pair of chunks runs one placement of
// both variants, the next placement every two rounds, one in each order
// (PairedOptions::placements), so the median of the pairs' ratios sets aside a
// placement where one instance runs slow, as the allocator's layout sweep
// looks over code layouts.
constexpr size_t code_placements = 4;
constexpr size_t placement_stride_bytes = 1012;
// The A/A copies start half a stride past the policies' (2 apart from them modulo 16).
constexpr size_t aa_padding_bytes = placement_stride_bytes / 2;

// The calls of `spec`'s kernel at every placement, the first at `first_padding`
// into its buffer; `built`, if given, is its variant already built there.
std::vector<WorkloadCall> placed_calls(Workload& workload, const KernelSpec& spec, size_t first_padding,
                                       std::optional<size_t> built) {
    std::vector<WorkloadCall> calls;
    for (size_t j = 0; j < code_placements; ++j) {
        if (j == 0 && built) {
            calls.push_back(workload.call(*built));
            continue;
        }
        const jit::ScopedEntryPadding padding(first_padding + j * placement_stride_bytes);
        calls.push_back(workload.call(workload.add_variant(spec)));
    }
    return calls;
}

// A timed variant that calls its kernel at placement *placement (set by
// PairedOptions::place; the pointee outlives the variant's use).
TimedVariant at_placement(std::vector<WorkloadCall> calls, const size_t* placement) {
    return {[calls = std::move(calls), placement] {
                const WorkloadCall& c = calls.at(*placement);
                c.fn(c.arg);
            },
            true};
}

// Nothing for a ratio without pairs (or a zero median): JSON has no NaN, and a
// null where the judge reads a number would make the harness's own output unreadable.
std::optional<nlohmann::json> interval_json(const report::MedianInterval& m) {
    if (!std::isfinite(m.median) || m.median <= 0) return std::nullopt;
    nlohmann::json out = {{"ratio", m.median}, {"pairs", m.n}};
    if (std::isfinite(m.lo) && std::isfinite(m.hi) && std::isfinite(m.half_width()))
        out["lo"] = m.lo, out["hi"] = m.hi, out["half_width"] = m.half_width();
    return out;
}

// The paired ratios of a case (schema of --json's perf record): "paired", its
// time over the reference policy's, for every policy but the reference; "aa",
// the A/A control of its group, on every case.
void add_paired_measures(nlohmann::json& measures, const PairedRun& run, size_t v, size_t aa_index,
                         const std::string& reference, const PairedOptions& options) {
    measures["target_half_width"] = options.target_half_width;
    measures["target_met"] = run.target_met;
    if (const auto paired = v ? interval_json(run.stats[v].to_reference) : std::nullopt) {
        measures["paired"] = *paired;
        measures["paired"]["reference"] = reference;
    }
    if (const auto aa = interval_json(run.stats[aa_index].to_reference)) {
        measures["aa"] = *aa;
        measures["aa"]["padding_bytes"] = aa_padding_bytes;
    }
    measures["placements"] = run.placements_timed;
}

}  // namespace

void KernelRun::run_perf_group(size_t first, size_t end) {
    const auto begun = Clock::now();
    // One workload, one kernel per policy: every variant runs on the same buffers.
    std::vector<const KernelCase*> running;
    std::vector<std::vector<WorkloadCall>> placed;  // running[i]'s kernel at every placement
    std::unique_ptr<Workload> workload;
    for (size_t i = first; i < end; ++i) {
        const KernelCase& c = cases_[i];
        if (!c.skip_reason.empty()) {
            record(c, report::State::skipped, c.skip_reason, 0, {});
            continue;
        }
        // A variant that cannot be built (its verifier refuses it, say) fails alone:
        // the group's other policies are still timed.
        try {
            size_t built = 0;  // the case's variant at the first placement
            if (!workload) workload = find_family(c.spec.kernel)->make_workload(c);
            else built = workload->add_variant(c.spec);
            placed.push_back(placed_calls(*workload, c.spec, 0, built));
        } catch (const std::exception& e) {
            record(c, report::State::failed, std::string("error: ") + e.what(), 0, {});
            continue;
        }
        running.push_back(&c);
    }
    if (running.empty()) return;
    try {
        time_perf_group(running, placed, *workload, begun);
    } catch (const std::exception& e) {
        // Every case of the group is recorded once, here: none was timed.
        for (const KernelCase* c : running)
            record(*c, report::State::failed, std::string("error: ") + e.what(), ms_since(begun) / running.size(), {});
    }
}

void KernelRun::time_perf_group(const std::vector<const KernelCase*>& running,
                                const std::vector<std::vector<WorkloadCall>>& placed, Workload& workload,
                                Clock::time_point begun) {
    // Timed variants: the policies, then the A/A control, the first policy's kernel again at
    // placements of its own: the noise floor that code placement alone leaves on a ratio.
    size_t placement = 0;  // where every same-work variant's calls go (options.place)
    std::vector<TimedVariant> variants;
    for (const std::vector<WorkloadCall>& calls : placed) variants.push_back(at_placement(calls, &placement));
    const size_t aa_index = variants.size();
    variants.push_back(
        at_placement(placed_calls(workload, running.front()->spec, aa_padding_bytes, std::nullopt), &placement));
    std::unique_ptr<Peer> onednn, copy, peak;
    const Peers& peers = running.front()->vs;
    double peak_flops = 0;
    std::string onednn_unavailable;
    if (peers.onednn) {
        try {
            onednn = workload.onednn_peer();
        } catch (const PeerUnavailable& e) {
            onednn_unavailable = e.what();
            std::cerr << "benchfp: note: --vs=onednn is n/a for " << running.front()->problem << ": " << e.what() << '\n';
        }
    }
    if (peers.copy) copy = make_copy_peer(workload.input_bytes());
    if (peers.peak) peak = make_fma_peak_peer(running.front()->spec.isa, workload.threads(), peak_flops);
    for (Peer* peer : {onednn.get(), copy.get(), peak.get()})
        if (peer) variants.push_back({[peer] { peer->run(); }, false});
    PairedOptions options;
    options.budget_ms = running.front()->max_ms_per_prb;
    options.placements = code_placements;
    options.place = [&placement](size_t j) { placement = j; };
    const PairedRun run = measure_paired(variants, options);
    const auto& stats = run.stats;
    size_t peer_index = aa_index + 1;
    const PerfStats* onednn_stats = onednn ? &stats[peer_index++] : nullptr;
    const PerfStats* copy_stats = copy ? &stats[peer_index++] : nullptr;
    const PerfStats* peak_stats = peak ? &stats[peer_index++] : nullptr;
    const double ms = ms_since(begun);
    if (options_.perf_template == resolve_perf_template("csv") && !csv_header_printed_) {
        std::cout << csv_perf_header() << '\n';
        csv_header_printed_ = true;
    }
    for (size_t v = 0; v < running.size(); ++v) {
        PerfLine line;
        line.c = running[v];
        line.stats = stats[v];
        line.flops = workload.flops();
        line.bytes = workload.bytes();
        line.frame_ratio = stats[v].min_ms / stats[0].min_ms;
        if (v) line.frame_cost = stats[v].to_reference;
        line.aa = stats[aa_index].to_reference;
        nlohmann::json measures = {{"min_ms", stats[v].min_ms}, {"avg_ms", stats[v].avg_ms},
                                   {"rounds", stats[v].rounds}, {"calls_per_sample", stats[v].calls_per_sample},
                                   {"flops", line.flops},       {"bytes", line.bytes},
                                   {"interleaved_with", variants.size() - 1}};
        if (onednn_stats) {
            line.vs_onednn = onednn_stats->min_ms / stats[v].min_ms;
            measures["vs_onednn"] = *line.vs_onednn;
            measures["onednn_min_ms"] = onednn_stats->min_ms;
        }
        if (!onednn_unavailable.empty()) measures["onednn_unavailable"] = onednn_unavailable;
        if (copy_stats) {
            const double copy_gbps = 2.0 * workload.input_bytes() / copy_stats->min_ms;
            line.vs_copy = (line.bytes / stats[v].min_ms) / copy_gbps;
            measures["vs_copy"] = *line.vs_copy;
            measures["copy_min_ms"] = copy_stats->min_ms;
        }
        if (peak_stats) {
            line.vs_peak = (line.flops / stats[v].min_ms) / (peak_flops / peak_stats->min_ms);
            measures["vs_peak"] = *line.vs_peak;
            measures["peak_gflops"] = peak_flops / peak_stats->min_ms / 1e6;
        }
        add_paired_measures(measures, run, v, aa_index, jit::to_string(running.front()->spec.frame), options);
        record(*running[v], report::State::passed, "", ms / running.size(), {{"perf", measures}}, &line);
    }
}

}  // namespace benchfp::harness
