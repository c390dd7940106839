#pragma once
// benchfp's pool allocator: size-class pools of 16 KiB pages, one heap per
// thread, explicit free. The fast path is here, inline: a table lookup, a
// free-list pop, and the profiler hook (one load and one not-taken branch when
// the profiler is off). Everything slow is out of line in pool.cpp.
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

// The profiler switch the hook reads (profiler.hpp turns it on and off).
// Written atomically, read by the hook without synchronization on purpose: a
// plain byte compare is one instruction with the load folded in (an atomic load
// costs a register and a test), and a stale read only shifts the start or stop
// of recording by a few allocations, as Go's MemProfileRate does. Under
// ThreadSanitizer the hook reads it atomically, so real races still show.
extern bool profiler_enabled;

inline bool profiler_on() {
#if defined(__SANITIZE_THREAD__)
    return __atomic_load_n(&profiler_enabled, __ATOMIC_RELAXED);
#else
    return profiler_enabled;
#endif
}

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
};

struct PageHeader {
    Heap* owner;
    uint32_t size_class;
};

// The arena all pages come from: an address range tells pool objects apart.
extern uintptr_t arena_base;
extern uintptr_t arena_size;
extern thread_local Heap* this_thread_heap;

void* alloc_small_slow(unsigned size_class);
void free_remote(PageHeader* page, void* p);
void* big_alloc_untracked(size_t size);
void big_or_managed_free(void* p);

// The allocated size is looked up from p there: the fast path keeps nothing
// alive for the hook but p and the requested size.
[[gnu::cold, gnu::noinline]] void record_slow(void* p, size_t requested, const TypeInfo* type);
[[gnu::cold, gnu::noinline]] void record_free_slow(void* p);

inline bool in_arena(const void* p) { return reinterpret_cast<uintptr_t>(p) - arena_base < arena_size; }
inline PageHeader* page_of(const void* p) {
    return reinterpret_cast<PageHeader*>(reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{page_size} - 1));
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
        if (__builtin_expect(profiler_on(), 0)) record_slow(p, size, type);
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
    void* p = alloc_untracked(size);
    if (__builtin_expect(profiler_on(), 0)) detail::record_slow(p, size, type);
    return p;
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
    if (__builtin_expect(profiler_on(), 0)) record_free_slow(p);
    if (__builtin_expect(in_arena(p), 1)) {
        PageHeader* page = page_of(p);
        Heap* h = this_thread_heap;
        if (__builtin_expect(page->owner == h, 1)) {
            auto* object = static_cast<FreeObject*>(p);
            object->next = h->classes[page->size_class].free;
            h->classes[page->size_class].free = object;
        } else {
            free_remote(page, p);
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
