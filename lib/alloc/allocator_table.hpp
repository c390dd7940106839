#pragma once
// An allocator as the allocation workloads see it (workloads.hpp): a table of
// entry points, so one workload's code runs on the pool, in each variant of its
// profiler hook, and on peer allocators alike.
//
// Every allocator fills alloc, free and usable_size. The other entries are the
// pool's other paths and are optional: where an allocator has none (null), a
// workload asks alloc for the same bytes (and copies and frees itself where
// managed_realloc would), so every allocator does the same work and only the
// path through the pool differs. Entries take blocks from any entry of the
// table; free takes them from any thread.
#include "alloc/type_info.hpp"

#include <cstddef>
#include <cstdint>

namespace benchfp::alloc {

struct AllocatorTable {
    void* (*alloc)(size_t size);  // untyped, as from generated code
    void (*free)(void* p);
    size_t (*usable_size)(void* p);

    // Optional: null where the allocator has no such path.
    void* (*alloc_typed)(size_t size, const TypeInfo* type) = nullptr;  // an object of a known type
    void* (*big_alloc)(size_t size, const TypeInfo* type) = nullptr;    // a block above max_small_size
    void* (*managed_alloc)(size_t size, size_t alignment, const TypeInfo* type) = nullptr;  // a growable array
    // Grows a managed block to new_size, keeping its bytes; the old block is freed.
    void* (*managed_realloc)(void* p, size_t new_size, const TypeInfo* type) = nullptr;
    size_t max_small_size = SIZE_MAX;  // above it, a workload takes a sized array through big_alloc
};

// A table of wrappers around a's entries (a counting or checking layer):
// wrappers' entries, each optional one only where a has it, so the workloads
// take the same paths through the result as through a.
inline AllocatorTable with_paths_of(const AllocatorTable& a, const AllocatorTable& wrappers) {
    AllocatorTable t{wrappers.alloc, wrappers.free, wrappers.usable_size};
    if (a.alloc_typed) t.alloc_typed = wrappers.alloc_typed;
    if (a.big_alloc) t.big_alloc = wrappers.big_alloc;
    if (a.managed_alloc) t.managed_alloc = wrappers.managed_alloc;
    if (a.managed_realloc) t.managed_realloc = wrappers.managed_realloc;
    t.max_small_size = a.max_small_size;
    return t;
}

// The pool through its profiled entry points (what `benchfp alloc profile` runs),
// and through the same paths with the profiler hook compiled out (the gate's
// baseline): pool_alloc, alloc(size, type), big_alloc, managed_alloc and
// managed_realloc, and their unprofiled twins.
const AllocatorTable& pool_table();
const AllocatorTable& pool_table_unprofiled();

}  // namespace benchfp::alloc
