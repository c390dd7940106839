#include "alloc/workloads.hpp"

#include "alloc/pool.hpp"

#include <atomic>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

namespace benchfp::alloc::workloads {

namespace {

// Keeps the compiler from dropping writes to memory that is freed right after.
inline void touch(void* p, size_t bytes) {
    std::memset(p, 0x5a, bytes);
    asm volatile("" : : "r"(p) : "memory");
}

void arrays(int scale) {
    std::mt19937 rng(1);
    for (int i = 0; i < 20000 * scale; ++i) {
        const size_t n = 8 << (rng() % 10);  // 8 .. 4096 floats, the larger ones above the small classes
        void* a = managed_alloc(n * sizeof(float), 64);
        touch(a, n * sizeof(float));
        free(a);
    }
}

void strings(int scale) {
    // Concatenation: every step allocates the longer string, as generated code would (no type).
    for (int i = 0; i < 20000 * scale; ++i) {
        char* s = static_cast<char*>(pool_alloc(8));
        std::memcpy(s, "benchfp", 8);
        size_t len = 7;
        for (int k = 0; k < 4; ++k) {
            char* t = static_cast<char*>(pool_alloc(2 * len + 1));
            std::memcpy(t, s, len);
            std::memcpy(t + len, s, len + 1);
            free(s);
            s = t;
            len *= 2;
        }
        free(s);
    }
}

struct Particle {
    double position[3], velocity[3];
    int id;
};

void structs(int scale) {
    std::vector<Particle*> live(256, nullptr);
    for (int i = 0; i < 100000 * scale; ++i) {
        Particle*& slot = live[i % live.size()];
        if (slot) free(slot);
        slot = alloc_typed<Particle>();
        slot->id = i;
    }
    for (Particle* p : live) free(p);
}

void grow_array(int scale) {
    for (int i = 0; i < 500 * scale; ++i) {
        size_t capacity = 4;
        auto* data = static_cast<double*>(managed_alloc(capacity * sizeof(double), 64, &type_of<double>()));
        for (size_t n = 0; n < 20000; ++n) {
            if (n == capacity) {
                capacity *= 2;
                data = static_cast<double*>(managed_realloc(data, capacity * sizeof(double), &type_of<double>()));
            }
            data[n] = double(n);
        }
        free(data);
    }
}

void small_churn(int scale) {
    std::mt19937 rng(2);
    std::vector<void*> live(1024, nullptr);
    for (int i = 0; i < 200000 * scale; ++i) {
        void*& slot = live[rng() % live.size()];
        if (slot) free(slot);
        slot = pool_alloc(1 + rng() % 512);
    }
    for (void* p : live) free(p);
}

struct TreeNode {
    TreeNode *left, *right;
};

TreeNode* build_tree(int depth) {
    auto* node = alloc_typed<TreeNode>();
    node->left = depth > 0 ? build_tree(depth - 1) : nullptr;
    node->right = depth > 0 ? build_tree(depth - 1) : nullptr;
    return node;
}
long check_and_free(TreeNode* node) {
    const long n = 1 + (node->left ? check_and_free(node->left) + check_and_free(node->right) : 0);
    free(node);
    return n;
}

void binary_trees(int scale) {
    long nodes = 0;
    for (int i = 0; i < 12 * scale; ++i) nodes += check_and_free(build_tree(12));
    asm volatile("" : : "r"(nodes));
}

struct Message {
    long sequence;
    char payload[48];
};

void producer_consumer(int scale) {
    // One thread allocates, another frees: every free is a remote free.
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<Message*> queue;
    bool done = false;
    std::thread consumer([&] {
        while (true) {
            std::unique_lock lock(mutex);
            ready.wait(lock, [&] { return done || !queue.empty(); });
            if (queue.empty()) return;
            std::deque<Message*> batch;
            batch.swap(queue);
            lock.unlock();
            for (Message* m : batch) free(m);
        }
    });
    for (long i = 0; i < 100000L * scale; ++i) {
        auto* m = alloc_typed<Message>();
        m->sequence = i;
        std::lock_guard lock(mutex);
        queue.push_back(m);
        if (queue.size() >= 64) ready.notify_one();
    }
    {
        std::lock_guard lock(mutex);
        done = true;
    }
    ready.notify_one();
    consumer.join();
}

}  // namespace

const std::vector<Workload>& all() {
    static const std::vector<Workload> list = {
        {"arrays", "float arrays of 32 B to 16 KiB, managed path (and big above 2 KiB)", arrays},
        {"strings", "string concatenation through untyped pool_alloc", strings},
        {"structs", "small typed structs, 256 live", structs},
        {"grow_array", "an array grown by doubling with managed_realloc", grow_array},
        {"small_churn", "random sizes 1..512 B, 1024 live, untyped", small_churn},
        {"binary_trees", "typed binary trees of depth 12, built and freed", binary_trees},
        {"producer_consumer", "typed messages freed by another thread", producer_consumer},
    };
    return list;
}

const Workload* find(std::string_view name) {
    for (const auto& w : all())
        if (w.name == name) return &w;
    return nullptr;
}

std::string names() {
    std::string out;
    for (const auto& w : all()) out += (out.empty() ? "" : ", ") + w.name;
    return out;
}

}  // namespace benchfp::alloc::workloads
