#include "perf/ring.hpp"

#include "perf/error.hpp"

#include <linux/perf_event.h>

#include <cstring>
#include <string>

namespace benchfp::perf {

namespace {

// Copies len bytes starting at the free-running position pos out of the ring,
// joining the two pieces of a record split by the wrap-around.
void copy_out(const uint8_t* data, uint64_t size, uint64_t pos, void* dst, size_t len) {
    const uint64_t offset = pos & (size - 1);
    const uint64_t first = std::min<uint64_t>(len, size - offset);
    std::memcpy(dst, data + offset, first);
    std::memcpy(static_cast<uint8_t*>(dst) + first, data, len - first);
}

template <typename T>
T read_at(const uint8_t* body, size_t body_size, size_t& pos) {
    if (pos + sizeof(T) > body_size)
        throw Error(ErrorKind::system, "truncated perf sample record (" + std::to_string(body_size) + " bytes)");
    T value;
    std::memcpy(&value, body + pos, sizeof(T));
    pos += sizeof(T);
    return value;
}

}  // namespace

Sample decode_sample(const uint8_t* body, size_t body_size) {
    // Field order is fixed by the kernel for our sample_type (see perf_event_open(2)).
    Sample s;
    size_t pos = 0;
    s.ip = read_at<uint64_t>(body, body_size, pos);
    s.pid = read_at<uint32_t>(body, body_size, pos);
    s.tid = read_at<uint32_t>(body, body_size, pos);
    s.time = read_at<uint64_t>(body, body_size, pos);
    const auto nr = read_at<uint64_t>(body, body_size, pos);
    if (nr > (body_size - pos) / sizeof(uint64_t))
        throw Error(ErrorKind::system, "perf callchain of " + std::to_string(nr) + " entries overruns its record");
    bool user = true;  // with exclude_callchain_kernel the chain is user-only, marked or not
    for (uint64_t i = 0; i < nr; ++i) {
        const auto addr = read_at<uint64_t>(body, body_size, pos);
        if (addr >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) {  // a context marker, not an address
            user = addr == static_cast<uint64_t>(PERF_CONTEXT_USER);
            continue;
        }
        if (user) s.chain.push_back(addr);
    }
    return s;
}

uint64_t parse_ring(const uint8_t* data, uint64_t size, uint64_t tail, uint64_t head,
                    std::vector<Sample>& out, RingStats& stats) {
    std::vector<uint8_t> record;
    while (head - tail >= sizeof(perf_event_header)) {
        perf_event_header header;
        copy_out(data, size, tail, &header, sizeof header);
        if (header.size < sizeof header || header.size > head - tail)
            throw Error(ErrorKind::system, "corrupt perf ring: record of size " + std::to_string(header.size) +
                                               " with " + std::to_string(head - tail) + " bytes available");
        record.resize(header.size);
        copy_out(data, size, tail, record.data(), header.size);
        const uint8_t* body = record.data() + sizeof header;
        const size_t body_size = header.size - sizeof header;
        switch (header.type) {
        case PERF_RECORD_SAMPLE:
            out.push_back(decode_sample(body, body_size));
            ++stats.samples;
            break;
        case PERF_RECORD_LOST: {  // struct { u64 id; u64 lost; }
            size_t pos = sizeof(uint64_t);
            stats.lost += read_at<uint64_t>(body, body_size, pos);
            ++stats.lost_records;
            break;
        }
        case PERF_RECORD_THROTTLE: ++stats.throttled; break;
        case PERF_RECORD_UNTHROTTLE: ++stats.unthrottled; break;
        default: ++stats.other; break;
        }
        tail += header.size;
    }
    return tail;
}

}  // namespace benchfp::perf
