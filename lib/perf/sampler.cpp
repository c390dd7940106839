#include "perf/sampler.hpp"

#include "perf/error.hpp"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include <utility>

namespace benchfp::perf {

uint64_t max_sample_frequency() {
    std::ifstream in("/proc/sys/kernel/perf_event_max_sample_rate");
    uint64_t limit = 0;
    return in >> limit ? limit : 0;
}

std::string frequency_problem(uint64_t frequency) {
    if (frequency == 0) return "--freq must be at least 1";
    const uint64_t limit = max_sample_frequency();
    if (limit && frequency > limit)
        return "--freq=" + std::to_string(frequency) + " is above this host's limit of " + std::to_string(limit) +
               " Hz (/proc/sys/kernel/perf_event_max_sample_rate)";
    return "";
}

Sampler::Sampler(const SamplerOptions& options) : options_(options) {
    const unsigned pages = options_.ring_pages;
    if (pages == 0 || (pages & (pages - 1)) != 0)
        throw Error(ErrorKind::system, "ring pages must be a power of two, got " + std::to_string(pages));

    perf_event_attr attr = options_.event.attr;
    attr.size = sizeof attr;
    attr.disabled = 1;
    attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CALLCHAIN;
    if (options_.user_regs) {
        attr.sample_type |= PERF_SAMPLE_REGS_USER;
        attr.sample_regs_user = user_regs_mask;
    }
    // Executable mappings only (mmap_data stays 0): a JIT's code appears when it
    // is mapped or mprotect'ed executable, a thread when it is born or named.
    attr.mmap = attr.mmap2 = attr.task = attr.comm = options_.track_tasks;
    attr.exclude_kernel = 1;
    attr.exclude_hv = 1;
    attr.exclude_callchain_kernel = 1;  // we judge user-space chains only
    if (options_.period) {
        attr.freq = 0;
        attr.sample_period = options_.period;
    } else {
        attr.freq = 1;
        attr.sample_freq = options_.frequency;
    }

    const long fd = syscall(SYS_perf_event_open, &attr, options_.tid, options_.cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) throw open_error(options_.event.name, errno);
    fd_ = static_cast<int>(fd);

    map_size_ = (1 + pages) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
    map_ = mmap(nullptr, map_size_, PROT_READ | PROT_WRITE, MAP_SHARED, fd_, 0);
    if (map_ == MAP_FAILED) {
        const int err = errno;
        close(fd_);
        throw Error(ErrorKind::system, std::string("mmap of the perf ring failed: ") + std::strerror(err) +
                                           " (perf_event_mlock_kb may be too small for --ring-pages)");
    }
}

Sampler::~Sampler() {
    if (running_) halt();
    munmap(map_, map_size_);
    close(fd_);
}

void Sampler::start() {
    records_ = {};
    stats_ = {};
    drain();  // discard anything left from an earlier run
    records_ = {};
    stats_ = {};
    running_ = true;
    reader_error_ = nullptr;
    reader_ = std::thread([this] {
        // An exception must not leave this thread (that would terminate the
        // process): a corrupt ring is kept for stop() to report.
        try {
            while (running_.load(std::memory_order_relaxed)) {
                drain();
                std::this_thread::sleep_for(options_.drain_interval);
            }
        } catch (...) {
            reader_error_ = std::current_exception();
        }
    });
    started_ = std::chrono::steady_clock::now();
    if (ioctl(fd_, PERF_EVENT_IOC_RESET, 0) != 0 || ioctl(fd_, PERF_EVENT_IOC_ENABLE, 0) != 0)
        throw Error(ErrorKind::system, std::string("enabling the perf event failed: ") + std::strerror(errno));
}

void Sampler::halt() noexcept {
    ioctl(fd_, PERF_EVENT_IOC_DISABLE, 0);
    stopped_ = std::chrono::steady_clock::now();
    running_ = false;
    if (reader_.joinable()) reader_.join();
}

void Sampler::stop() {
    halt();
    if (reader_error_) std::rethrow_exception(std::exchange(reader_error_, nullptr));
    drain();
}

void Sampler::drain() {
    auto* page = static_cast<perf_event_mmap_page*>(map_);
    const auto* data = static_cast<const uint8_t*>(map_) + page->data_offset;
    // data_head is written by the kernel: read it with acquire before the records;
    // data_tail tells the kernel what we consumed: publish it with release after.
    const uint64_t head = __atomic_load_n(&page->data_head, __ATOMIC_ACQUIRE);
    const uint64_t tail = page->data_tail;
    const uint64_t new_tail = parse_ring(data, page->data_size, tail, head, records_, stats_, options_.user_regs);
    __atomic_store_n(&page->data_tail, new_tail, __ATOMIC_RELEASE);
}

}  // namespace benchfp::perf
