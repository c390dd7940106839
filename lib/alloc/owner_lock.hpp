// An asymmetric lock for data one thread writes often and others read or reset
// rarely: a profiler thread's buffer, which its owner appends to at each sample
// and each sampled free, and fetch() or clear() reads from another thread.
//
// The owner's side takes no locked instruction: a load of the mode, a store, a
// load and, to leave, a store. A spin lock's exchange there, one for the
// sample's record and one for its free's, took about 30% of record_slow's and
// 75% of record_free_slow's time (perf), and with it a sample and its free took
// 48.8-53.6 ns on small_churn, 41.4-43.1 without (Intel Ice Lake guest: README).
// The other side pays instead, with membarrier(2)'s
// MEMBARRIER_CMD_PRIVATE_EXPEDITED: it puts a full memory barrier on every
// running thread of the process, the store-to-load order the owner's side
// leaves out (Dekker's: either the other side sees the owner inside, or the
// owner sees the other side waiting), as liburcu's and folly's asymmetric
// barriers do. It costs the other side microseconds (an interrupt to each CPU
// running one of the process's threads), per lock taken.
//
// Until prepare() has registered the process for that command, and where it is
// refused (an old kernel, a seccomp filter), the owner's store is sequentially
// consistent instead (an exchange): Dekker's lock as written.
//
// Seams: the owner's side is for one thread only, the one that owns the data;
// another thread that takes it too is a misuse, not detected. The others' side
// may be taken by any number of threads, the owner included when it is not
// inside its own. Neither side is re-entrant, and a nested owner's side is not
// detected (its unlock would end the outer section).
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

    // Registers the process for the others' barrier, once (the first
    // lock_other does otherwise): owners take no exchange from then on.
    // Whether they do (false: the kernel refused the registration).
    static bool prepare();

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
    // Whether the others' side issues membarrier: set once, by prepare(),
    // before any other side's first barrier (owner_lock.cpp).
    static std::atomic<bool> asymmetric;

    // The owner's store, ordered before its load of other_waiting_ (a plain
    // load on x86, sequentially consistent or not): by the compiler alone
    // where the others' membarrier orders it on the CPU, else by a
    // sequentially consistent store (an exchange).
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
