#include "alloc/pool.hpp"

#include "alloc/layout_shift.hpp"
#include "alloc/pool_check.hpp"

#include <pthread.h>
#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <new>
#include <string_view>
#include <vector>

namespace benchfp::alloc {

bool profiler_enabled = false;
// A new thread's hook is poked: its first allocation calls record_slow, which
// registers it (and stops its hook if the profiler is off).
thread_local detail::Heap* detail::alloc_heap = &detail::no_heap;
thread_local detail::Heap* detail::managed_alloc_heap = &detail::no_heap;
thread_local uint64_t detail::hook_state = detail::hook_poked;
thread_local int64_t detail::sample_countdown = 0;
uint64_t detail::sites_count_state = detail::hook_stopped;
#if BENCHFP_HOOK_FLOOR  // measurement builds only (pool.hpp)
thread_local uint64_t detail::hook_floor_word = detail::hook_floor_start;
#endif

namespace detail {

namespace {

// Up to 64 GiB of address space, reserved once: pages are handed out by bumping
// an offset and never unmapped, so a pointer's page header is always readable.
// MAP_NORESERVE: the kernel backs only the pages that are touched. Where that
// much address space is refused (valgrind, ulimit -v), the arena halves until
// it fits, down to 1 GiB. The big blocks' classes get a reservation of their
// own, the same way: apart from the arena, so a big block is never read as a
// small object, and the free fast path's one range test stays as it was.
constexpr uintptr_t max_arena_bytes = uintptr_t{64} << 30;
constexpr uintptr_t min_arena_bytes = uintptr_t{1} << 30;

std::atomic<uintptr_t> arena_next{0};
std::atomic<size_t> heaps_created{0}, heaps_adopted{0};

std::mutex orphans_mutex;
Heap* orphans = nullptr;  // heaps whose threads exited, waiting for new threads
size_t orphan_count = 0;

pthread_key_t heap_key;
pthread_key_t batch_key;  // a thread's held-back remote frees (free_slow), flushed at its exit
void flush_remote_batch_at_exit(void* batch);

// Releases heap h's wholly free pages past keep_bytes (see trim()).
size_t trim_heap(Heap* h, size_t keep_bytes);

void hand_over(void* heap) {
    // The thread is exiting: its heap (pages, free objects, remote frees in
    // flight) goes to the next thread that needs one, instead of leaking; its
    // wholly free pages go back to the OS first.
    auto* h = static_cast<Heap*>(heap);
    flush_remote_frees();  // before the trim: some may be h's (a heap adopted after its objects were freed here)
    try {
        trim_heap(h, 0);
    } catch (const std::bad_alloc&) {
        // trim's page lists could not grow: the heap is handed over untrimmed.
    }
    std::lock_guard lock(orphans_mutex);
    h->next_orphan = orphans;
    orphans = h;
    ++orphan_count;
    this_thread_heap = &no_heap;
    __atomic_store_n(&alloc_heap, &no_heap, __ATOMIC_RELAXED);  // nothing pops from h here again
    __atomic_store_n(&managed_alloc_heap, &no_heap, __ATOMIC_RELAXED);
}

struct Reservation {
    uintptr_t base = 0, size = 0;
};

constexpr uintptr_t os_page = 4096;

// The largest NORESERVE reservation from max_bytes down to min_bytes (halving), page_size aligned.
Reservation reserve(uintptr_t max_bytes, uintptr_t min_bytes) {
    for (uintptr_t bytes = max_bytes; bytes >= min_bytes; bytes /= 2) {
        void* base = mmap(nullptr, bytes + page_size, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (base != MAP_FAILED)
            return {(reinterpret_cast<uintptr_t>(base) + page_size - 1) & ~(uintptr_t{page_size} - 1), bytes};
    }
    throw std::bad_alloc();
}

// The big classes' reservation, carved in chunks: its lower half by bumping
// big_next for the classes whose blocks carry their header in line; its upper
// half, [page_classes_base, + page_classes_size), by bumping page_classes_next
// for the page classes (page_class() below), whose headers live apart.
Reservation big_region;
std::atomic<uintptr_t> big_next{0}, page_classes_next{0};
uintptr_t page_classes_base = 0, page_classes_size = 0;
// The page classes' headers: one 64-byte entry per OS page of their half, the
// entry of the page where a block's payload starts (a reservation of 1/64 of
// that half; an entry's page is faulted in when first written). The entry of
// payload p is at header_bias + p / 64 (page_classes_base is page-aligned): one
// word to load.
uintptr_t header_bias = 0;
std::atomic<size_t> released_bytes{0};

// 4 MiB, as gperftools' largest thread cache (kMaxThreadCacheSize): it keeps a
// thread's recurring big buffers (a few arrays of up to 1 MiB) resident, so a
// steady loop never faults them in again, while a thread that freed a burst of
// big blocks keeps at most that much it does not use.
std::atomic<size_t> release_threshold{size_t{4} << 20};

// BENCHFP_POOL_RELEASE_BYTES, if set: a byte count, or the process stops with
// the message (a program that reports bad input itself checks first:
// release_bytes_from_environment).
void read_release_threshold_from_environment() {
    const ReleaseBytesSetting setting = release_bytes_from_environment();
    if (!setting.problem.empty()) {
        std::fprintf(stderr, "benchfp pool: %s\n", setting.problem.c_str());
        std::abort();
    }
    if (setting.bytes) release_threshold.store(*setting.bytes, std::memory_order_relaxed);
}

struct Arena {
    Arena() {
        const Reservation arena = reserve(max_arena_bytes, min_arena_bytes);
        big_region = reserve(max_arena_bytes, min_arena_bytes);
        page_classes_base = big_region.base + big_region.size / 2;
        // The table as large as the page classes' half needs, or as large as
        // the address space allows (halving, as the reservations above): the
        // half is then cut to what the table covers.
        const uintptr_t wanted = big_region.size / 2 / os_page * 64;
        const Reservation table = reserve(wanted, std::min<uintptr_t>(wanted, page_size));
        page_classes_size = table.size / 64 * os_page;
        header_bias = table.base - page_classes_base / 64;
        read_release_threshold_from_environment();
        if (pthread_key_create(&heap_key, hand_over) != 0 ||
            pthread_key_create(&batch_key, flush_remote_batch_at_exit) != 0) {
            // Without them an exiting thread's heap and held-back frees would leak.
            std::fprintf(stderr, "benchfp pool: no pthread key left (PTHREAD_KEYS_MAX) for what exiting threads leave\n");
            std::abort();
        }
        arena_base = arena.base;
        arena_size = arena.size;  // last: in_arena() is true for nothing until the arena is complete
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

std::atomic<size_t> released_pages{0};

// A page's start: its header is written, its objects are the caller's to carve.
// One trim() released comes first; else the arena's next.
char* new_page(Heap* h, unsigned size_class) {
    PageHeader* page;
    if (!h->released_pages.empty()) {
        page = reinterpret_cast<PageHeader*>(h->released_pages.back());
        h->released_pages.pop_back();
    } else {
        const uintptr_t offset = arena_next.fetch_add(page_size, std::memory_order_relaxed);
        if (offset + page_size > arena_size) throw std::bad_alloc();
        page = reinterpret_cast<PageHeader*>(arena_base + offset);
    }
    page->owner_word = reinterpret_cast<uintptr_t>(h);
    page->size_class = size_class;
    return reinterpret_cast<char*>(page);
}

// A free list (a heap's, one thread's only): push and pop at its head.
void push(FreeObject*& list, FreeObject* object) {
    object->next = list;
    list = object;
}
FreeObject* pop(FreeObject*& list) {
    FreeObject* head = list;
    if (head) list = head->next;
    return head;
}
// A remote list (frees by other threads: a multi-producer stack): pushes
// object, showing check every head it is pushed over (the misuse checks).
// Or a chain, first to last (linked through next), at once.
template <typename Check>
void push_remote(std::atomic<FreeObject*>& list, FreeObject* first, FreeObject* last, Check check) {
    FreeObject* head = list.load(std::memory_order_relaxed);
    do {
        check(head);
        last->next = head;
    } while (!list.compare_exchange_weak(head, first, std::memory_order_release, std::memory_order_relaxed));
}
template <typename Check>
void push_remote(std::atomic<FreeObject*>& list, FreeObject* object, Check check) {
    push_remote(list, object, object, check);
}

// A big or managed block's header, right before the pointer it hands out (a
// page class's: in an entry of a table of their own, page_class_header).
struct BigHeader {
    static constexpr uint64_t big_magic = 0xb16b10c5b16b10c5ull;
    static constexpr uint32_t huge = UINT32_MAX;  // size_class of a block in a mapping of its own
    uint64_t magic;
    char* base;        // the block's slot (a big class) or its mapping (huge)
    size_t size;       // requested bytes (usable)
    Heap* owner;       // whose lists the slot goes back to (null for huge)
    SampleNote note;   // the profiler's, while sampled
    uint32_t size_class;
    uint8_t alignment_log2;  // of its payload's alignment: 64 B or more
    bool sampled;            // recorded by the profiler: its free is recorded too
    bool irregular;          // huge, or allocated at an alignment above 64 B

    size_t alignment() const { return size_t{1} << alignment_log2; }
    // Whether its free takes big_free_any (sampled or irregular): one 2-byte test.
    bool frees_apart() const {
        static_assert(offsetof(BigHeader, irregular) == offsetof(BigHeader, sampled) + 1);
        uint16_t flags;
        std::memcpy(&flags, reinterpret_cast<const char*>(this) + offsetof(BigHeader, sampled), sizeof flags);
        return flags != 0;
    }
};

// The bytes before a block's payload: the free-list link (a FreeObject at the
// slot's start, written only while the block is free), then the header. Slots
// are 64-byte aligned, so the payload is too; a larger alignment moves the
// payload up to its next multiple, within alignment - 64 more payload bytes.
// Not so in the page classes (below).
constexpr size_t big_header_room = 64;
static_assert(sizeof(FreeObject) + sizeof(BigHeader) <= big_header_room);

// A class's blocks are carved from chunks of at least this much (a whole slot for the largest classes).
constexpr size_t big_chunk_bytes = size_t{64} << 10;

// The page classes: payloads of whole OS pages (4, 8, 12 and 16 KiB, and every
// class from 20 KiB on). Their slots are their payloads, page-aligned, with
// their headers apart (header_bias), as tcmalloc's spans and mimalloc's
// segment pages keep theirs: a growing array's copies then run between
// page-aligned blocks, which glibc's memmove copies faster on the Intel Xeon
// (Ice Lake) guest (grow_array 1229-1247 ns an iteration before, 1080-1098
// after; arrays, whose 4, 8 and 16 KiB blocks pay the header's separate line,
// 86-89 before, 93-95 after: README). A header in line before a page-aligned
// payload would take an OS page of its own (arrays' resident bytes per live
// object read 1.146 of mimalloc's so, over the gate's 1.1); apart, 64 bytes
// each share a page with those of 63 others.
constexpr bool page_class(unsigned c) { return big_class_payload(c) % os_page == 0; }
// The same for any size_class (BigHeader::huge is none), one bit test.
constexpr uint64_t page_class_bits = [] {
    static_assert(big_class_count <= 64);
    uint64_t bits = 0;
    for (unsigned c = 0; c < big_class_count; ++c) bits |= uint64_t{page_class(c)} << c;
    return bits;
}();
[[gnu::always_inline]] inline bool is_page_class(uint32_t c) { return c < big_class_count && (page_class_bits >> c & 1); }
[[gnu::always_inline]] inline bool in_page_classes(const void* p) { return reinterpret_cast<uintptr_t>(p) - page_classes_base < page_classes_size; }

constexpr uintptr_t round_up(uintptr_t n, uintptr_t to) { return (n + to - 1) & ~(to - 1); }
// The bytes a slot of class c holds before its payload at the default
// alignment: its header's, in line, but none in the page classes.
constexpr size_t header_room(unsigned c) { return page_class(c) ? 0 : big_header_room; }
// Whole multiples of 64 B, so every slot of a chunk is 64-byte aligned (the
// classes below 256 B are not); of whole OS pages for the page classes.
constexpr size_t big_stride_of(unsigned c) { return round_up(header_room(c) + big_class_payload(c), 64); }
// A table: the alloc and free paths ask for a class's stride (and whether it is
// releasable) several times each; computed, those took 33 of the 178
// instructions of a big allocation and free (callgrind).
constexpr auto big_strides = [] {
    std::array<size_t, big_class_count> strides{};
    for (unsigned c = 0; c < big_class_count; ++c) strides[c] = big_stride_of(c);
    return strides;
}();
size_t big_stride(unsigned c) { return big_strides[c]; }
size_t payload_alignment(size_t alignment) { return std::max(alignment, big_header_room); }
// The header of a page class's block whose payload starts at user.
[[gnu::always_inline]] inline BigHeader* page_class_header(uintptr_t user) {
    static_assert(os_page / big_header_room == 64);
    return reinterpret_cast<BigHeader*>(header_bias + user / 64);
}
// A free big slot's node on its class's lists: the slot's first 8 bytes, but
// a page class's node is the last 8 of its slot's header entry, so that
// neither a free nor a pop touches the payload, whose first line is often
// cold by then (a growing array's copy streamed it out of the cache: perf put
// 33% of big_or_managed_free's samples on the link's store into it), and
// release_body releases a page class's slot whole. In time, grow_array read
// 1069-1086 ns an iteration with the node apart, 1076-1104 with it in the
// payload (6 processes each): within the noise.
static_assert(sizeof(BigHeader) + sizeof(FreeObject) <= big_header_room);
[[gnu::always_inline]] inline FreeObject* node_in(BigHeader* page_class_entry) {
    return reinterpret_cast<FreeObject*>(page_class_entry + 1);
}
[[gnu::always_inline]] inline BigHeader* entry_of(FreeObject* page_class_node) {
    return reinterpret_cast<BigHeader*>(page_class_node) - 1;
}
[[gnu::always_inline]] inline FreeObject* node_of(char* slot, unsigned c) {
    if (is_page_class(c)) return node_in(page_class_header(reinterpret_cast<uintptr_t>(slot)));
    return reinterpret_cast<FreeObject*>(slot);
}
[[gnu::always_inline]] inline char* slot_of(FreeObject* node, unsigned c) {
    if (is_page_class(c)) return reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(entry_of(node)) - header_bias) * 64);
    return reinterpret_cast<char*>(node);
}
// The header of the block whose payload starts at user (valid or not: big_header checks).
[[gnu::always_inline]] inline BigHeader* header_of(const void* user) {
    if (in_page_classes(user)) return page_class_header(reinterpret_cast<uintptr_t>(user));
    return reinterpret_cast<BigHeader*>(const_cast<void*>(user)) - 1;
}
// Where the payload and the header of a block of class c (or huge) in slot
// `base` go. A page class's payload starts at its slot, page-aligned, unless a
// larger alignment moves it up (within the alignment - 64 more payload bytes
// its class was chosen for, as in line). The class decides, not the slot's
// address: one bit test, where the address took two more words to load.
struct Placement {
    char* user;
    BigHeader* header;
};
[[gnu::always_inline]] inline Placement place(char* base, size_t alignment, uint32_t c) {
    const auto at = reinterpret_cast<uintptr_t>(base);
    if (is_page_class(c)) {
        const uintptr_t user = round_up(at, payload_alignment(alignment));
        return {reinterpret_cast<char*>(user), page_class_header(user)};
    }
    auto* user = reinterpret_cast<char*>(round_up(at + big_header_room, payload_alignment(alignment)));
    return {user, reinterpret_cast<BigHeader*>(user) - 1};
}
// The mapping of a huge block: room for the header and the alignment, whole OS pages.
size_t huge_mapping_bytes(size_t size, size_t alignment) {
    return round_up(size + payload_alignment(alignment), os_page);
}

// A new chunk for class c's bump area. Its first slot starts at the class's
// colour, c % 8 lines (first_object_offset's hash is for the small classes):
// the first blocks of neighbouring classes then do not share an address
// modulo 4 KiB (4K aliasing). The page classes' slots are page-aligned, as
// their chunks, with no colour.
void carve_chunk(BumpArea& bump, unsigned c) {
    const bool pages = page_class(c);
    const size_t colour = pages ? 0 : (c % 8) * 64, stride = big_stride(c);
    const size_t bytes = std::max(big_chunk_bytes, round_up(colour + stride, os_page));
    std::atomic<uintptr_t>& next = pages ? page_classes_next : big_next;
    const uintptr_t offset = next.fetch_add(bytes, std::memory_order_relaxed);
    if (offset + bytes > (pages ? page_classes_size : big_region.size / 2)) throw std::bad_alloc();
    bump.next = reinterpret_cast<char*>((pages ? page_classes_base : big_region.base) + offset + colour);
    bump.end = bump.next + (bytes - colour) / stride * stride;
}

// Gives back to the OS the whole OS pages of a free slot of class c; its link
// and header room stay (a page class's slot goes whole: they are apart).
// MADV_DONTNEED, not MADV_FREE: the pages leave the resident set now (MADV_FREE
// leaves them counted, in RSS and cgroup limits, until memory runs short), at
// the cost of a zero-filled fault per page when the block is reused.
void release_body(char* slot, unsigned c) {
    const uintptr_t from = round_up(reinterpret_cast<uintptr_t>(slot) + header_room(c), os_page);
    const uintptr_t to = (reinterpret_cast<uintptr_t>(slot) + big_stride(c)) & ~(os_page - 1);
    if (from >= to) return;
    madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
    released_bytes.fetch_add(to - from, std::memory_order_relaxed);
}

// Whether a free slot of class c has whole OS pages in its body to give back:
// at least two pages' worth of payload, so wherever the slot starts one whole
// page is in it. Smaller slots share their pages with their neighbours (or
// are one page, the 4 KiB class, whose every reuse would fault): their free blocks
// stay resident and are not counted against the threshold (as the small
// classes' pages, which are never released).
// Payloads grow with the class, so the releasable classes are those from the first one on.
constexpr unsigned first_releasable_class = [] {
    unsigned c = 0;
    while (big_class_payload(c) < 2 * os_page) ++c;
    return c;
}();
bool releasable(unsigned c) { return c >= first_releasable_class; }

// h's free blocks of the releasable classes hold more than the threshold:
// their bodies go back to the OS, largest class first (the most bytes per
// call), down to half of it, so a loop freeing around the threshold does not
// call madvise at every free. A released block keeps at most its first and
// last partial pages resident. Blocks other threads freed count only once
// taken back (take_back_remote_big).
[[gnu::noinline]] void release_excess(Heap* h) {
    const size_t target = release_threshold.load(std::memory_order_relaxed) / 2;
    for (unsigned c = big_class_count; c-- > 0 && releasable(c) && h->big_cached_bytes > target;) {
        BigClassState& state = h->big[c];
        while (state.free && h->big_cached_bytes > target) {
            FreeObject* node = pop(state.free);
            release_body(slot_of(node, c), c);
            push(state.released, node);
            h->big_cached_bytes -= big_stride(c);
        }
    }
}

// `blocks` free blocks of class c went on h's free list. Inlined into the
// free: a call of its own was a jump and a second test of the class per free
// (callgrind: 0.33 instructions per big allocation and free, grow_array's
// blocks); release_excess, past the threshold, stays apart.
[[gnu::always_inline]] inline void add_cached(Heap* h, unsigned c, size_t blocks) {
    if (!releasable(c)) return;
    h->big_cached_bytes += blocks * big_stride(c);
    if (h->big_cached_bytes > release_threshold.load(std::memory_order_relaxed)) release_excess(h);
}

// Takes back the blocks of class c other threads freed, in one exchange, onto the free list.
void take_back_remote_big(Heap* h, unsigned c) {
    FreeObject* list = h->big_remote[c].exchange(nullptr, std::memory_order_acquire);
    if (!list) return;
    size_t blocks = 1;
    FreeObject* last = list;
    for (; last->next; last = last->next) ++blocks;
    last->next = h->big[c].free;
    h->big[c].free = list;
    add_cached(h, c, blocks);
}

// The node of a resident free slot of class c off h's list, or null.
[[gnu::always_inline]] inline FreeObject* pop_free_node(Heap* h, unsigned c) {
    FreeObject* node = pop(h->big[c].free);
    if (node && releasable(c)) h->big_cached_bytes -= big_stride(c);
    return node;
}

// A slot of class c for heap h: a resident free one (local, else freed by
// other threads), else a released one, else a new one from the bump area.
char* take_big_slot(Heap* h, unsigned c) {
    BigClassState& state = h->big[c];
    if (!state.free && h->big_remote[c].load(std::memory_order_relaxed)) take_back_remote_big(h, c);
    if (FreeObject* node = pop_free_node(h, c)) return slot_of(node, c);
    if (FreeObject* node = pop(state.released)) return slot_of(node, c);
    const size_t stride = big_stride(c);
    if (!state.bump.next || state.bump.next + stride > state.bump.end) carve_chunk(state.bump, c);
    char* slot = state.bump.next;
    state.bump.next += stride;
    return slot;
}

char* map_huge(size_t bytes) {
    void* base = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) throw std::bad_alloc();
    return static_cast<char*>(base);
}

Heap* heap_of_this_thread() { return this_thread_heap != &no_heap ? this_thread_heap : heap_for_this_thread(); }

// The whole header of a block of size bytes at alignment in slot `base` (of
// class size_class, or huge), unsampled. Alignments up to 64 B are placed, and
// recorded, as 64 B.
BigHeader whole_header(char* base, size_t size, size_t alignment, Heap* owner, uint32_t size_class) {
    const size_t placed_at = payload_alignment(alignment);
    const bool irregular = size_class == BigHeader::huge || placed_at != big_alloc_alignment;
    return {BigHeader::big_magic, base, size, owner, {}, size_class, static_cast<uint8_t>(std::countr_zero(placed_at)),
            false, irregular};
}
// The block at base (of class size_class, or huge) with its whole header written: its payload.
[[gnu::always_inline]] inline void* with_header(char* base, size_t size, size_t alignment, Heap* owner,
                                                uint32_t size_class) {
    const Placement at = place(base, alignment, size_class);
    *at.header = whole_header(base, size, alignment, owner, size_class);
    if constexpr (pool_checked) note_big_block(at.user);
    return at.user;
}
// Block `user` off its class's free list, whose header, at big_alloc's
// placement, is as its last free left it (free_big_slot): its slot, owner,
// class and alignment hold for this allocation too, so only what two
// allocations may differ in is written: three fields where with_header writes
// all nine. grow_array's blocks without their copies took 97.7 instructions an
// allocation and free with the whole header written here, 89.3 with this
// (callgrind, benchfp_alloc_instructions compiled-out-big: README).
[[gnu::always_inline]] inline void* reuse_header(char* user, BigHeader* header, size_t size) {
    header->magic = BigHeader::big_magic;
    header->size = size;
    header->sampled = false;
    if constexpr (pool_checked) note_big_block(user);
    return user;
}

// A big or managed block of size bytes at alignment (a power of two, at least 8): any.
[[gnu::noinline]] void* big_block_any(size_t size, size_t alignment) {
    if (alignment < alignof(BigHeader) || (alignment & (alignment - 1)) != 0) throw std::bad_alloc();
    if (size > (SIZE_MAX >> 2) || alignment > (SIZE_MAX >> 2)) throw std::bad_alloc();  // no overflow below
    const size_t payload = size + payload_alignment(alignment) - big_header_room;
    if (payload > max_big_class_payload)
        return with_header(map_huge(huge_mapping_bytes(size, alignment)), size, alignment, nullptr, BigHeader::huge);
    Heap* owner = heap_of_this_thread();
    const unsigned c = big_class_of(payload);
    return with_header(take_big_slot(owner, c), size, alignment, owner, c);
}

// The common case of a big or managed block: at the default alignment (where
// the payload is the size), up to 64 KiB, off h's free list of its class; null
// otherwise, and for no_heap (its lists are empty). It makes no call but a
// page class's tail call, so the entry it is inlined into saves no registers: with all of big_block_any
// inlined, their pushes and pops were 16 of the 66 instructions of a big
// allocation (callgrind), big_class_of 13 more (big_class_of_table is one load).
// Its two parts, which big_alloc_as uses apart: whether size has a table's
// class, and the block of class c (that class) off h's list, or null.
[[gnu::always_inline]] inline bool in_big_table(size_t size) {
    static_assert(big_alloc_alignment == big_header_room);  // the payload is the size
    return size - 1 < big_table_max_payload;
}
// A page class's block, apart: with both placements inlined into big_alloc,
// its common case needed callee-saved registers, and the entry pushed a frame
// before its count site, which must be its first instruction (count_site.hpp).
// A tail call instead.
// At the default alignment a page class's payload is its slot, and its header
// the entry that holds the node.
[[gnu::noinline, gnu::returns_nonnull]] void* page_class_block(FreeObject* node, size_t size, unsigned c) {
    return reuse_header(slot_of(node, c), entry_of(node), size);
}
[[gnu::always_inline]] inline void* pop_class_block(Heap* h, size_t size, unsigned c) {
    FreeObject* node = pop_free_node(h, c);
    if (!node) return nullptr;
    // c is a table's class: is_page_class's bound test is not needed, and with
    // it (or with that bound stated as unreachable) big_alloc pushed a frame
    // before its count site (objdump).
    if (page_class_bits >> c & 1) return page_class_block(node, size, c);
    char* user = reinterpret_cast<char*>(node) + big_header_room;
    return reuse_header(user, reinterpret_cast<BigHeader*>(user) - 1, size);
}
[[gnu::always_inline]] inline void* pop_big_block(Heap* h, size_t size) {
    return in_big_table(size) ? pop_class_block(h, size, big_class_of_table(size)) : nullptr;
}
// The same as big_block_any, the common case first.
[[gnu::always_inline]] inline void* big_block(size_t size, size_t alignment) {
    if (alignment == big_alloc_alignment)
        if (void* p = pop_big_block(this_thread_heap, size)) return p;
    return big_block_any(size, alignment);
}

// A freed class block goes back to its owner: pushed on the owner's free list
// by the owning thread, else on its remote list (the owner may have exited: its
// heap waits for a new thread, remote list included). Its header must be at
// big_alloc's placement, with base, owner, size_class and alignment_log2 right
// for a block allocated there, and irregular false: every slot on a class's
// free lists has such a header, which pop_class_block reuses (big_free_any
// writes one for a block placed apart). Released slots (release_excess) and
// new ones get a whole header when they are taken (take_big_slot's callers).
[[gnu::always_inline]] inline void free_big_slot(const BigHeader& header) {
    Heap* owner = header.owner;
    const unsigned c = header.size_class;
    if (c >= big_class_count) __builtin_unreachable();  // a class's block: huge ones are unmapped instead
    FreeObject* block = node_of(header.base, c);
    if (owner == this_thread_heap) {
        push(owner->big[c].free, block);
        return add_cached(owner, c, 1);
    }
    push_remote(owner->big_remote[c], block, [](FreeObject*) {});
}

// The header of big or managed block p, for `what` ("invalid free", ...) of p.
BigHeader* big_header(const void* p, const char* what) {
    if constexpr (pool_checked) check_big_block(p, what);  // before reading memory p may not own
    // In the page classes every payload starts a page: a pointer that does not
    // is no block, and is not looked up (up to 63 bytes in, its entry would be
    // its block's; further, a read within an entry). One that does names an
    // entry wiped unless a payload starts there.
    constexpr const char* no_block = "not a block of this allocator (no block header; or a big block freed twice)";
    if (in_page_classes(p) && reinterpret_cast<uintptr_t>(p) % os_page != 0) report_misuse(what, p, nullptr, no_block);
    BigHeader* h = header_of(p);
    if (h->magic != BigHeader::big_magic) report_misuse(what, p, nullptr, no_block);
    return h;
}

}  // namespace

uintptr_t arena_base = 0;
uintptr_t arena_size = 0;  // 0 until the arena exists: in_arena() is false for everything
Heap no_heap;  // never written: nothing is ever pushed on its lists
thread_local Heap* this_thread_heap = &no_heap;

namespace {

// Objects of class c a page holds.
size_t objects_per_page(unsigned c) { return (page_size - first_object_offset(c)) / class_sizes[c]; }

// Takes back everything other threads pushed of class c (free_slow), in one exchange, onto
// the front of the free list (walked to its end only when it is not empty).
void take_back_remote(Heap* h, unsigned c) {
    FreeObject* remote = h->remote[c].exchange(nullptr, std::memory_order_acquire);
    if (!remote) return;
    FreeObject*& free = h->free[c];
    if (free) {
        FreeObject* tail = remote;
        while (tail->next) tail = tail->next;
        tail->next = free;
    }
    free = remote;
}

// An object of class c from heap h, once its free list is empty: what other
// threads pushed back, else the bump area, else a new page.
void* take_from(Heap* h, unsigned c) {
    if (FreeObject* head = pop(h->free[c])) return head;  // the fast path found no heap yet
    take_back_remote(h, c);  // the list is empty here: one exchange, no walk
    if (FreeObject* head = pop(h->free[c])) return head;
    const size_t size = class_sizes[c];
    BumpArea& bump = h->bump[c];
    if (bump.next + size > bump.end || !bump.next) {
        char* page = new_page(h, c);
        bump.next = page + first_object_offset(c);
        bump.end = bump.next + objects_per_page(c) * size;
    }
    void* p = bump.next;
    bump.next += size;
    return p;
}

void* alloc_from(Heap* h, unsigned c) {
    void* p = take_from(h, c);
    if constexpr (pool_checked) note_handed_out(p);
    return p;
}

void push_local(Heap* h, unsigned c, void* p) { push(h->free[c], static_cast<FreeObject*>(p)); }

// trim_mark's verdicts, above any count of a page's objects.
constexpr uint32_t keep_page = UINT32_MAX - 1, release_page = UINT32_MAX;

// Marks the pages of class c whose every object is on the free list: release_page,
// or keep_page while `keep_bytes` lasts; and the free list's other pages with
// their count. Returns the pages to release.
std::vector<PageHeader*> choose_pages(Heap* h, unsigned c, size_t& keep_bytes) {
    const BumpArea& bump = h->bump[c];
    const PageHeader* carving = bump.next ? page_of(bump.end - 1) : nullptr;
    for (FreeObject* o = h->free[c]; o; o = o->next) page_of(o)->trim_mark = 0;
    for (FreeObject* o = h->free[c]; o; o = o->next) ++page_of(o)->trim_mark;
    std::vector<PageHeader*> pages;
    const size_t whole = objects_per_page(c);
    for (FreeObject* o = h->free[c]; o; o = o->next) {
        PageHeader* page = page_of(o);
        if (page->trim_mark != whole || page == carving) continue;  // in use, or decided already
        if (keep_bytes >= page_size) {
            keep_bytes -= page_size;
            page->trim_mark = keep_page;
        } else {
            page->trim_mark = release_page;
            pages.push_back(page);
        }
    }
    return pages;
}

// Unlinks the objects of released pages from class c's free list, keeping the others' order.
void unlink_released(Heap* h, unsigned c) {
    FreeObject** link = &h->free[c];
    while (FreeObject* o = *link) {
        if (page_of(o)->trim_mark == release_page) *link = o->next;
        else link = &o->next;
    }
}

size_t trim_heap(Heap* h, size_t keep_bytes) {
    if (h == &no_heap) return 0;
    size_t released = 0;
    for (unsigned c = 0; c < class_count; ++c) {
        take_back_remote(h, c);
        const std::vector<PageHeader*> pages = choose_pages(h, c, keep_bytes);
        if (pages.empty()) continue;
        h->released_pages.reserve(h->released_pages.size() + pages.size());  // before any change: may throw
        unlink_released(h, c);
        for (PageHeader* page : pages) {
            // The page reads as zeros from here: owner_word 0, so a stale free of
            // one of its objects is reported ("never handed out"), not pushed.
            // Where madvise fails the page stays resident, free, and is reused
            // the same way; it is not counted as released.
            if (madvise(page, page_size, MADV_DONTNEED) == 0) released += page_size;
            else page->owner_word = 0;
            h->released_pages.push_back(reinterpret_cast<char*>(page));
        }
    }
    released_pages.fetch_add(released / page_size, std::memory_order_relaxed);
    return released;
}

}  // namespace

// Not inlined into the entries, so their fast paths keep nothing in callee-saved
// registers and tail-call it.
[[gnu::noinline]] void* alloc_small_slow(size_t, const TypeInfo*, size_t c) {
    return alloc_from(heap_of_this_thread(), c);
}

namespace {

// The profiler is stopped: alloc_heap goes back to this thread's heap h, if
// it is not there (a new thread, or start(), poke() or arm() pointed it away). Only
// this thread points alloc_heap at its heap, and then reads the hook again,
// sequentially consistent as start()'s stores of the state and then of
// alloc_heap (Dekker): either start() points it away after this store, or this
// load sees the profiler sampling and points it away itself.
void claim_alloc_heap(Heap* h) {
    if (hook_word(alloc_heap) == h && hook_word(managed_alloc_heap) == h) return;
    __atomic_store_n(&alloc_heap, h, __ATOMIC_SEQ_CST);
    __atomic_store_n(&managed_alloc_heap, h, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&hook_state, __ATOMIC_SEQ_CST) != hook_stopped) {
        __atomic_store_n(&alloc_heap, &no_heap, __ATOMIC_SEQ_CST);
        __atomic_store_n(&managed_alloc_heap, &no_heap, __ATOMIC_SEQ_CST);
    }
}

}  // namespace

// alloc_heap is not this thread's heap, or the list is empty; or the hook is
// poked (the allocation goes to record_slow, which arms it).
[[gnu::noinline]] void* alloc_small_not_counting(size_t size, const TypeInfo* type, size_t c) {
    if (hook_word(hook_state) == hook_poked) return alloc_sampled(size, type);
    Heap* h = heap_of_this_thread();
    claim_alloc_heap(h);
    return alloc_from(h, c);
}

namespace {

// The profiler is stopped: claims alloc_heap for the next allocations, then allocates.
[[gnu::noinline]] void* big_block_stopped(size_t size, size_t alignment) {
    claim_alloc_heap(heap_of_this_thread());
    return big_block(size, alignment);
}

// Where the hooked big and managed entries go when big_alloc_as does not
// count: above 64 KiB or at another alignment while the profiler samples, to
// be counted; poked, to record_slow; stopped, to claim alloc_heap for the next
// ones. The claim is a function of its own, so that the sampling path,
// counted and not sampled, is a leaf with no frame (with the claim inlined, it
// pushed and popped a frame: 7 instructions more per big allocation while
// sampling, when every big allocation came here).
[[gnu::noinline]] void* big_block_hooked(size_t size, size_t alignment, const TypeInfo* type) {
    if (must_sample(size)) return big_block_sampled(size, alignment, type);
    if (hook_word(hook_state) == hook_stopped) return big_block_stopped(size, alignment);
    return big_block(size, alignment);
}

}  // namespace

// Every sampled pool object moves to a big block of this class, whatever its
// own: one LIFO list for all small samples, so the next sample reuses the
// block the last one freed, still in cache, where a class per size would hand
// out a block untouched since that class's last sample.
constexpr unsigned small_sample_class = big_class_of(max_small_size);

void* sampled_block(void* p) {
    if (!in_arena(p)) {
        big_header(p, "invalid sampled block")->sampled = true;  // just allocated: valid
        return p;
    }
    const PageHeader* page = page_of(p);
    Heap* h = page->owner();  // this thread's: p was just allocated here
    const size_t size = class_sizes[page->size_class];  // its usable size stays the class's
    if constexpr (pool_checked) check_free(p);  // p goes back to the free list unseen by free()
    push_local(h, page->size_class, p);
    void* moved = with_header(take_big_slot(h, small_sample_class), size, big_alloc_alignment, h, small_sample_class);
    big_header(moved, "invalid sampled block")->sampled = true;
    return moved;
}

SampleNote& sample_note(void* sampled) { return big_header(sampled, "invalid sampled block")->note; }

namespace {

// A thread's frees of other heaps' objects, held back and pushed onto the
// owner's remote list as one chain (one compare-and-swap) once there are
// remote_batch_objects of them, before a free for another owner or class, at
// the thread's trim() and at its exit (hand_over, and batch_key's destructor,
// which a thread with no heap has too). Pushed one at a time, the owner's
// exchange and the freeing thread's compare-and-swap moved the list head's cache line
// between the two cores on every free and on nearly every refill (the owner
// took back chains of one or two): producer_consumer, whose consumer frees
// every message its producer allocates, took 3258-6719 ns an iteration, and
// 2054-2677 ns in batches of 32 (every repetition of 4 processes each, Intel
// Xeon guest, 2026-12-07: README). The costs:
//   - up to remote_batch_objects - 1 free objects per thread are not yet back
//     with their owner (its trim() does not see them) until one of those
//     happens; a process's exit or a fork() child leaves them where they are;
//   - the normal build's double-free check sees the batch's newest object
//     only, and the remote list's head at the push against the whole chain
//     (flush); a double free by two different threads is the checked build's
//     to find (pool_check.cpp), as a double free by the owner always was.
inline constexpr uint32_t remote_batch_objects = 32;
struct RemoteBatch {
    Heap* owner;
    FreeObject* head;  // newest first, as the owner's lists
    FreeObject* tail;
    uint32_t size_class, objects;
    bool exit_flush_set;  // batch_key holds this batch: its destructor flushes it at the thread's exit
};
[[gnu::tls_model("local-exec")]] constinit thread_local RemoteBatch remote_batch{};

// Pushes the held-back chain onto its owner's remote list. Every object of the
// chain is checked against the list's head: an object freed again after a
// push that left it there would otherwise link the list into a loop (the
// owner's take_back_remote would walk it for ever).
void flush(RemoteBatch& b) {
    if (!b.head) return;
    push_remote(b.owner->remote[b.size_class], b.head, b.tail, [&](FreeObject* head) {
        for (FreeObject* o = b.head;; o = o->next) {
            check_not_list_head(head, o, page_of(o));
            if (o == b.tail) break;
        }
    });
    b.head = b.tail = nullptr;
    b.objects = 0;
}

// pthread sets the key's value to null before it calls this; a free after it
// (another destructor's) sets it again, and this runs again (up to
// PTHREAD_DESTRUCTOR_ITERATIONS rounds: objects freed remotely after those stay
// with no owner's list).
void flush_remote_batch_at_exit(void* batch) {
    auto* b = static_cast<RemoteBatch*>(batch);
    b->exit_flush_set = false;
    flush(*b);
}

}  // namespace

void flush_remote_frees() { flush(remote_batch); }

void free_slow(PageHeader* page, void* p) {
    check_object_start(page, p);
    Heap* owner = page->owner();  // never null here (check_object_start), nor this thread's (the fast path's)
    RemoteBatch& b = remote_batch;
    if (b.owner != owner || b.size_class != page->size_class) {
        flush(b);
        b.owner = owner;
        b.size_class = page->size_class;
    }
    check_not_list_head(b.head, p, page);
    auto* object = static_cast<FreeObject*>(p);
    if (!b.head && !b.exit_flush_set) {
        // Without the key nothing would flush the batch at this thread's exit: pushed alone.
        if (pthread_setspecific(batch_key, &b) != 0)
            return push_remote(owner->remote[b.size_class], object,
                               [&](FreeObject* head) { check_not_list_head(head, p, page); });
        b.exit_flush_set = true;
    }
    object->next = b.head;
    if (!b.head) b.tail = object;
    b.head = object;
    if (++b.objects == remote_batch_objects) flush(b);
}

// big_alloc with the hook (Profiled) or without it, one source: their common
// case, a block of a table's class off the heap's list, inlined, a leaf (a
// page class's block ends in a tail call), reads a different TLS word
// (alloc_heap, this_thread_heap) and is otherwise the same instructions but
// for register choice and order (29 before the page classes). While sampling, such a block is counted
// and popped here, as in the small entries, with the class the failed pop
// found (through big_block_hooked it was found again after a jump, and
// big_block_hooked and big_alloc held 32% of arrays' byte-sampled time: perf,
// Zen 4 guest). Everything else goes to a function of its own.
// Sited: big_alloc's, after its count site (pool.hpp, managed_alloc_heap):
// it pops from alloc_heap, and counts nothing the site counted.
template <bool Profiled, bool Sited = false>
[[gnu::always_inline]] inline void* big_alloc_as(size_t size, const TypeInfo* type) {
    if constexpr (Profiled && hook_floor != HookFloor::none)
        if (hook_floor_reached(size)) return big_past_hook_floor(size, type);
    // Expected: without the hint, big_alloc (hooked) laid its common case out
    // of line, a taken branch after its count site that big_alloc_untracked
    // does not take (objdump). Arrays' hook off / compiled out, the mean over
    // 4 layouts: 1.018-1.022 in three sweeps without it, 1.009 and 1.011 with
    // it, against 1.011-1.012 for the build before the headers were reused
    // (three sweeps the same hour, Intel Xeon guest: README).
    if (__builtin_expect(in_big_table(size), 1)) {
        const unsigned c = big_class_of_table(size);
        Heap* h = Profiled ? hook_word(Sited ? alloc_heap : managed_alloc_heap) : this_thread_heap;
        if (void* p = pop_class_block(h, size, c)) return p;
        if constexpr (!Profiled) return big_block_any(size, big_alloc_alignment);
        // The site counted it (an armed thread's list is its heap's), or the profiler is stopped.
        if (Sited && h != &no_heap) return big_block_any(size, big_alloc_alignment);
        const uint64_t state = hook_word(hook_state);
        bool sample;
        if (__builtin_expect(state == hook_bytes, 1))
            sample = !(Sited && sites_count_in(hook_bytes)) && counted_out(size);
        else if (state == hook_allocations)
            sample = !(Sited && sites_count_in(hook_allocations)) && counted_out(1);
        else return big_block_hooked(size, big_alloc_alignment, type);  // stopped, or poked
        if (sample) return big_block_sampled(size, big_alloc_alignment, type);
        if (void* p = pop_class_block(this_thread_heap, size, c)) return p;
        return big_block_any(size, big_alloc_alignment);
    }
    if constexpr (Profiled) {
        // As big_alloc_past_count_site: counted by the site, or both stopped.
        if (Sited && sites_count_in(hook_word(hook_state))) return big_block_any(size, big_alloc_alignment);
        return big_block_hooked(size, big_alloc_alignment, type);
    }
    return big_block_any(size, big_alloc_alignment);
}

// Out of line, so that it is a leaf (inlined into big_alloc after its hook,
// the hook came after the pushes of a frame of its own: arrays hook off /
// compiled out 1.045 where it reads 1.001).
[[gnu::noinline]] void* big_alloc_untracked(size_t size) { return big_alloc_as<false>(size, &unknown_type); }

namespace {

// A free of a block with header: a second free finds no header (unless the
// block was handed out again meanwhile).
void unmark(BigHeader* header) { header->magic = 0; }

// Frees what free_with_header does not on its own: sampled, huge and irregular blocks.
[[gnu::noinline]] void big_free_any(void* p, BigHeader* header) {
    if (header->sampled) record_free_slow(p, header->note);
    unmark(header);
    if (header->size_class == BigHeader::huge) {
        munmap(header->base, huge_mapping_bytes(header->size, header->alignment()));
        return;
    }
    if (header->irregular) {  // its slot goes on its list with a header at big_alloc's placement
        const BigHeader apart = *header;
        header = place(apart.base, big_alloc_alignment, apart.size_class).header;
        *header = whole_header(apart.base, 0, big_alloc_alignment, apart.owner, apart.size_class);
        unmark(header);
    }
    free_big_slot(*header);
}

// Frees big or managed block p, whose header big_header found. An unsampled
// block of a class makes no call but release_excess's past the threshold, a
// tail call, so the function it is inlined into saves no registers (it saved
// two, as the call to record_free_slow came back to it).
[[gnu::always_inline]] inline void free_with_header(void* p, BigHeader* header) {
    if constexpr (pool_checked) forget_big_block(p, "double free");
    if (header->frees_apart()) return big_free_any(p, header);
    unmark(header);
    free_big_slot(*header);
}

}  // namespace

void big_or_managed_free(void* p) { free_with_header(p, big_header(p, "invalid free")); }

bool in_big_region(const void* p) { return reinterpret_cast<uintptr_t>(p) - big_region.base < big_region.size; }

}  // namespace detail

BENCHFP_LAYOUT_SHIFT_HERE(layout_shift_before_entry_points)
// The small entries start a cache line each (as glibc aligns its string
// functions): their fast path, 12 instructions, then lies in one 64-byte line
// wherever the code around them moves (the hooked ones' in that line and 5
// bytes of the next, after their count site's 15), and the hooked and
// unhooked entries' fast paths differ only in the site and in the TLS word
// they load (alloc_heap, this_thread_heap); the hooked entries' empty-list
// branch, out of that line, holds the sampling path for sites that cannot be
// rewritten (with no cross-jumping, CMakeLists.txt: one pop per sampling mode,
// pool_alloc_inner). Each hooked entry's count site comes first (count_site.hpp:
// noinline and noclone, so that it is the only copy); its branch goes to
// small_counted_out, which sends the allocation to alloc_sampled, the path of
// the allocations the profiler records, once it sees the count below zero.
[[gnu::aligned(64), gnu::noinline, gnu::noclone]] void* pool_alloc(size_t size) {
    BENCHFP_COUNT_SITE(pool_alloc, sampled);
    return pool_alloc_inner<true>(size, &unknown_type);
sampled:
    return detail::small_counted_out(size, &unknown_type);
}
[[gnu::aligned(64)]] void* pool_alloc_unprofiled(size_t size) { return pool_alloc_inner<false>(size, &unknown_type); }
[[gnu::aligned(64), gnu::noinline, gnu::noclone]] void* alloc(size_t size, const TypeInfo* type) {
    BENCHFP_COUNT_SITE(static_cast<void* (*)(size_t, const TypeInfo*)>(alloc), sampled);
    return pool_alloc_inner<true>(size, type);
sampled:
    return detail::small_counted_out(size, type);
}
void* detail::alloc_sampled(size_t size, const TypeInfo* type) {
    return record_slow(pool_alloc_inner<false>(size, type), size, type);
}
// A site's branch was taken on flags of an earlier count where the count is
// not below zero now (count_site.hpp: a thread interrupted after a count while
// its site was rewritten, perhaps across sessions): the entry's own path, as
// unsampled.
void* detail::small_counted_out(size_t size, const TypeInfo* type) {
    if (hook_word(sample_countdown) >= 0) return pool_alloc_inner<true>(size, type);
    return alloc_sampled(size, type);
}
[[gnu::aligned(64)]] void* alloc_unprofiled(size_t size, const TypeInfo* type) {
    return pool_alloc_inner<false>(size, type);
}

// The hook is a count site and where the common case pops, as in the small
// entries (pool.hpp: alloc_heap): this entry and big_alloc_untracked are one
// source (big_alloc_as).
// (Before, the hook was a compare of hook_state and a branch before a tail
// call of big_alloc_untracked: 3 instructions, and on the Zen 5 guest arrays'
// hook off / compiled out read 1.028 as the mean over 4 code layouts, up to
// 1.049. Before that, with the hook after the allocation, the entry kept size
// and type alive across a call, in a frame of its own.)
[[gnu::aligned(16), gnu::noinline, gnu::noclone]] void* big_alloc(size_t size, const TypeInfo* type) {
    BENCHFP_COUNT_SITE(static_cast<void* (*)(size_t, const TypeInfo*)>(big_alloc), sampled);
    return detail::big_alloc_as<true, true>(size, type);
sampled:
    if (detail::hook_word(detail::sample_countdown) >= 0) return detail::big_alloc_as<true, true>(size, type);  // as small_counted_out
    return detail::big_block_sampled(size, detail::big_alloc_alignment, type);
}
// The count sites count in the state's unit, and counted this one (it was not
// sampled: the site's branch goes to small_counted_out); or both are stopped.
// Otherwise (the sites off, or the thread poked) big_alloc's hook decides.
void* detail::big_alloc_past_count_site(size_t size, const TypeInfo* type) {
    if (sites_count_in(hook_word(hook_state))) return big_alloc_untracked(size);
    return big_alloc(size, type);
}
#if BENCHFP_HOOK_FLOOR
// count's word starts again where the re-entered entry, which subtracts `size`
// once more, leaves it at its start (unsigned: wraps for any size, where the
// start alone sent an allocation of 2^63 bytes and more round for ever). The
// store is written out in each stub: a helper of their own, inlined into both,
// stayed in the hot code as a copy under -fno-toplevel-reorder, 9 bytes longer
// in count's build than in pad's, and moved everything after it.
void* detail::small_past_hook_floor(size_t size, const TypeInfo* type) {
    hook_floor_word = hook_floor_start + (hook_floor == HookFloor::count ? size : 0);
    return alloc(size, type);
}
void* detail::big_past_hook_floor(size_t size, const TypeInfo* type) {
    hook_floor_word = hook_floor_start + (hook_floor == HookFloor::count ? size : 0);
    return big_alloc(size, type);
}
#endif
void* detail::big_block_sampled(size_t size, size_t alignment, const TypeInfo* type) {
    return record_slow(big_block(size, alignment), size, type);
}

namespace {

// Managed blocks with the hook (Profiled) or without it (the benchmarks' baseline).
template <bool Profiled>
void* managed_alloc_as(size_t size, size_t alignment, const TypeInfo* type) {
    if (alignment == detail::big_alloc_alignment) return detail::big_alloc_as<Profiled>(size, type);  // big_alloc's
    if constexpr (Profiled) return detail::big_block_hooked(size, alignment, type);
    return detail::big_block_any(size, alignment);
}

template <bool Profiled>
void* managed_realloc_as(void* p, size_t new_size, const TypeInfo* type) {
    if (!p) return managed_alloc_as<Profiled>(new_size, 64, type);
    detail::BigHeader* old = detail::big_header(p, "invalid managed_realloc");
    void* q = managed_alloc_as<Profiled>(new_size, old->alignment(), type);
    std::memcpy(q, p, std::min(old->size, new_size));
    detail::free_with_header(p, old);  // not free(p): it would find and check the same header again
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
            detail::heaps_adopted.load(), detail::big_next.load() + detail::page_classes_next.load(), detail::released_bytes.load(),
            detail::released_pages.load()};
}

size_t trim(size_t keep_bytes) {
    detail::flush_remote_frees();
    return detail::trim_heap(detail::this_thread_heap, keep_bytes);
}

ReleaseBytesSetting release_bytes_from_environment() {
    const char* text = std::getenv("BENCHFP_POOL_RELEASE_BYTES");
    if (!text) return {};
    // Decimal digits only: strtoull alone takes a sign (-1 wraps to 2^64 - 1),
    // leading blanks, and caps an overflow at its maximum. No leading 0, as
    // benchfp's whole-number options: 010 is not read as 10 where a reader
    // could take it for octal.
    const std::string_view digits(text);
    errno = 0;
    const unsigned long long bytes = std::strtoull(text, nullptr, 10);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string_view::npos || errno == ERANGE ||
        (digits.size() > 1 && digits[0] == '0') || bytes > std::numeric_limits<size_t>::max())
        return {std::nullopt, "BENCHFP_POOL_RELEASE_BYTES='" + std::string(digits) +
                                  "' is not a byte count (decimal digits, no leading 0, at most 2^64 - 1)"};
    return {static_cast<size_t>(bytes), ""};
}

void set_big_release_threshold(size_t bytes) {
    detail::ensure_arena();  // first: the arena's creation reads BENCHFP_POOL_RELEASE_BYTES, which this overrides
    detail::release_threshold.store(bytes, std::memory_order_relaxed);
}
size_t big_release_threshold() {
    detail::ensure_arena();
    return detail::release_threshold.load(std::memory_order_relaxed);
}

}  // namespace benchfp::alloc
