// The audit's pieces without a process: /proc parsers, the "anywhere" caller
// rule, JIT region discovery, what rbp held, the disassembly of culprits,
// the oneDNN comparison's table rows, the JIT profile's refusal to follow
// or clobber files, and the attach's second try (with a child that exits).
#include "audit/audit_analysis.hpp"
#include "audit/audit_run.hpp"
#include "audit/disasm.hpp"
#include "audit/audit_render.hpp"
#include "audit/onednn_compare.hpp"
#include "jit_profile.hpp"
#include "usage_error.hpp"
#include "perf/error.hpp"
#include "perf/process.hpp"
#include "perf/verdict.hpp"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <vector>

using namespace benchfp;
using benchfp::perf::Verdict;

TEST(PerfProcess, ParsesMapsLines) {
    const auto maps = perf::parse_maps(
        "55d0c0000000-55d0c0001000 r-xp 00001000 08:01 123 /usr/bin/x\n"
        "7f0000000000-7f0000010000 r-xp 00000000 00:00 0 \n"
        "7ffd00000000-7ffd00021000 rw-p 00000000 00:00 0                          [stack]\n");
    ASSERT_EQ(maps.size(), 3u);
    EXPECT_EQ(maps[0].path, "/usr/bin/x");
    EXPECT_EQ(maps[0].offset, 0x1000u);
    EXPECT_FALSE(maps[0].anonymous());
    EXPECT_TRUE(maps[1].anonymous());
    EXPECT_TRUE(maps[1].executable());
    EXPECT_EQ(maps[1].end, 0x7f0000010000u);
    EXPECT_EQ(maps[2].path, "[stack]");
    EXPECT_FALSE(maps[2].anonymous());
}

TEST(PerfProcess, ParsesPerfMapAndSkipsGarbage) {
    const auto regions = perf::parse_perf_map("7f00 40 jit_kernel_a\nnot a line\n7f40 0 empty\n8000 10 b c\n");
    ASSERT_EQ(regions.size(), 2u);
    EXPECT_EQ(regions[0].name, "jit_kernel_a");
    EXPECT_EQ(regions[0].end, 0x7f40u);
    EXPECT_EQ(regions[1].name, "b c");
}

TEST(PerfVerdict, AnywhereFindsTheCallersAboveALibrary) {
    const perf::ExpectedCallers e{{"bar", "foo", "main"}, "", true};
    const std::vector<std::string> through_library = {"dnnl::execute", "bar", "foo", "main", "__libc_start_call_main"};
    const std::vector<std::string> bar_lost = {"dnnl::execute", "foo", "main"};
    const std::vector<std::string> garbage = {"[unknown]"};
    const std::vector<std::string> out_of_order = {"foo", "bar", "main"};
    EXPECT_EQ(perf::classify_callers(through_library, e), Verdict::full);
    EXPECT_EQ(perf::classify_callers(bar_lost, e), Verdict::skipped_caller);
    EXPECT_EQ(perf::classify_callers(garbage, e), Verdict::broken);
    EXPECT_EQ(perf::classify_callers(out_of_order, e), Verdict::broken);
}

// The attach is tried again while the process lives: what failed first is said
// in a note; an error of another kind, or one that lasts, is thrown as it is.
TEST(AuditAttach, AFailedReadOfALiveProcessIsTriedAgainAndSaidSo) {
    using namespace std::chrono_literals;
    int tries = 0;
    const auto fails_twice = [&] {
        if (++tries <= 2) throw perf::Error(perf::ErrorKind::system, "read " + std::to_string(tries) + " failed");
    };
    const std::string note = harness::attach_retried(getpid(), false, fails_twice, 2000ms);
    EXPECT_EQ(tries, 3);
    EXPECT_NE(note.find("first try failed (read 1 failed); try 3 worked, "), std::string::npos) << note;
    tries = 0;
    EXPECT_EQ(harness::attach_retried(getpid(), false, [&] { ++tries; }), "");
    EXPECT_EQ(tries, 1);

    tries = 0;
    const auto always = [&] {
        throw perf::Error(perf::ErrorKind::system, "read " + std::to_string(++tries) + " failed");
    };
    const auto start = std::chrono::steady_clock::now();
    try {
        harness::attach_retried(getpid(), false, always, 500ms);
        ADD_FAILURE() << "no error";
    } catch (const perf::Error& e) {
        EXPECT_GE(tries, 2);
        EXPECT_EQ(e.what(), "read " + std::to_string(tries) + " failed (its first try: read 1 failed)");
        EXPECT_GE(std::chrono::steady_clock::now() - start, 500ms);
    }
    tries = 0;
    const auto refused = [&] { ++tries; throw perf::Error(perf::ErrorKind::refused, "not allowed"); };
    EXPECT_THROW(harness::attach_retried(getpid(), false, refused), perf::Error);
    EXPECT_EQ(tries, 1);
}

TEST(AuditAttach, AProcessThatExitsMeanwhileIsSaidToHaveExited) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) _exit(0);
    siginfo_t info = {};
    ASSERT_EQ(waitid(P_PID, child, &info, WEXITED | WNOWAIT), 0);  // exited, not reaped
    const auto gone = [] { throw perf::Error(perf::ErrorKind::system, "No such process"); };
    try {
        harness::attach_retried(child, true, gone);
        ADD_FAILURE() << "no error";
    } catch (const perf::Error& e) {
        ADD_FAILURE() << "thrown as it was: " << e.what();
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()),
                  "process " + std::to_string(child) + " exited before it could be audited (No such process)");
    }
    waitpid(child, nullptr, 0);
}

TEST(AuditRegions, AnonymousExecutableMappingsAndPerfMapNamesFirst) {
    const auto maps = perf::parse_maps("1000-2000 r-xp 0 00:00 0 \n3000-4000 rw-p 0 00:00 0 \n5000-6000 r-xp 0 08:01 7 /lib/x.so\n");
    perf::MmapRecord anon{1, 1, 0x8000, 0x1000, 0, PROT_READ | PROT_EXEC, "//anon"};
    perf::MmapRecord file{1, 1, 0x9000, 0x1000, 0, PROT_READ | PROT_EXEC, "/lib/y.so"};
    const auto regions = harness::find_jit_regions(maps, {anon, file}, {{"named", 0x1100, 0x1200}});
    ASSERT_EQ(regions.size(), 3u);
    EXPECT_EQ(regions[0].code.region.name, "named");
    EXPECT_EQ(regions[1].code.region.begin, 0x1000u);
    EXPECT_EQ(regions[1].origin, "maps");
    EXPECT_EQ(regions[2].code.region.begin, 0x8000u);
    EXPECT_EQ(regions[2].origin, "mmap2");
}

TEST(AuditRegions, ClassifiesWhatRbpHeld) {
    const auto maps = perf::parse_maps("400000-401000 r-xp 0 00:00 0 \n10000000-10100000 rw-p 0 00:00 0 [heap]\n"
                                       "7ff000000000-7ff000100000 rw-p 0 00:00 0 [stack]\n");
    const auto regions = harness::find_jit_regions(maps, {}, {});
    const uint64_t sp = 0x7ff000080000;
    auto rbp = [&](uint64_t v) { return harness::classify_rbp({v, sp, 0x400000}, maps, regions); };
    EXPECT_EQ(rbp(0), "zero");
    EXPECT_EQ(rbp(42), "small integer");
    EXPECT_EQ(rbp(0x400800), "JIT code address");
    EXPECT_EQ(rbp(0x10000040), "heap or anonymous pointer");
    EXPECT_EQ(rbp(sp + 0x40), "stack address above rsp (another frame or its data)");
    EXPECT_EQ(rbp(sp - 0x40), "stack address below rsp (dead data)");
    EXPECT_EQ(rbp(0x3f800000deadbeef), "not an address (data)");
}

TEST(AuditDisasm, FindsFramelessWindowsAndRbpWrites) {
    // push rbp; mov rbp, rsp; mov rbp, rdi; nop; pop rbp; ret
    const harness::CodeBytes code{0x1000, {0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xfd, 0x90, 0x5d, 0xc3}};
    const auto windows = harness::frameless_windows(code);
    ASSERT_EQ(windows.size(), 2u);
    EXPECT_EQ(windows[0], std::make_pair(uint64_t{0x1000}, uint64_t{0x1004}));
    EXPECT_EQ(windows[1], std::make_pair(uint64_t{0x1009}, uint64_t{0x100a}));
    EXPECT_EQ(harness::instruction_at(code, 0x1004), "mov rbp, rdi");
    EXPECT_EQ(harness::instruction_at(code, 0x2000), "(code not readable)");
    const auto writes = harness::rbp_writes(code);
    ASSERT_GE(writes.size(), 3u);  // mov rbp, rsp; mov rbp, rdi; pop rbp
    EXPECT_EQ(writes[1].instruction, "mov rbp, rdi");
}

TEST(JitProfile, ParsesItsListAndRejectsTheRest) {
    const auto both = harness::parse_jit_profile("map,jitdump");
    EXPECT_TRUE(both.map);
    EXPECT_TRUE(both.jitdump);
    EXPECT_FALSE(harness::parse_jit_profile("").map);
    EXPECT_THROW(harness::parse_jit_profile("map,vtune"), harness::UsageError);
}

TEST(JitProfile, NeverFollowsNorClobbersAnExistingFile) {
    // A symlink planted where this process's perf map would go: it must be left alone.
    const std::string path = "/tmp/perf-" + std::to_string(getpid()) + ".map";
    const std::string target = path + ".target";
    std::ofstream(target) << "precious\n";
    std::filesystem::remove(path);
    std::filesystem::create_symlink(target, path);
    try {
        harness::start_jit_profile({true, false});
        ADD_FAILURE() << "a perf map over a planted link was not refused";
    } catch (const harness::UsageError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot write " + path), std::string::npos) << e.what();
    }
    std::ifstream in(target);
    std::string content((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_EQ(content, "precious\n");
    std::filesystem::remove(path);
    std::filesystem::remove(target);
}

namespace {
// Where a Markdown table row's cells end: its unescaped pipes.
std::vector<size_t> cell_bounds(const std::string& row) {
    std::vector<size_t> bounds;
    for (size_t i = 0; i < row.size(); ++i)
        if (row[i] == '|' && (i == 0 || row[i - 1] != '\\')) bounds.push_back(i);
    return bounds;
}
}  // namespace

// The comparison's rows take a thread's name from the process and the culprit
// from its disassembly: a `|`, a backtick or a line break in either stays in
// its cell (10 cells a row, one row a thread).
TEST(AuditOnednnComparison, NamesFromTheProcessStayInTheirCells) {
    harness::AuditReport r;
    r.pid = 100;
    r.threads[100].tally.full = 3;
    r.threads[101].tally.broken = 2;
    r.thread_names[101] = "work|er`1\n# heading";
    harness::Culprit c;
    c.rbp_written_by = "mov rbp, `x|y`";
    c.rbp["zero|small"] = 2;
    r.culprits.push_back(c);
    const std::string rows = harness::onednn_comparison_rows("onednn-sgemm", r);
    std::istringstream lines(rows);
    std::string line;
    int count = 0;
    while (std::getline(lines, line)) {
        ++count;
        const std::vector<size_t> bounds = cell_bounds(line);
        ASSERT_EQ(bounds.size(), 11u) << line;
        // The culprit's cell holds one code span, whole: its two backticks.
        const std::string culprit = line.substr(bounds[9] + 1, bounds[10] - bounds[9] - 1);
        EXPECT_EQ(std::count(culprit.begin(), culprit.end(), '`'), 2) << culprit;
    }
    EXPECT_EQ(count, 2) << rows;
}

// What rbp held is named from the process's mappings (a path): in the audit's
// culprits table it stays in its cell as the instruction does (7 cells a row).
TEST(AuditReportMarkdown, WhatRbpHeldStaysInItsCell) {
    harness::AuditReport r;
    r.pid = 100;
    r.samples = r.jit_samples = 3;
    harness::Culprit c;
    c.region = "jit";
    c.count = 3;
    c.instruction = "mov rax, [rbp]";
    c.rbp["pointer into /tmp/a|b`c"] = 3;
    r.culprits.push_back(c);
    r.broken_chains.push_back({"jit;main", 3});
    const std::string md = harness::render_audit_markdown(r);
    const size_t row = md.find("| jit | +");
    ASSERT_NE(row, std::string::npos) << md;
    const std::string line = md.substr(row, md.find('\n', row) - row);
    EXPECT_EQ(cell_bounds(line).size(), 8u) << line;
}
