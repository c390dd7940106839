// The allocation profiler: one record per allocation on every path, types where
// known, stacks with the callers in order, frees of sampled objects, and the
// sampling statistics.
#include "alloc/count_site.hpp"
#include "alloc/owner_lock.hpp"
#include "alloc/pool.hpp"
#include "alloc/profiler.hpp"
#include "jit/disassembly.hpp"
#include "perf/symbols.hpp"

#include <gtest/gtest.h>
#include <xbyak/xbyak.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <random>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <thread>
#include <vector>

using namespace benchfp;
using alloc::profiler::Sampling;

namespace {

struct Point {
    double x, y, z;
};

// The statistical tests' bound: 5 standard deviations of an estimate whose
// variance is given (a false failure about once in 1.7 million runs).
double five_sigma(double variance) { return 5 * std::sqrt(variance); }

// Builds whose compiler may put an instruction of its own before an entry's
// count site (sanitizers, no optimization, -fcf-protection's endbr64), which
// are then refused.
constexpr bool sites_may_be_refused =
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || !defined(__OPTIMIZE__) || defined(__CET__)
    true;
#else
    false;
#endif

// Runs `test` twice: with the hooked entries' count sites counting
// (alloc/count_site.hpp), and with them refused, so that their entries count
// on the unpatched path: each must keep the statistics. The first pass checks
// that its last start() had the sites counting.
void with_and_without_count_sites(const std::function<void()>& test) {
    for (bool sites : {true, false}) {
        SCOPED_TRACE(sites ? "count sites on" : "count sites refused");
        alloc::detail::allow_count_sites(sites);
        test();
        alloc::detail::allow_count_sites(true);
        const std::string refusal = alloc::profiler::count_sites_refusal();
        const std::string warning = alloc::profiler::count_sites_warning();
        EXPECT_EQ(warning.empty(), refusal.empty()) << warning;
        if (sites && !sites_may_be_refused) {
            EXPECT_EQ(refusal, "");
        }
        if (!sites) {
            EXPECT_NE(refusal.find("allow_count_sites"), std::string::npos) << refusal;
            EXPECT_NE(warning.find(refusal), std::string::npos) << warning;
        }
    }
}

alloc::profiler::Profile record_all(const std::function<void()>& work) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    work();
    alloc::profiler::stop();
    return alloc::profiler::fetch();
}

}  // namespace

// The callers a record's stack must show, in order: allocate <- outer.
extern "C" [[gnu::noinline]] void* profiler_test_allocate(int path) {
    void* p = nullptr;
    switch (path) {
    case 0: p = alloc::pool_alloc(40); break;
    case 1: p = alloc::alloc(40, &alloc::type_of<Point>()); break;
    case 2: p = alloc::alloc_typed<Point>(); break;
    case 3: p = alloc::big_alloc(10000, &alloc::type_of<Point>()); break;
    case 4: p = alloc::managed_alloc(100); break;
    }
    asm volatile("" ::: "memory");  // not a tail call: this frame stays
    return p;
}
extern "C" [[gnu::noinline]] void* profiler_test_outer(int path) {
    void* p = profiler_test_allocate(path);
    asm volatile("" ::: "memory");
    return p;
}

TEST(Profiler, EveryPathRecordsExactlyOnceWithItsTypeAndStack) {
    const char* want_type[] = {"unknown", "(anonymous namespace)::Point", "(anonymous namespace)::Point",
                               "(anonymous namespace)::Point", "unknown"};
    perf::Symbols symbols;
    for (int path = 0; path < 5; ++path) {
        std::vector<void*> blocks;
        const auto profile = record_all([&] {
            for (int i = 0; i < 10; ++i) blocks.push_back(profiler_test_outer(path));
        });
        ASSERT_EQ(profile.allocations.size(), 10u) << "path " << path;
        for (const auto& r : profile.allocations) {
            EXPECT_EQ(perf::demangle(r.type->name.c_str()), want_type[path]) << "path " << path;
            std::vector<std::string> names;
            for (uintptr_t ret : r.stack) {
                // GCC moves the unlikely branch (the hook's call) into "<function>.cold".
                std::string name = symbols.name(ret - 1);
                if (name.ends_with(".cold")) name.resize(name.size() - 5);
                names.push_back(name);
            }
            const auto inner = std::find(names.begin(), names.end(), "profiler_test_allocate");
            std::string chain;
            for (const auto& n : names) chain += n + " <- ";
            ASSERT_NE(inner, names.end()) << "path " << path << ": " << chain;
            ASSERT_NE(inner + 1, names.end());
            EXPECT_EQ(*(inner + 1), "profiler_test_outer") << "path " << path;
            EXPECT_GE(r.allocated, r.requested);
        }
        for (void* p : blocks) alloc::free(p);
    }
}

// Code that keeps data in rbp (a JIT kernel under clobber, a caller built
// without frame pointers) calling the allocator: rbp = -8 at the call.
struct CallWithRbpNear2To64 : Xbyak::CodeGenerator {
    CallWithRbpNear2To64() {
        push(rbp);
        push(rbx);
        sub(rsp, 8);  // 16-byte aligned at the call
        mov(rbp, -8);
        mov(edi, 40);
        mov(rax, reinterpret_cast<uintptr_t>(&alloc::pool_alloc));
        call(rax);
        add(rsp, 8);
        pop(rbx);
        pop(rbp);
        ret();
    }
};

TEST(Profiler, ACallerWhoseRbpIsNear2To64EndsTheStack) {
    // The walk once tested at + 16 > stack_hi, which wraps for a frame pointer
    // of -8, and read address 0: the recording process died of SIGSEGV.
    CallWithRbpNear2To64 code;
    const auto call = code.getCode<void* (*)()>();
    void* p = nullptr;
    const auto profile = record_all([&] { p = call(); });
    alloc::free(p);
    ASSERT_EQ(profile.allocations.size(), 1u);
    EXPECT_FALSE(profile.allocations[0].stack.empty());
}

TEST(Profiler, FreesOfSampledObjectsGiveTheInUseProfile) {
    std::vector<void*> blocks;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    for (int i = 0; i < 100; ++i) blocks.push_back(alloc::pool_alloc(50));
    // Sampled objects moved out of the pool's pages into big blocks (their frees
    // take the big blocks' path), with their class's usable size (64 B, not
    // the 50 asked for); others did not.
    void* unsampled = alloc::pool_alloc_unprofiled(50);
    EXPECT_TRUE(alloc::detail::in_arena(unsampled));
    ASSERT_EQ(alloc::usable_size(unsampled), 64u);
    for (void* p : blocks) {
        EXPECT_FALSE(alloc::detail::in_arena(p));
        EXPECT_EQ(alloc::usable_size(p), 64u);
    }
    alloc::free(unsampled);
    for (int i = 0; i < 60; ++i) alloc::free(blocks[i]);
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    EXPECT_EQ(profile.allocations.size(), 100u);
    for (const auto& a : profile.allocations) {
        EXPECT_EQ(a.requested, 50u);
        EXPECT_EQ(a.allocated, 64u);
    }
    EXPECT_EQ(profile.frees.size(), 60u);
    // Stopped, frees of sampled objects are still recorded: the in-use profile stays true.
    for (int i = 60; i < 100; ++i) alloc::free(blocks[i]);
    EXPECT_EQ(alloc::profiler::fetch().frees.size(), 100u);
}

TEST(Profiler, NothingIsRecordedWhileStopped) {
    alloc::profiler::clear();
    void* p = alloc::pool_alloc(32);
    alloc::free(p);
    EXPECT_TRUE(alloc::profiler::fetch().allocations.empty());
}

// Sizes of each path's counting: a small class, a big block of the table's
// classes (counted in big_alloc_as), one above them (big_block_hooked), and a
// managed block at another alignment (big_block_hooked too).
TEST(Profiler, ProbabilitySamplingWithinFiveSigma) {
    with_and_without_count_sites([] {
    constexpr int n = 1000000;
    constexpr double p = 0.01;
    const struct {
        size_t size, alignment;
    } paths[] = {{24, 0}, {5000, 0}, {100000, 0}, {5000, 128}};
    for (const auto& path : paths) {
        SCOPED_TRACE(std::to_string(path.size) + " bytes, alignment " + std::to_string(path.alignment));
        const int allocations = path.size > 2032 ? n / 10 : n;
        alloc::profiler::clear();
        alloc::profiler::start({Sampling::probability, p, 0, 8, 12345});
        for (int i = 0; i < allocations; ++i)
            alloc::free(path.alignment ? alloc::managed_alloc(path.size, path.alignment) : alloc::pool_alloc(path.size));
        alloc::profiler::stop();
        const auto profile = alloc::profiler::fetch();
        EXPECT_NEAR(static_cast<double>(profile.allocations.size()), allocations * p,
                    five_sigma(allocations * p * (1 - p)));
        for (const auto& r : profile.allocations) EXPECT_DOUBLE_EQ(r.weight, 1 / p);
    }
    });
}

// p = 0 samples nothing and, in a thread's first probability session (the
// per-thread constants of geometric_gap not yet computed), arms a gap of 2^62:
// with the constants taken as zero, every gap was 0 and every allocation went
// through record_slow to record nothing.
TEST(Profiler, ProbabilityZeroArmsTheLongestGapInAThreadsFirstSession) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::probability, 0.0, 0, 8, 7});
    int64_t countdown = 0;
    std::thread([&] {
        alloc::free(alloc::pool_alloc(24));  // the first allocation arms the hook
        alloc::free(alloc::pool_alloc(24));
        countdown = alloc::detail::sample_countdown;
    }).join();
    alloc::profiler::stop();
    EXPECT_GT(countdown, int64_t{1} << 61);
    EXPECT_EQ(alloc::profiler::fetch().allocations.size(), 0u);
}

// The allocations between two samples are counted down from a geometric draw
// (one per sample), not tested one by one: the gaps must still be those of
// independent trials with probability p. A fixed or a uniform gap of the same
// mean fails the variance check.
TEST(Profiler, ProbabilitySamplingGapsAreGeometric) {
    with_and_without_count_sites([] {
    constexpr int n = 1000000;
    constexpr double p = 0.01;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::probability, p, 0, 8, 4242});
    std::vector<double> gaps;
    int last = -1;
    for (int i = 0; i < n; ++i) {
        void* q = alloc::pool_alloc(24);
        if (!alloc::detail::in_arena(q)) {  // moved: sampled
            gaps.push_back(i - last);
            last = i;
        }
        alloc::free(q);
    }
    alloc::profiler::stop();
    ASSERT_GT(gaps.size(), 9000u);
    const double k = static_cast<double>(gaps.size());
    double mean = 0, var = 0;
    for (double g : gaps) mean += g / k;
    for (double g : gaps) var += (g - mean) * (g - mean) / (k - 1);
    // Trials until a success: mean 1/p, variance (1 - p)/p^2.
    const double expected_var = (1 - p) / (p * p);
    EXPECT_NEAR(mean, 1 / p, five_sigma(expected_var / k));
    // The sample variance of a geometric variable: its own standard error is
    // about sqrt((mu4 - sigma^4) / k), mu4 ~ 9 sigma^4 here.
    EXPECT_NEAR(var / expected_var, 1.0, five_sigma(8.0 / k));
    // P(gap == 1) = p: the allocation right after a sample is a trial too.
    const double ones = static_cast<double>(std::count(gaps.begin(), gaps.end(), 1.0));
    EXPECT_NEAR(ones / k, p, five_sigma(p * (1 - p) / k));
    });
}

// While stopped the hook only reads: it writes nothing on the hot path (its
// count stays as it was) and calls nothing; the small entries pop from this
// thread's heap's lists themselves. Sampling, they look at no_heap's, always
// empty, unless their count sites count (then at the heap's); the big entries
// at no_heap's.
TEST(Profiler, TheStoppedHookWritesNothing) {
    with_and_without_count_sites([] {
    alloc::profiler::start({Sampling::bytes, 1.0, 4096});
    alloc::free(alloc::pool_alloc(16));
    const bool sites = alloc::detail::count_sites_unit() == alloc::detail::CountUnit::bytes;
    EXPECT_EQ(alloc::detail::alloc_heap, sites ? alloc::detail::this_thread_heap : &alloc::detail::no_heap);
    EXPECT_EQ(alloc::detail::managed_alloc_heap, &alloc::detail::no_heap);
    alloc::profiler::stop();
    EXPECT_EQ(alloc::detail::hook_state, alloc::detail::hook_stopped);
    alloc::free(alloc::pool_alloc(16));  // points the entries at the heap
    EXPECT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
    const int64_t count = alloc::detail::sample_countdown;
    for (int i = 0; i < 100000; ++i) alloc::free(alloc::pool_alloc(1 + i % 2000));
    EXPECT_EQ(alloc::detail::sample_countdown, count);
    EXPECT_EQ(alloc::detail::hook_state, alloc::detail::hook_stopped);
    EXPECT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
    });
}

// The hooked small entries start with a count site (alloc/count_site.hpp):
// one nop while stopped; while the profiler samples, a count of the
// allocation's bytes (or of the allocation) and a branch, which this build
// must be able to write (a refusal says why, and fails here rather than cost
// the sampling entries their speed unseen; the sanitizers' and unoptimized
// builds may put an instruction before a site, which is then refused for
// that). An armed thread's small allocations are then counted by the site
// alone, once each, big ones through pool_alloc included.
TEST(Profiler, CountSitesCountEachSmallAllocationOnceWhileSampling) {
    ASSERT_GE(alloc::detail::count_sites().size(), 4u);  // the three entries' and count_site.cpp's probe
    const auto site_of = [](auto* entry) { return reinterpret_cast<const unsigned char*>(entry); };
    const auto* pool_alloc_site = site_of(&alloc::pool_alloc);
    const auto* alloc_site = site_of(static_cast<void* (*)(size_t, const alloc::TypeInfo*)>(&alloc::alloc));
    const auto* big_alloc_site = site_of(&alloc::big_alloc);
    const unsigned char nop[] = {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x0f, 0x1f, 0x84, 0x05, 0xf1, 0xff, 0xff, 0xff};
    const unsigned char sub[] = {0x64, 0x48, 0x29, 0x3c, 0x25}, dec[] = {0x64, 0x48, 0xff, 0x0c, 0x25};
    const unsigned char js[] = {0x0f, 0x88};
    alloc::profiler::start({Sampling::bytes, 1.0, size_t{1} << 40});
    if (sites_may_be_refused && !alloc::detail::count_sites_problem().empty()) {
        EXPECT_EQ(alloc::detail::count_sites_problem(), "a count site is not its function's first instruction");
        EXPECT_EQ(alloc::detail::count_sites_unit(), alloc::detail::CountUnit::off);
        alloc::profiler::stop();
        return;
    }
    ASSERT_EQ(alloc::detail::count_sites_problem(), "");
    for (const auto* site : {pool_alloc_site, alloc_site, big_alloc_site}) {
        EXPECT_EQ(std::memcmp(site, sub, sizeof sub), 0);
        EXPECT_EQ(std::memcmp(site + 9, js, sizeof js), 0);
    }
    alloc::free(alloc::pool_alloc(16));  // arms this thread
    ASSERT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
    const int64_t before = alloc::detail::sample_countdown;
    int64_t bytes = 0;
    for (size_t size : {1, 16, 100, 2032, 2033, 5000, 100000}) {
        alloc::free(alloc::pool_alloc(size));
        alloc::free(alloc::alloc(size, &alloc::type_of<Point>()));
        bytes += 2 * static_cast<int64_t>(size);
    }
    for (size_t size : {2033, 5000, 65536, 100000}) {  // big_alloc's site, its list's block and any other
        for (int i = 0; i < 2; ++i) alloc::free(alloc::big_alloc(size));
        bytes += 2 * static_cast<int64_t>(size);
    }
    alloc::free(alloc::managed_alloc(5000));  // no site: counted through the state
    bytes += 5000;
    EXPECT_EQ(alloc::detail::sample_countdown, before - bytes);
    alloc::profiler::start({Sampling::probability, 0.5, 0, 8, 1});
    EXPECT_EQ(std::memcmp(alloc_site, dec, sizeof dec), 0);
    alloc::profiler::stop();
    EXPECT_EQ(std::memcmp(pool_alloc_site, nop, sizeof nop), 0);
    EXPECT_EQ(std::memcmp(alloc_site, nop, sizeof nop), 0);
    EXPECT_EQ(std::memcmp(big_alloc_site, nop, sizeof nop), 0);
    EXPECT_EQ(alloc::detail::count_sites_unit(), alloc::detail::CountUnit::off);
}

namespace {

// A count site's 15 bytes in one of its forms, and the 16 after them (the
// function's own, or its padding), where an instruction that overran the site
// would end.
constexpr size_t site_bytes = 15;
using SiteCode = std::array<unsigned char, site_bytes + 16>;
SiteCode site_code(uintptr_t site) {
    SiteCode code;
    std::memcpy(code.data(), reinterpret_cast<const void*>(site), code.size());
    return code;
}

// What a thread runs from `offset` of a site's code to the site's end,
// decoded by the kernels' verifier's disassembler (addresses are offsets in
// the site): each instruction, and where each ends (the code's end where a
// byte does not decode, with no instruction for it).
struct SiteRun {
    std::vector<jit::Instruction> instructions;
    std::vector<size_t> ends;
};
SiteRun run_from(const SiteCode& code, size_t offset) {
    static const jit::Disassembler disassembler;
    SiteRun run;
    for (size_t at = offset; at < site_bytes;) {
        const auto instruction = disassembler.decode(code.data() + at, code.size() - at, at);
        if (!instruction) {
            run.ends.push_back(code.size());
            break;
        }
        at += instruction->size;
        run.instructions.push_back(*instruction);
        run.ends.push_back(at);
    }
    return run;
}

// Each instruction's mnemonic (its text up to the first space).
std::vector<std::string> mnemonics(const SiteRun& run) {
    std::vector<std::string> out;
    for (const jit::Instruction& i : run.instructions) out.push_back(i.text.substr(0, i.text.find(' ')));
    return out;
}

}  // namespace

// A site is one nop while stopped (one instruction per allocation: the
// stopped hook's cost, count_site.hpp), and a count and a branch while
// sampling. A thread interrupted within a site resumes at the same offset in
// whatever form the site holds then: every offset any form's instructions
// reach must start an instruction in every form, and each form must run from
// there to exactly the site's end (not into the function's code); the nop,
// resumed within, writes nothing but the flags (the site clobbers them) and
// reads memory only relative to rip (the site's own bytes: readable wherever
// it is).
TEST(Profiler, CountSiteFormsShareTheirBoundaries) {
    ASSERT_FALSE(alloc::detail::count_sites().empty());
    const uintptr_t site = alloc::detail::count_sites().front().site;
    std::vector<std::pair<std::string, SiteCode>> forms{{"nop", site_code(site)}};
    alloc::profiler::start({Sampling::bytes, 1.0, size_t{1} << 40});
    const bool rewritten = alloc::detail::count_sites_problem().empty();
    if (rewritten) forms.emplace_back("bytes", site_code(site));
    alloc::profiler::start({Sampling::probability, 0.5, 0, 8, 1});
    if (rewritten) forms.emplace_back("allocations", site_code(site));
    alloc::profiler::stop();
    EXPECT_EQ(site_code(site), forms[0].second);  // stop() writes the nop back
    EXPECT_TRUE(rewritten || sites_may_be_refused) << alloc::detail::count_sites_problem();

    std::set<size_t> reachable{0};
    for (bool grew = true; grew;) {
        grew = false;
        for (const auto& [form, code] : forms)
            for (size_t offset : std::set<size_t>(reachable))
                for (size_t end : run_from(code, offset).ends)
                    if (end < site_bytes && reachable.insert(end).second) grew = true;
    }
    EXPECT_EQ(reachable, rewritten ? (std::set<size_t>{0, 9}) : (std::set<size_t>{0}));
    for (const auto& [form, code] : forms)
        for (size_t offset : reachable) {
            const SiteRun run = run_from(code, offset);
            ASSERT_FALSE(run.ends.empty());
            EXPECT_EQ(run.ends.back(), site_bytes) << form << " from byte " << offset << ": "
                                                   << ::testing::PrintToString(mnemonics(run));
        }
    using Mnemonics = std::vector<std::string>;
    EXPECT_EQ(mnemonics(run_from(forms[0].second, 0)), Mnemonics{"nop"});
    const SiteRun nop_from_9 = run_from(forms[0].second, 9);
    EXPECT_EQ(mnemonics(nop_from_9), Mnemonics{"test"});
    ASSERT_FALSE(nop_from_9.instructions.empty());
    const jit::Instruction& test = nop_from_9.instructions[0];
    EXPECT_EQ(test.gprs_written, 0u) << test.text;
    EXPECT_FALSE(test.store) << test.text;
    ASSERT_FALSE(test.memory_operands().empty()) << test.text;
    for (const jit::MemoryOperand& m : test.memory_operands()) EXPECT_EQ(m.base, jit::reg_rip) << test.text;
    if (!rewritten) return;
    EXPECT_EQ(mnemonics(run_from(forms[1].second, 0)), (Mnemonics{"sub", "js"}));
    EXPECT_EQ(mnemonics(run_from(forms[1].second, 9)), Mnemonics{"js"});
    EXPECT_EQ(mnemonics(run_from(forms[2].second, 0)), (Mnemonics{"dec", "js"}));
    EXPECT_EQ(mnemonics(run_from(forms[2].second, 9)), Mnemonics{"js"});
}

// A count site's branch taken on flags of an earlier count (a thread stopped
// at the branch after a count of an earlier session, resumed in a count
// again: count_site.hpp; the label's code checks the count) finds
// the count not below zero: the allocation goes its entry's way, unrecorded.
// Taken with the count below zero, it is recorded.
TEST(Profiler, ACountSiteBranchRecordsOnlyBelowZero) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::bytes, 1.0, size_t{1} << 40});
    alloc::free(alloc::pool_alloc(16));  // arms the count, far from zero
    ASSERT_GE(alloc::detail::sample_countdown, 0);
    alloc::free(alloc::detail::small_counted_out(64, &alloc::unknown_type));
    const size_t spurious = alloc::profiler::fetch().allocations.size();
    alloc::detail::sample_countdown = -1;  // as a site leaves it when a sample is due
    alloc::free(alloc::detail::small_counted_out(64, &alloc::unknown_type));
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    EXPECT_EQ(spurious, 0u);
    ASSERT_EQ(profile.allocations.size(), 1u);
    EXPECT_EQ(profile.allocations[0].requested, 64u);
}

// Refused, the sites stay their nop and say why.
TEST(Profiler, RefusedCountSitesStayNopsAndSayWhy) {
    alloc::detail::allow_count_sites(false);
    alloc::profiler::start({Sampling::bytes, 1.0, 4096});
    const std::string problem = alloc::detail::count_sites_problem();
    const auto unit = alloc::detail::count_sites_unit();
    const bool first_is_nop = reinterpret_cast<const unsigned char*>(&alloc::pool_alloc)[0] == 0x66;
    alloc::profiler::stop();
    alloc::detail::allow_count_sites(true);
    EXPECT_NE(problem.find("allow_count_sites"), std::string::npos) << problem;
    EXPECT_EQ(unit, alloc::detail::CountUnit::off);
    EXPECT_TRUE(first_is_nop || sites_may_be_refused);  // there, an instruction may come first
}

// start() on another thread turns this thread's hook on: its next small
// allocation is counted (here, with every allocation recorded, recorded).
TEST(Profiler, StartFromAnotherThreadTurnsTheSmallEntriesHookOn) {
    for (int i = 0; i < 2; ++i) alloc::free(alloc::pool_alloc(24));  // registers this thread, then points its entries at its heap
    ASSERT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
    alloc::profiler::clear();
    std::thread([] { alloc::profiler::start({Sampling::all}); }).join();
    void* p = alloc::pool_alloc(24);
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    alloc::free(p);
    ASSERT_EQ(profile.allocations.size(), 1u);
    EXPECT_EQ(profile.allocations[0].requested, 24u);
}

// The big and managed entries' hook is alloc_heap too (managed_alloc_heap for
// the managed ones): while the profiler samples, every one of their
// allocations reaches it (through big_alloc's count site where the sites
// count), even with a block on its class's list; stopped, a thread that
// allocates only big or managed blocks points its words back at its heap, and
// they are not recorded.
TEST(Profiler, BigAndManagedEntriesSeeTheHookThroughAllocHeap) {
    with_and_without_count_sites([] {
    std::thread([] {
        for (int i = 0; i < 2; ++i) alloc::free(alloc::big_alloc(5000));  // registers the thread, then points its alloc_heap at its heap
        ASSERT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
        alloc::profiler::clear();
        alloc::profiler::start({Sampling::all});
        EXPECT_EQ(alloc::detail::alloc_heap, &alloc::detail::no_heap);
        for (int i = 0; i < 3; ++i) alloc::free(alloc::big_alloc(5000));
        alloc::free(alloc::managed_alloc(6000));
        alloc::profiler::stop();
        for (int i = 0; i < 2; ++i) alloc::free(alloc::big_alloc(5000));
        EXPECT_EQ(alloc::detail::alloc_heap, alloc::detail::this_thread_heap);
        for (int i = 0; i < 2; ++i) alloc::free(alloc::managed_alloc(6000));
        EXPECT_EQ(alloc::detail::managed_alloc_heap, alloc::detail::this_thread_heap);
        const auto profile = alloc::profiler::fetch();
        ASSERT_EQ(profile.allocations.size(), 4u);
        EXPECT_EQ(profile.allocations[3].requested, 6000u);
    }).join();
    });
}

// start() and stop() from one thread while another allocates (the race the
// sequentially consistent pair in alloc_small_not_counting is for; ThreadSanitizer
// runs it too): after the last start() returns, the other thread's next
// allocation is recorded, and after the last stop() its entries go back to
// its own heap (where the count sites counted, it was there already: the
// pass with them refused tests that).
TEST(Profiler, StartAndStopRacingWithAnAllocatingThreadLoseNoPoke) {
    with_and_without_count_sites([] {
    std::atomic<int> phase{0};
    std::atomic<bool> back_on_heap{false};
    std::thread worker([&] {
        // 1000 bytes among them: the class's list is not empty when it counts below.
        for (int i = 0; phase.load(std::memory_order_acquire) == 0; ++i)
            alloc::free(alloc::pool_alloc(i % 2 ? 1000 : 16 + i % 64));
        alloc::free(alloc::pool_alloc(1000));  // the profiler records every allocation now
        phase.store(2, std::memory_order_release);
        while (phase.load(std::memory_order_acquire) != 3) std::this_thread::yield();
        for (int i = 0; i < 2; ++i) alloc::free(alloc::pool_alloc(1000));
        back_on_heap = alloc::detail::alloc_heap == alloc::detail::this_thread_heap;
    });
    for (int k = 0; k < 300; ++k) {
        alloc::profiler::start({Sampling::bytes, 1.0, 1 << 20});
        alloc::profiler::stop();
    }
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    phase.store(1, std::memory_order_release);
    while (phase.load(std::memory_order_acquire) != 2) std::this_thread::yield();
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    phase.store(3, std::memory_order_release);
    worker.join();
    EXPECT_TRUE(std::any_of(profile.allocations.begin(), profile.allocations.end(),
                            [](const auto& a) { return a.requested == 1000; }));
    EXPECT_TRUE(back_on_heap);
    });
}

// Holds one thread at a race point of the profiler's slow path
// (alloc::profiler::race_point) while the test runs start() or stop(), so that
// each race below happens every time, in the order that lost a poke.
namespace {
// Whether done() comes true within 10 s. What the tests below wait for
// happens at once where the profiler behaves: a failure, not a hang, otherwise.
template <typename Done>
bool soon(Done done) {
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done())
        if (std::chrono::steady_clock::now() > give_up) return false;
        else std::this_thread::yield();
    return true;
}

struct Hold {
    std::thread::id thread;
    std::atomic<int> point{-1};  // where to hold `thread` next; -1: nowhere
    std::atomic<bool> holding{false};

    void at(alloc::profiler::RacePoint p) { point = static_cast<int>(p); }
    // Whether the thread got there (where the profiler calls race_point as it should).
    bool held_soon() const {
        return soon([this] { return holding.load(); });
    }
    void release() { holding = false; }
} hold;

void hold_at(alloc::profiler::RacePoint p) {
    if (std::this_thread::get_id() != hold.thread || hold.point.load() != static_cast<int>(p)) return;
    hold.point = -1;
    hold.holding = true;
    while (hold.holding.load()) std::this_thread::yield();
}

// A thread that allocates 1000 bytes once phase is 2 (its first allocation in
// the session: it reaches record_slow), then 999 bytes once phase is 3, the
// allocation the test looks for.
struct RaceWorker {
    std::atomic<int> phase{0};
    std::thread thread{[this] {
        alloc::free(alloc::pool_alloc(64));  // registers the thread with the profiler
        phase = 1;
        while (phase.load() < 2) std::this_thread::yield();
        alloc::free(alloc::pool_alloc(1000));
        while (phase.load() < 3) std::this_thread::yield();
        alloc::free(alloc::pool_alloc(999));
        phase = 4;
    }};
    RaceWorker() {
        while (phase.load() != 1) std::this_thread::yield();
        hold.thread = thread.get_id();
        __atomic_store_n(&alloc::profiler::race_point, &hold_at, __ATOMIC_RELAXED);
    }
    ~RaceWorker() {  // also after a failed assertion: the thread goes on and ends
        hold.point = -1;
        hold.release();
        if (phase.load() < 3) phase = 3;
        if (thread.joinable()) thread.join();
        __atomic_store_n(&alloc::profiler::race_point, nullptr, __ATOMIC_RELAXED);
        alloc::profiler::stop();
    }
    // Starts byte sampling (1 MiB), lets the thread allocate its 1000 bytes,
    // holds it in record_slow where it has read the session, and stops.
    void hold_after_session_read_and_stop() {
        hold.at(alloc::profiler::RacePoint::session_read);
        alloc::profiler::start({Sampling::bytes, 1.0, 1 << 20});
        phase = 2;
        ASSERT_TRUE(hold.held_soon()) << "the thread never reached the race point";
        alloc::profiler::stop();
    }
    // Lets the thread allocate the 999 bytes; returns whether the profiler recorded them.
    bool records_the_next_allocation() {
        phase = 3;
        const bool allocated = soon([this] { return phase.load() == 4; });
        alloc::profiler::stop();
        if (!allocated) {  // a thread stuck in the profiler still hangs the destructor's join: ctest's timeout ends it
            ADD_FAILURE() << "the thread did not make its last allocation within 10 s";
            return false;
        }
        const auto profile = alloc::profiler::fetch();
        thread.join();
        alloc::profiler::clear();
        return std::any_of(profile.allocations.begin(), profile.allocations.end(),
                           [](const auto& a) { return a.requested == 999; });
    }
};
}  // namespace

// A start() between a thread's read of the session in record_slow and its arm
// there: the arm, for the session before (a byte gap of about 1 MiB), landed
// over start()'s poke, and the thread recorded nothing of the new session
// until that gap ran out.
TEST(Profiler, AStartWhileAThreadArmsForTheSessionBeforeReachesIt) {
    RaceWorker worker;
    worker.hold_after_session_read_and_stop();
    if (HasFatalFailure()) return;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    hold.release();
    EXPECT_TRUE(worker.records_the_next_allocation());
}

// A start() between a thread's finding the profiler stopped (after its arm in
// record_slow) and its hook's stop: the stop undid start()'s poke, and the
// thread's hook stayed stopped for the whole session.
TEST(Profiler, AStartWhileAThreadStopsItsHookReachesIt) {
    RaceWorker worker;
    worker.hold_after_session_read_and_stop();
    if (HasFatalFailure()) return;
    hold.at(alloc::profiler::RacePoint::found_stopped);
    hold.release();  // the thread arms, then finds the profiler stopped
    ASSERT_TRUE(hold.held_soon()) << "the thread never reached the race point";
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    hold.release();
    EXPECT_TRUE(worker.records_the_next_allocation());
}

// An allocation of s bytes is sampled with probability p = 1 - exp(-s /
// mean) (at least one point of the bytes' Poisson process in it),
// independently of the others (the process's points in disjoint bytes
// are), and a sample weighs 1 / p. So the sample count's mean is the sum
// of p, its variance the sum of p (1 - p), and each weighted total's
// variance is the sum over allocations of x^2 (1 / p - 1), x its count (1)
// or bytes. The bounds are 5 of those sigmas. `allocations` allocations of
// size_of(rng) bytes, each freed at once.
template <typename SizeOf>
void expect_byte_sampling_unbiased(size_t mean, int allocations, SizeOf size_of,
                                   void* (*allocate)(size_t) = alloc::pool_alloc) {
    std::mt19937 rng(7);
    double true_bytes = 0, samples = 0, samples_variance = 0, count_variance = 0, bytes_variance = 0;
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::bytes, 1.0, mean, 8, 777});
    for (int i = 0; i < allocations; ++i) {
        const size_t size = size_of(rng);
        const double p = -std::expm1(-static_cast<double>(size) / mean);
        true_bytes += size;
        samples += p;
        samples_variance += p * (1 - p);
        count_variance += 1 / p - 1;
        bytes_variance += static_cast<double>(size) * size * (1 / p - 1);
        alloc::free(allocate(size));
    }
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    double estimated_bytes = 0, estimated_count = 0;
    for (const auto& r : profile.allocations) {
        estimated_bytes += r.weight * r.requested;
        estimated_count += r.weight;
    }
    EXPECT_NEAR(static_cast<double>(profile.allocations.size()), samples, five_sigma(samples_variance));
    EXPECT_NEAR(estimated_bytes, true_bytes, five_sigma(bytes_variance));
    EXPECT_NEAR(estimated_count, allocations, five_sigma(count_variance));
}

TEST(Profiler, ByteSamplingTotalsAreUnbiased) {
    // Small objects: the sample count 15% below total / mean; the bounds
    // 1.5% of the count, 0.9% of the bytes. The weight mean / s (the
    // first-order 1 / p) would read the count 11% low. The mean is small for
    // that (212k samples): at 64 KiB, 5 sigma of the count was 6.3% and that
    // weight's bias 0.8%. (The test took 1 / sqrt(samples) for each total's
    // relative sigma until a CI run read 0.9586 of the count at 64 KiB, 3.3
    // of its sigma, 5.1 of that.)
    with_and_without_count_sites([] {
        expect_byte_sampling_unbiased(4096, 1000000, [](std::mt19937& rng) { return size_t{16} + rng() % 2000; });
    });
}

// Big blocks are counted in their entry (big_alloc_as) up to 64 KiB, and
// through big_block_hooked above: both paths, the same statistics, with the
// count sites refused; with them counting, by big_alloc's site, and by
// pool_alloc's (which then allocates through big_alloc_untracked: the site
// counted it).
TEST(Profiler, ByteSamplingTotalsOfBigBlocksAreUnbiased) {
    with_and_without_count_sites([] {
        for (auto* allocate : {+[](size_t size) { return alloc::pool_alloc(size); },
                               +[](size_t size) { return alloc::big_alloc(size); }}) {
            expect_byte_sampling_unbiased(size_t{64} << 10, 200000,
                                          [](std::mt19937& rng) { return size_t{2033} + rng() % 80000; }, allocate);
        }
    });
}

// start() reaches threads that allocated before it (their hook is poked),
// and threads born after it record from their first allocation.
TEST(Profiler, StartReachesRunningAndNewThreads) {
    std::atomic<int> phase{0};
    std::vector<void*> early_blocks, late_blocks;
    std::thread early([&] {
        alloc::free(alloc::pool_alloc(32));  // known to the profiler, its hook stopped
        phase = 1;
        while (phase != 2) std::this_thread::yield();
        for (int i = 0; i < 10; ++i) early_blocks.push_back(alloc::pool_alloc(32));
    });
    while (phase != 1) std::this_thread::yield();
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    phase = 2;
    early.join();
    std::thread late([&] {
        for (int i = 0; i < 7; ++i) late_blocks.push_back(alloc::pool_alloc(32));
    });
    late.join();
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    EXPECT_EQ(profile.allocations.size(), 17u);
    for (void* p : early_blocks) alloc::free(p);
    for (void* p : late_blocks) alloc::free(p);
}

// A new thread's hook starts poked: its first allocation, whichever entry it
// goes through, reaches record_slow, and with the profiler on is recorded.
TEST(Profiler, ANewThreadsFirstAllocationIsRecordedOnEveryEntry) {
    const std::function<void*()> firsts[] = {
        [] { return alloc::pool_alloc(32); },            // the small entries' empty-list branch
        [] { return alloc::big_alloc(5000); },           // big_alloc_as
        [] { return alloc::big_alloc(100000); },         // above the table: big_block_hooked
        [] { return alloc::managed_alloc(5000); },       // big_alloc_as, through managed_alloc_as
        [] { return alloc::managed_alloc(5000, 128); },  // another alignment: big_block_hooked
    };
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    std::vector<void*> blocks;
    for (const auto& first : firsts) std::thread([&] { blocks.push_back(first()); }).join();
    alloc::profiler::stop();
    EXPECT_EQ(alloc::profiler::fetch().allocations.size(), std::size(firsts));
    for (void* p : blocks) alloc::free(p);
}

// A sampled object freed by another thread: the free is recorded and the block
// goes back to its heap's big blocks, from where it is handed out again.
TEST(Profiler, CrossThreadFreeOfASampledObjectIsRecordedAndTheBlockReused) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* p = alloc::pool_alloc(96);
    std::memset(p, 0xab, 96);
    std::thread([p] { alloc::free(p); }).join();
    void* q = nullptr;
    for (int i = 0; i < 1000 && q != p; ++i) q = alloc::pool_alloc(96);  // leaked on purpose if not p
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.frees.size(), 1u);
    EXPECT_EQ(profile.frees[0].address, reinterpret_cast<uintptr_t>(p));
    EXPECT_EQ(q, p) << "the remotely freed sampled block was not handed out again";
    alloc::free(q);
}

// Big blocks: a sampled one's free is recorded; one allocated while stopped is not.
TEST(Profiler, OnlySampledBigBlocksReachTheProfilerWhenFreed) {
    void* unsampled = alloc::big_alloc(50000);
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* sampled = alloc::big_alloc(50000);
    alloc::profiler::stop();
    alloc::free(unsampled);
    alloc::free(sampled);
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.allocations.size(), 1u);
    ASSERT_EQ(profile.frees.size(), 1u);
    EXPECT_EQ(profile.frees[0].address, reinterpret_cast<uintptr_t>(sampled));
}

// A sampled block of a mapping of its own (above 1 MiB), at an alignment above
// 64: its header keeps the alignment for the unmap and the realloc, and both
// of its frees (the realloc's and the last) are recorded.
TEST(Profiler, SampledHugeAlignedBlocksReallocAndFreeRecorded) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* p = alloc::managed_alloc(size_t{2} << 20, 4096);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 4096, 0u);
    EXPECT_EQ(alloc::usable_size(p), size_t{2} << 20);
    std::memset(p, 0x5a, 64);
    void* q = alloc::managed_realloc(p, size_t{3} << 20);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 4096, 0u);
    EXPECT_EQ(static_cast<unsigned char*>(q)[63], 0x5a);
    alloc::free(q);
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.allocations.size(), 2u);
    ASSERT_EQ(profile.frees.size(), 2u);
    EXPECT_EQ(profile.frees[0].address, reinterpret_cast<uintptr_t>(p));
    EXPECT_EQ(profile.frees[1].address, reinterpret_cast<uintptr_t>(q));
}

// A free names the very record it frees, even when the address was sampled
// again after it: two allocations at one address, two frees, one each.
TEST(Profiler, FreesPairWithTheirOwnRecordWhenAnAddressIsReused) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* first = alloc::pool_alloc(64);
    alloc::free(first);
    void* second = alloc::pool_alloc(64);
    void* keep = alloc::pool_alloc(64);  // sampled, still live: no free names it
    alloc::free(second);
    alloc::profiler::stop();
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.allocations.size(), 3u);
    ASSERT_EQ(profile.frees.size(), 2u);
    EXPECT_EQ(second, first) << "the freed sampled block was not reused: the test shows nothing";
    EXPECT_EQ(profile.frees[0].allocation, 0u);
    EXPECT_EQ(profile.frees[1].allocation, 1u);
    EXPECT_EQ(profile.allocations[2].address, reinterpret_cast<uintptr_t>(keep));
    alloc::free(keep);
}

// A block sampled before a clear() names, in its header, a record the clear()
// removed: its free names no record, not the one now at that index.
TEST(Profiler, AFreeOfABlockSampledBeforeAClearNamesNoRecord) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* before = alloc::pool_alloc(64);
    alloc::profiler::stop();
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    void* after = alloc::pool_alloc(64);  // record 0 of this thread's buffer, as `before` was
    alloc::profiler::stop();
    alloc::free(before);
    EXPECT_EQ(alloc::profiler::fetch().frees.size(), 0u);
    alloc::free(after);
    const auto profile = alloc::profiler::fetch();
    ASSERT_EQ(profile.allocations.size(), 1u);
    ASSERT_EQ(profile.frees.size(), 1u);
    EXPECT_EQ(profile.frees[0].address, reinterpret_cast<uintptr_t>(after));
    EXPECT_EQ(profile.frees[0].allocation, 0u);
}

// A thread's buffer lock (alloc/owner_lock.hpp): its owner's side takes no
// locked instruction, yet neither side sees the other's section half done.
// Each section breaks the pair (a, b) and mends it: the owner's by counting
// it up, the other side's by resetting it, as clear() does. Without the
// owner's check of the other side, the owner sees the pair torn thousands of
// times a run; without the other side's wait, the other side sees it torn in
// about half of the runs (tried; the thread sanitizer's build reports that race).
TEST(ProfilerBufferLock, NeitherSideSeesTheOtherHalfway) {
    SCOPED_TRACE(alloc::OwnerLock::prepare() ? "the others' side issues membarrier" : "membarrier refused: exchanges");
    alloc::OwnerLock lock;
    uint64_t a = 0, b = 0;  // only under the lock
    const auto window = [](int length) {
        for (int k = 0; k < length; ++k) asm volatile("" ::: "memory");
    };
    std::atomic<bool> done{false};
    std::atomic<uint64_t> owner_sections{0};
    uint64_t owner_saw_torn = 0, other_saw_torn = 0;
    std::thread owner([&] {
        while (!done.load(std::memory_order_relaxed)) {
            alloc::OwnerLock::Owner hold(lock);
            if (a != b) ++owner_saw_torn;
            ++a;
            window(200);
            ++b;
            owner_sections.fetch_add(1, std::memory_order_relaxed);
        }
    });
    // Both sides a few thousand sections at the same time: the other side
    // pauses between its sections (the lock lets the owner in only then), and
    // gives up after 20 s on a machine too busy to run both.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    for (int other_sections = 0;
         (other_sections < 3000 || owner_sections.load() < 20'000) && std::chrono::steady_clock::now() < deadline;
         ++other_sections) {
        {
            alloc::OwnerLock::Other hold(lock);
            if (a != b) ++other_saw_torn;
            a = 0;
            window(20);
            b = 0;
        }
        for (int k = 0; k < 20; ++k) __builtin_ia32_pause();
    }
    done.store(true);
    owner.join();
    EXPECT_EQ(owner_saw_torn, 0u);
    EXPECT_EQ(other_saw_torn, 0u);
    EXPECT_GE(owner_sections.load(), 20'000u) << "the sides barely overlapped: the test showed little";
}

// fetch() and clear() while another thread records and frees: every record
// and free read whole, every free naming its own allocation.
TEST(Profiler, FetchAndClearWhileAnotherThreadRecords) {
    alloc::profiler::clear();
    alloc::profiler::start({Sampling::all});
    std::atomic<bool> done{false};
    std::thread worker([&] {
        for (int i = 0; i < 100'000; ++i) alloc::free(alloc::pool_alloc(40 + i % 2));
        done.store(true);
    });
    size_t fetches = 0, records = 0, frees = 0, torn = 0;
    while (!done.load() || fetches < 2) {
        const auto profile = alloc::profiler::fetch();
        for (const auto& r : profile.allocations)
            if ((r.requested != 40 && r.requested != 41) || r.stack.empty()) ++torn;
        for (const auto& f : profile.frees)
            if (f.allocation >= profile.allocations.size() || f.address != profile.allocations[f.allocation].address)
                ++torn;
        records += profile.allocations.size();
        frees += profile.frees.size();
        if (++fetches % 2 == 0) alloc::profiler::clear();
    }
    worker.join();
    alloc::profiler::stop();
    alloc::profiler::clear();
    EXPECT_EQ(torn, 0u);
    EXPECT_GT(records, 0u);
    EXPECT_GT(frees, 0u);
}
