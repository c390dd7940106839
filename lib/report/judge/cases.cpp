#include "report/judge/cases.hpp"

#include "report/case_result.hpp"
#include "report/html.hpp"
#include "report/json_input.hpp"
#include "report/judge/stats.hpp"

#include <algorithm>
#include <set>
#include <sstream>

namespace benchfp::report {

namespace {

constexpr Range count_range{0, 1e15};

constexpr long max_folded_frames = 1024;

// total + count (read at `where`), or a failure there when the sum would pass
// a long: each count is at most 10^15, but many records add up (10^4 of them
// passed 2^63 and printed negative totals).
long add_count(long total, double count, const In& where, const std::string& what) {
    long sum;
    if (__builtin_add_overflow(total, static_cast<long>(count), &sum))
        where.fail(what + " adds up past 2^63 - 1 with the records before it");
    return sum;
}

void add_folded(std::map<std::string, long>& into, const In& unwind) {
    const auto folded = unwind.find("folded");
    if (!folded) return;  // results written before the folded stacks were recorded
    for (const auto& [stack, count] : folded->members()) {
        // perf's callchains stop at 127 frames (perf_event_max_stack); far deeper
        // is no sample, and the flame graph's layout recurses once per frame.
        const long frames = 1 + std::count(stack.begin(), stack.end(), ';');
        if (frames > max_folded_frames)
            count.fail("a folded stack of " + std::to_string(frames) + " frames, more than " +
                       std::to_string(max_folded_frames));
        into[stack] = add_count(into[stack], count.as_number(count_range), count, "its count");
    }
}

void add_record(CaseSummary& summary, const In& record, const std::string& path) {
    const In spec = record.at("spec");
    const std::string state = record.string("state"), mode = spec.string("mode"), isa = spec.string("isa");
    static const std::set<std::string> states = {"PASSED", "FAILED", "SKIPPED", "MISTRUSTED", "LISTED"};
    if (!states.count(state)) record.at("state").fail("'" + state + "', expected PASSED, FAILED, SKIPPED, MISTRUSTED or LISTED");
    CaseCounts& counts = summary.by_mode_isa[{mode, isa}];
    if (state == "SKIPPED") {
        ++counts.skipped;
        return;
    }
    ++counts.ran;
    const bool failed = state == "FAILED";
    if (failed) {
        ++counts.failed;
        summary.failed.push_back(path + ": " + state + " " + record.string_or("detail", "") + " __REPRO: " +
                                 record.string_or("repro", ""));
    } else {
        ++counts.passed;
    }
    add_stepped(summary.stepped, record);
    const auto unwind = record.find("unwind");
    if (mode != "unwind" || !unwind) return;
    const In tally = unwind->at("tally");
    const std::string frame = spec.string("frame");
    add_folded(summary.folded_by_frame[frame], *unwind);
    if (const auto workers = unwind->find("workers")) add_folded(summary.folded_by_frame[frame], *workers);
    UnwindRate& rate = summary.unwind[{spec.string("kernel"), isa, frame}];
    const double full = tally.number("full", count_range), judged = tally.number("judged", count_range);
    // A full chain is one of the judged samples: more full than judged is no tally.
    if (full > judged) tally.at("full").fail("more full chains than judged samples (" + fixed(judged, 0) + ")");
    rate.full = add_count(rate.full, full, tally.at("full"), "full");
    rate.judged = add_count(rate.judged, judged, tally.at("judged"), "judged");
    rate.expected = unwind->string_or("expected_verdict", "full");
    rate.passed = rate.passed && !failed;
}

}  // namespace

int CaseSummary::ran() const {
    int n = 0;
    for (const auto& [key, counts] : by_mode_isa) n += counts.ran;
    return n;
}

void add_cases(CaseSummary& summary, const std::string& path) {
    const nlohmann::json doc = read_json_file(path, "benchfp results");
    const In root(doc, path, "");
    root.expect_object();
    if (const std::string problem = results_schema_problem(doc); !problem.empty()) root.fail(problem);
    for (const In& record : root.at("cases").expect_array().elements()) add_record(summary, record.expect_object(), path);
    summary.sources.push_back(path);
}

std::string render_cases_markdown(const CaseSummary& s) {
    std::ostringstream md;
    md << "\n## Kernel cases\n\n" << s.ran() << " cases ran (" << s.sources.size() << " result files), "
       << s.failures() << " failed.";
    if (!s.untested_isas.empty()) {
        md << " **Not tested on this machine:**";
        for (const std::string& isa : s.untested_isas) md << ' ' << markdown_text(isa);
        md << " (this host cannot run them).";
    }
    md << "\n\n| mode | ISA | ran | passed | failed | skipped |\n|---|---|---|---|---|---|\n";
    for (const auto& [key, c] : s.by_mode_isa)
        md << "| " << key.first << " | " << key.second << " | " << c.ran << " | " << c.passed << " | " << c.failed
           << (c.failed ? " :x:" : "") << " | " << c.skipped << " |\n";
    if (!s.unwind.empty()) {
        md << "\n### Unwind rates (full chains / judged JIT samples)\n\n"
           << "| kernel | ISA | frame | expected | full / judged | unwind rate |\n|---|---|---|---|---|---|\n";
        for (const auto& [key, r] : s.unwind)
            md << "| " << markdown_code_span(std::get<0>(key), MarkdownPlace::table_cell) << " | " << markdown_text(std::get<1>(key)) << " | "
               << markdown_text(std::get<2>(key)) << " | " << markdown_text(r.expected) << " | " << r.full << " / " << r.judged << " | "
               << (r.judged ? fixed(double(r.full) / r.judged, 3) : std::string("-")) << (r.passed ? "" : " :x:")
               << " |\n";
    }
    if (const std::vector<std::string> groups = compared_groups(s.stepped); !groups.empty()) {
        md << "\n### Frame cost per call, stepped (every instruction counted, beside clobber's)\n\n"
           << "| kernel / alg / ISA / problem | clobber | frame − clobber | preserve − clobber |\n|---|---|---|---|\n";
        for (const std::string& group : groups) {
            const auto& policies = s.stepped.at(group);
            const SteppedCounts& clobber = policies.at("clobber");
            md << "| " << markdown_code_span(group, MarkdownPlace::table_cell) << " | " << counts_text(clobber);
            for (const char* policy : {"frame", "preserve"}) {
                const auto it = policies.find(policy);
                md << " | " << (it == policies.end() ? "-" : difference_text(it->second, clobber));
            }
            md << " |\n";
        }
    }
    if (!s.failed.empty()) {
        md << "\n### Failed cases\n\n";
        for (const std::string& line : s.failed) md << "- " << markdown_code_span(line, MarkdownPlace::line) << "\n";
    }
    return md.str();
}

}  // namespace benchfp::report
