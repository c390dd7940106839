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

Sample decode_sample(const uint8_t* body, size_t body_size, bool with_regs) {
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
    if (with_regs && read_at<uint64_t>(body, body_size, pos) != PERF_SAMPLE_REGS_ABI_NONE) {
        s.has_regs = true;  // in bit order of user_regs_mask: bp, sp, ip
        s.regs.bp = read_at<uint64_t>(body, body_size, pos);
        s.regs.sp = read_at<uint64_t>(body, body_size, pos);
        s.regs.ip = read_at<uint64_t>(body, body_size, pos);
    }
    return s;
}

namespace {

// The NUL-terminated string at pos (padded to 8 bytes by the kernel).
std::string read_string(const uint8_t* body, size_t body_size, size_t pos) {
    if (pos >= body_size) return {};
    const auto* begin = reinterpret_cast<const char*>(body + pos);
    return std::string(begin, strnlen(begin, body_size - pos));
}

MmapRecord decode_mmap(const uint8_t* body, size_t body_size, bool mmap2) {
    // MMAP:  pid, tid, addr, len, pgoff, filename
    // MMAP2: pid, tid, addr, len, pgoff, maj, min, ino, ino_generation, prot, flags, filename
    struct Head {
        uint32_t pid, tid;
        uint64_t addr, len, pgoff;
    };
    struct Mmap2Middle {
        uint32_t maj, min;
        uint64_t ino, ino_generation;
        uint32_t prot, flags;
    };
    size_t pos = 0;
    const auto head = read_at<Head>(body, body_size, pos);
    MmapRecord m{head.pid, head.tid, head.addr, head.len, head.pgoff, 0, {}};
    if (mmap2) m.prot = read_at<Mmap2Middle>(body, body_size, pos).prot;
    m.filename = read_string(body, body_size, pos);
    return m;
}

TaskRecord decode_task(const uint8_t* body, size_t body_size, TaskRecord::Kind kind) {
    // FORK/EXIT: pid, ppid, tid, ptid, time;  COMM: pid, tid, comm
    TaskRecord t;
    t.kind = kind;
    size_t pos = 0;
    t.pid = read_at<uint32_t>(body, body_size, pos);
    if (kind == TaskRecord::rename) {
        t.tid = read_at<uint32_t>(body, body_size, pos);
        t.comm = read_string(body, body_size, pos);
    } else {
        pos += sizeof(uint32_t);
        t.tid = read_at<uint32_t>(body, body_size, pos);
    }
    return t;
}

}  // namespace

uint64_t parse_ring(const uint8_t* data, uint64_t size, uint64_t tail, uint64_t head,
                    std::vector<Sample>& out, RingStats& stats) {
    RingRecords records;
    records.samples = std::move(out);
    const uint64_t new_tail = parse_ring(data, size, tail, head, records, stats);
    out = std::move(records.samples);
    return new_tail;
}

uint64_t parse_ring(const uint8_t* data, uint64_t size, uint64_t tail, uint64_t head,
                    RingRecords& out, RingStats& stats, bool with_regs) {
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
            out.samples.push_back(decode_sample(body, body_size, with_regs));
            ++stats.samples;
            break;
        case PERF_RECORD_LOST: {  // struct { u64 id; u64 lost; }
            size_t pos = sizeof(uint64_t);
            stats.lost += read_at<uint64_t>(body, body_size, pos);
            ++stats.lost_records;
            break;
        }
        case PERF_RECORD_MMAP: out.mmaps.push_back(decode_mmap(body, body_size, false)); break;
        case PERF_RECORD_MMAP2: out.mmaps.push_back(decode_mmap(body, body_size, true)); break;
        case PERF_RECORD_FORK: out.tasks.push_back(decode_task(body, body_size, TaskRecord::fork)); break;
        case PERF_RECORD_EXIT: out.tasks.push_back(decode_task(body, body_size, TaskRecord::exit)); break;
        case PERF_RECORD_COMM: out.tasks.push_back(decode_task(body, body_size, TaskRecord::rename)); break;
        case PERF_RECORD_THROTTLE: ++stats.throttled; break;
        case PERF_RECORD_UNTHROTTLE: ++stats.unthrottled; break;
        default: ++stats.other; break;
        }
        tail += header.size;
    }
    return tail;
}

}  // namespace benchfp::perf
