#pragma once
// Sampling a running process from outside, as a fleet profiler does: every
// thread of process `pid` (one event per thread in /proc/PID/task; a thread
// born during the window is found by a re-scan every few milliseconds, since
// the kernel refuses to mmap an `inherit` event that is not bound to a CPU),
// or every CPU (`system_wide`, like `perf record -a`, keeping only the
// process's samples).
// Returns the samples with their user registers, the executable mappings made
// while sampling, and the thread names; what those mean is the caller's business.
#include "perf/event.hpp"
#include "perf/ring.hpp"
#include "perf/sampler.hpp"

#include <sys/types.h>

#include <atomic>
#include <map>
#include <mutex>
#include <set>
#include <thread>
#include <memory>
#include <string>
#include <vector>

namespace benchfp::perf {

struct AttachOptions {
    pid_t pid = 0;
    bool system_wide = false;
    Event event;
    uint64_t frequency = 4000;
    uint64_t period = 0;
};

struct ProcessRecording {
    std::vector<Sample> samples;  // the process's only, ordered by thread then time
    std::vector<MmapRecord> mmaps;  // the process's executable mappings made while sampling
    std::map<uint32_t, std::string> thread_names;  // tid -> comm, for every thread seen
    RingStats stats;  // summed over the events
    size_t events = 0;  // perf events opened (threads, or CPUs)
    double seconds = 0;
    std::vector<std::string> notes;  // what the recording may lack, and why
};

class ProcessSampler {
public:
    // Opens the events (disabled). Throws Error: refused (paranoid / no
    // CAP_PERFMON / not ptrace-able), or system when the process is gone.
    explicit ProcessSampler(const AttachOptions& options);
    ~ProcessSampler();
    void start();
    ProcessRecording stop();

private:
    size_t open_new_threads(bool started);  // returns how many were opened
    void open_cpus();

    AttachOptions options_;
    std::mutex mutex_;  // samplers_ and names_ grow from the scanner thread
    std::vector<std::unique_ptr<Sampler>> samplers_;
    std::set<pid_t> seen_;
    std::map<uint32_t, std::string> names_;
    std::atomic<bool> scanning_{false};
    std::thread scanner_;
    std::string scan_error_;  // the first failure of the scanner thread, under mutex_
};

}  // namespace benchfp::perf
