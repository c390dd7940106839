#include "alloc/workloads.hpp"

#include "alloc/layout_shift.hpp"

#include <algorithm>
#include <cstring>
#include <random>

namespace benchfp::alloc::workloads {

AllocWorkloadState::~AllocWorkloadState() {
    if (consumer.joinable()) {
        channel.stop = true;
        consumer.join();
        for (size_t t = channel.tail; t != channel.head; ++t) owner_->free(channel.slots[t % Channel::size]);
    }
    for (void* p : live)
        if (p) owner_->free(p);
}

namespace {

// The types the typed paths record. Looked up once: type_of<T>() checks a guard per call.
struct Particle {
    double position[3], velocity[3];
    int id;
};
struct TreeNode {
    TreeNode *left, *right;
};
struct Message {  // sent as allocated: the producer does not write it (a write would move its cache line)
    long sequence;
    char payload[56];
};
const TypeInfo* const particle_type = &type_of<Particle>();
const TypeInfo* const tree_node_type = &type_of<TreeNode>();
const TypeInfo* const message_type = &type_of<Message>();
const TypeInfo* const float_type = &type_of<float>();
const TypeInfo* const double_type = &type_of<double>();

// Every allocation of the workloads goes through one of these: the table's
// path where the allocator has it, else alloc; the block's usable size counted
// when the state asks for it. Always inlined, as the work of the workload itself.
#define BENCHFP_WORKLOAD_STEP [[gnu::always_inline]] inline

BENCHFP_WORKLOAD_STEP void* counted(const AllocatorTable& a, AllocWorkloadState& st, void* p) {
    if (st.count_bytes) *st.count_bytes += double(a.usable_size(p));
    return p;
}
BENCHFP_WORKLOAD_STEP void* untyped(const AllocatorTable& a, AllocWorkloadState& st, size_t n) {
    return counted(a, st, a.alloc(n));
}
BENCHFP_WORKLOAD_STEP void* typed(const AllocatorTable& a, AllocWorkloadState& st, size_t n, const TypeInfo* type) {
    return counted(a, st, a.alloc_typed ? a.alloc_typed(n, type) : a.alloc(n));
}
// An array of known size, as a runtime allocates one: in the small classes up
// to the largest, else as a big block.
BENCHFP_WORKLOAD_STEP void* sized_array(const AllocatorTable& a, AllocWorkloadState& st, size_t n,
                                        const TypeInfo* type) {
    if (n > a.max_small_size && a.big_alloc) return counted(a, st, a.big_alloc(n, type));
    return typed(a, st, n, type);
}
BENCHFP_WORKLOAD_STEP void* managed(const AllocatorTable& a, AllocWorkloadState& st, size_t n, const TypeInfo* type) {
    return counted(a, st, a.managed_alloc ? a.managed_alloc(n, 64, type) : a.alloc(n));
}
// Grows managed block p from old_size to new_size bytes, keeping its content.
BENCHFP_WORKLOAD_STEP void* grown(const AllocatorTable& a, AllocWorkloadState& st, void* p, size_t old_size,
                                  size_t new_size, const TypeInfo* type) {
    if (a.managed_realloc) return counted(a, st, a.managed_realloc(p, new_size, type));
    void* q = untyped(a, st, new_size);
    std::memcpy(q, p, old_size);
    a.free(p);
    return q;
}

// The workload's live bytes are at their greatest here (one test of a null function per iteration).
BENCHFP_WORKLOAD_STEP void peak_reached(AllocWorkloadState& st) {
    if (st.at_peak) st.at_peak();
}

BENCHFP_LAYOUT_SHIFT_HERE(layout_shift_before_workloads)

void small_churn(const AllocatorTable& a, AllocWorkloadState& st) {
    static const std::vector<uint16_t> sizes = [] {
        std::mt19937 rng(3);
        std::vector<uint16_t> s(1 << 16);
        for (auto& v : s) v = static_cast<uint16_t>(1 + rng() % 512);
        return s;
    }();
    for (int k = 0; k < 64; ++k, ++st.at) {
        void*& slot = st.live[(st.at * 7919) & 1023];
        if (slot) a.free(slot);
        slot = untyped(a, st, sizes[st.at & 0xffff]);
    }
    peak_reached(st);  // every slot filled: the steady state is the peak
}

void structs(const AllocatorTable& a, AllocWorkloadState& st) {
    for (int k = 0; k < 64; ++k) {
        void*& slot = st.live[st.at++ & 255];
        if (slot) a.free(slot);
        slot = typed(a, st, sizeof(Particle), particle_type);
        std::memset(slot, 0, 8);
    }
    peak_reached(st);
}

// Concatenation: every step allocates the longer string, as generated code would (no type).
void strings(const AllocatorTable& a, AllocWorkloadState& st) {
    char* s = static_cast<char*>(untyped(a, st, 8));
    std::memcpy(s, "benchfp", 8);
    for (size_t len = 7; len < 100; len *= 2) {
        char* t = static_cast<char*>(untyped(a, st, 2 * len + 1));
        std::memcpy(t, s, len);
        std::memcpy(t + len, s, len + 1);
        a.free(s);
        s = t;
    }
    peak_reached(st);  // the longest string
    a.free(s);
}

void arrays(const AllocatorTable& a, AllocWorkloadState& st) {
    for (size_t n = 32; n <= 16384; n *= 2) {
        void* array = sized_array(a, st, n, float_type);
        std::memset(array, 1, std::min<size_t>(n, 64));
        if (n == 16384) peak_reached(st);  // the largest array
        a.free(array);
    }
}

void grow_array(const AllocatorTable& a, AllocWorkloadState& st) {
    size_t capacity = 32;
    void* data = managed(a, st, capacity, double_type);
    for (; capacity < 65536; capacity *= 2) data = grown(a, st, data, capacity, 2 * capacity, double_type);
    peak_reached(st);  // grown to its full size
    a.free(data);
}

TreeNode* tree(const AllocatorTable& a, AllocWorkloadState& st, int depth) {
    auto* n = static_cast<TreeNode*>(typed(a, st, sizeof(TreeNode), tree_node_type));
    n->left = depth ? tree(a, st, depth - 1) : nullptr;
    n->right = depth ? tree(a, st, depth - 1) : nullptr;
    return n;
}
void free_tree(const AllocatorTable& a, TreeNode* n) {
    if (n->left) free_tree(a, n->left), free_tree(a, n->right);
    a.free(n);
}
void binary_trees(const AllocatorTable& a, AllocWorkloadState& st) {
    TreeNode* root = tree(a, st, 8);
    peak_reached(st);  // the whole tree built
    free_tree(a, root);
}

// The consumer: frees what the producer sends until told to stop.
void consume(const AllocatorTable& a, AllocWorkloadState::Channel& ch) {
    while (!ch.stop.load(std::memory_order_acquire)) {
        const size_t t = ch.tail.load(std::memory_order_relaxed);
        if (t == ch.head.load(std::memory_order_acquire)) {
            std::this_thread::yield();  // two threads may share a core here: let the other run
            continue;
        }
        a.free(ch.slots[t % AllocWorkloadState::Channel::size]);
        ch.tail.store(t + 1, std::memory_order_release);
    }
}

// Producer (the calling thread) and a consumer that frees: every free is
// cross-thread. A single-producer single-consumer ring keeps the allocator the
// thing measured.
void producer_consumer(const AllocatorTable& a, AllocWorkloadState& st) {
    auto& ch = st.channel;
    if (!st.consumer.joinable()) st.consumer = std::thread(consume, std::cref(a), std::ref(ch));
    for (int k = 0; k < 64; ++k) {
        void* m = typed(a, st, sizeof(Message), message_type);
        const size_t h = ch.head.load(std::memory_order_relaxed);
        while (h - ch.tail.load(std::memory_order_acquire) >= AllocWorkloadState::Channel::size)
            std::this_thread::yield();
        ch.slots[h % AllocWorkloadState::Channel::size] = m;
        ch.head.store(h + 1, std::memory_order_release);
    }
    peak_reached(st);  // the messages the consumer has not freed yet
}

const AllocWorkload workloads[] = {
    // Footprint copies for about 4 MiB live at the peak (the live bytes of one state in brackets):
    // small_churn 16 (256 KiB), structs 256 (14 KiB), arrays 256 (16 KiB, of which the workload
    // writes 64 B), grow_array 64 (64 KiB), binary_trees 512 (511 x 16 B); strings 4096 (one
    // 113 B string: 452 KiB, since each state costs 16 KiB of its own: a 4 KiB page is 1% of it).
    // producer_consumer 0, not measured: its live messages at the peak are whatever the consumer
    // thread has not freed yet (none at all in some runs with tcmalloc), which measures the
    // scheduler, not the allocator.
    {"small_churn", "random sizes 1..512 B, 1024 live, untyped (pool_alloc)", small_churn, 1600, 100, 16, 64},
    {"structs", "56 B typed structs, 256 live (alloc(size, type))", structs, 1600, 100, 256, 16},
    {"strings", "string concatenation, untyped (pool_alloc)", strings, 20000, 100, 4096, 8},
    {"arrays", "float arrays of 32 B to 16 KiB: typed up to 2032 B, big_alloc above", arrays, 10000, 100, 256, 16},
    // 12 allocations an iteration, but 64 KiB copied: fewer iterations.
    {"grow_array", "an array grown by doubling from 32 B to 64 KiB (managed_alloc, managed_realloc)", grow_array,
     2000, 100, 64, 16},
    {"binary_trees", "typed binary trees of depth 8, built and freed", binary_trees, 200, 100, 512, 8},
    // Its ring lets the producer run ahead for 16 iterations: chunks of ~2 ms
    // time the consumer-bound steady state, not that slack.
    {"producer_consumer", "64 B typed messages freed by another thread (remote frees)", producer_consumer, 1600,
     2000, 0},
};

}  // namespace

std::span<const AllocWorkload> all() { return workloads; }

const AllocWorkload* find(std::string_view name) {
    for (const AllocWorkload& w : workloads)
        if (w.name == name) return &w;
    return nullptr;
}

std::string names() {
    std::string out;
    for (const AllocWorkload& w : workloads) out += (out.empty() ? "" : ", ") + std::string(w.name);
    return out;
}

void run(const AllocWorkload& w, const AllocatorTable& allocator, int scale, Moment moment,
         const std::function<void()>& observe) {
    AllocWorkloadState state(allocator);
    const int64_t iterations = w.iterations_at_scale_1 * scale;
    for (int64_t i = 0; i < iterations; ++i) {
        if (observe && moment == Moment::peak && i == iterations - 1) state.at_peak = observe;
        w.iteration(allocator, state);
    }
    if (observe && moment == Moment::end) observe();
}

}  // namespace benchfp::alloc::workloads
