// An asymmetric lock for data one thread writes often and others read or reset
// rarely: a profiler thread's buffer, which its owner appends to at each sample
// and fetch() or clear() reads from another thread.
//
// The owner's side takes no locked instruction: a store, a load and, to leave,
// a store. A spin lock's exchange cost each sample about 7 ns twice (once for
// the allocation's record, once for its free's), of the ~45 ns a sampled
// allocation and its free took (perf, Intel Ice Lake guest). The other side
// pays instead, with a membarrier(2) (MEMBARRIER_CMD_PRIVATE_EXPEDITED): it
// puts a full memory barrier on every running thread of the process, the
// store-to-load order the owner's side leaves out (Dekker's: either the
// other side sees the owner inside, or the owner sees the other side waiting),
// as liburcu's and folly's asymmetric barriers do. It costs the other side
// microseconds (an interrupt to each CPU running one of the process's threads).
//
// Where membarrier is refused (an old kernel, a seccomp filter), the owner's
// store is sequentially consistent instead (an exchange), which is Dekker's
// lock as written.
//
// Seams: the owner's side is for one thread only, the one that owns the data
// (lock_owner on one thread while another thread also calls lock_owner on the
// same lock is a misuse, not detected). The others' side may be used by any
// number of threads, its owner included when it is not inside its own side.
// Neither side is re-entrant.
#pragma once

#include <atomic>
#include <mutex>

namespace benchfp::alloc {

class OwnerLock {
public:
    [[gnu::always_inline]] void lock_owner() {
        owner_enters();
        if (__builtin_expect(other_waiting_.load(std::memory_order_seq_cst), 0)) wait_for_others();
    }
    [[gnu::always_inline]] void unlock_owner() { owner_inside_.store(false, std::memory_order_release); }

    void lock_other();
    void unlock_other();

    // std::lock_guard for each side.
    struct Owner {
        OwnerLock& lock;
        explicit Owner(OwnerLock& l) : lock(l) { lock.lock_owner(); }
        ~Owner() { lock.unlock_owner(); }
        Owner(const Owner&) = delete;
        Owner& operator=(const Owner&) = delete;
    };
    struct Other {
        OwnerLock& lock;
        explicit Other(OwnerLock& l) : lock(l) { lock.lock_other(); }
        ~Other() { lock.unlock_other(); }
        Other(const Other&) = delete;
        Other& operator=(const Other&) = delete;
    };

private:
    // Whether the others' side issues membarrier (set once, before its first
    // use: see owner_lock.cpp); the owner's side then needs only the compiler's order.
    static std::atomic<bool> asymmetric;

    // The owner's store, ordered before its load of other_waiting_ (a plain
    // load on x86, sequentially consistent or not): by the compiler alone
    // where the others' membarrier orders it on the CPU, else by a
    // sequentially consistent store (an exchange), Dekker's lock as written.
    [[gnu::always_inline]] void owner_enters() {
        if (__builtin_expect(asymmetric.load(std::memory_order_relaxed), 1)) {
            owner_inside_.store(true, std::memory_order_relaxed);
            std::atomic_signal_fence(std::memory_order_seq_cst);
        } else {
            owner_inside_.store(true, std::memory_order_seq_cst);
        }
    }
    // The owner found another side inside or coming: it leaves, waits until that one is done, and enters again.
    [[gnu::noinline]] void wait_for_others();

    std::atomic<bool> owner_inside_{false};
    std::atomic<bool> other_waiting_{false};
    std::mutex others_;  // one other side at a time
};

}  // namespace benchfp::alloc
