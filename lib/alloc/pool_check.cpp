#include "alloc/pool_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <unordered_set>

namespace benchfp::alloc::detail {

namespace {

// A message built in place, cut at its capacity.
class Line {
public:
    [[gnu::format(printf, 2, 3)]] void add(const char* format, ...) {
        va_list args;
        va_start(args, format);
        const int n = std::vsnprintf(text_ + used_, sizeof text_ - used_, format, args);
        va_end(args);
        if (n > 0) used_ = std::min(sizeof text_ - 1, used_ + static_cast<size_t>(n));
    }
    void write_to_stderr() const { [[maybe_unused]] auto written = ::write(STDERR_FILENO, text_, used_); }

private:
    char text_[512];
    size_t used_ = 0;
};

// Where p lies among its page's objects: the index of the one it is in and how far into it.
struct Position {
    bool in_an_object;  // false: in the page header, the colour gap or the tail
    size_t index, into;
};

Position position_of(const PageHeader* page, const void* p) {
    const unsigned c = page->size_class;
    const size_t first = first_object_offset(c);
    const size_t offset = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(page);
    if (offset < first) return {false, 0, 0};
    const size_t index = divide_by_class(static_cast<uint32_t>(offset - first), c);
    const size_t start = first + index * class_sizes[c];  // of the object p is in, if the page holds it whole
    return {start + class_sizes[c] <= page_size, index, offset - start};
}

// Out of line, so the checks' own frame stays small: only this needs the buffer.
[[noreturn, gnu::cold, gnu::noinline]] void report_interior_pointer(const PageHeader* page, const void* p, size_t into) {
    char why[128];
    std::snprintf(why, sizeof why, "not the start of an object: %zu B into the one at %p", into,
                  static_cast<const char*>(p) - into);
    report_misuse("invalid free", p, page, why);
}

}  // namespace

void report_misuse(const char* what, const void* p, const PageHeader* page, const char* why) {
    Line line;
    line.add("benchfp pool: %s of %p", what, p);
    if (page && page->owner_word) line.add(" (page %p, class %u B)", static_cast<const void*>(page),
                                           unsigned{class_sizes[page->size_class]});
    else if (page) line.add(" (page %p)", static_cast<const void*>(page));
    if (why) line.add(": %s", why);
    line.add("\n");
    line.write_to_stderr();
    std::abort();
}

size_t check_object_start(const PageHeader* page, const void* p) {
    if (!page->owner_word) report_misuse("invalid free", p, page, "the page was never handed out");
    const Position at = position_of(page, p);
    if (!at.in_an_object) report_misuse("invalid free", p, page, "not inside an object (page header or tail)");
    if (at.into) report_interior_pointer(page, p, at.into);
    return at.index;
}

#if BENCHFP_POOL_CHECKED

namespace {

// Atomic: the owner thread sets bits of its pages while other threads' remote
// frees clear bits of the same words.
std::atomic<uint64_t>& handed_out_word(PageHeader* page, size_t index) { return page->handed_out[index / 64]; }
uint64_t handed_out_bit(size_t index) { return uint64_t{1} << (index % 64); }

}  // namespace

void note_handed_out(void* p) {
    PageHeader* page = page_of(p);
    const size_t index = position_of(page, p).index;
    handed_out_word(page, index).fetch_or(handed_out_bit(index), std::memory_order_relaxed);
}

void check_free(void* p) {
    PageHeader* page = page_of(p);
    const size_t index = check_object_start(page, p);
    // One atomic step: of two racing frees of one object, exactly one finds the bit set.
    const uint64_t was = handed_out_word(page, index).fetch_and(~handed_out_bit(index), std::memory_order_relaxed);
    if (!(was & handed_out_bit(index))) report_misuse("double free", p, page, nullptr);
}

#endif

namespace {

std::mutex big_blocks_mutex;
// Never destroyed: blocks may be freed by static destructors after it would be.
std::unordered_set<const void*>& live_big_blocks() {
    static auto* blocks = new std::unordered_set<const void*>();
    return *blocks;
}
constexpr const char* not_live_big_block = "not a live block of this allocator (freed already, or never its own)";

}  // namespace

void note_big_block(const void* p) {
    std::lock_guard lock(big_blocks_mutex);
    live_big_blocks().insert(p);
}

void check_big_block(const void* p, const char* what) {
    std::lock_guard lock(big_blocks_mutex);
    if (!live_big_blocks().contains(p)) report_misuse(what, p, nullptr, not_live_big_block);
}

void forget_big_block(const void* p, const char* what) {
    std::lock_guard lock(big_blocks_mutex);
    if (live_big_blocks().erase(p) == 0) report_misuse(what, p, nullptr, not_live_big_block);
}

}  // namespace benchfp::alloc::detail
