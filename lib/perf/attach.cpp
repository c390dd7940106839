#include "perf/attach.hpp"

#include "perf/error.hpp"
#include "perf/process.hpp"

#include <unistd.h>

#include <algorithm>
#include <set>
#include <tuple>

namespace benchfp::perf {

namespace {

// How often /proc/PID/task is re-read for threads born during the window: a
// new thread's first few milliseconds are not sampled.
constexpr int scan_interval_ms = 5;

SamplerOptions sampler_options(const AttachOptions& a, pid_t tid, int cpu) {
    SamplerOptions o;
    o.event = a.event;
    o.tid = tid;
    o.cpu = cpu;
    o.frequency = a.frequency;
    o.period = a.period;
    o.user_regs = true;
    o.track_tasks = true;
    return o;
}

}  // namespace

ProcessSampler::ProcessSampler(const AttachOptions& options) : options_(options) {
    if (!process_exists(options_.pid))
        throw Error(ErrorKind::system, "no process with pid " + std::to_string(options_.pid));
    if (options_.system_wide) open_cpus();
    else if (open_new_threads(false) == 0)
        throw Error(ErrorKind::system, "process " + std::to_string(options_.pid) + " has no thread left to sample");
}

ProcessSampler::~ProcessSampler() {
    scanning_ = false;
    if (scanner_.joinable()) scanner_.join();
}

size_t ProcessSampler::open_new_threads(bool started) {
    size_t opened = 0;
    for (pid_t tid : thread_ids(options_.pid)) {
        std::lock_guard lock(mutex_);
        if (!seen_.insert(tid).second) continue;
        try {
            auto sampler = std::make_unique<Sampler>(sampler_options(options_, tid, -1));
            if (started) sampler->start();
            samplers_.push_back(std::move(sampler));
            names_[static_cast<uint32_t>(tid)] = thread_name(options_.pid, tid);
            ++opened;
        } catch (const Error& e) {
            if (e.kind() == ErrorKind::refused) throw;  // a thread exiting just now is no error
        }
    }
    return opened;
}

void ProcessSampler::open_cpus() {
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    for (int cpu = 0; cpu < cpus; ++cpu)
        samplers_.push_back(std::make_unique<Sampler>(sampler_options(options_, -1, cpu)));
    for (pid_t tid : thread_ids(options_.pid))
        names_[static_cast<uint32_t>(tid)] = thread_name(options_.pid, tid);
}

void ProcessSampler::start() {
    for (auto& s : samplers_) s->start();
    if (options_.system_wide) return;  // every CPU sees every thread already
    scanning_ = true;
    scanner_ = std::thread([this] {
        while (scanning_) {
            std::this_thread::sleep_for(std::chrono::milliseconds(scan_interval_ms));
            // Nothing may leave this thread (that would terminate the process):
            // a thread refused or a /proc entry vanishing mid-read loses that
            // thread's samples, which stop() reports; the rest stands.
            const auto keep_first_error = [this](const char* what) {
                std::lock_guard lock(mutex_);
                if (scan_error_.empty()) scan_error_ = what;
            };
            try {
                open_new_threads(true);
            } catch (const std::exception& e) {
                keep_first_error(e.what());
            } catch (...) {
                keep_first_error("unknown error");
            }
        }
    });
}

ProcessRecording ProcessSampler::stop() {
    scanning_ = false;
    if (scanner_.joinable()) scanner_.join();
    for (auto& s : samplers_) s->stop();
    ProcessRecording out;
    out.events = samplers_.size();
    out.thread_names = names_;
    if (!scan_error_.empty())
        out.notes.push_back("threads born during the window may be missing: opening their events failed (" +
                            scan_error_ + ")");
    const auto pid = static_cast<uint32_t>(options_.pid);
    for (const auto& s : samplers_) {
        const RingRecords& r = s->records();
        for (const Sample& sample : r.samples)
            if (sample.pid == pid) out.samples.push_back(sample);
        for (const MmapRecord& m : r.mmaps)
            if (m.pid == pid) out.mmaps.push_back(m);
        for (const TaskRecord& t : r.tasks) {
            if (t.pid != pid) continue;
            if (t.kind == TaskRecord::rename) out.thread_names[t.tid] = t.comm;
            else if (t.kind == TaskRecord::fork && !out.thread_names.count(t.tid))
                out.thread_names[t.tid] = thread_name(options_.pid, static_cast<pid_t>(t.tid));
        }
        out.stats += s->stats();
        out.seconds = std::max(out.seconds, s->seconds());
    }
    std::stable_sort(out.samples.begin(), out.samples.end(),
                     [](const Sample& a, const Sample& b) { return std::tie(a.tid, a.time) < std::tie(b.tid, b.time); });
    for (const Sample& s : out.samples)
        if (!out.thread_names.count(s.tid)) out.thread_names[s.tid] = thread_name(options_.pid, static_cast<pid_t>(s.tid));
    return out;
}

}  // namespace benchfp::perf
