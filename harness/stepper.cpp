#include "stepper.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <stdexcept>

namespace benchfp::harness::step {

namespace {

constexpr uint64_t trap_flag = 0x100;
constexpr size_t table_capacity = 1 << 14;  // distinct (instruction, chain) per thread: kernels have fewer instructions
constexpr uint64_t red_zone = 128;

// What the handler reads: set before stepping starts, never while it runs.
struct Record {
    uint64_t stack_lo = 0, stack_hi = 0;
    bool upper_dirty = false;
    ThreadSteps out;
    std::vector<ChainCount> table;  // open addressing, count == 0 means empty
};

struct Global {
    uint64_t begin = 0, size = 0;
    uint64_t max_steps = 0;  // per thread
    std::vector<const jit::Instruction*> by_offset;  // the decoded instruction starting at each offset
    std::vector<Record> records;
    std::atomic<int> next_record{0};
    std::atomic<uint64_t> unstepped_calls{0};  // calls on threads that got no record
    std::atomic<bool> active{false};
    std::atomic<uint64_t> generation{0};
    struct sigaction previous = {};
};
Global g;

thread_local Record* t_record = nullptr;
thread_local uint64_t t_generation = 0;

// Xbyak's register order (jit/disassembly.hpp) to the saved context's slots.
constexpr int context_slot[16] = {REG_RAX, REG_RCX, REG_RDX, REG_RBX, REG_RSP, REG_RBP, REG_RSI, REG_RDI,
                                  REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};

void note(Record& r, Violation::Kind kind, uint32_t offset, uint64_t rsp, uint64_t address) {
    Violation& v = r.out.violations[kind];
    if (v.seen) return;
    v = {true, offset, rsp, address};
}

uint64_t register_value(const greg_t* regs, int reg, const jit::Instruction& insn) {
    if (reg == jit::no_reg) return 0;
    if (reg == jit::reg_rip) return insn.address + insn.size;
    return static_cast<uint64_t>(regs[context_slot[reg]]);
}

// The address a memory operand names, from the registers before the
// instruction runs. A vector index (a gather's) counts as 0: its base is kept.
uint64_t address_of(const jit::MemoryOperand& m, const greg_t* regs, const jit::Instruction& insn) {
    return register_value(regs, m.base, insn) + register_value(regs, m.index, insn) * static_cast<uint64_t>(m.scale) +
           m.disp;
}

bool on_stack(const Record& r, uint64_t address) { return address >= r.stack_lo && address < r.stack_hi; }

// Whether the instruction about to run reads or writes this thread's stack (ThreadSteps::stack_accesses).
bool accesses_stack(const Record& r, const jit::Instruction& insn, const greg_t* regs) {
    using Kind = jit::Instruction::Kind;
    if (insn.kind == Kind::push || insn.kind == Kind::pop || insn.kind == Kind::call || insn.kind == Kind::ret ||
        insn.implicit_stack)
        return true;
    // Every operand: movs and cmps name two, and either may be the one on the stack.
    for (const jit::MemoryOperand& m : insn.memory_operands())
        if (on_stack(r, address_of(m, regs, insn))) return true;
    return false;
}

// Rules on the instruction about to run: calls aligned, stores not below the red
// zone nor off the stack through rsp/rbp, no dirty upper halves at a return.
void check_instruction(Record& r, const jit::Instruction& insn, const greg_t* regs, uint32_t offset) {
    const uint64_t rsp = static_cast<uint64_t>(regs[REG_RSP]);
    if (insn.kind == jit::Instruction::Kind::call && (rsp & 15)) note(r, Violation::misaligned_call, offset, rsp, 0);
    if (accesses_stack(r, insn, regs)) ++r.out.stack_accesses;
    if (insn.nop) ++r.out.nops;
    if (insn.store) {
        const jit::MemoryOperand& m = *insn.store;
        const uint64_t address = address_of(m, regs, insn);
        const bool stack = on_stack(r, address);
        if (stack && address < rsp - red_zone) note(r, Violation::red_zone_store, offset, rsp, address);
        if (!stack && (m.base == jit::reg_rsp || m.base == jit::reg_rbp))
            note(r, Violation::off_stack_store, offset, rsp, address);
    }
    if (insn.clears_upper) r.upper_dirty = false;
    else if (insn.uses_upper) r.upper_dirty = true;
    if (insn.kind == jit::Instruction::Kind::ret && r.upper_dirty) note(r, Violation::dirty_upper_at_ret, offset, rsp, 0);
}

// Counts the (instruction, chain) in the thread's table; linear probing.
void count_chain(Record& r, const ChainCount& key) {
    uint64_t h = key.offset * 0x9E3779B97F4A7C15ull;
    for (uint32_t i = 1; i < key.depth; ++i) h = (h ^ key.frames[i]) * 0x100000001B3ull;
    for (size_t probe = 0; probe < 64; ++probe) {
        ChainCount& slot = r.table[(h + probe) & (table_capacity - 1)];
        if (slot.count == 0) {
            slot = key;
            slot.count = 1;
            slot.first_step = r.out.steps;
            return;
        }
        if (slot.offset == key.offset && slot.depth == key.depth &&
            std::memcmp(slot.frames, key.frames, key.depth * sizeof(uint64_t)) == 0) {
            ++slot.count;
            return;
        }
    }
    ++r.out.lost;
}

void on_trap(int, siginfo_t*, void* context) {
    auto* uc = static_cast<ucontext_t*>(context);
    greg_t* regs = uc->uc_mcontext.gregs;
    Record* r = t_record;
    if (!r || t_generation != g.generation.load(std::memory_order_relaxed) || !g.active.load(std::memory_order_relaxed)) {
        regs[REG_EFL] &= ~static_cast<greg_t>(trap_flag);  // a stray trap: stop stepping this thread
        return;
    }
    const uint64_t ip = static_cast<uint64_t>(regs[REG_RIP]);
    if (ip - g.begin >= g.size) {
        ++r->out.outside;
        return;
    }
    ChainCount key;
    key.offset = static_cast<uint32_t>(ip - g.begin);
    key.frames[0] = ip;
    key.depth = 1;
    // The frame-pointer walk a profiler does, reading only inside this thread's stack.
    uint64_t bp = static_cast<uint64_t>(regs[REG_RBP]);
    // stack_hi - bp >= 16 once bp < stack_hi, not bp + 16 <= stack_hi: under
    // clobber rbp holds kernel data, and a value within 16 of 2^64 (a pointer
    // offset computed from a negative index) wrapped past that test into a read of address 0..8.
    while (key.depth < max_depth && bp >= r->stack_lo && bp < r->stack_hi && r->stack_hi - bp >= 16 && (bp & 7) == 0) {
        const uint64_t ret = *reinterpret_cast<const uint64_t*>(bp + 8);
        if (!ret) break;
        key.frames[key.depth++] = ret;
        const uint64_t next = *reinterpret_cast<const uint64_t*>(bp);
        if (next <= bp) break;  // frames go up the stack, or the chain ends
        bp = next;
    }
    if (const jit::Instruction* insn = g.by_offset[key.offset]) check_instruction(*r, *insn, regs, key.offset);
    count_chain(*r, key);
    if (++r->out.steps >= g.max_steps) {
        regs[REG_EFL] &= ~static_cast<greg_t>(trap_flag);  // the rest of this call unstepped
        r->out.budget_spent = true;
    }
}

__attribute__((noinline)) void set_trap_flag() { asm volatile("pushfq\n\torq $0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc"); }
__attribute__((noinline)) void clear_trap_flag() {
    asm volatile("pushfq\n\tandq $~0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc");
}

// Binds a record to the calling thread: its stack bounds are read here, where
// pthread_getattr_np may allocate, never in the handler.
Record* thread_record() {
    const uint64_t generation = g.generation.load();
    if (t_record && t_generation == generation) return t_record;
    const int index = g.next_record.fetch_add(1);
    if (index >= static_cast<int>(g.records.size())) return nullptr;
    Record& r = g.records[index];
    pthread_attr_t attr;
    void* base = nullptr;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return nullptr;
    pthread_attr_getstack(&attr, &base, &size);
    pthread_attr_destroy(&attr);
    r.stack_lo = reinterpret_cast<uint64_t>(base);
    r.stack_hi = r.stack_lo + size;
    r.out.main_thread = syscall(SYS_gettid) == getpid();
    t_record = &r;
    t_generation = generation;
    return t_record;
}

}  // namespace

const char* to_string(Violation::Kind kind) {
    switch (kind) {
    case Violation::misaligned_call: return "misaligned-call";
    case Violation::red_zone_store: return "store-below-red-zone";
    case Violation::off_stack_store: return "store-off-stack";
    case Violation::dirty_upper_at_ret: return "no-vzeroupper";
    case Violation::count_: break;
    }
    return "?";
}

Session::Session(const jit::Verification& code, uint64_t begin, size_t size, int max_threads, uint64_t max_steps) {
    if (g.active) throw std::logic_error("step: a session is already running");
    g.begin = begin;
    g.size = size;
    g.max_steps = max_steps;
    g.by_offset.assign(size, nullptr);
    for (const jit::Instruction& insn : code.code) g.by_offset[insn.address - begin] = &insn;
    g.records.clear();
    g.records.resize(max_threads);
    for (Record& r : g.records) r.table.assign(table_capacity, ChainCount{});
    g.next_record = 0;
    g.unstepped_calls = 0;
    ++g.generation;
    struct sigaction action = {};
    action.sa_sigaction = on_trap;
    action.sa_flags = SA_SIGINFO | SA_RESTART;
    sigemptyset(&action.sa_mask);
    if (sigaction(SIGTRAP, &action, &g.previous) != 0) throw std::runtime_error("step: cannot install the SIGTRAP handler");
    g.active = true;
}

Session::~Session() {
    if (g.active) stop();
}

std::vector<ThreadSteps> Session::stop() {
    g.active = false;
    sigaction(SIGTRAP, &g.previous, nullptr);
    std::vector<ThreadSteps> out;
    const int used = std::min(g.next_record.load(), static_cast<int>(g.records.size()));
    for (int i = 0; i < used; ++i) {
        Record& r = g.records[i];
        for (const ChainCount& c : r.table)
            if (c.count) r.out.chains.push_back(c);
        out.push_back(std::move(r.out));
    }
    g.records.clear();
    return out;
}

bool begin_thread_call() {
    if (!g.active) return false;
    Record* r = thread_record();
    if (!r) {
        ++g.unstepped_calls;
        return false;
    }
    if (r->out.budget_spent) return false;  // later calls of the thread too: the verdict says so
    r->upper_dirty = false;  // each call starts clean: the caller's vector state is its own
    set_trap_flag();
    return true;
}

void end_thread_call() { clear_trap_flag(); }

uint64_t Session::unstepped_calls() const { return g.unstepped_calls.load(); }

}  // namespace benchfp::harness::step
