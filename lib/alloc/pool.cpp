#include "alloc/pool.hpp"

#include "alloc/layout_shift.hpp"
#include "alloc/pool_check.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <vector>

namespace benchfp::alloc {

bool profiler_enabled = false;
// A new thread counts allocations from 0: its first one calls record_slow.
thread_local int64_t detail::sample_unit = detail::count_allocations;
thread_local int64_t detail::sample_countdown = 0;

namespace detail {

namespace {

// Up to 64 GiB of address space, reserved once: pages are handed out by bumping
// an offset and never unmapped, so a pointer's page header is always readable.
// MAP_NORESERVE: the kernel backs only the pages that are touched. Where that
// much address space is refused (valgrind, ulimit -v), the arena halves until
// it fits, down to 1 GiB.
constexpr uintptr_t max_arena_bytes = uintptr_t{64} << 30;
constexpr uintptr_t min_arena_bytes = uintptr_t{1} << 30;

std::atomic<uintptr_t> arena_next{0};
std::atomic<size_t> heaps_created{0}, heaps_adopted{0};

std::mutex orphans_mutex;
Heap* orphans = nullptr;  // heaps whose threads exited, waiting for new threads
size_t orphan_count = 0;

pthread_key_t heap_key;

void hand_over(void* heap) {
    // The thread is exiting: its heap (pages, free objects, remote frees in
    // flight) goes to the next thread that needs one, instead of leaking.
    std::lock_guard lock(orphans_mutex);
    auto* h = static_cast<Heap*>(heap);
    h->next_orphan = orphans;
    orphans = h;
    ++orphan_count;
    this_thread_heap = nullptr;
}

struct Arena {
    Arena() {
        for (uintptr_t bytes = max_arena_bytes; bytes >= min_arena_bytes; bytes /= 2) {
            void* base = mmap(nullptr, bytes + page_size, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
            if (base == MAP_FAILED) continue;
            arena_base = (reinterpret_cast<uintptr_t>(base) + page_size - 1) & ~(uintptr_t{page_size} - 1);
            arena_size = bytes;
            break;
        }
        if (!arena_size) throw std::bad_alloc();
        pthread_key_create(&heap_key, hand_over);
    }
};

void ensure_arena() {
    static Arena arena;  // thread-safe, once
}

Heap* heap_for_this_thread() {
    ensure_arena();
    Heap* h = nullptr;
    {
        std::lock_guard lock(orphans_mutex);
        if (orphans) {
            h = orphans;
            orphans = h->next_orphan;
            --orphan_count;
            heaps_adopted.fetch_add(1, std::memory_order_relaxed);
        }
    }
    if (!h) {
        h = new Heap();  // never deleted: pages and remote frees may point at it
        heaps_created.fetch_add(1, std::memory_order_relaxed);
    }
    h->next_orphan = nullptr;
    this_thread_heap = h;
    pthread_setspecific(heap_key, h);
    return h;
}

// A page's start: its header is written, its objects are the caller's to carve.
char* new_page(Heap* h, unsigned size_class) {
    const uintptr_t offset = arena_next.fetch_add(page_size, std::memory_order_relaxed);
    if (offset + page_size > arena_size) throw std::bad_alloc();
    auto* page = reinterpret_cast<PageHeader*>(arena_base + offset);
    page->owner_word = reinterpret_cast<uintptr_t>(h) | (h->sampled_pages ? sampled_page : 0);
    page->size_class = size_class;
    return reinterpret_cast<char*>(page);
}

// A big or managed block: a header right before the pointer, at the block's
// alignment, says where the mapping starts and how large it is.
struct BigHeader {
    static constexpr uint64_t big_magic = 0xb16b10c5b16b10c5ull;
    uint64_t magic;
    void* base;
    size_t size;       // requested bytes (usable)
    size_t alignment;
    bool sampled;      // recorded by the profiler: its free is recorded too
};

void* aligned_block(size_t size, size_t alignment) {
    if (alignment < alignof(BigHeader) || (alignment & (alignment - 1)) != 0) throw std::bad_alloc();
    const size_t header = (sizeof(BigHeader) + alignment - 1) & ~(alignment - 1);
    void* base = std::malloc(size + header + alignment);
    if (!base) throw std::bad_alloc();
    const uintptr_t user = (reinterpret_cast<uintptr_t>(base) + header + alignment - 1) & ~(alignment - 1);
    auto* h = reinterpret_cast<BigHeader*>(user) - 1;
    *h = {BigHeader::big_magic, base, size, alignment, false};
    if constexpr (pool_checked) note_big_block(h + 1);
    return reinterpret_cast<void*>(user);
}

// The header of big or managed block p, for `what` ("invalid free", ...) of p.
BigHeader* big_header(const void* p, const char* what) {
    if constexpr (pool_checked) check_big_block(p, what);  // before reading memory p may not own
    auto* h = reinterpret_cast<BigHeader*>(const_cast<void*>(p)) - 1;
    if (h->magic != BigHeader::big_magic)
        report_misuse(what, p, nullptr, "not a block of this allocator (no block header; or a big block freed twice)");
    return h;
}

}  // namespace

uintptr_t arena_base = 0;
uintptr_t arena_size = 0;  // 0 until the arena exists: in_arena() is false for everything
thread_local Heap* this_thread_heap = nullptr;

namespace {

// An object of class c from heap h, once its free list is empty: what other
// threads freed, else the bump area, else a new page.
void* take_from(Heap* h, unsigned c) {
    ClassState& state = h->classes[c];
    if (state.free) {  // the fast path found no heap yet
        FreeObject* head = state.free;
        state.free = head->next;
        return head;
    }
    // Take back everything other threads freed, in one exchange.
    if (FreeObject* remote = h->remote[c].exchange(nullptr, std::memory_order_acquire)) {
        state.free = remote->next;
        return remote;
    }
    const size_t size = class_sizes[c];
    if (state.bump + size > state.bump_end || !state.bump) {
        char* page = new_page(h, c);
        state.bump = page + first_object_offset(c);
        state.bump_end = state.bump + (page_size - first_object_offset(c)) / size * size;
    }
    void* p = state.bump;
    state.bump += size;
    return p;
}

void* alloc_from(Heap* h, unsigned c) {
    void* p = take_from(h, c);
    if constexpr (pool_checked) note_handed_out(p);
    return p;
}

void push_local(Heap* h, unsigned c, void* p) {
    auto* object = static_cast<FreeObject*>(p);
    object->next = h->classes[c].free;
    h->classes[c].free = object;
}

}  // namespace

void* alloc_small_slow(unsigned c) {
    return alloc_from(this_thread_heap ? this_thread_heap : heap_for_this_thread(), c);
}

void* sampled_block(void* p) {
    if (!in_arena(p)) {
        big_header(p, "invalid sampled block")->sampled = true;  // just allocated: valid
        return p;
    }
    const PageHeader* page = page_of(p);
    Heap* h = page->owner();  // this thread's: p was just allocated here
    if (!h->sampled) {
        h->sampled = new Heap();
        h->sampled->sampled_pages = true;
    }
    // Every sampled block is of the largest class, whatever its own: one LIFO
    // list for all samples, so the next sample reuses the block the last one
    // freed, still in cache, where a list per class would hand out a block
    // untouched since that class's last sample. Costs at most 2 KiB per live
    // sampled allocation.
    void* moved = alloc_from(h->sampled, class_count - 1);
    if constexpr (pool_checked) check_free(p);  // p goes back to the free list unseen by free()
    push_local(h, page->size_class, p);
    return moved;
}

void free_slow(PageHeader* page, void* p) {
    check_object_start(page, p);
    if (page->owner_word & sampled_page) record_free_slow(p);
    Heap* owner = page->owner();
    Heap* mine = this_thread_heap;
    if (owner == mine || (mine && owner == mine->sampled)) {
        check_not_list_head(owner->classes[page->size_class].free, p, page);
        return push_local(owner, page->size_class, p);
    }
    auto* object = static_cast<FreeObject*>(p);
    std::atomic<FreeObject*>& list = owner->remote[page->size_class];
    FreeObject* head = list.load(std::memory_order_relaxed);
    do {
        check_not_list_head(head, p, page);
        object->next = head;
    } while (!list.compare_exchange_weak(head, object, std::memory_order_release, std::memory_order_relaxed));
}

void* big_alloc_untracked(size_t size) {
    ensure_arena();
    return aligned_block(size, 64);
}

void big_or_managed_free(void* p) {
    BigHeader* header = big_header(p, "invalid free");
    if constexpr (pool_checked) forget_big_block(p, "double free");
    if (header->sampled) record_free_slow(p);
    header->magic = 0;  // a second free finds no header (unless the memory was reused meanwhile)
    std::free(header->base);
}

}  // namespace detail

BENCHFP_LAYOUT_SHIFT_HERE(layout_shift_before_entry_points)
void* pool_alloc(size_t size) { return pool_alloc_inner<true>(size, &unknown_type); }
void* pool_alloc_unprofiled(size_t size) { return pool_alloc_inner<false>(size, &unknown_type); }
void* alloc(size_t size, const TypeInfo* type) { return pool_alloc_inner<true>(size, type); }
void* detail::alloc_sampled(size_t size, const TypeInfo* type) {
    return record_slow(pool_alloc_inner<false>(size, type), size, type);
}
void* alloc_unprofiled(size_t size, const TypeInfo* type) { return pool_alloc_inner<false>(size, type); }

void* big_alloc(size_t size, const TypeInfo* type) {
    return detail::sample_point(detail::big_alloc_untracked(size), size, type);
}

namespace {

// Managed blocks with the hook (Profiled) or without it (the benchmarks' baseline).
template <bool Profiled>
void* managed_alloc_as(size_t size, size_t alignment, const TypeInfo* type) {
    detail::ensure_arena();
    void* p = detail::aligned_block(size, alignment);
    if constexpr (Profiled) return detail::sample_point(p, size, type);
    return p;
}

template <bool Profiled>
void* managed_realloc_as(void* p, size_t new_size, const TypeInfo* type) {
    if (!p) return managed_alloc_as<Profiled>(new_size, 64, type);
    const detail::BigHeader* old = detail::big_header(p, "invalid managed_realloc");
    void* q = managed_alloc_as<Profiled>(new_size, old->alignment, type);
    std::memcpy(q, p, std::min(old->size, new_size));
    free(p);
    return q;
}

}  // namespace

void* managed_alloc(size_t size, size_t alignment, const TypeInfo* type) {
    return managed_alloc_as<true>(size, alignment, type);
}
void* managed_realloc(void* p, size_t new_size, const TypeInfo* type) {
    return managed_realloc_as<true>(p, new_size, type);
}
void* managed_alloc_unprofiled(size_t size, size_t alignment) {
    return managed_alloc_as<false>(size, alignment, nullptr);
}
void* managed_realloc_unprofiled(void* p, size_t new_size) { return managed_realloc_as<false>(p, new_size, nullptr); }

size_t usable_size(const void* p) {
    if (detail::in_arena(p)) return class_sizes[detail::page_of(p)->size_class];
    return detail::big_header(p, "invalid usable_size")->size;
}

PoolStats pool_stats() {
    std::lock_guard lock(detail::orphans_mutex);
    return {detail::arena_next.load() / page_size, detail::heaps_created.load(), detail::orphan_count,
            detail::heaps_adopted.load()};
}

}  // namespace benchfp::alloc
