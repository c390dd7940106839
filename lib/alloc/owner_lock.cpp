#include "alloc/owner_lock.hpp"

#include "alloc/membarrier.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

namespace benchfp::alloc {

std::atomic<bool> OwnerLock::asymmetric{false};

// Registers once, before any other side's first barrier (each comes through
// here first and waits for the registration: a static's initialisation), so
// that while `asymmetric` is true no other side has fenced without membarrier.
bool OwnerLock::prepare() {
    static const bool registered = [] {
        const bool ok = detail::membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) == 0;
        if (ok) asymmetric.store(true, std::memory_order_seq_cst);
        return ok;
    }();
    return registered;
}

namespace {

// The others' half of the store-to-load order (owner_lock.hpp), after their
// sequentially consistent store: all it takes where the owners' stores are so too.
void other_fence() {
    if (!OwnerLock::prepare()) return;
    if (detail::membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return;
    // Registered, then refused: owners that read `asymmetric` fence no more,
    // and no fence of this thread alone orders their store and load. The
    // global command needs no registration (and waits for every CPU).
    if (detail::membarrier(MEMBARRIER_CMD_GLOBAL) == 0) return;
    std::fprintf(stderr, "benchfp: membarrier(PRIVATE_EXPEDITED) refused after its registration: %s\n",
                 std::strerror(errno));
    std::abort();
}

// Spins until `done` (another thread leaves), yielding now and then: on two
// cores the thread it waits for may be waiting for this one's core.
template <typename Done>
void spin_until(Done done) {
    for (unsigned spins = 1; !done(); ++spins) {
        if (spins % 256 == 0)
            std::this_thread::yield();
        else
            __builtin_ia32_pause();
    }
}

}  // namespace

void OwnerLock::wait_for_others() {
    do {
        owner_inside_.store(false, std::memory_order_release);
        spin_until([&] { return !other_waiting_.load(std::memory_order_acquire); });
        owner_enters();
    } while (other_waiting_.load(std::memory_order_seq_cst));
}

void OwnerLock::lock_other() {
    others_.lock();
    other_waiting_.store(true, std::memory_order_seq_cst);
    other_fence();
    spin_until([&] { return !owner_inside_.load(std::memory_order_seq_cst); });
}

void OwnerLock::unlock_other() {
    other_waiting_.store(false, std::memory_order_release);
    others_.unlock();
}

}  // namespace benchfp::alloc
