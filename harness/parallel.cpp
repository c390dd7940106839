#include "parallel.hpp"

#include <immintrin.h>
#include <unistd.h>

#include <cstring>
#include <stdexcept>
#include <string>

namespace benchfp::harness {

namespace {

// How long a thread spins for the next section or the end of one before it
// sleeps: 2000 pauses, about 50-100 us (a pause takes 10-40 ns). Back-to-back
// sections (a benchmark's repetitions) never sleep; an idle pool stops using
// the CPU within that time, so that it takes nothing from a peer that runs next.
constexpr int spin_pauses = 2000;

// Spins until done() or spin_pauses pauses: whether done() became true.
template <typename Done>
bool spin_until(Done done) {
    for (int i = 0; i < spin_pauses; ++i) {
        if (done()) return true;
        _mm_pause();
    }
    return done();
}

}  // namespace

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
        stopping_.store(true, std::memory_order_release);
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
        pending_.store(static_cast<int>(workers_.size()), std::memory_order_relaxed);
        generation_.fetch_add(1, std::memory_order_release);
    }
    start_.notify_all();  // no system call when every worker is still spinning
    fn(0, size());
    const auto all_done = [&] { return pending_.load(std::memory_order_acquire) == 0; };
    if (!spin_until(all_done)) {
        std::unique_lock lock(mutex_);
        done_.wait(lock, all_done);
    }
}

void ThreadPool::work(int ithr) {
    long seen = 0;
    const auto started = [&] {
        return stopping_.load(std::memory_order_acquire) || generation_.load(std::memory_order_acquire) != seen;
    };
    while (true) {
        const std::function<void(int, int)>* task;
        spin_until(started);
        {
            std::unique_lock lock(mutex_);  // the task is read under it, where parallel() wrote it
            start_.wait(lock, started);
            if (stopping_.load(std::memory_order_relaxed)) return;
            seen = generation_.load(std::memory_order_relaxed);
            task = task_;
        }
        (*task)(ithr, size());
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            std::lock_guard lock(mutex_);  // so that a caller between its test and its wait gets the notice
            done_.notify_one();
        }
    }
}

std::pair<size_t, size_t> split_range(size_t count, int ithr, int nthr) {
    const size_t base = count / nthr, extra = count % nthr;
    const size_t begin = ithr * base + std::min<size_t>(ithr, extra);
    return {begin, begin + base + (static_cast<size_t>(ithr) < extra ? 1 : 0)};
}

}  // namespace benchfp::harness
