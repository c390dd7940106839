#pragma once
// benchfp's pool allocator: size-class pools of 16 KiB pages, one heap per
// thread, explicit free. The fast path is here, inline: a size compare, a
// table lookup and a free-list pop; the profiler hook is a count site at the
// hooked entries' start (stopped: one nop; sampling: a count of the sample
// gap and a branch, see sample_countdown) and in where the pop looks (see
// alloc_heap). Everything slow is out of line in pool.cpp.
//
// The entry points follow Julia's (see the profiler seed):
//   pool_alloc(size)         exported entry of "generated code": records with an unknown type
//   alloc(size, type)        typed entry: records with the type
//   alloc_typed<T>()
//   big_alloc(size, type)    above the largest class
//   managed_alloc(...)       growable arrays: aligned, with managed_realloc
// Every allocation is recorded exactly once, whichever path it takes. Each
// entry has the hook inside it, in the same function, tested before it
// allocates (an empty list of alloc_heap, see there; then hook_state), so
// that the entry tail-calls the unprofiled path. A
// hook after the allocation (Julia's shape: an inline wrapper around an
// untracked call, or the hook after big_block) kept the size and type alive
// across the call and turned the caller's tail call into a frame of its own,
// 10-12 instructions where the hook is 2; typed workloads paid 5-20% for it
// while stopped.
//
// Big and managed blocks (pool.cpp) carry a 64 B header (size, alignment,
// class, owner heap, the profiler's sampled flag and note, and whether its
// free takes the slow path: huge, or allocated at an alignment above 64 B; a
// block off its class's free list reuses the header its last free left) and have a path of
// their own, as mimalloc's and tcmalloc's large classes:
//   - up to 1 MiB of payload, 57 classes of 4 per doubling (size_classes.hpp:
//     waste < 25% of the request), carved from a second NORESERVE reservation
//     kept apart from the arena, so in_arena() and page_of() never see one;
//     each heap has a free list per class, so the common alloc and free are a
//     list pop and push; a free by another thread goes on the owner's remote
//     list (an atomic stack, as for small objects, but one block at a time),
//     taken back when empty;
//   - the header right before the pointer, and a free block's link at its
//     slot's start, but in the page classes (payloads of whole OS pages: 4, 8,
//     12, 16 KiB and every class from 20 KiB), whose blocks are page-aligned,
//     their slots their payloads, their headers and links in a table of their
//     own, one 64-byte entry per OS page of their half of the reservation;
//   - above that, a mapping of its own, unmapped when freed;
//   - memory back to the OS: when a heap's free big blocks of 8 KiB and more
//     hold more than big_release_threshold() bytes (default 4 MiB,
//     BENCHFP_POOL_RELEASE_BYTES, set_big_release_threshold), the bodies of
//     free blocks, largest class first, are given back with
//     madvise(MADV_DONTNEED) down to half of it; the blocks stay on a list of
//     their own, reused (faulting in zero pages) after the resident ones.
//     Smaller big blocks (share OS pages with their neighbours, or are one
//     page, the 4 KiB class) and, like the small classes' pages, stay resident.
//
// Misuse (mimalloc's debug and secure modes, glibc's malloc checks): a misuse
// found aborts with a message naming the pointer, its page and its class, e.g.
//   benchfp pool: double free of 0x7f.. (page 0x7f.., class 48 B)
// Normal build: checked where it costs the fast paths nothing, on the slow paths:
//   - a free whose page was never handed out (its owner is null);
//   - an interior pointer or a double free that reaches free_slow, a free by
//     another thread (not the start of an object of the page's class; the
//     block already the newest of the batch it goes to, or, when the batch is
//     pushed, at the head of the owner's remote list: free_slow);
//   - a free, usable_size or managed_realloc of a pointer outside the arena that
//     is not a big or managed block (no block header), and a big or managed
//     block freed twice (its header is wiped when it is freed and stays so
//     until the block is handed out again; a block above 1 MiB is unmapped, so
//     its second free faults instead).
//   Not detected: a double free or an interior pointer freed by the owning
//   thread on the fast path (the free list is corrupted: overlapping objects).
// Checked build (-DBENCHFP_POOL_CHECKED=ON, used by scripts/test.sh's sanitizer
// builds): every free is validated before the fast path (pool_check.cpp):
//   - double free of a pool object, from any thread: each page header holds a
//     bit per object, set while the object is handed out (atomically: remote
//     frees clear bits of pages other threads allocate from);
//   - interior pointers, pointers into a page header or a page never handed out;
//   - big and managed blocks: double frees and pointers not from the pool,
//     exactly (a registry of live blocks, consulted before any header is read).
//   A block freed and allocated again in between is a live block: its second
//   free is valid, as in every allocator without quarantine. The cost per
//   allocation+free is measured by scripts/pool_checked_instructions.sh.
#include "alloc/count_site.hpp"
#include "alloc/size_classes.hpp"

#ifndef BENCHFP_INJECT_ALLOC_SLOWDOWN
#define BENCHFP_INJECT_ALLOC_SLOWDOWN 0
#endif
#ifndef BENCHFP_HOOK_FLOOR
#define BENCHFP_HOOK_FLOOR 0  // none; see hook_floor
#endif
#include "alloc/type_info.hpp"

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace benchfp::alloc {

// Whether the profiler is recording (profiler.hpp starts and stops it). Only
// slow paths read it: the hot paths see the profiler through alloc_heap and
// hook_state below.
extern bool profiler_enabled;

inline bool profiler_on() { return __atomic_load_n(&profiler_enabled, __ATOMIC_ACQUIRE); }

namespace detail {

struct FreeObject {
    FreeObject* next;
};

// Where a class carves new objects (or blocks) from: the unused tail of its
// current page (or chunk).
struct BumpArea {
    char* next = nullptr;
    char* end = nullptr;
};

// A big class's lists: free blocks with their bodies resident (free, counted
// in Heap::big_cached_bytes) and free blocks whose bodies were given back to
// the OS. A free block's link is the first word of its slot, before its header
// (a page class's: the last word of its slot's header entry, pool.cpp).
struct BigClassState {
    FreeObject* free = nullptr;
    FreeObject* released = nullptr;
    BumpArea bump;
};

struct alignas(64) Heap {
    // Each small class's free list: objects freed by the owner thread, or taken
    // back from remote frees. The heads alone, 8 bytes apart, so the fast paths
    // reach a class's head with one scaled index (with the bump area beside it,
    // 24 bytes apart, each took two more instructions), and the heads of
    // neighbouring classes share cache lines.
    FreeObject* free[class_count] = {};
    BumpArea bump[class_count];
    std::atomic<FreeObject*> remote[class_count];  // frees from other threads (multi-producer stack)
    BigClassState big[big_class_count];
    std::atomic<FreeObject*> big_remote[big_class_count];
    size_t big_cached_bytes = 0;                   // slot bytes on the releasable big classes' free lists
    std::vector<char*> released_pages;             // pages trim() gave back to the OS, reused first by new pages
    Heap* next_orphan = nullptr;                   // on the hand-over list once its thread exited
};

// The most objects a page holds (of the smallest class).
inline constexpr size_t max_objects_per_page = (page_size - page_header_size) / class_sizes[0];

struct PageHeader {
    // Its heap's address, set before the page's first object is handed out; 0
    // once trim() released the page. A word, which the free fast path compares
    // with this thread's heap (a sampled pool object is never on a page: see
    // sampled_block, so the free path needs no profiler check of its own).
    uintptr_t owner_word;
    uint32_t size_class;
    uint32_t trim_mark;  // trim()'s count of the page's free objects, or its verdict; nothing else reads it
#if BENCHFP_POOL_CHECKED
    // Checked build: bit i is set while object i is handed out (pool_check.cpp).
    std::atomic<uint64_t> handed_out[(max_objects_per_page + 63) / 64];
#endif

    Heap* owner() const { return reinterpret_cast<Heap*>(owner_word); }
};
static_assert(sizeof(PageHeader) <= page_header_size);

// Where class c's first object starts in each of its pages. Slab colouring:
// each class starts its objects at one of 8 64-byte lines after the header,
// its colour, so that the first objects of classes used together do not share
// an address modulo 4 KiB:
//   - neighbouring classes (a string growing by a few bytes is copied from one
//     to the next): sharing, the copy stalls on 4K aliasing (2x slower on the
//     strings workload before pages had colours);
//   - the classes of power-of-two sizes (32, 64, ..., 1024 B), which c % 8
//     gave one colour from 128 B up: the arrays workload's first objects then
//     lay in two L1 sets beside every page header's one, and on the Zen 4
//     guest (2026-12-06) byte-sampled / hook off read 1.14-1.27 in most
//     repetitions and 1.33-2.97 in 15 of 66 (off itself 63-124 ns an
//     iteration); with these colours 1.14-1.28 in all 72.
// The hash c + 5 (c / 8) + c / 16 (mod 8) gives those six classes six colours
// and every two neighbouring classes different ones. A colour costs a page at
// most 1/32 of the objects it holds at colour 0 (a larger one is lowered until
// it does: 2032 B pages hold 8, not 7), which leaves two neighbouring pairs
// sharing one (640-848 B; with the checked build's larger header, 592/640).
// A table, built once: the slow paths that find an object's start (remote
// frees, the checked build's every free) look it up, no loop.
constexpr size_t objects_at_colour(unsigned c, unsigned colour) {
    return (page_size - page_header_size - colour * 64) / class_sizes[c];
}
constexpr unsigned class_colour(unsigned c) {
    unsigned colour = (c + 5 * (c >> 3) + (c >> 4)) & 7;
    const size_t most = objects_at_colour(c, 0);
    while (colour > 0 && (most - objects_at_colour(c, colour)) * 32 > most) --colour;
    return colour;
}
inline constexpr auto first_object_offsets = [] {
    std::array<uint16_t, class_count> offsets{};
    for (unsigned c = 0; c < class_count; ++c) offsets[c] = static_cast<uint16_t>(page_header_size + class_colour(c) * 64);
    return offsets;
}();
inline size_t first_object_offset(unsigned c) { return first_object_offsets[c]; }
static_assert([] {
    unsigned seen = 0;  // the colours of the power-of-two sizes' classes, one bit each
    for (size_t size = 32; size <= 1024; size *= 2) {
        const unsigned bit = 1u << class_colour(size_class_of(size));
        if (seen & bit) return false;
        seen |= bit;
    }
    return true;
}(), "the classes of 32, 64, ..., 1024 B share a colour");

// The hook's state, per thread. The small entries' fast path pops from the
// free lists of alloc_heap: while the profiler is stopped, alloc_heap is this
// thread's heap, and the hook costs one nop (the entry's count site,
// count_site.hpp) and no store, no branch and no load of its own: the entry
// reads the heap's address from one TLS word where, compiled out, it reads
// this_thread_heap (the design of the allocation-profiler seed: a stopped
// profiler costs the hot path nothing).
// While it samples, the entries' count sites (pool_alloc, alloc, big_alloc:
// pool.cpp) count the sample gap, sub %rdi, %fs:sample_countdown (or decq) and
// a branch to record_slow's path, tcmalloc's shape, and an armed thread's
// alloc_heap is its heap again (arm in profiler.cpp): +2.08 instructions per
// allocation at 512 KiB, against +9.08 for the path below, and on the Zen 4
// guest byte-sampled / hook off, as the mean over 4 code layouts x 3
// processes in two sweeps (scripts/hook_time_over_layouts.sh), structs
// 1.013-1.014, binary_trees 1.003-1.004, strings 1.006-1.009, small_churn
// 1.039, where that path read 1.13, 1.10, 1.02 and 1.14 (2026-12-06). Of
// small_churn's, the count alone is 1.026-1.029 (the gate's counting / hook
// off, bench/alloc_gate.cpp, in two quick gates of 2026-12-07: README). (A
// jump from a 5-byte site to a copy of the fast path with the count inline
// read structs 1.082 and binary_trees 1.061.)
// Where the sites cannot be rewritten (count_site.hpp says where), alloc_heap
// is no_heap while the profiler samples, whose lists are always empty: every
// small allocation finds its list empty, and the entry's branch for that (out
// of its hot path) counts the allocation down and pops from this_thread_heap.
// (The hook used to be a compare of the size with a per-thread
// limit, where the entry compares with the largest small size anyway: no
// instruction either, but one load more, and small_churn measured 1.016-1.019
// hook off / compiled out over 4 code layouts, against 0.992-0.998 without it.
// The limit cost sampling +9.1 instructions per allocation and this design
// +11.07 until the unit below became a state; it is +9.06 now.)
// Only the owner thread points alloc_heap at its heap (alloc_small_not_counting in
// pool.cpp, and arm); start() and poke() point it at no_heap (turn_on in
// profiler.cpp), and arm() where the sites do not count in its unit (a store
// only where the word changes); stop() leaves it to the owner.
//
// The big entry's common case (a block of up to 64 KiB at the default
// alignment off its class's list) pops from alloc_heap the same way, the
// managed entries' from managed_alloc_heap.
// hook_state says what the entries do once the list they popped from is empty:
//   hook_stopped       the profiler is stopped (alloc_small_not_counting);
//   hook_bytes         byte sampling: count the allocation's bytes down, an
//                      exponential gap drawn per sample (tcmalloc's and Go's sampler);
//   hook_allocations   probability sampling: count the allocation down, a
//                      geometric gap drawn per sample, and recording every
//                      allocation (gap 0);
//   hook_poked         start() ran (or this thread is new): the next allocation
//                      calls record_slow, which arms the count for the session.
// sample_countdown is what may still pass before the next call into the
// profiler, in the state's unit. Byte sampling through the empty lists (count
// sites off): a load and compare of the state, one read-modify-write of the
// count and one not-taken branch per allocation, and record_slow only when
// the count goes negative; +9.06 instructions per allocation in all
// (scripts/alloc_hook_instructions.sh, 2026-12-06). (The unit was a word of its own, read beside the state, with
// start()'s poke a step larger than any count: a load, a test and a
// conditional move more, +11.07 instructions; on the Zen 4 guest, as the mean
// over 4 code layouts (scripts/hook_time_over_layouts.sh), byte-sampled /
// hook off read structs 1.205 and small_churn 1.161 where it reads 1.139 and
// 1.136.)
// start() and stop() set a thread's words from their own thread (profiler.cpp),
// and other threads write only hook_poked and hook_stopped into its state;
// hook_bytes and hook_allocations only the owner (record_slow). So a path that
// reads the state twice (alloc_small_not_counting after the entry,
// big_block_hooked after big_alloc_as) never finds a counting state the second
// time where the first was not one, and nothing is counted twice (but in a
// start() that replaces a running session: profiler.cpp). The hook
// only reads hook_state, and sample_countdown is the owner's alone (start()
// writes no count), so its plain read-modify-write of the count, and the
// count sites', undoes nobody's write. A count site counts whatever the state:
// a poked thread's count is drawn afresh by record_slow, and a stopped one's
// reaches record_slow at most once before stop() turns the sites off
// (stays_stopped sets it out of reach).
[[gnu::tls_model("local-exec")]] constinit extern thread_local Heap* alloc_heap;  // local-exec: see this_thread_heap
// The same for the managed entries (managed_alloc, managed_realloc), which
// have no count site: no_heap while the profiler samples, even where
// alloc_heap, the entries' with a count site (pool_alloc, alloc, big_alloc),
// is this thread's heap (arm).
[[gnu::tls_model("local-exec")]] constinit extern thread_local Heap* managed_alloc_heap;
[[gnu::tls_model("local-exec")]] constinit extern thread_local uint64_t hook_state;
[[gnu::tls_model("local-exec")]] constinit extern thread_local int64_t sample_countdown;
// The hook_state value whose unit the hooked entries' count sites (pool_alloc,
// alloc, big_alloc) count in (hook_bytes or hook_allocations: profiler.cpp,
// start), hook_stopped while they are off. A thread armed in that unit pops
// from its own heap's lists (arm): its count sites count, and
// alloc_small_empty_list does not count again when a list runs empty.
extern uint64_t sites_count_state;
inline constexpr uint64_t hook_stopped = 0, hook_bytes = 1, hook_allocations = 2, hook_poked = 3;

// The arena all pages come from: an address range tells pool objects apart.
extern uintptr_t arena_base;
extern uintptr_t arena_size;
// This thread's heap, or no_heap until its first allocation needs one (and
// again once it exits): a heap whose lists are always empty and that owns no
// page (alloc_heap points at it while the profiler samples), so the fast paths
// need no null test (an empty list sends the
// allocation to a slow path, an owner that is not this heap sends the free to
// free_slow). constinit: no dynamic initialization, so other translation
// units read it directly instead of through a TLS init wrapper.
// Local-exec TLS in every translation unit (one %fs-relative access, where a
// unit that does not define it would first load its offset from the GOT):
// this library is linked statically into executables only.
extern Heap no_heap;
[[gnu::tls_model("local-exec")]] constinit extern thread_local Heap* this_thread_heap;

// The small slow paths take the entries' arguments (size, type) in their
// registers and the class beside them, so that an entry tail-calls them with
// no move; the class as a size_t, as the entries index with it (no extension).
void* alloc_small_slow(size_t size, const TypeInfo* type, size_t size_class);
// Frees what the fast path cannot: frees by other threads than the owner's,
// and misuse. Checks what can be checked there at no cost to the fast path (see above).
// A free by another thread is held back with that thread's others of the same
// owner and class, and the batch goes onto the owner's remote list in one
// push: at 32 objects, before a free for another owner or class, at the
// thread's trim() and at its exit (pool.cpp, RemoteBatch).
void free_slow(PageHeader* page, void* p);
// Pushes this thread's held-back frees of other heaps' objects onto their owner's remote list.
void flush_remote_frees();
// Checked build only (pool_check.cpp): marks a pool object handed out; checks
// that p is the start of a handed-out pool object, or aborts, and marks it free.
void note_handed_out(void* p);
void check_free(void* p);
void* big_alloc_untracked(size_t size);
void big_or_managed_free(void* p);
// Whether p lies in the big blocks' reservation (a block of a big class).
bool in_big_region(const void* p);

// Returns the block to hand out: p, or where a sampled p moved to. The
// allocated size is looked up from p there: the fast path keeps nothing alive
// for the hook but p and the requested size.
[[gnu::cold, gnu::noinline]] void* record_slow(void* p, size_t requested, const TypeInfo* type);
// The profiler's note of a sampled block (profiler.cpp), kept in the block's
// header and handed back at its free: which record of which thread's buffer
// the block is, as of which of that buffer's clear()s. So neither the sample
// nor its free looks anything up (with an address table of the live samples,
// a sample and its free took 646.7 instructions, with the note 487.3: README).
struct SampleNote {
    const void* buffer;
    uint32_t record, generation;
};
// The block the profiler records for a sampled allocation p, with a note of
// its own: a pool object moves to a big block of its heap, of one class for
// every sampled pool object, with its class's usable size (p goes back to its
// free list); a big or managed block is marked in its header. Either way its
// free, and only its, reaches the profiler.
void* sampled_block(void* p);
// The note of a block sampled_block returned, for the profiler to fill in.
SampleNote& sample_note(void* sampled);
// Records the free of sampled block p, whose note that is.
void record_free_slow(void* p, const SampleNote& note);

inline bool in_arena(const void* p) { return reinterpret_cast<uintptr_t>(p) - arena_base < arena_size; }
inline PageHeader* page_of(const void* p) {
    return reinterpret_cast<PageHeader*>(reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{page_size} - 1));
}

// The hook while the profiler samples: counts `step` (the allocation's bytes,
// or 1) down and says whether the count went negative, i.e. whether the
// allocation must reach the profiler (record_slow). A plain read-modify-write,
// under ThreadSanitizer too: only the owner writes the count (record_slow arms
// it; start() pokes hook_state and writes no count: profiler.cpp).
[[gnu::always_inline]] inline bool counted_out(size_t step) {
    // In unsigned arithmetic: an absurd size (2^63 and up, refused later by the
    // allocation itself) wraps instead of overflowing a signed count.
    const auto left = static_cast<int64_t>(reinterpret_cast<uint64_t&>(sample_countdown) -= uint64_t{step});
    return __builtin_expect(left < 0, 0);
}

// This thread's hook words. start() and stop() write them from their own
// thread, so under ThreadSanitizer they are read atomically; elsewhere a plain
// aligned 8-byte read is what x86-64 makes of a relaxed load anyway
// (scripts/alloc_hook_instructions.sh counts it). Plain, a compiler may keep
// one in a register across a loop with no call in it, where a poke would go
// unseen: the entries are out of line (pool.cpp), so every allocation through
// them reads it afresh.
template <typename T>
[[gnu::always_inline]] inline T hook_word(T& word) {
#if defined(__SANITIZE_THREAD__)
    return __atomic_load_n(&word, __ATOMIC_RELAXED);
#else
    return word;
#endif
}

// Whether the count sites count in the unit of `state` (hook_bytes or
// hook_allocations): then an armed thread's site has counted the allocation
// its entry is making, and no path after the site counts it again. With
// state hook_stopped (a thread's stopped state), true where the sites are off
// too: both stopped, nothing counts.
[[gnu::always_inline]] inline bool sites_count_in(uint64_t state) { return hook_word(sites_count_state) == state; }

// The hook of the big and managed blocks that big_alloc_as does not count
// (above 64 KiB, another alignment, or poked: big_block_hooked in pool.cpp),
// before the allocation: whether this allocation of `size` bytes goes to the
// profiler. Its count does not depend on the block, so what follows it is the
// unprofiled path itself, which an entry tail-calls (with the hook after the
// allocation, the entry kept size and type alive across the call, in a frame
// of its own). Branches on the state, where the entries' fall-through paths
// (pool_alloc_inner, big_alloc_as) branch per mode: this path is not theirs.
[[gnu::always_inline]] inline bool must_sample(size_t size) {
    const uint64_t state = hook_word(hook_state);
    if (__builtin_expect(state == hook_stopped, 1)) return false;
    return state == hook_poked || counted_out(state == hook_bytes ? size : 1);
}

// Measurement builds only (-DBENCHFP_HOOK_FLOOR=count, compare or pad, built
// by scripts/hook_time_over_layouts.sh --floor): the hooked small and big
// entries (pool_alloc, alloc, big_alloc, and managed_alloc and managed_realloc
// at the default alignment) run, besides their hook, the cheapest form an exact sampling
// count could take, in the entry itself before the pop (where tcmalloc counts
// its sampler down), with no detour and no state behind it, in every state of
// the profiler; "hook off / compiled out" then reads what it costs there:
//   count    a read-modify-write of a TLS word and a not-taken branch
//            (sub %rdi, %fs:word; js): what any exact count of the bytes or the
//            allocations needs on every allocation while it samples;
//   compare  a load and a not-taken branch, no store (cmp %rdi, %fs:word; jb):
//            what the project's design allows a disabled profiler ("one load
//            and one not-taken branch");
//   pad      the control: the same 15 bytes as 2 nops, no load, no branch, so
//            that count / pad and compare / pad leave out where the longer
//            entries move the hot code (not the 15 bytes' own cost, which a
//            real count would pay too).
// count's word starts at 2^63 - 1 and is reached only by a request of 2^63
// bytes or more (the stubs start it again; the allocation then fails as in the
// normal build); compare's at 2^64 - 1, never reached. So such a build
// allocates and profiles as the normal one. The word is its thread's alone: the plain read-modify-write races with
// nobody, under ThreadSanitizer too. The normal build (none) has none of it:
// the word and the stubs are compiled only for these builds (pool.cpp).
enum class HookFloor { none, count, compare, pad };
static_assert(BENCHFP_HOOK_FLOOR >= 0 && BENCHFP_HOOK_FLOOR <= 3, "BENCHFP_HOOK_FLOOR is 0 to 3 (CMakeLists.txt)");
inline constexpr HookFloor hook_floor = static_cast<HookFloor>(BENCHFP_HOOK_FLOOR);
inline constexpr uint64_t hook_floor_start = hook_floor == HookFloor::count ? uint64_t{INT64_MAX} : UINT64_MAX;
[[gnu::tls_model("local-exec")]] constinit extern thread_local uint64_t hook_floor_word;
[[gnu::always_inline]] inline bool hook_floor_reached(size_t size) {
    if constexpr (hook_floor == HookFloor::count)
        return __builtin_expect(static_cast<int64_t>(hook_floor_word -= size) < 0, 0);
    if constexpr (hook_floor == HookFloor::pad) {
        // nopw 0x0(%rax,%rax,1) with a 32-bit displacement (9 bytes), then with an 8-bit one (6):
        // two instructions, as count's two (the count sites' stopped form is one nop since
        // 2026-12-07; the pad builds' figures before then were taken with these two).
        asm volatile(".byte 0x66, 0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00\n\t"
                     ".byte 0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00");
        return false;
    }
    return __builtin_expect(size > hook_floor_word, 0);
}
// Where the word is reached: it starts again, and the allocation goes on
// through alloc (small) or big_alloc (pool.cpp).
[[gnu::cold, gnu::noinline]] void* small_past_hook_floor(size_t size, const TypeInfo* type);
[[gnu::cold, gnu::noinline]] void* big_past_hook_floor(size_t size, const TypeInfo* type);

// Allocations the profiler records: allocated untracked, then recorded (pool.cpp).
[[gnu::cold, gnu::noinline]] void* alloc_sampled(size_t size, const TypeInfo* type);
// Where the small entries' count sites branch: alloc_sampled, once the count
// is seen below zero (pool.cpp).
[[gnu::cold, gnu::noinline]] void* small_counted_out(size_t size, const TypeInfo* type);
// Where the small entries go while the profiler is stopped and alloc_heap's
// list of the class is empty: the list is, or alloc_heap is not this thread's
// heap yet; and while the hook is poked, to record_slow (pool.cpp).
[[gnu::noinline]] void* alloc_small_not_counting(size_t size, const TypeInfo* type, size_t size_class);
// The big and managed entries' (big_alloc's blocks are aligned to big_alloc_alignment).
inline constexpr size_t big_alloc_alignment = 64;
[[gnu::cold, gnu::noinline]] void* big_block_sampled(size_t size, size_t alignment, const TypeInfo* type);

}  // namespace detail

// The head of heap h's list of class c, popped, or null when the list is empty.
// No prefetch of the new head (tcmalloc's SLL_Pop prefetches it): tried on the
// Zen 4 guest (2026-12-06), 3 processes of each build in turn, best peer time
// over the pool's (above 1: the pool faster) read small_churn 1.21-1.23 without,
// 1.16-1.18 with; binary_trees 1.40-1.48, 1.31-1.38; structs 1.57-1.63,
// 1.69-1.73: two of the three slower, structs faster.
[[gnu::always_inline]] inline void* pop_object(detail::Heap* h, size_t c) {
    detail::FreeObject* head = h->free[c];
    if (__builtin_expect(head == nullptr, 0)) return nullptr;
    h->free[c] = head->next;
    if constexpr (pool_checked) detail::note_handed_out(head);  // the slow paths note their own
    return head;
}

// Above the largest small size (its hook: a count site, alloc_heap, then hook_state; pool.cpp).
void* big_alloc(size_t size, const TypeInfo* type = &unknown_type);
namespace detail {
// A hooked small entry's allocation above the largest small size: big_alloc,
// or, where the entry's count site counted it already, big_alloc_untracked.
[[gnu::noinline]] void* big_alloc_past_count_site(size_t size, const TypeInfo* type);
}  // namespace detail

// Where a hooked small entry goes when its list (of alloc_heap, h) is empty:
// always while the profiler samples with the count sites off. Byte sampling,
// the default, is the path that falls through, with a taken branch only to get
// here; probability sampling, one more. Each has a
// pop of its own, and the entries in pool.cpp are compiled without
// cross-jumping, which merged them again: a jump back to one shared pop took
// two taken branches more: structs' probability sampling / hook off read
// 1.24-1.39 with it, against 1.18-1.30 for the build before this state (16
// repetitions each, Zen 4).
// With the count sites on, an armed thread's list is of its heap, and a list
// that runs empty goes to alloc_small_slow uncounted (the site counted it);
// at no_heap's the count is the state's unless the sites count in its unit
// (a window of start(), or the heap handed over at the thread's exit).
[[gnu::always_inline]] inline void* alloc_small_empty_list(detail::Heap* h, size_t size, const TypeInfo* type,
                                                           size_t c) {
    using namespace detail;
    if (h != &no_heap) return alloc_small_slow(size, type, c);
    const uint64_t state = hook_word(hook_state);
    if (__builtin_expect(state == hook_bytes, 1)) {
        if (!sites_count_in(hook_bytes) && counted_out(size)) return alloc_sampled(size, type);
    } else if (state == hook_allocations) {
        if (!sites_count_in(hook_allocations) && counted_out(1)) return alloc_sampled(size, type);
        if (void* p = pop_object(this_thread_heap, c)) return p;
        return alloc_small_slow(size, type, c);
    } else {
        return alloc_small_not_counting(size, type, c);  // stopped, or poked
    }
    if (void* p = pop_object(this_thread_heap, c)) return p;
    return alloc_small_slow(size, type, c);
}

// The one inline fast path. Profiled = false compiles the hook out, so a
// benchmark can set both builds side by side in one binary.
template <bool Profiled = true>
inline void* pool_alloc_inner(size_t size, const TypeInfo* type) {
    using namespace detail;
#if BENCHFP_INJECT_ALLOC_SLOWDOWN > 0
    // Only in builds configured to test the regression gate (see CMakeLists.txt).
    for (int step = 0; step < BENCHFP_INJECT_ALLOC_SLOWDOWN; ++step) asm volatile("");
#endif
    // The hook is in where the pop looks: alloc_heap is this thread's heap
    // while the profiler is stopped, no_heap (its lists always empty) while it
    // samples (see there). Slow paths are tail calls, and nothing (the type) is
    // kept alive for after the allocation.
    if (__builtin_expect(size > max_small_size, 0)) {
        if constexpr (Profiled) return big_alloc_past_count_site(size, type);
        return big_alloc_untracked(size);
    }
    if constexpr (Profiled && hook_floor != HookFloor::none)
        if (hook_floor_reached(size)) return small_past_hook_floor(size, type);
    const size_t c = size_class_of(size);
    if constexpr (Profiled) {
        Heap* h = hook_word(alloc_heap);
        if (void* p = pop_object(h, c)) return p;
        return alloc_small_empty_list(h, size, type, c);  // always while the profiler samples unpatched
    }
    if (void* p = pop_object(this_thread_heap, c)) return p;
    return alloc_small_slow(size, type, c);
}

// Exported for generated code: no type is known there.
void* pool_alloc(size_t size);
// The same without the hook compiled in: the benchmarks' baseline. For the
// typed and big paths, alloc_unprofiled and detail::big_alloc_untracked are that.
void* pool_alloc_unprofiled(size_t size);

// Typed allocation: recorded with the type.
void* alloc(size_t size, const TypeInfo* type);
// The same without the hook compiled in: the benchmarks' baseline, with the
// same signature, so a benchmark calls either the same way.
void* alloc_unprofiled(size_t size, const TypeInfo* type);
template <typename T>
T* alloc_typed() {
    return static_cast<T*>(alloc(sizeof(T), &type_of<T>()));
}

void* managed_alloc(size_t size, size_t alignment = 64, const TypeInfo* type = &unknown_type);
// Grows (or shrinks) a managed block, keeping min(old, new) bytes; the old block is freed.
void* managed_realloc(void* p, size_t new_size, const TypeInfo* type = &unknown_type);
// The same two without the hook compiled in: the benchmarks' baseline.
void* managed_alloc_unprofiled(size_t size, size_t alignment = 64);
void* managed_realloc_unprofiled(void* p, size_t new_size);

// Frees any block of this allocator, from any thread. A free from another
// thread goes back to the owning heap through its remote list (small objects
// in batches of up to 32 per thread: free_slow).
inline void free(void* p) {
    using namespace detail;
    if (!p) return;
    if (__builtin_expect(in_arena(p), 1)) {
        if constexpr (pool_checked) check_free(p);
        PageHeader* page = page_of(p);
        Heap* h = this_thread_heap;
        if (__builtin_expect(page->owner_word == reinterpret_cast<uintptr_t>(h), 1)) {
            auto* object = static_cast<FreeObject*>(p);
            object->next = h->free[page->size_class];
            h->free[page->size_class] = object;
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
    size_t big_bytes = 0;      // bytes of the big blocks' reservation carved into blocks
    size_t released_bytes = 0; // bytes of free big-block bodies given back to the OS (madvise), ever
    size_t released_pages = 0; // small-object pages trim() gave back to the OS, ever
};
PoolStats pool_stats();

// The bytes of free big blocks a heap keeps resident before it gives bodies
// back to the OS (pool.cpp says why 4 MiB). BENCHFP_POOL_RELEASE_BYTES sets it
// at start; this, at any time, for every heap (each applies it on its next big free).
void set_big_release_threshold(size_t bytes);
size_t big_release_threshold();
// BENCHFP_POOL_RELEASE_BYTES as the pool reads it when its arena is made: no
// bytes and no problem when unset, else the byte count or why it is not one.
// The pool itself stops with that message (it has no caller to return it to);
// a program that reports bad input as such checks it before its first allocation.
struct ReleaseBytesSetting {
    std::optional<size_t> bytes;
    std::string problem;
};
ReleaseBytesSetting release_bytes_from_environment();

// Gives the calling thread's wholly free small-object pages back to the OS
// (madvise(MADV_DONTNEED)) but for the first `keep_bytes` of them, as glibc's
// malloc_trim and mimalloc's mi_collect do; returns the bytes released. A page
// counts as wholly free when every object it holds is on the heap's free lists
// (frees by other threads are taken back first: those they pushed, not the
// up to 31 a running thread still holds back, free_slow); the page a class is
// carving stays. The calling thread first pushes the frees it holds back of
// other heaps' objects to their owners. Released pages go to the heap's list
// of released pages, where its next new page of any class comes from
// (faulting in zero pages).
// Only here and at thread exit (keep 0: nobody uses the heap until a new thread
// adopts it): the fast paths keep no count of a page's live objects, which a
// release on the page's last free would need (mimalloc's page->used), so a
// running thread's small pages go back only when it asks. Costs one pass over
// the heap's free lists.
size_t trim(size_t keep_bytes = 0);

}  // namespace benchfp::alloc
