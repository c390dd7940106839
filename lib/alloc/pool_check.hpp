#pragma once
// The pool's misuse checks, for pool.cpp (pool.hpp's header comment says which
// build detects what). All are out of line: the normal build calls them from
// slow paths only; the checked build also from free() and the allocation fast
// path (check_free, note_handed_out, declared in pool.hpp).
#include "alloc/pool.hpp"

#include <array>

namespace benchfp::alloc::detail {

// Writes "benchfp pool: <what> of <p> (page <page>, class <size> B): <why>" to
// stderr and aborts. page and why may be null. Allocates nothing: the heap may
// be what is broken.
[[noreturn, gnu::cold]] void report_misuse(const char* what, const void* p, const PageHeader* page, const char* why);

// n / class_sizes[c] for any 32-bit n without a divide (a page offset is one):
// a free by another thread checks its pointer with a multiply, not a divide of
// 20-40 cycles. Lemire, Kaser, Kurz, "Faster remainder by direct computation"
// (2019): with M = ceil(2^64 / d), n / d is the high half of the 128-bit M * n
// when 32 + log2(d) <= 64.
inline constexpr auto class_reciprocals = [] {
    std::array<uint64_t, class_count> m{};
    for (size_t c = 0; c < class_count; ++c) m[c] = UINT64_MAX / class_sizes[c] + 1;
    return m;
}();
inline uint32_t divide_by_class(uint32_t n, unsigned c) {
    return static_cast<uint32_t>((static_cast<unsigned __int128>(class_reciprocals[c]) * n) >> 64);
}

// Aborts unless p is the start of an object of its page's class, in a page that
// was handed out. Returns the object's index in the page.
size_t check_object_start(const PageHeader* page, const void* p);

// A free that finds p already at the head of the list it goes to: freed twice in a row.
inline void check_not_list_head(const void* head, const void* p, const PageHeader* page) {
    if (__builtin_expect(head == p, 0)) report_misuse("double free", p, page, "already the head of its free list");
}

// Big and managed blocks. The checked build registers every live one and asks
// the registry before reading a block's header (which a foreign pointer lacks).
void note_big_block(const void* p);
void check_big_block(const void* p, const char* what);   // aborts unless p is live
void forget_big_block(const void* p, const char* what);  // aborts unless p was live: one of two racing frees

}  // namespace benchfp::alloc::detail
