// Chain verdicts on synthetic chains: names alone, and addresses through the symbolizer.
#include "perf/symbols.hpp"
#include "perf/verdict.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

using namespace benchfp::perf;

// Real functions of this binary, named as the harness's callers are, so that the
// symbolizer (libdw, .symtab) resolves return addresses inside them.
extern "C" __attribute__((noinline, used)) void verdict_test_bar() { asm volatile("nop; nop; nop; nop"); }
extern "C" __attribute__((noinline, used)) void verdict_test_foo() { asm volatile("nop; nop; nop; nop"); }
extern "C" __attribute__((noinline, used)) void verdict_test_main() { asm volatile("nop; nop; nop; nop"); }
static __attribute__((noinline, used)) void verdict_test_static() { asm volatile("nop; nop; nop; nop"); }

namespace {

const ExpectedCallers expected{{"bar", "foo", "main"}, ""};

Verdict classify(std::vector<std::string> callers) { return classify_callers(callers, expected); }

// A driver between bar and the JIT code, with frames of its own in between.
Verdict classify_driven(std::vector<std::string> callers) {
    return classify_callers(callers, ExpectedCallers{{"bar", "foo", "main"}, "call_jit"});
}

// A return address inside f: looked up at addr - 1 it is still in f.
uint64_t ret_in(void (*f)()) { return reinterpret_cast<uint64_t>(f) + 2; }

}  // namespace

TEST(Verdict, FullWhenTheCallersFollowInOrder) {
    EXPECT_EQ(classify({"bar", "foo", "main"}), Verdict::full);
    EXPECT_EQ(classify({"bar", "foo", "main", "__libc_start_call_main", "_start"}), Verdict::full);
}

TEST(Verdict, SkippedCallerWhenTheInnermostCallerIsMissing) {
    EXPECT_EQ(classify({"foo", "main", "__libc_start_call_main"}), Verdict::skipped_caller);
}

TEST(Verdict, BrokenOtherwise) {
    EXPECT_EQ(classify({}), Verdict::broken);
    EXPECT_EQ(classify({"[unknown]"}), Verdict::broken);
    EXPECT_EQ(classify({"bar", "foo"}), Verdict::broken);            // main not reached
    EXPECT_EQ(classify({"bar", "main"}), Verdict::broken);           // foo missing in between
    EXPECT_EQ(classify({"[unknown]", "bar", "foo", "main"}), Verdict::broken);  // not right above
    EXPECT_EQ(classify({"main", "foo", "bar"}), Verdict::broken);    // wrong order
}

TEST(Verdict, WithADriverTheDirectCallerDecides) {
    EXPECT_EQ(classify_driven({"call_jit", "run_tiles", "parallel", "driver", "bar", "foo", "main"}), Verdict::full);
    EXPECT_EQ(classify_driven({"run_tiles", "parallel", "driver", "bar", "foo", "main"}), Verdict::skipped_caller);
    EXPECT_EQ(classify_driven({"call_jit", "run_tiles", "[unknown]"}), Verdict::broken);
    EXPECT_EQ(classify_driven({"call_jit", "bar", "main"}), Verdict::broken);
    EXPECT_EQ(classify_driven({}), Verdict::broken);
}

TEST(Verdict, SymbolizesRealAddressesIncludingStaticFunctions) {
    Symbols symbols;
    EXPECT_EQ(symbols.name(ret_in(verdict_test_bar)), "verdict_test_bar");
    EXPECT_EQ(symbols.name(ret_in(verdict_test_static)), "verdict_test_static()");  // C++ names demangled
    EXPECT_EQ(symbols.name(8), unknown_symbol);
}

TEST(Verdict, JudgesSamplesByRegionWindowAndChain) {
    Symbols symbols;
    JitCode code;
    code.region = {"jit:test", 0x10000, 0x10100};
    code.frameless_windows = {{0x10000, 0x10008}, {0x100f0, 0x10100}};
    symbols.add_region(code.region);
    const ExpectedCallers callers{{"verdict_test_bar", "verdict_test_foo", "verdict_test_main"}, ""};
    const uint64_t bar = ret_in(verdict_test_bar), foo = ret_in(verdict_test_foo), outer = ret_in(verdict_test_main);

    auto judge = [&](uint64_t ip, std::vector<uint64_t> above) {
        Sample s;
        s.ip = ip;
        s.chain = {ip};
        s.chain.insert(s.chain.end(), above.begin(), above.end());
        return verdict(s, code, callers, symbols);
    };
    EXPECT_EQ(judge(0x10050, {bar, foo, outer}), Verdict::full);
    EXPECT_EQ(judge(0x10050, {foo, outer}), Verdict::skipped_caller);
    EXPECT_EQ(judge(0x10050, {0x3f8000003f800000}), Verdict::broken);  // rbp held data: garbage
    EXPECT_EQ(judge(0x10050, {}), Verdict::broken);                    // rbp held a counter: walk stopped
    EXPECT_EQ(judge(0x10002, {foo, outer}), Verdict::prologue);
    EXPECT_EQ(judge(0x100f4, {foo, outer}), Verdict::prologue);
    EXPECT_EQ(judge(0x20000, {bar, foo, outer}), std::nullopt);  // not in the JIT region
    EXPECT_EQ(symbols.name(0x10050), "jit:test");
}

TEST(Verdict, TallyAndUnwindRate) {
    Tally tally;
    EXPECT_TRUE(std::isnan(tally.unwind_rate()));
    for (auto v : {Verdict::full, Verdict::full, Verdict::full, Verdict::broken, Verdict::prologue}) tally.add(v);
    tally.add(std::nullopt);
    EXPECT_EQ(tally.jit(), 5u);
    EXPECT_EQ(tally.judged(), 4u);
    EXPECT_EQ(tally.outside, 1u);
    EXPECT_DOUBLE_EQ(tally.unwind_rate(), 0.75);  // full / (JIT - prologue)
}
