// The pool as an AllocatorTable. Where the pool's entry point is a function of
// the table's signature it is used itself; the rest are one-line adapters
// (the unprofiled big and managed paths take no type).
#include "alloc/allocator_table.hpp"
#include "alloc/pool.hpp"

namespace benchfp::alloc {

namespace {

void pool_free(void* p) { free(p); }
size_t pool_usable_size(void* p) { return usable_size(p); }
void* big_unprofiled(size_t size, const TypeInfo*) { return detail::big_alloc_untracked(size); }
void* managed_unprofiled(size_t size, size_t alignment, const TypeInfo*) {
    return managed_alloc_unprofiled(size, alignment);
}
void* managed_realloc_unprofiled_as_table(void* p, size_t new_size, const TypeInfo*) {
    return managed_realloc_unprofiled(p, new_size);
}

}  // namespace

const AllocatorTable& pool_table() {
    static const AllocatorTable table{pool_alloc, pool_free, pool_usable_size, alloc, big_alloc,
                                      managed_alloc, managed_realloc, max_small_size};
    return table;
}

const AllocatorTable& pool_table_unprofiled() {
    static const AllocatorTable table{pool_alloc_unprofiled, pool_free, pool_usable_size, alloc_unprofiled,
                                      big_unprofiled, managed_unprofiled, managed_realloc_unprofiled_as_table,
                                      max_small_size};
    return table;
}

}  // namespace benchfp::alloc
