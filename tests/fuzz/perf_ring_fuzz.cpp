// The perf ring parser over any bytes the kernel could leave in the data area:
// records of any type and size, split by the wrap-around, positions anywhere.
// The kernel's own guarantee is kept: head - tail never exceeds the area.
#include "fuzz_input.hpp"
#include "perf/error.hpp"
#include "perf/ring.hpp"

#include <algorithm>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace benchfp;
    fuzz::Input in(data, size);
    const auto tail = in.take<uint64_t>();
    const auto filled = in.take<uint16_t>();
    const std::string bytes = in.rest();
    uint64_t area = 8;  // a power of two, as the mmap'ed data area is
    while (area < bytes.size() && area < (1u << 16)) area *= 2;
    std::vector<uint8_t> ring(area, 0);
    std::copy_n(bytes.begin(), std::min<size_t>(bytes.size(), area), ring.begin());

    std::vector<perf::Sample> samples;
    perf::RingStats stats;
    const uint64_t head = tail + filled % (area + 1);
    try {  // a corrupt record is a perf::Error by contract; anything else is a bug
        const uint64_t end = perf::parse_ring(ring.data(), area, tail, head, samples, stats);
        if (end - tail > head - tail) __builtin_trap();  // read past head
    } catch (const perf::Error&) {
    }
    try {
        perf::decode_sample(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
    } catch (const perf::Error&) {
    }
    return 0;
}
