#pragma once
// What a fleet profiler sees in a foreign process, from what lib/perf read of
// it: which code is JIT code (anonymous executable mappings, MMAP2 records,
// perf-map names), each sample's chain verdict, and for broken chains where
// the JIT code broke them and what rbp held there.
#include "audit/disasm.hpp"
#include "perf/attach.hpp"
#include "perf/process.hpp"
#include "perf/symbols.hpp"
#include "perf/verdict.hpp"

#include <map>
#include <string>
#include <vector>

namespace benchfp::harness {

struct JitRegion {
    perf::JitCode code;
    std::string origin;  // "perf-map", "maps", "mmap2"
    CodeBytes bytes;     // empty when the process could not be read
    std::vector<RbpWrite> rbp_writes;  // from bytes
};

// Perf-map entries first (they name code inside the anonymous mappings), then
// every anonymous executable range of the maps and MMAP2 records not covered.
std::vector<JitRegion> find_jit_regions(const std::vector<perf::Mapping>& maps,
                                        const std::vector<perf::MmapRecord>& mmaps,
                                        const std::vector<perf::CodeRegion>& perf_map);

// What rbp held at a sample: "zero", "small integer", "stack address above rsp
// (another frame)", "heap or anonymous pointer", "JIT code address", ...
std::string classify_rbp(const perf::UserRegs& regs, const std::vector<perf::Mapping>& maps,
                         const std::vector<JitRegion>& regions);

struct AuditTally {
    perf::Tally tally;          // verdicts against --expect (or "reaches the start")
    uint64_t reached_start = 0; // JIT samples whose chain reaches main or a thread start
};

// Broken samples at one JIT offset.
struct Culprit {
    std::string region;
    uint64_t offset = 0;
    uint64_t count = 0;
    std::string instruction;
    std::string rbp_written_by;  // the nearest rbp write at or before the offset ("" when none)
    std::map<std::string, uint64_t> rbp;  // classification -> samples
    uint64_t example_rbp = 0;
};

struct AuditReport {
    int pid = 0;
    std::string command, event, event_note, mode;
    bool event_is_clock = true;  // a clock samples wherever the process runs (perf::Event::is_clock)
    std::vector<std::string> expect;  // empty: the verdict is whether the chain reaches the thread's start
    double seconds = 0;
    size_t events = 0;
    uint64_t samples = 0, jit_samples = 0, lost = 0;
    std::map<std::string, AuditTally> regions;  // by region name, only those sampled
    std::map<std::string, std::pair<uint64_t, uint64_t>> region_extent;  // name -> (begin, size)
    std::map<uint32_t, AuditTally> threads;
    std::map<uint32_t, std::string> thread_names;
    std::vector<std::pair<std::string, uint64_t>> broken_chains;  // most frequent first
    std::vector<Culprit> culprits;  // most frequent first
    bool exited = false;  // the process went away during the window
    std::string ended;    // how, when it was benchfp's child: "exit status 7", "killed by SIGSEGV"
    std::vector<std::string> notes;
};

std::string hex(uint64_t value);  // "0x1b": how the reports write addresses and offsets

// Verdicts, tallies, culprits. `symbols` must name the regions (add_region).
AuditReport analyse(const perf::ProcessRecording& recording, const std::vector<JitRegion>& regions,
                    const std::vector<perf::Mapping>& maps, const perf::Symbols& symbols,
                    const std::vector<std::string>& expect);

}  // namespace benchfp::harness
