#pragma once
// The small-object size classes: a Julia-like ladder up to 2032 bytes, 16-byte
// steps to 256 then steps of about 1/8, so internal waste stays under ~12%.
// The big-block classes (blocks with a header: big and managed): four per
// doubling from 64 B to 1 MiB of payload, so a block's payload wastes less than
// 25% of the request (plus its 64 B header, in line or, for whole pages, apart).
#include <array>
#include <cstddef>
#include <cstdint>

#ifndef BENCHFP_POOL_CHECKED
#define BENCHFP_POOL_CHECKED 0
#endif

namespace benchfp::alloc {

// The checked build (-DBENCHFP_POOL_CHECKED=ON): every free is validated (pool.hpp).
inline constexpr bool pool_checked = BENCHFP_POOL_CHECKED != 0;

inline constexpr size_t page_size = 16 * 1024;
// The checked build keeps a bit per object in the page header (pool.hpp's PageHeader).
inline constexpr size_t page_header_size = pool_checked ? 320 : 64;
inline constexpr size_t max_small_size = 2032;

inline constexpr std::array<uint16_t, 42> class_sizes = {
    8,   16,  32,  48,  64,  80,  96,  112, 128, 144, 160, 176, 192, 208,  224,  240,  256,  288,  320,  352,  384,
    416, 448, 496, 544, 592, 640, 704, 768, 848, 928, 1008, 1104, 1200, 1312, 1424, 1552, 1680, 1808, 1904, 1968, 2032};
inline constexpr size_t class_count = class_sizes.size();

namespace detail {
// class_of_granule[(size + 7) / 8]: the smallest class that holds size. In
// 8-byte granules, so the 8-byte class needs no branch of its own (a table of
// 255 bytes instead of 128 and a compare and a taken branch on every size above 8).
// Indexed by the size itself (2 KiB), it saved the add and the shift, but made the
// hooked entry slower against the unhooked one: small_churn's hook off / compiled
// out read 1.053 over four code layouts, against 1.018 with granules (AMD Zen 4).
constexpr auto make_class_table() {
    std::array<uint8_t, max_small_size / 8 + 1> table{};
    for (size_t g = 0; g < table.size(); ++g) {
        const size_t size = g * 8;
        size_t c = 0;
        while (class_sizes[c] < size) ++c;
        table[g] = static_cast<uint8_t>(c);
    }
    return table;
}
inline constexpr auto class_of_granule = make_class_table();
}  // namespace detail

// The class of a small size (1 <= size <= max_small_size): one table load.
constexpr unsigned size_class_of(size_t size) { return detail::class_of_granule[(size + 7) >> 3]; }

// Big-block classes, by payload (the bytes after the block's 64 B header room, or the whole slot
// of a class of whole OS pages, whose header is apart: pool.cpp):
// class 0 holds 64 B; then each doubling (2^e, 2^(e+1)] is cut in four steps of
// 2^(e-2): 80, 96, 112, 128, 160, ... 896 KiB, 1 MiB. As tcmalloc's and
// mimalloc's large classes: geometric, so the class count stays small (57) and
// the worst waste is a fixed fraction, here < 25% of the requested payload.
inline constexpr size_t big_min_payload = 64;
inline constexpr unsigned big_steps_log2 = 2;  // 4 classes per doubling
inline constexpr size_t max_big_class_payload = size_t{1} << 20;

// The class of a payload of n bytes (n <= max_big_class_payload): a count of
// leading zeros and a shift, no table (the classes span 2^14 sizes).
constexpr unsigned big_class_of(size_t n) {
    if (n <= big_min_payload) return 0;
    const unsigned e = 63 - static_cast<unsigned>(__builtin_clzll(n - 1));  // 2^e < n <= 2^(e+1)
    const unsigned step = static_cast<unsigned>((n - 1 - (size_t{1} << e)) >> (e - big_steps_log2));
    return ((e - 6) << big_steps_log2) + step + 1;
}
constexpr size_t big_class_payload(unsigned c) {
    if (c == 0) return big_min_payload;
    const unsigned e = 6 + ((c - 1) >> big_steps_log2);
    const size_t step = ((c - 1) & ((1u << big_steps_log2) - 1)) + 1;
    return (size_t{1} << e) + (step << (e - big_steps_log2));
}
inline constexpr unsigned big_class_count = big_class_of(max_big_class_payload) + 1;
static_assert(big_class_payload(big_class_count - 1) == max_big_class_payload);
static_assert(big_class_payload(big_class_of(max_small_size + 1)) == 2048);

// Payloads of 1 B to this many find their class in a table (big_class_of_table).
inline constexpr size_t big_table_max_payload = size_t{64} << 10;
namespace detail {
// One entry per 16 bytes: every class boundary up to 64 KiB is a multiple of
// 16, so the payloads (16g, 16g + 16] all share one class. A load where
// big_class_of takes 13 instructions (bsr and shifts: the build targets
// baseline x86-64, without lzcnt) on every big allocation.
constexpr auto make_big_class_table() {
    std::array<uint8_t, big_table_max_payload / 16> table{};
    for (size_t g = 0; g < table.size(); ++g) table[g] = static_cast<uint8_t>(big_class_of(g * 16 + 16));
    return table;
}
inline constexpr auto big_class_of_granule = make_big_class_table();
constexpr bool big_class_table_is_exact() {
    for (size_t n = 1; n <= big_table_max_payload; ++n)
        if (big_class_of_granule[(n - 1) >> 4] != big_class_of(n)) return false;
    return true;
}
static_assert(big_class_table_is_exact());
}  // namespace detail

// big_class_of(n) for 1 <= n <= big_table_max_payload.
inline unsigned big_class_of_table(size_t n) { return detail::big_class_of_granule[(n - 1) >> 4]; }

}  // namespace benchfp::alloc
