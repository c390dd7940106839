#include "parallel.hpp"

#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace benchfp::harness {

// A worker's first frame: not inlined, built with frame pointers like the rest.
__attribute__((noinline)) void* start_worker(void* start) {
    const auto* s = static_cast<const ThreadPool::Start*>(start);
    {
        std::lock_guard lock(s->pool->mutex_);
        s->pool->tids_[s->ithr - 1] = gettid();
        ++s->pool->reported_;
    }
    s->pool->done_.notify_all();
    s->pool->work(s->ithr);
    return nullptr;
}

ThreadPool::ThreadPool(int threads) {
    starts_.reserve(threads > 1 ? threads - 1 : 0);  // stable addresses for the workers
    tids_.assign(threads > 1 ? threads - 1 : 0, 0);
    for (int i = 1; i < threads; ++i) {
        starts_.push_back({this, i});
        pthread_t thread;
        if (const int error = pthread_create(&thread, nullptr, start_worker, &starts_.back())) {
            // The destructor does not run for a constructor that throws: the started
            // workers must be stopped here, before the members they wait on go away.
            const size_t started = workers_.size() + 1;
            stop();
            throw std::runtime_error("cannot start the parallel section's threads: " + std::to_string(started) +
                                     " of " + std::to_string(threads) + " started (" + std::strerror(error) + ")");
        }
        workers_.push_back(thread);
    }
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return reported_ == static_cast<int>(workers_.size()); });
}

ThreadPool::~ThreadPool() { stop(); }

void ThreadPool::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    start_.notify_all();
    for (pthread_t t : workers_) pthread_join(t, nullptr);
    workers_.clear();
}

void ThreadPool::parallel(const std::function<void(int, int)>& fn) {
    if (workers_.empty()) {
        fn(0, 1);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        task_ = &fn;
        pending_ = static_cast<int>(workers_.size());
        ++generation_;
    }
    start_.notify_all();
    fn(0, size());
    std::unique_lock lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    task_ = nullptr;
}

void ThreadPool::work(int ithr) {
    long seen = 0;
    while (true) {
        const std::function<void(int, int)>* task;
        {
            std::unique_lock lock(mutex_);
            start_.wait(lock, [&] { return stopping_ || generation_ != seen; });
            if (stopping_) return;
            seen = generation_;
            task = task_;
        }
        (*task)(ithr, size());
        {
            std::lock_guard lock(mutex_);
            if (--pending_ == 0) done_.notify_one();
        }
    }
}

std::pair<size_t, size_t> split_range(size_t count, int ithr, int nthr) {
    const size_t base = count / nthr, extra = count % nthr;
    const size_t begin = ithr * base + std::min<size_t>(ithr, extra);
    return {begin, begin + base + (static_cast<size_t>(ithr) < extra ? 1 : 0)};
}

}  // namespace benchfp::harness
