#include "alloc/count_site.hpp"

#include "alloc/membarrier.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

// The linker's bounds of the sites' section (every CountSite of the program).
extern "C" const benchfp::alloc::detail::CountSite __start_benchfp_count_sites[] __attribute__((weak));
extern "C" const benchfp::alloc::detail::CountSite __stop_benchfp_count_sites[] __attribute__((weak));

namespace benchfp::alloc::detail {

namespace {

constexpr size_t site_bytes = 15;
using Code = unsigned char[site_bytes];
// One nop of 15 bytes whose last 6, from the count's second instruction, are
// one instruction too, test %al, -0xf(%rip) (count_site.hpp): data16 x 6,
// then nopw -0xf(%rbp,%rax,1).
constexpr Code nop = {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x0f, 0x1f, 0x84, 0x05, 0xf1, 0xff, 0xff, 0xff};

std::mutex sites_mutex;
std::atomic<CountUnit> current{CountUnit::off};
std::atomic<bool> allowed{true};
std::string problem;  // under sites_mutex

const CountSite* sites_begin() { return __start_benchfp_count_sites; }
const CountSite* sites_end() { return __stop_benchfp_count_sites; }

// The 15 bytes of site s counting in `unit` the word at %fs:tls_offset.
void encode(const CountSite& s, CountUnit unit, int32_t tls_offset, Code out) {
    if (unit == CountUnit::off) return void(std::memcpy(out, nop, site_bytes));
    // sub %rdi, %fs:disp32 (64 48 29 3c 25) or decq %fs:disp32 (64 48 ff 0c 25): 9 bytes.
    const unsigned char count[5] = {0x64, 0x48, static_cast<unsigned char>(unit == CountUnit::bytes ? 0x29 : 0xff),
                                    static_cast<unsigned char>(unit == CountUnit::bytes ? 0x3c : 0x0c), 0x25};
    std::memcpy(out, count, 5);
    std::memcpy(out + 5, &tls_offset, 4);
    // js rel32 (0f 88), from the end of the site.
    const auto rel = static_cast<int32_t>(static_cast<intptr_t>(s.sampled - (s.site + site_bytes)));
    out[9] = 0x0f;
    out[10] = 0x88;
    std::memcpy(out + 11, &rel, 4);
}

// Whether site s can be rewritten, or why not.
std::string site_problem(const CountSite& s, int32_t tls_offset) {
    if (s.site != s.function) return "a count site is not its function's first instruction";
    if ((s.site & 15) > 16 - site_bytes) return "a count site is not within one aligned 16-byte block";
    const auto distance = static_cast<intptr_t>(s.sampled - (s.site + site_bytes));
    if (distance != static_cast<int32_t>(distance)) return "a count site's label is out of a 32-bit branch's range";
    for (CountUnit unit : {CountUnit::off, CountUnit::bytes, CountUnit::allocations}) {
        Code code;
        encode(s, unit, tls_offset, code);
        if (std::memcmp(reinterpret_cast<const void*>(s.site), code, site_bytes) == 0) return "";
    }
    return "a count site holds neither its nop nor one of its counts";
}

// A site of the library's own, run before and after every rewrite: whether
// the sites run as written. Under valgrind (whose membarrier succeeds), a
// rewritten site of code valgrind has translated (as the run before
// translates this one) runs on as it was, unless valgrind checks file-backed
// code for changes (--smc-check=all).
[[gnu::noinline, gnu::noclone, gnu::aligned(64)]] int count_site_probe([[maybe_unused]] size_t size) {  // the site reads it: %rdi
    BENCHFP_COUNT_SITE(count_site_probe, sampled);
    asm volatile("" ::: "memory");  // not folded into the label's return
    return 0;
sampled:
    return 1;
}

// Whether the probe's site counts `word` in `unit` as written: from 0, one
// byte (or allocation) takes the count below zero. The word is the caller's
// own, and put back.
bool probe_counts(CountUnit unit, int64_t* word) {
    const int64_t saved = *word;
    *word = 0;
    const int taken = count_site_probe(1);
    const int64_t after = *word;
    *word = saved;
    return unit == CountUnit::off ? taken == 0 && after == 0 : taken == 1 && after == -1;
}

// Registered once: the SYNC_CORE command needs it first.
const std::string& sync_core_problem() {
    static const std::string why = [] {
        if (membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE) == 0) return std::string();
        return std::string("membarrier(REGISTER_PRIVATE_EXPEDITED_SYNC_CORE): ") + std::strerror(errno);
    }();
    return why;
}

// Replaces the site's 15 bytes in one locked 16-byte compare-and-exchange of
// its aligned block (the byte outside the site kept as it is).
void store_site(uintptr_t site, const Code code) {
    auto* block = reinterpret_cast<unsigned char*>(site & ~uintptr_t{15});
    const size_t at = site & 15;
    uint64_t old_lo, old_hi;
    std::memcpy(&old_lo, block, 8);
    std::memcpy(&old_hi, block + 8, 8);
    for (;;) {
        unsigned char wanted[16];
        std::memcpy(wanted, &old_lo, 8);
        std::memcpy(wanted + 8, &old_hi, 8);
        std::memcpy(wanted + at, code, site_bytes);
        uint64_t new_lo, new_hi;
        std::memcpy(&new_lo, wanted, 8);
        std::memcpy(&new_hi, wanted + 8, 8);
        bool done;
        asm volatile("lock cmpxchg16b %1"
                     : "=@ccz"(done), "+m"(*reinterpret_cast<unsigned __int128*>(block)), "+a"(old_lo), "+d"(old_hi)
                     : "b"(new_lo), "c"(new_hi)
                     : "memory");
        if (done) return;
    }
}

bool set_protection(uintptr_t site, int protection) {
    const uintptr_t page = site & ~uintptr_t{4095};
    return mprotect(reinterpret_cast<void*>(page), 4096, protection) == 0;
}

// Rewrites every site, or none: every check comes before the first store, and
// only an mprotect or membarrier can fail after it (the caller then turns the
// sites off again).
std::string rewrite_sites(CountUnit unit, int32_t tls_offset, int64_t* word) {
    for (const CountSite* s = sites_begin(); s != sites_end(); ++s)
        if (std::string why = site_problem(*s, tls_offset); !why.empty()) return why;
    probe_counts(current.load(), word);  // run (and so translated, under valgrind) as it reads now
    for (const CountSite* s = sites_begin(); s != sites_end(); ++s) {
        Code code;
        encode(*s, unit, tls_offset, code);
        if (std::memcmp(reinterpret_cast<const void*>(s->site), code, site_bytes) == 0) continue;
        // Read, write and execute: other threads may run this page meanwhile.
        if (!set_protection(s->site, PROT_READ | PROT_WRITE | PROT_EXEC))
            return std::string("mprotect(read, write, execute): ") + std::strerror(errno);
        store_site(s->site, code);
        if (!set_protection(s->site, PROT_READ | PROT_EXEC))
            return std::string("mprotect(read, execute): ") + std::strerror(errno);
    }
    if (membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE) != 0)
        return std::string("membarrier(PRIVATE_EXPEDITED_SYNC_CORE): ") + std::strerror(errno);
    if (!probe_counts(unit, word)) return "the rewritten count sites do not run as written, as under valgrind without --smc-check=all";
    return "";
}

}  // namespace

bool set_count_sites(CountUnit unit, int64_t* word) {
    std::lock_guard lock(sites_mutex);
    const auto offset = reinterpret_cast<intptr_t>(word) - reinterpret_cast<intptr_t>(__builtin_thread_pointer());
    const auto tls_offset = static_cast<int32_t>(offset);
    if (!allowed.load()) problem = "count sites turned off (allow_count_sites)";
    else if (offset != tls_offset) problem = "the counted word is not within 2 GiB of the thread pointer";
    else if (!sync_core_problem().empty()) problem = sync_core_problem();
    else problem = rewrite_sites(unit, tls_offset, word);
    if (problem.empty()) {
        current.store(unit);
        return true;
    }
    if (offset == tls_offset) rewrite_sites(CountUnit::off, tls_offset, word);  // as far as it can
    current.store(CountUnit::off);
    return false;
}

CountUnit count_sites_unit() { return current.load(); }

std::string count_sites_problem() {
    std::lock_guard lock(sites_mutex);
    return problem;
}

std::span<const CountSite> count_sites() { return {sites_begin(), sites_end()}; }

void allow_count_sites(bool allow) { allowed.store(allow); }

}  // namespace benchfp::alloc::detail
