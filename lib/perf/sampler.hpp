#pragma once
// A perf_event_open sampler for one thread (or one CPU): user-space IP +
// frame-pointer callchain, read from an mmap'ed ring by a reader thread while
// the measured region runs, so the ring wraps around instead of overflowing.
// For a foreign process (see attach.hpp) it also records the user registers
// the walk started from, executable mmaps, and threads born or renamed.
#include "perf/event.hpp"
#include "perf/ring.hpp"

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <string>
#include <thread>
#include <vector>

namespace benchfp::perf {

struct SamplerOptions {
    Event event;
    pid_t tid = 0;                  // thread to sample; 0 = the calling thread; -1 = every task (with cpu)
    int cpu = -1;                   // -1: wherever the thread runs; >= 0: that CPU only
    bool user_regs = false;         // PERF_SAMPLE_REGS_USER: bp, sp, ip (Sample::regs)
    bool track_tasks = false;       // MMAP2 of executable mappings, FORK, EXIT and COMM records
    uint64_t frequency = 4000;      // samples per second (kernel-adjusted period)
    uint64_t period = 0;            // when non-zero: a fixed period in event units, overrides frequency
    unsigned ring_pages = 64;       // data pages of the ring (a power of two)
    std::chrono::milliseconds drain_interval{5};
};

// The kernel's limit on the sampling frequency
// (/proc/sys/kernel/perf_event_max_sample_rate), or 0 where it cannot be read.
uint64_t max_sample_frequency();

// Why perf_event_open would refuse this frequency with a bare EINVAL, naming
// the option (`--freq`) and the limit; empty when it is fine. Checked before a
// run, so a bad rate fails up front rather than at the first sampled case.
std::string frequency_problem(uint64_t frequency);

class Sampler {
public:
    explicit Sampler(const SamplerOptions& options);  // opens and maps; throws Error
    ~Sampler();
    Sampler(const Sampler&) = delete;
    Sampler& operator=(const Sampler&) = delete;

    void start();  // clears previous results, enables the event, starts draining
    void stop();   // disables the event, drains what is left; throws Error if the ring was corrupt

    const std::vector<Sample>& samples() const { return records_.samples; }
    const RingRecords& records() const { return records_; }
    const RingStats& stats() const { return stats_; }
    double seconds() const { return std::chrono::duration<double>(stopped_ - started_).count(); }
    const Event& event() const { return options_.event; }

private:
    void drain();
    void halt() noexcept;  // disables the event and joins the reader


    SamplerOptions options_;
    int fd_ = -1;
    void* map_ = nullptr;
    size_t map_size_ = 0;
    RingRecords records_;
    RingStats stats_;
    std::atomic<bool> running_{false};
    std::thread reader_;
    std::exception_ptr reader_error_;  // what stopped the reader, rethrown by stop()
    std::chrono::steady_clock::time_point started_, stopped_;
};

}  // namespace benchfp::perf
