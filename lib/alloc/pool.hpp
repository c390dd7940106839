#pragma once
// benchfp's pool allocator: size-class pools of 16 KiB pages, one heap per
// thread, explicit free. The fast path is here, inline: a table lookup, a
// free-list pop, and the profiler hook (a count decrement and one not-taken
// branch, stopped or byte-sampling). Everything slow is out of line in pool.cpp.
//
// The call graph mirrors Julia's, on purpose (see the profiler seed):
//   pool_alloc(size)         exported entry of "generated code": records with an unknown type
//   alloc(size, type)        typed entry: records with the type, allocates through
//   alloc_typed<T>()           alloc_untracked, a non-inlined path that does not record again
//   big_alloc(size, type)    above the largest class
//   managed_alloc(...)       growable arrays: aligned, with managed_realloc
// Every allocation is recorded exactly once, whichever path it takes.
#include "alloc/size_classes.hpp"

#ifndef BENCHFP_INJECT_ALLOC_SLOWDOWN
#define BENCHFP_INJECT_ALLOC_SLOWDOWN 0
#endif
#include "alloc/type_info.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>

namespace benchfp::alloc {

// Whether the profiler is recording (profiler.hpp starts and stops it). Only
// slow paths read it: the hot paths see the profiler through sample_countdown
// and the page's owner word below.
extern bool profiler_enabled;

inline bool profiler_on() { return __atomic_load_n(&profiler_enabled, __ATOMIC_ACQUIRE); }

namespace detail {

struct FreeObject {
    FreeObject* next;
};

struct ClassState {
    FreeObject* free = nullptr;  // objects freed by the owner thread, or taken back from remote frees
    char* bump = nullptr;        // the unused tail of the class's current page
    char* bump_end = nullptr;
};

struct alignas(64) Heap {
    ClassState classes[class_count];
    std::atomic<FreeObject*> remote[class_count];  // frees from other threads (multi-producer stack)
    Heap* next_orphan = nullptr;                   // on the hand-over list once its thread exited
    Heap* sampled = nullptr;     // where this heap's sampled allocations live (created on the first)
    bool sampled_pages = false;  // this is such a heap: its pages carry the sampled_page flag
};

// A page's owner word is its heap's address, with sampled_page set on the pages
// that hold only sampled allocations: record_slow moves each sampled allocation
// to such a page of its heap. So the free fast path's one compare (owner word ==
// this thread's heap) sends frees of sampled objects, like remote frees, to the
// slow path, every other free stays fast, and the free path needs no profiler
// check of its own. Heaps are 64-byte aligned: bit 0 is free for the flag.
inline constexpr uintptr_t sampled_page = 1;

struct PageHeader {
    uintptr_t owner_word;  // set before the page's first object is handed out, never changed
    uint32_t size_class;

    Heap* owner() const { return reinterpret_cast<Heap*>(owner_word & ~sampled_page); }
};

// Bytes this thread may still allocate before its next call into the profiler:
// the hook subtracts each allocation's size and calls record_slow when the count
// goes negative. That is one read-modify-write and one not-taken branch whether
// the profiler is stopped or byte-sampling (as in tcmalloc's sampler), so byte
// sampling costs the hot path nothing more than the hook itself. While stopped,
// the count is re-armed to stopped_check_bytes, so a thread that missed
// start()'s poke still starts within that many bytes; sampling every
// allocation (all, probability) keeps it at -1. It starts at 0, so a thread's
// first allocation registers it with the profiler (profiler.cpp).
constinit extern thread_local int64_t sample_countdown;
inline constexpr int64_t stopped_check_bytes = int64_t{16} << 20;

// The arena all pages come from: an address range tells pool objects apart.
extern uintptr_t arena_base;
extern uintptr_t arena_size;
// constinit: no dynamic initialization, so other translation units read these
// directly instead of through a TLS init wrapper.
constinit extern thread_local Heap* this_thread_heap;

void* alloc_small_slow(unsigned size_class);
// Frees what the fast path cannot: remote frees and frees of objects on sampled pages.
void free_slow(PageHeader* page, void* p);
void* big_alloc_untracked(size_t size);
void big_or_managed_free(void* p);

// Returns the block to hand out: p, or where a sampled p moved to. The
// allocated size is looked up from p there: the fast path keeps nothing alive
// for the hook but p and the requested size.
[[gnu::cold, gnu::noinline]] void* record_slow(void* p, size_t requested, const TypeInfo* type);
// The block the profiler records for a sampled allocation p: a pool object
// moves to a sampled page of its heap, in the largest class (p goes back to the
// free list), a big or managed block is marked in its header. Either way its free, and only its,
// reaches the profiler.
void* sampled_block(void* p);
// Forgets p if it is a live sampled allocation, recording its free.
void record_free_slow(void* p);

inline bool in_arena(const void* p) { return reinterpret_cast<uintptr_t>(p) - arena_base < arena_size; }
inline PageHeader* page_of(const void* p) {
    return reinterpret_cast<PageHeader*>(reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{page_size} - 1));
}

// The hook of every allocation path. Under ThreadSanitizer the count is
// accessed atomically: start() pokes other threads' counts (a poke lost to the
// owner's plain read-modify-write is caught by the stopped-mode re-check).
inline void* sample_point(void* p, size_t size, const TypeInfo* type) {
#if defined(__SANITIZE_THREAD__)
    const int64_t left = __atomic_sub_fetch(&sample_countdown, static_cast<int64_t>(size), __ATOMIC_RELAXED);
#else
    const int64_t left = sample_countdown -= static_cast<int64_t>(size);
#endif
    if (__builtin_expect(left < 0, 0)) return record_slow(p, size, type);
    return p;
}

}  // namespace detail

// The one inline fast path. Profiled = false compiles the hook out, so a
// benchmark can set both builds side by side in one binary.
template <bool Profiled = true>
inline void* pool_alloc_inner(size_t size, const TypeInfo* type) {
    using namespace detail;
#if BENCHFP_INJECT_ALLOC_SLOWDOWN > 0
    // Only in builds configured to test the regression gate (see CMakeLists.txt).
    for (int step = 0; step < BENCHFP_INJECT_ALLOC_SLOWDOWN; ++step) asm volatile("");
#endif
    void* p;
    if (__builtin_expect(size > max_small_size, 0)) {
        p = big_alloc_untracked(size);
    } else {
        const unsigned c = size_class_of(size);
        Heap* h = this_thread_heap;
        FreeObject* head = h ? h->classes[c].free : nullptr;
        if (__builtin_expect(head != nullptr, 1)) {
            h->classes[c].free = head->next;
            p = head;
        } else {
            p = alloc_small_slow(c);
        }
    }
    if constexpr (Profiled) {
        return sample_point(p, size, type);
    }
    return p;
}

// Exported for generated code: no type is known there.
void* pool_alloc(size_t size);
// The same without the hook compiled in: the benchmarks' baseline.
void* pool_alloc_unprofiled(size_t size);

// Typed allocation: recorded here with the type, allocated by a path that does not record.
void* alloc_untracked(size_t size);
inline void* alloc(size_t size, const TypeInfo* type) {
    return detail::sample_point(alloc_untracked(size), size, type);
}
template <typename T>
T* alloc_typed() {
    return static_cast<T*>(alloc(sizeof(T), &type_of<T>()));
}

void* big_alloc(size_t size, const TypeInfo* type = &unknown_type);
void* managed_alloc(size_t size, size_t alignment = 64, const TypeInfo* type = &unknown_type);
// Grows (or shrinks) a managed block, keeping min(old, new) bytes; the old block is freed.
void* managed_realloc(void* p, size_t new_size, const TypeInfo* type = &unknown_type);

// Frees any block of this allocator, from any thread. A free from another
// thread goes back to the owning heap through its remote list.
inline void free(void* p) {
    using namespace detail;
    if (!p) return;
    if (__builtin_expect(in_arena(p), 1)) {
        PageHeader* page = page_of(p);
        Heap* h = this_thread_heap;
        if (__builtin_expect(page->owner_word == reinterpret_cast<uintptr_t>(h), 1)) {
            auto* object = static_cast<FreeObject*>(p);
            object->next = h->classes[page->size_class].free;
            h->classes[page->size_class].free = object;
        } else {
            free_slow(page, p);
        }
        return;
    }
    big_or_managed_free(p);
}

// The usable size of a block (its class size for pool objects).
size_t usable_size(const void* p);

struct PoolStats {
    size_t pages = 0;          // pages taken from the arena
    size_t heaps = 0;          // heaps created
    size_t orphaned_heaps = 0; // heaps waiting for a new thread
    size_t adopted_heaps = 0;  // heaps handed over to a new thread
};
PoolStats pool_stats();

}  // namespace benchfp::alloc
