#pragma once
// Page-aligned float storage for kernel and peer buffers: vector loads and
// non-temporal stores stay aligned, and buffers start on their own pages.
#include <cstdint>
#include <cstdlib>
#include <new>
#include <vector>

namespace benchfp::harness {

template <typename T>
struct PageAligned {
    using value_type = T;
    PageAligned() = default;
    template <typename U>
    PageAligned(const PageAligned<U>&) {}
    T* allocate(size_t n) {
        if (n > (SIZE_MAX - 4095) / sizeof(T)) throw std::bad_array_new_length();  // the rounding would wrap
        void* p = std::aligned_alloc(4096, (n * sizeof(T) + 4095) & ~size_t{4095});
        if (!p) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, size_t) { std::free(p); }
    template <typename U>
    bool operator==(const PageAligned<U>&) const { return true; }
};
using FloatBuffer = std::vector<float, PageAligned<float>>;

}  // namespace benchfp::harness
