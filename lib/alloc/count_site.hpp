#pragma once
// Count sites: the first 15 bytes of a function, one 15-byte nop while
// nothing is counted, which set_count_sites() rewrites in every site at once
// into a count of a thread-local word and a branch on its sign:
//   bytes        sub %rdi, %fs:word; js sampled   (the first argument, a size)
//   allocations  decq %fs:word;      js sampled
// `sampled` is a label of the function (GCC's `asm goto`, as the Linux
// kernel's static keys). The pool's hooked entries start with one each
// (pool.cpp: pool_alloc, alloc, big_alloc): while the profiler samples, they
// count their sample gap as tcmalloc's fast path does, and while it is stopped
// they run one nop (profiler.cpp, start and stop). A site only counts and
// branches: what the function does after it and at `sampled` must be right
// whichever way the site reads, as other threads may run it while it changes.
// One nop, not two (9 and 6 bytes, as the sites were until 2026-12-07): each
// takes an issue slot per allocation, and on the Intel Xeon (Ice Lake) guest
// hook off / compiled out read, as the mean over 4 code layouts, arrays 1.020
// and binary_trees 1.024 with two, 1.001-1.003 and 1.002 with one (two
// sweeps each; paired processes of both, binary_trees 1.030 and 1.006: README).
//
// How a site changes while other threads may run it: its 15 bytes lie in one
// aligned 16-byte block, replaced by one `lock cmpxchg16b`; the page is made
// writable (read, write and execute) around the store; then membarrier's
// SYNC_CORE command serializes every core that runs a thread of this process
// before set_count_sites returns, and a probe site of this library's must
// count as written. What another core fetches between the store and that
// serialization x86 does not promise architecturally (the kernel patches its
// own text through an int3 for that reason): this relies, as HotSpot's
// patching of call sites does, on a fetch seeing a naturally aligned block's
// old bytes or its new ones. A thread interrupted within a site resumes at the
// same offset in whatever form the site holds then. Every form has its
// instruction boundaries at bytes 0, 9 and 15 only: a count's two instructions
// are 9 and 6 bytes, and the nop, one instruction from byte 0, reads as one from
// byte 9 too, `test %al, -0xf(%rip)` (a read of the site's own first byte that
// sets only the flags the site clobbers), its SIB byte and displacement chosen
// so (tests/alloc_profiler_test.cpp decodes every form from every offset any
// form reaches). So a thread stops within a site only at byte 9, after a
// count. Resumed in the nop, it leaves the branch out: a sample due then is
// not taken (stop() has stopped the threads first; set_count_sites' undoing of
// a failed rewrite loses at most that one). Resumed in a count, its branch
// reads the flags of a count of the same word, perhaps of an earlier session
// (only the owner thread writes the word, or a signal handler of its that
// allocates meanwhile), so the label's code checks the count before it
// records anything (the pool's: not below zero, nothing is due).
// Where a site cannot be rewritten (no membarrier; an mprotect refused; a
// site that is not its function's first instruction, as in the sanitizers'
// builds, an unoptimized one or one with -fcf-protection's endbr64; a site
// not in one aligned 16-byte block; a rewritten site that does not run as
// written, as under valgrind unless it checks file-backed code for changes,
// --smc-check=all) set_count_sites says why, and the sites stay (or go back
// to) their nop: their functions count on their unpatched path. Should a rewrite
// fail half-way and its undoing fail too, some sites count while
// count_sites_unit() says off (the pool would then count those allocations
// twice); both need an mprotect or membarrier to fail after it succeeded.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace benchfp::alloc::detail {

enum class CountUnit : uint8_t { off = 0, bytes = 1, allocations = 2 };

// One site as its asm records it (section benchfp_count_sites).
struct CountSite {
    uintptr_t site, sampled, function;
};

// The site, the first statement of `function` (its nop: data16 x 6, nopw
// -0xf(%rbp,%rax,1), as count_site.cpp writes it back), whose label `sampled` the
// count's branch goes to. The asm clobbers the flags and the counted word.
// `function` must be noinline and noclone: a copy of the site inlined into
// another function is refused (not its function's first instruction).
#define BENCHFP_COUNT_SITE(function, sampled_label)                                                  \
    asm goto("1: .byte 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x0f, 0x1f, 0x84, 0x05\n\t"         \
             ".byte 0xf1, 0xff, 0xff, 0xff\n\t"                                                      \
             ".pushsection benchfp_count_sites, \"aw\"\n\t"                                          \
             ".balign 8\n\t"                                                                         \
             ".quad 1b, %l[" #sampled_label "], %c0\n\t"                                             \
             ".popsection"                                                                           \
             :                                                                                       \
             : "i"(function)                                                                         \
             : "cc", "memory"                                                                        \
             : sampled_label)

// Rewrites every site to count in `unit` (off: the nop) the thread-local word
// at `word` (the calling thread's instance of it; a local-exec word, at the
// same offset from every thread's %fs), then runs a site of its own to see
// that they count as written (the calling thread's word is put back). Returns
// false, with every site back to its nop as far as it can, where the sites
// cannot be rewritten (why: count_sites_problem()); never throws. Serialized
// by a mutex of its own.
bool set_count_sites(CountUnit unit, int64_t* word);
// What every site counts now (off after a refusal).
CountUnit count_sites_unit();
// Why the last set_count_sites was refused, or empty.
std::string count_sites_problem();
// The sites this program holds, in their section's order (tests: at least
// the pool's hooked small entries).
std::span<const CountSite> count_sites();
// Tests only: false makes set_count_sites refuse (saying so) and keeps every
// site off, so that the unpatched paths are tested as well.
void allow_count_sites(bool allowed);

}  // namespace benchfp::alloc::detail
