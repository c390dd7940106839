#include "audit/audit_analysis.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <set>
#include <sstream>

namespace benchfp::harness {

std::string hex(uint64_t value) {
    std::ostringstream out;
    out << "0x" << std::hex << value;
    return out.str();
}

namespace {

bool covered(const std::vector<JitRegion>& regions, uint64_t begin, uint64_t end) {
    for (const JitRegion& r : regions)
        if (begin >= r.code.region.begin && end <= r.code.region.end) return true;
    return false;
}

void add_range(std::vector<JitRegion>& regions, uint64_t begin, uint64_t end, const char* origin) {
    if (begin >= end || covered(regions, begin, end)) return;
    regions.push_back({{{"jit@" + hex(begin), begin, end}, {}}, origin, {}, {}});
}

// Where a thread's chain ends when it is whole: main for the main thread; the
// thread start (glibc's start_thread, clone, clone3) for the others.
bool is_thread_start(const std::string& name) {
    static const std::set<std::string> starts = {"main", "start_thread", "clone", "clone3", "__clone3",
                                                 "__libc_start_call_main", "__libc_start_main"};
    return starts.count(name) != 0;
}

bool in_window(const perf::JitCode& code, uint64_t ip) {
    return std::any_of(code.frameless_windows.begin(), code.frameless_windows.end(),
                       [&](const auto& w) { return ip >= w.first && ip < w.second; });
}

const JitRegion* region_of(const std::vector<JitRegion>& regions, uint64_t ip) {
    for (const JitRegion& r : regions)
        if (r.code.region.contains(ip)) return &r;
    return nullptr;
}

template <typename Map>
auto by_count_desc(const Map& m) {
    std::vector<std::pair<typename Map::key_type, uint64_t>> v(m.begin(), m.end());
    std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    return v;
}

// The rbp write at or before ip, else the last one in the region (a loop that
// writes rbp below the sampled instruction), as "+0x1b: mov rbp, rdi".
std::string last_rbp_write(const JitRegion& r, uint64_t ip) {
    const auto& w = r.rbp_writes;
    if (w.empty()) return "";
    auto it = std::upper_bound(w.begin(), w.end(), ip, [](uint64_t a, const RbpWrite& b) { return a < b.address; });
    const RbpWrite& found = it == w.begin() ? w.back() : *std::prev(it);
    return "+" + hex(found.address - r.code.region.begin) + ": " + found.instruction;
}

std::string join(const std::vector<std::string>& names) {
    std::string out;
    for (size_t i = 0; i < names.size(); ++i) out += (i ? " <- " : "") + names[i];
    return out;
}

}  // namespace

std::vector<JitRegion> find_jit_regions(const std::vector<perf::Mapping>& maps,
                                        const std::vector<perf::MmapRecord>& mmaps,
                                        const std::vector<perf::CodeRegion>& perf_map) {
    std::vector<JitRegion> regions;
    for (const perf::CodeRegion& r : perf_map) regions.push_back({{r, {}}, "perf-map", {}, {}});
    for (const perf::Mapping& m : maps)
        if (m.executable() && m.anonymous()) add_range(regions, m.begin, m.end, "maps");
    for (const perf::MmapRecord& m : mmaps) {
        const bool anonymous = m.filename.empty() || m.filename == "//anon" || m.filename.rfind("[anon", 0) == 0;
        if (anonymous && (m.prot == 0 || (m.prot & PROT_EXEC))) add_range(regions, m.addr, m.addr + m.len, "mmap2");
    }
    return regions;
}

std::string classify_rbp(const perf::UserRegs& regs, const std::vector<perf::Mapping>& maps,
                         const std::vector<JitRegion>& regions) {
    const uint64_t rbp = regs.bp;
    if (rbp == 0) return "zero";
    if (rbp < 0x10000) return "small integer";
    if (region_of(regions, rbp)) return "JIT code address";
    for (const perf::Mapping& m : maps) {
        if (!m.contains(rbp)) continue;
        if (m.contains(regs.sp) || m.path == "[stack]") {
            if (rbp < regs.sp) return "stack address below rsp (dead data)";
            return rbp % 8 ? "stack address above rsp, misaligned (data)" : "stack address above rsp (another frame or its data)";
        }
        if (m.executable()) return "code address in " + (m.path.empty() ? std::string("anonymous code") : m.path);
        if (m.path == "[heap]" || m.anonymous()) return "heap or anonymous pointer";
        return "pointer into " + m.path;
    }
    return "not an address (data)";
}

AuditReport analyse(const perf::ProcessRecording& recording, const std::vector<JitRegion>& regions,
                    const std::vector<perf::Mapping>& maps, const perf::Symbols& symbols,
                    const std::vector<std::string>& expect) {
    AuditReport report;
    report.expect = expect;
    report.seconds = recording.seconds;
    report.events = recording.events;
    report.samples = recording.samples.size();
    report.lost = recording.stats.lost;
    report.thread_names = recording.thread_names;
    const perf::ExpectedCallers expected{expect, "", true};
    std::map<std::string, uint64_t> chains;
    std::map<std::pair<std::string, uint64_t>, Culprit> culprits;
    for (const perf::Sample& sample : recording.samples) {
        const JitRegion* r = region_of(regions, sample.ip);
        if (!r) continue;
        ++report.jit_samples;
        const std::vector<std::string> names = symbols.frame_names(sample);
        const bool reached = std::any_of(names.begin() + 1, names.end(), is_thread_start);
        std::optional<perf::Verdict> v;
        if (!expect.empty()) v = perf::verdict(sample, r->code, expected, symbols);
        else v = in_window(r->code, sample.ip) ? perf::Verdict::prologue
                 : reached                      ? perf::Verdict::full
                                                : perf::Verdict::broken;
        for (AuditTally* t : {&report.regions[r->code.region.name], &report.threads[sample.tid]}) {
            t->tally.add(v);
            t->reached_start += reached;
        }
        report.region_extent[r->code.region.name] = {r->code.region.begin, r->code.region.end - r->code.region.begin};
        if (*v != perf::Verdict::broken) continue;
        ++chains[join(names)];
        Culprit& c = culprits[{r->code.region.name, sample.ip - r->code.region.begin}];
        if (!c.count) {
            c.region = r->code.region.name;
            c.offset = sample.ip - r->code.region.begin;
            c.instruction = instruction_at(r->bytes, sample.ip);
            c.rbp_written_by = last_rbp_write(*r, sample.ip);
            c.example_rbp = sample.regs.bp;
        }
        ++c.count;
        ++c.rbp[sample.has_regs ? classify_rbp(sample.regs, maps, regions) : "no user registers"];
    }
    report.broken_chains = by_count_desc(chains);
    for (auto& [key, c] : culprits) report.culprits.push_back(c);
    std::stable_sort(report.culprits.begin(), report.culprits.end(),
                     [](const Culprit& a, const Culprit& b) { return a.count > b.count; });
    return report;
}

}  // namespace benchfp::harness
