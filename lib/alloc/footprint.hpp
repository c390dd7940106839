#pragma once
// What an allocator holds for a workload: resident bytes per live object at
// the workload's peak (issue 14: the pool within 1.1x of mimalloc's).
//
// Every allocator of the gate lives in one process, each with whatever it has
// cached from what ran before, so the figure is taken in a child forked for
// one (workload, allocator): there the workload runs `footprint_rounds`
// rounds from its first allocation, and at the peak of the last one the child
// reads its own Private_Dirty (/proc/self/smaps_rollup) and subtracts what it
// read just before the first allocation. After fork every page of the parent
// is shared with it, so a page counts as private and dirty only once the child
// has written it: the delta is every page the allocator wrote for this
// workload and still holds at its peak -- pages it took fresh from the kernel
// and pages of its parent's cache it reused alike -- and not the parent's
// cache it left alone. Allocators are measured the same way whatever they
// cached before, and none can hide its pages by having faulted them earlier.
//
// The live objects at that moment are counted by a table wrapped around the
// allocator's (each allocation +1, each free -1; managed_realloc nets 0),
// which also writes the requested bytes of every block it hands out, as a
// program uses its objects (footprint.cpp says why): the workloads' code is
// the same for every allocator. `footprint_copies` states run at once, the
// iteration of each started from the peak of the one before (its at_peak
// hook), so all are at their peak together and the live data is large
// enough (about 4 MiB) that page granularity does not decide the figure.
// The child's stack is touched before the first reading, so the chain of
// states' frames is not counted as the allocator's.
//
// The child never returns into its caller: it writes the figure to a pipe and
// _exits. A child that fails, dies or hangs (120 s) is an error, never a zero.
#include "alloc/allocator_table.hpp"
#include "alloc/workloads.hpp"

#include <stdexcept>
#include <string>

namespace benchfp::alloc::footprint {

struct Figure {
    double resident_bytes = 0;  // Private_Dirty at the peak minus before the first allocation
    double live_objects = 0;    // allocations minus frees at the peak, over every copy
    int copies = 0;
    double per_live_object() const { return resident_bytes / live_objects; }
};

struct Error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// In a forked child (the caller must have no other thread running that holds
// a lock the child needs: the gate forks between benchmarks). Throws Error.
Figure measure(const workloads::AllocWorkload& w, const AllocatorTable& allocator, int copies, int rounds);
inline Figure measure(const workloads::AllocWorkload& w, const AllocatorTable& allocator) {
    return measure(w, allocator, w.footprint_copies, w.footprint_rounds);
}

// Measurements that all start from one state of the process, whenever they
// are asked for: the constructor forks a zygote, which then forks a measuring
// child per request. Each child starts from the zygote's heaps, not from
// whatever the process cached since (the gate's benchmarks run in random
// order: a child forked from the gate itself after, say, small_churn finds
// mimalloc's 128 B pages half full and, writing one block into each, makes
// every such page its own: mimalloc's strings figure went from 158 to 348 B).
// Before forking it runs every workload once on an allocator of its own, so
// their function-local statics are not counted in any child.
// Construct it where every allocator is initialised and nothing else has run,
// with no other thread alive; the workload and allocator passed to measure()
// must exist at the same address in the zygote (static or created before it).
class Zygote {
public:
    Zygote();
    ~Zygote();  // the zygote ends when its request pipe closes
    Zygote(const Zygote&) = delete;
    Zygote& operator=(const Zygote&) = delete;
    Figure measure(const workloads::AllocWorkload& w, const AllocatorTable& allocator, int copies, int rounds);
    Figure measure(const workloads::AllocWorkload& w, const AllocatorTable& allocator) {
        return measure(w, allocator, w.footprint_copies, w.footprint_rounds);
    }

private:
    void end();  // closes the pipes and waits for the zygote; it measures nothing more
    int requests_ = -1, replies_ = -1;
    int pid_ = -1;
};

// What the figure is, in one line, for reports and help texts.
inline constexpr const char* method =
    "Private_Dirty (smaps_rollup) at the workload's peak minus before it, in a child forked per "
    "workload x allocator, over the live objects then (allocations - frees), several workload states "
    "at their peak at once for ~4 MiB live";

}  // namespace benchfp::alloc::footprint
