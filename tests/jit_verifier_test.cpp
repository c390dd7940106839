// Deliberately broken kernels, one per rule, each caught by the check that owns
// the rule: the static verifier (every path, jit/verifier.hpp), the single-step
// checks (stepper.hpp) or the ABI probe (abi_probe.hpp), at the right offset and
// with the right message.
#include "abi_probe.hpp"
#include "jit/disassembly.hpp"
#include "jit/verifier.hpp"
#include "stepper.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <sstream>
#include <thread>
#include <vector>

using namespace benchfp;
namespace step = benchfp::harness::step;
namespace probe_abi = benchfp::harness::abi;
using namespace Xbyak::util;

extern "C" __attribute__((noinline)) void benchfp_test_callee() { asm volatile(""); }

namespace {

// A kernel whose body the test writes; `mark` is the offset the test is about.
class TestKernel : public jit::Generator {
public:
    using Body = std::function<void(TestKernel&)>;
    // Registers come from the pool before build(), so the prologue saves them.
    TestKernel(jit::Isa isa, jit::FramePolicy policy, Body body)
        : Generator("broken", isa, policy), data(pool().take_register("data")), body_(std::move(body)) {}
    Xbyak::Reg64 data;  // rbp under clobber, the first register handed out
    using Generator::setup_done;
    size_t mark = 0;
    void mark_here() { mark = getSize(); }

protected:
    void generate_body() override { body_(*this); }

private:
    Body body_;
};

// Builds without the verifier at build(), as --no-verify does: the test runs it itself.
std::unique_ptr<TestKernel> build(jit::FramePolicy policy, TestKernel::Body body, jit::Isa isa = jit::Isa::avx2) {
    jit::set_verify_on_build(false);
    auto k = std::make_unique<TestKernel>(isa, policy, std::move(body));
    k->build();
    jit::set_verify_on_build(true);
    return k;
}

std::string offset_text(size_t offset) {
    std::ostringstream out;
    out << "at +0x" << std::hex << offset << ' ';
    return out.str();
}

void expect_verify_fails(const TestKernel& k, const std::string& message) {
    const jit::Verification v = jit::verify(k.layout(), k.policy());
    ASSERT_FALSE(v.passed()) << "the verifier passed a broken kernel";
    EXPECT_EQ(v.failure_offset, k.mark) << v.failure;
    EXPECT_NE(v.failure.find(offset_text(k.mark)), std::string::npos) << v.failure;
    EXPECT_NE(v.failure.find(message), std::string::npos) << v.failure;
}

// One call of the kernel on this thread under the trap flag.
step::ThreadSteps step_once(const TestKernel& k, const void* args) {
    const jit::Verification code = jit::verify(k.layout(), k.policy());
    step::Session session(code, k.layout().begin, k.layout().size, 1, uint64_t{1} << 40);
    const bool stepped = step::begin_thread_call();
    k.entry()(args);
    if (stepped) step::end_thread_call();
    auto threads = session.stop();
    EXPECT_EQ(threads.size(), 1u);
    return threads.empty() ? step::ThreadSteps{} : threads.front();
}

bool executed(const step::ThreadSteps& t, size_t offset) {
    for (const auto& c : t.chains)
        if (c.offset == offset) return true;
    return false;
}

void expect_violation(const step::ThreadSteps& t, step::Violation::Kind kind, size_t offset) {
    EXPECT_GT(t.steps, 0u);
    const step::Violation& v = t.violations[kind];
    EXPECT_TRUE(v.seen) << step::to_string(kind) << " not caught";
    EXPECT_EQ(v.offset, offset) << step::to_string(kind);
    for (int other = 0; other < step::Violation::count_; ++other)
        if (other != kind) {
            EXPECT_FALSE(t.violations[other].seen) << step::to_string(step::Violation::Kind(other));
        }
}

uint64_t word = 0;  // what the kernels read through rdi

TEST(JitVerifier, CatchesRbpWrittenInTheBodyOfAFrameKernel) {
    auto k = build(jit::FramePolicy::frame, [](TestKernel& g) {
        g.setup_done();
        g.mark_here();
        g.mov(rbp, rdi);  // a sample from here on loses bar, foo and main
        g.mov(rax, ptr[rdi]);
    });
    expect_verify_fails(*k, "writes rbp in the body of a frame kernel");
}

TEST(JitVerifier, CatchesRbpWrittenOnlyInARarelyTakenBranch) {
    auto k = build(jit::FramePolicy::frame, [](TestKernel& g) {
        Xbyak::Label common;
        g.setup_done();
        g.cmp(qword[rdi], 0x5EED);
        g.jne(common, Xbyak::CodeGenerator::T_NEAR);
        g.mark_here();
        g.xor_(ebp, ebp);  // only when the argument is 0x5EED
        g.L(common);
        g.mov(rax, ptr[rdi]);
    });
    expect_verify_fails(*k, "writes rbp in the body of a frame kernel");
    // A sampled (or stepped) run with any other argument never executes the
    // write: every chain it sees is whole, so only the static walk catches it.
    word = 1;
    const step::ThreadSteps t = step_once(*k, &word);
    EXPECT_GT(t.steps, 5u);
    EXPECT_FALSE(executed(t, k->mark));
}

TEST(StepSession, ARbpNear2To64IsNoFramePointerToRead) {
    // Under clobber rbp is data: here -8, as a pointer offset computed from a
    // negative index is. The stepper's walk once tested bp + 16 <= stack_hi,
    // which wraps for it, and read address 0: the harness died of SIGSEGV.
    auto k = build(jit::FramePolicy::clobber, [](TestKernel& g) {
        g.setup_done();
        g.mov(g.data, -8);
        g.mark_here();
        g.mov(rax, ptr[rdi]);
    });
    ASSERT_EQ(k->data, rbp);
    const step::ThreadSteps t = step_once(*k, &word);
    ASSERT_TRUE(executed(t, k->mark));
    for (const auto& c : t.chains)
        if (c.offset == k->mark) {
            EXPECT_EQ(c.depth, 1u) << "a chain walked from rbp = -8";
        }
}

TEST(JitVerifier, CatchesAnEpilogueThatForgetsR12) {
    auto k = build(jit::FramePolicy::preserve, [](TestKernel& g) {
        g.setup_done();
        g.mov(r12, ptr[rdi]);  // callee-saved, never taken from the pool: nobody saves it
    });
    k->mark = k->layout().size - 1;  // the ret: the epilogue ends the code (no data)
    expect_verify_fails(*k, "callee-saved r12 not restored");
    probe_abi::Probe probe;
    word = 7;
    probe_abi::probe_call(probe, k->entry(), &word, 1);
    EXPECT_NE(probe.mismatches().find("r12"), std::string::npos) << probe.mismatches();
}

TEST(JitVerifier, CatchesACallWithAMisalignedStack) {
    auto k = build(jit::FramePolicy::frame, [](TestKernel& g) {
        g.setup_done();
        g.sub(rsp, 8);  // entry + push rbp + 8: rsp is 8 mod 16 at the call
        g.mov(rax, reinterpret_cast<uintptr_t>(&benchfp_test_callee));
        g.mark_here();
        g.call(rax);
        g.add(rsp, 8);
    });
    expect_verify_fails(*k, "calls with rsp not 16-byte aligned");
    expect_violation(step_once(*k, &word), step::Violation::misaligned_call, k->mark);
}

TEST(JitVerifier, CatchesYmmLeftDirtyAtReturn) {
    // An sse41 kernel gets no vzeroupper from the Generator; this one uses ymm anyway.
    auto k = build(jit::FramePolicy::frame, [](TestKernel& g) {
        g.setup_done();
        g.vbroadcastss(ymm1, ptr[rdi]);
    }, jit::Isa::sse41);
    EXPECT_TRUE(jit::verify(k->layout(), k->policy()).passed());  // not a frame rule
    expect_violation(step_once(*k, &word), step::Violation::dirty_upper_at_ret, k->layout().size - 1);
}

TEST(JitVerifier, CatchesAStoreBelowTheRedZone) {
    auto k = build(jit::FramePolicy::frame, [](TestKernel& g) {
        g.setup_done();
        g.mov(rax, ptr[rdi]);
        g.mark_here();
        g.mov(ptr[rsp - 256], rax);  // a signal handler may overwrite it at any time
    });
    EXPECT_TRUE(jit::verify(k->layout(), k->policy()).passed());
    expect_violation(step_once(*k, &word), step::Violation::red_zone_store, k->mark);
}

TEST(JitVerifier, CatchesAPrologueWindowShorterThanThePrologue) {
    // Under clobber rbp must hold kernel data by setup_done(): this kernel
    // declares its setup done before it loads rbp, so samples right after the
    // window would still see the caller's frame through rbp.
    auto k = build(jit::FramePolicy::clobber, [](TestKernel& g) {
        EXPECT_EQ(g.data.getIdx(), rbp.getIdx());
        g.setup_done();
        g.mark_here();
        g.mov(g.data, ptr[rdi]);
    });
    expect_verify_fails(*k, "must be written before setup_done()");
}

TEST(JitVerifier, WellFormedKernelsPassWithTheirFramesStated) {
    for (jit::FramePolicy policy : jit::all_frame_policies) {
        auto k = build(policy, [](TestKernel& g) {
            g.mov(g.data, ptr[rdi]);
            g.setup_done();
            g.add(g.data, 1);
        });
        const jit::Verification v = jit::verify(k->layout(), policy);
        EXPECT_TRUE(v.passed()) << v.failure;
        EXPECT_EQ(v.rbp_clobbered, policy == jit::FramePolicy::clobber);
        if (policy == jit::FramePolicy::frame) {
            EXPECT_EQ(v.rbp_body, "frame");
            EXPECT_EQ(v.frame_from, 4u);  // push rbp (1 byte) + mov rbp, rsp (3 bytes)
        }
        if (policy == jit::FramePolicy::preserve) {
            EXPECT_EQ(v.rbp_body, "caller");
        }
    }
}

}  // namespace

TEST(StepSession, CountsCallsOnThreadsItHasNoRecordFor) {
    auto k = build(jit::FramePolicy::frame, [](TestKernel& g) {
        g.setup_done();
        g.mov(rax, ptr[rdi]);
    });
    const jit::Verification code = jit::verify(k->layout(), k->policy());
    step::Session session(code, k->layout().begin, k->layout().size, 1, uint64_t{1} << 40);
    const uint64_t argument = 0;
    auto call_on_this_thread = [&] {
        const bool stepped = step::begin_thread_call();
        k->entry()(&argument);
        if (stepped) step::end_thread_call();
    };
    call_on_this_thread();                  // takes the one record
    std::thread(call_on_this_thread).join();  // a second thread: none left for it
    const auto threads = session.stop();
    EXPECT_EQ(threads.size(), 1u);
    EXPECT_GT(threads.front().steps, 0u);
    EXPECT_EQ(session.unstepped_calls(), 1u);
}

// A call longer than the budget is stepped up to it, then runs at full speed:
// the thread is marked, and its later calls are not stepped at all.
TEST(StepSession, StopsSteppingAThreadAtItsBudget) {
    auto k = build(jit::FramePolicy::frame, [](TestKernel& g) {
        Xbyak::Label loop;
        g.setup_done();
        g.mov(ecx, 1000);
        g.L(loop);
        g.dec(ecx);
        g.jnz(loop);
    });
    const jit::Verification code = jit::verify(k->layout(), k->policy());
    step::Session session(code, k->layout().begin, k->layout().size, 1, 50);
    const uint64_t argument = 0;
    for (int call = 0; call < 2; ++call) {
        const bool stepped = step::begin_thread_call();
        EXPECT_EQ(stepped, call == 0);
        k->entry()(&argument);
        if (stepped) step::end_thread_call();
    }
    const auto threads = session.stop();
    ASSERT_EQ(threads.size(), 1u);
    EXPECT_EQ(threads.front().steps, 50u);
    EXPECT_TRUE(threads.front().budget_spent);
}

// Stack accesses and nops are counted per stepped instruction, exactly: nine
// instructions on the stack added to a body (a push and a pop, a store, a load
// and an add from a stack slot, one of them a vector's, a pushf and a popf,
// which name no operand, a movsq and a cmpsq with only one of their two
// operands on the stack) count nine more, a
// 7-byte nop one nop, and three loads elsewhere, one through rbp (clobber's
// first register, data here), count none.
alignas(32) uint64_t vector_words[4] = {};

TEST(StepSession, CountsTheInstructionsThatTouchTheStackAndTheNops) {
    auto body = [](bool loads, bool on_stack) {
        return [loads, on_stack](TestKernel& g) {
            g.setup_done();
            g.mov(g.data, rdi);
            if (loads) {
                g.mov(rax, ptr[g.data]);
                g.add(rax, ptr[rdi]);
                g.vmovups(ymm0, ptr[rdi]);
            }
            if (!on_stack) return;
            g.push(rax);
            g.mov(ptr[rsp - 8], rax);
            g.add(rax, ptr[rsp - 8]);
            g.vmovups(ptr[rsp - 64], ymm0);
            g.pop(rax);
            g.pushf();  // no operand names the stack
            g.popf();
            // movsq: [rdi] on the stack (the red zone), [rsi] the argument; cmpsq the other way round.
            g.mov(rsi, g.data);
            g.lea(rdi, ptr[rsp - 16]);
            g.movsq();
            g.lea(rsi, ptr[rsp - 16]);
            g.mov(rdi, g.data);
            g.cmpsq();
            g.nop(7);
        };
    };
    const auto bare = build(jit::FramePolicy::clobber, body(false, false));
    const auto loads = build(jit::FramePolicy::clobber, body(true, false));
    const auto stack = build(jit::FramePolicy::clobber, body(true, true));
    ASSERT_EQ(loads->data, rbp);
    const step::ThreadSteps a = step_once(*bare, vector_words), b = step_once(*loads, vector_words),
                            c = step_once(*stack, vector_words);
    EXPECT_GT(a.stack_accesses, 0u) << "the prologue's pushes and the ret";
    EXPECT_EQ(b.steps - a.steps, 3u);
    EXPECT_EQ(b.stack_accesses, a.stack_accesses) << "a load off the stack was counted";
    EXPECT_EQ(c.steps - b.steps, 14u);
    EXPECT_EQ(c.stack_accesses - b.stack_accesses, 9u);
    EXPECT_EQ(c.nops - b.nops, 1u);
    EXPECT_EQ(b.nops, a.nops);
}

// The decoder's memory operands, which the stack count reads: a load and a store
// name one, movs and cmps two, lea none (it touches no memory), and an
// fs-relative load (thread-local storage) none either: its registers do not give its address.
TEST(Disassembler, NamesTheMemoryOperandsAnInstructionTouches) {
    const jit::Disassembler d;
    auto memory_of = [&](std::vector<uint8_t> bytes) {
        const auto insn = d.decode(bytes.data(), bytes.size(), 0x1000);
        EXPECT_TRUE(insn.has_value());
        return insn ? std::vector<jit::MemoryOperand>(insn->memory_operands().begin(), insn->memory_operands().end())
                    : std::vector<jit::MemoryOperand>{};
    };
    const auto load = memory_of({0x48, 0x8b, 0x44, 0x24, 0xf8});  // mov rax, [rsp - 8]
    ASSERT_EQ(load.size(), 1u);
    EXPECT_EQ(load[0].base, jit::reg_rsp);
    EXPECT_EQ(load[0].disp, -8);
    EXPECT_EQ(memory_of({0x48, 0x01, 0x07}).size(), 1u);                     // add [rdi], rax
    EXPECT_TRUE(memory_of({0x48, 0x8d, 0x44, 0x24, 0xf8}).empty());          // lea rax, [rsp - 8]
    EXPECT_TRUE(memory_of({0x64, 0x48, 0x8b, 0x44, 0x24, 0xf8}).empty());    // mov rax, fs:[rsp - 8]
    // Both of a string instruction's operands, whichever order Capstone gives them in.
    const auto bases = [&](std::vector<uint8_t> bytes) {
        std::vector<int> out;
        for (const jit::MemoryOperand& m : memory_of(std::move(bytes))) out.push_back(m.base);
        std::sort(out.begin(), out.end());
        return out;
    };
    const std::vector<int> rsi_rdi = {rsi.getIdx(), rdi.getIdx()};  // jit's register numbers are Xbyak's
    EXPECT_EQ(bases({0x48, 0xa5}), rsi_rdi);  // movsq [rdi], [rsi]
    EXPECT_EQ(bases({0x48, 0xa7}), rsi_rdi);  // cmpsq [rsi], [rdi]
    EXPECT_TRUE(d.decode(std::vector<uint8_t>{0x0f, 0x1f, 0x44, 0x00, 0x00}.data(), 5, 0)->nop);  // nop dword [rax+rax]
    // Addresses only: Xbyak's long nops and the prefetches touch nothing, whatever rax holds.
    EXPECT_TRUE(memory_of({0x0f, 0x1f, 0x44, 0x00, 0x00}).empty());  // nop dword [rax+rax]
    EXPECT_TRUE(memory_of({0x0f, 0x18, 0x08}).empty());              // prefetcht0 [rax]
    EXPECT_TRUE(memory_of({0x0f, 0x0d, 0x08}).empty());              // prefetchw [rax]
    // An fs-relative store is no store through its registers either.
    const auto fs_store = d.decode(std::vector<uint8_t>{0x64, 0x48, 0x89, 0x45, 0x08}.data(), 5, 0);  // mov fs:[rbp + 8], rax
    ASSERT_TRUE(fs_store.has_value());
    EXPECT_FALSE(fs_store->store.has_value());
}

// The instructions that read or write the stack with no operand that names it:
// the step handler counts them as stack accesses (harness/stepper.cpp). push,
// pop, call and ret have kinds of their own; these have none.
TEST(Disassembler, FlagsTheInstructionsThatTouchTheStackWithoutNamingIt) {
    const jit::Disassembler d;
    auto implicit = [&](std::vector<uint8_t> bytes) {
        const auto insn = d.decode(bytes.data(), bytes.size(), 0x1000);
        EXPECT_TRUE(insn.has_value());
        return insn && insn->implicit_stack;
    };
    EXPECT_TRUE(implicit({0xc8, 0x10, 0x00, 0x00}));  // enter 16, 0
    EXPECT_TRUE(implicit({0xc9}));                    // leave
    EXPECT_TRUE(implicit({0x9c}));                    // pushfq
    EXPECT_TRUE(implicit({0x66, 0x9c}));              // pushf (16-bit)
    EXPECT_TRUE(implicit({0x9d}));                    // popfq
    // Far transfers: their return address is CS and RIP on the stack.
    EXPECT_TRUE(implicit({0xcb}));              // retf
    EXPECT_TRUE(implicit({0xca, 0x08, 0x00}));  // retf 8
    EXPECT_TRUE(implicit({0x48, 0xcb}));        // retfq
    EXPECT_TRUE(implicit({0xcf}));              // iretd
    EXPECT_TRUE(implicit({0x48, 0xcf}));        // iretq
    EXPECT_TRUE(implicit({0xff, 0x1f}));        // call far [rdi]
    // Not: no stack, or one an operand names.
    EXPECT_FALSE(implicit({0x90}));              // nop
    EXPECT_FALSE(implicit({0x48, 0x89, 0xd8}));  // mov rax, rbx
    EXPECT_FALSE(implicit({0xff, 0x2f}));        // jmp far [rdi]: reads [rdi], pushes nothing
    EXPECT_FALSE(implicit({0x50}));              // push rax: Kind::push
}
