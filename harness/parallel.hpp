#pragma once
// A parallel section in the oneDNN style: n threads run fn(ithr, nthr), the
// calling thread being thread 0, so a sample of the caller still walks up to
// main. Workers are started once and kept, with pthread_create and an entry of
// our own built with frame pointers (std::thread's trampoline is libstdc++'s,
// built without them): a worker's chain reaches glibc's start_thread, as a
// fleet profiler needs to put its samples under the thread's start.
#include <pthread.h>

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <vector>

namespace benchfp::harness {

class ThreadPool {
public:
    // threads >= 1, the caller included. Throws std::runtime_error naming how
    // many threads started when the system refuses one (ulimit, memory).
    explicit ThreadPool(int threads);
    ~ThreadPool();
    ThreadPool(const ThreadPool&) = delete;
    ThreadPool& operator=(const ThreadPool&) = delete;

    int size() const { return static_cast<int>(workers_.size()) + 1; }
    // The kernel thread ids of the workers (not the calling thread): what a
    // sampler of the parallel section attaches to. Known once construction returns.
    const std::vector<pid_t>& worker_tids() const { return tids_; }
    // Runs fn(ithr, nthr) on every thread and returns when all are done.
    void parallel(const std::function<void(int ithr, int nthr)>& fn);

    struct Start {
        ThreadPool* pool;
        int ithr;
    };

private:
    friend void* start_worker(void* start);
    void work(int ithr);
    void stop();  // wakes the workers to return and joins them

    std::vector<pthread_t> workers_;
    std::vector<Start> starts_;  // what each worker's entry is given
    std::vector<pid_t> tids_;    // each worker's, written by the worker before the constructor returns
    int reported_ = 0;           // workers that wrote their tid
    std::mutex mutex_;
    std::condition_variable start_, done_;
    // A section's start and end are spun on for a while before sleeping on the
    // condition variables, as OpenMP's workers (and oneDNN's with them) do: a
    // sleeping thread on a KVM guest took 14-28 us to wake per section (a
    // trivial gemm at --threads=2: 27 us minimum, 55 us mean). So the counters
    // are atomic, read without the mutex while spinning; they are still written
    // under it, so that a sleeper's predicate never misses a change.
    const std::function<void(int, int)>* task_ = nullptr;
    std::atomic<long> generation_{0};
    std::atomic<int> pending_{0};
    std::atomic<bool> stopping_{false};
};

// The function a worker's stack starts from: a chain from a worker thread must
// reach it (step mode), as a chain from the calling thread reaches main.
inline constexpr const char* worker_entry_function = "benchfp::harness::ThreadPool::work(int)";

// [begin, end) of `count` items for thread ithr of nthr, balanced.
std::pair<size_t, size_t> split_range(size_t count, int ithr, int nthr);

}  // namespace benchfp::harness
