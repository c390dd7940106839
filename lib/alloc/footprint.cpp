#include "alloc/footprint.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

namespace benchfp::alloc::footprint {

namespace {

// The counting table: the allocator's entries, each counting the blocks it
// hands out and takes back. Globals: it exists in the child only, for one allocator.
const AllocatorTable* inner = nullptr;
std::atomic<long> live{0};  // the consumer thread of producer_consumer frees too

// Each block handed out has its requested bytes written, as a program writes
// the objects it allocates (small_churn never writes its blocks, arrays only
// 64 B of each): the figure is then the memory that holds objects in use, not
// how little an allocator faults in when nobody writes (jemalloc, which keeps
// its metadata out of its blocks, held 8.5 B per 256 B small_churn block that way).
void* counted(void* p, size_t n) {
    if (!p) return p;
    live.fetch_add(1, std::memory_order_relaxed);
    std::memset(p, 0xa5, n);
    return p;
}
void* c_alloc(size_t n) { return counted(inner->alloc(n), n); }
void c_free(void* p) {
    if (p) live.fetch_sub(1, std::memory_order_relaxed);
    inner->free(p);
}
size_t c_usable(void* p) { return inner->usable_size(p); }
void* c_typed(size_t n, const TypeInfo* t) { return counted(inner->alloc_typed(n, t), n); }
void* c_big(size_t n, const TypeInfo* t) { return counted(inner->big_alloc(n, t), n); }
void* c_managed(size_t n, size_t a, const TypeInfo* t) { return counted(inner->managed_alloc(n, a, t), n); }
void* c_realloc(void* p, size_t n, const TypeInfo* t) {  // one freed, one made: the count stays
    if (!p) return c_managed(n, 64, t);                  // (a null p frees nothing: an allocation)
    void* q = inner->managed_realloc(p, n, t);
    if (q) std::memset(q, 0xa5, n);
    return q;
}

// The same optional entries as the allocator's, so the workloads take the same paths.
AllocatorTable counting(const AllocatorTable& a) {
    inner = &a;
    return with_paths_of(a, {c_alloc, c_free, c_usable, c_typed, c_big, c_managed, c_realloc});
}

// What the child sends: the figure, or why there is none.
struct Message {
    double resident_bytes = -1, live_objects = -1;
    long peaks = 0;
    char error[256] = {};
};

// Private_Dirty of the whole process in bytes, -1 when unreadable. No
// allocation: it runs between the readings.
long private_dirty_bytes() {
    static char buf[8192];
    const int fd = ::open("/proc/self/smaps_rollup", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    size_t n = 0;
    for (ssize_t r; n < sizeof buf - 1 && (r = ::read(fd, buf + n, sizeof buf - 1 - n)) != 0;) {
        if (r < 0) {
            if (errno == EINTR) continue;
            ::close(fd);
            return -1;
        }
        n += static_cast<size_t>(r);
    }
    ::close(fd);
    buf[n] = 0;
    const char* line = std::strstr(buf, "\nPrivate_Dirty:");
    if (!line) return -1;
    return std::strtol(line + 15, nullptr, 10) * 1024;  // "Private_Dirty:   1234 kB"
}

// Faults in `bytes` of stack below this frame, so the chain of states' frames
// runs in pages already counted before the first reading.
[[gnu::noinline]] void touch_stack(size_t bytes) {
    void* p = __builtin_alloca(bytes);
    std::memset(p, 1, bytes);
    asm volatile("" : : "r"(p) : "memory");
}

void write_all(int fd, const void* data, size_t size) {
    const char* p = static_cast<const char*>(data);
    while (size) {
        const ssize_t w = ::write(fd, p, size);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) ::_exit(3);
        p += w, size -= static_cast<size_t>(w);
    }
}

[[noreturn]] void child(int fd, const workloads::AllocWorkload& w, const AllocatorTable& allocator, int copies,
                        int rounds) {
    Message m;
    try {
        const AllocatorTable table = counting(allocator);
        std::vector<std::unique_ptr<workloads::AllocWorkloadState>> states;
        states.reserve(copies);
        for (int k = 0; k < copies; ++k) states.push_back(std::make_unique<workloads::AllocWorkloadState>(table));
        bool last_round = false;
        long before = -1, at_peak = -1;
        // State k at its peak runs state k + 1's iteration; the last one, at its
        // peak in the last round, is where every state is at its peak at once.
        for (int k = 0; k + 1 < copies; ++k)
            states[k]->at_peak = [&, k] { w.iteration(table, *states[k + 1]); };
        states.back()->at_peak = [&] {
            ++m.peaks;
            if (!last_round) return;
            at_peak = private_dirty_bytes();
            m.live_objects = static_cast<double>(live.load(std::memory_order_relaxed));
        };
        touch_stack(size_t{4} << 20);
        private_dirty_bytes();  // its own first-use costs before the reading that counts
        live = 0;
        before = private_dirty_bytes();
        for (int r = 0; r < rounds; ++r) {
            last_round = r + 1 == rounds;
            w.iteration(table, *states.front());
        }
        if (before < 0 || at_peak < 0)
            std::snprintf(m.error, sizeof m.error, "cannot read Private_Dirty from /proc/self/smaps_rollup");
        else if (m.peaks != long(rounds))
            std::snprintf(m.error, sizeof m.error, "workload %s reached its peak %ld times in %d rounds of %d states",
                          w.name, m.peaks, rounds, copies);
        else
            m.resident_bytes = static_cast<double>(at_peak - before);
    } catch (const std::exception& e) {
        std::snprintf(m.error, sizeof m.error, "%s", e.what());
    }
    write_all(fd, &m, sizeof m);
    ::_exit(m.error[0] ? 1 : 0);  // never back into the caller (Google Benchmark, a test): no destructors, no atexit
}

// "was killed by signal 6 (Aborted)", "exited with status 1", into m.error.
void describe_status(Message& m, int status, size_t got) {
    if (WIFSIGNALED(status))
        std::snprintf(m.error, sizeof m.error, "was killed by signal %d (%s)", WTERMSIG(status), strsignal(WTERMSIG(status)));
    else
        std::snprintf(m.error, sizeof m.error, "exited with status %d after sending %zu of %zu bytes", WEXITSTATUS(status),
                      got, sizeof(Message));
}

// Reads one Message from fd within `seconds`; how much arrived, -1 on a timeout.
long read_message(int fd, Message& m, int seconds) {
    size_t got = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(seconds);
    while (got < sizeof m) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        pollfd p{fd, POLLIN, 0};
        const int ready = left.count() > 0 ? ::poll(&p, 1, static_cast<int>(left.count())) : 0;
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) return -1;
        const ssize_t r = ::read(fd, reinterpret_cast<char*>(&m) + got, sizeof m - got);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        got += static_cast<size_t>(r);
    }
    return static_cast<long>(got);
}

// Forks the measuring child and waits for it: its figure, or in m.error what went wrong.
Message child_report(const workloads::AllocWorkload& w, const AllocatorTable& allocator, int copies, int rounds) {
    Message m;
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) {
        std::snprintf(m.error, sizeof m.error, "has no pipe: %s", std::strerror(errno));
        return m;
    }
    std::fflush(nullptr);  // nothing buffered is written twice (the child _exits, but be sure)
    const pid_t pid = ::fork();
    if (pid < 0) {
        std::snprintf(m.error, sizeof m.error, "cannot be forked: %s", std::strerror(errno));
        ::close(fds[0]), ::close(fds[1]);
        return m;
    }
    if (pid == 0) {
        ::close(fds[0]);
        child(fds[1], w, allocator, copies, rounds);
    }
    ::close(fds[1]);
    const long got = read_message(fds[0], m, 120);
    if (got < 0) ::kill(pid, SIGKILL);  // our own child, by its pid
    ::close(fds[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (got < 0) {
        std::snprintf(m.error, sizeof m.error, "did not finish in 120 s and was killed");
    } else if (!m.error[0] && (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || got != long(sizeof m))) {
        describe_status(m, status, static_cast<size_t>(got));
    }
    return m;
}

Figure figure_of(const workloads::AllocWorkload& w, const Message& m, int copies, const char* who) {
    const std::string what = std::string("footprint of ") + w.name + ": " + who + " ";
    if (m.error[0]) throw Error(what + m.error);
    if (!(m.live_objects > 0)) throw Error(what + "counted no live object at the workload's peak");
    if (!(m.resident_bytes > 0)) throw Error(what + "saw no resident byte added at the workload's peak");
    return {m.resident_bytes, m.live_objects, copies};
}

// What the zygote is asked: pointers into its own copy of the address space.
struct Request {
    const workloads::AllocWorkload* workload;
    const AllocatorTable* allocator;
    int copies, rounds;
};

// A bump allocator that frees nothing, over a buffer of its own: what prime()
// runs the workloads on, so it changes no allocator the children measure.
alignas(64) char primer_arena[1 << 20];
size_t primer_used = 0;
void* primer_alloc(size_t n) {
    n = (n + 63) & ~size_t{63};
    if (primer_used + n > sizeof primer_arena) std::abort();  // one iteration of a workload needs ~150 KiB
    void* p = primer_arena + primer_used;
    primer_used += n;
    return p;
}
void primer_free(void*) {}
size_t primer_usable(void*) { return 0; }

// Every workload once, so each function-local static it has (small_churn's
// 128 KiB of sizes) exists before the measurements fork, not in each child.
// Its consumer thread, if any, is joined before the state ends.
void prime() {
    const AllocatorTable primer{primer_alloc, primer_free, primer_usable};
    for (const workloads::AllocWorkload& w : workloads::all()) {
        primer_used = 0;
        workloads::AllocWorkloadState state(primer);
        w.iteration(primer, state);
    }
}

}  // namespace

Figure measure(const workloads::AllocWorkload& w, const AllocatorTable& allocator, int copies, int rounds) {
    if (copies < 1 || rounds < 1) throw Error("footprint: copies and rounds must be at least 1");
    return figure_of(w, child_report(w, allocator, copies, rounds), copies, "the measuring child");
}

Zygote::Zygote() {
    prime();
    // A zygote that died makes the next request's write fail with EPIPE, an
    // error measure() reports, instead of a SIGPIPE that ends the whole run.
    ::signal(SIGPIPE, SIG_IGN);
    int requests[2] = {-1, -1}, replies[2] = {-1, -1};
    const auto fail = [&](const char* what) {
        const std::string why = std::strerror(errno);
        for (int fd : {requests[0], requests[1], replies[0], replies[1]})
            if (fd >= 0) ::close(fd);
        throw Error(std::string("footprint: ") + what + ": " + why);
    };
    if (::pipe2(requests, O_CLOEXEC) != 0 || ::pipe2(replies, O_CLOEXEC) != 0) fail("no pipe for the zygote");
    std::fflush(nullptr);
    pid_ = ::fork();
    if (pid_ < 0) fail("cannot fork the zygote");
    if (pid_ == 0) {
        // The zygote: each request measured in a child of its own, forked from
        // this unchanging state; ends when the parent closes its end.
        ::close(requests[1]), ::close(replies[0]);
        Request r;
        while (::read(requests[0], &r, sizeof r) == static_cast<ssize_t>(sizeof r)) {
            const Message m = child_report(*r.workload, *r.allocator, r.copies, r.rounds);
            write_all(replies[1], &m, sizeof m);
        }
        ::_exit(0);
    }
    ::close(requests[0]), ::close(replies[1]);
    requests_ = requests[1], replies_ = replies[0];
}

Zygote::~Zygote() { end(); }

void Zygote::end() {
    if (pid_ <= 0) return;
    ::close(requests_), ::close(replies_);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
}

Figure Zygote::measure(const workloads::AllocWorkload& w, const AllocatorTable& allocator, int copies, int rounds) {
    if (copies < 1 || rounds < 1) throw Error("footprint: copies and rounds must be at least 1");
    const std::string zygote = std::string("footprint of ") + w.name + ": the zygote";
    if (pid_ <= 0) throw Error(zygote + " ended at an earlier failure");
    const Request r{&w, &allocator, copies, rounds};
    if (::write(requests_, &r, sizeof r) != static_cast<ssize_t>(sizeof r)) {
        const std::string why = std::strerror(errno);
        end();
        throw Error(zygote + " takes no request: " + why);
    }
    Message m;
    const long got = read_message(replies_, m, 150);  // the child's own limit is 120 s
    if (got != long(sizeof m)) {
        // Ended for good: a late answer would otherwise be read as the next request's.
        ::kill(pid_, SIGKILL);
        end();
        throw Error(zygote + (got < 0 ? " did not answer in 150 s" : " ended without an answer"));
    }
    return figure_of(w, m, copies, "the measuring child");
}

}  // namespace benchfp::alloc::footprint
