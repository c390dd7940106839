#pragma once
// The small-object size classes: a Julia-like ladder up to 2032 bytes, 16-byte
// steps to 256 then steps of about 1/8, so internal waste stays under ~12%.
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
// class_of_granule[(size + 15) / 16]: the smallest class that holds size.
constexpr auto make_class_table() {
    std::array<uint8_t, max_small_size / 16 + 1> table{};
    for (size_t g = 0; g < table.size(); ++g) {
        const size_t size = g * 16;
        size_t c = 0;
        while (class_sizes[c] < size) ++c;
        table[g] = static_cast<uint8_t>(c);
    }
    return table;
}
inline constexpr auto class_of_granule = make_class_table();
}  // namespace detail

// The class of a small size (1 <= size <= max_small_size): one table load.
inline unsigned size_class_of(size_t size) {
    return size <= 8 ? 0 : detail::class_of_granule[(size + 15) >> 4];
}

}  // namespace benchfp::alloc
