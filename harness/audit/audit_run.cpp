#include "audit/audit_run.hpp"

#include "perf/attach.hpp"
#include "perf/error.hpp"
#include "perf/event.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

namespace benchfp::harness {

namespace {

constexpr size_t max_code_bytes = 16u << 20;  // read at most this much of one region
constexpr auto poll_interval = std::chrono::milliseconds(20);

// A child that has exited is a zombie until reaped: kill(pid, 0) still finds it.
bool alive(pid_t pid, bool is_child) {
    if (is_child) {
        int status = 0;
        return waitpid(pid, &status, WNOHANG) == 0;
    }
    return perf::process_exists(pid);
}

bool sampled(const JitRegion& r, const std::vector<perf::Sample>& samples) {
    for (const perf::Sample& s : samples)
        if (r.code.region.contains(s.ip)) return true;
    return false;
}

// Reads the sampled regions' code (for the culprit table) and derives their
// frameless windows from it; regions never sampled are not read.
void read_code(pid_t pid, std::vector<JitRegion>& regions, const std::vector<perf::Sample>& samples) {
    for (JitRegion& r : regions) {
        if (!sampled(r, samples)) continue;
        const uint64_t size = std::min<uint64_t>(r.code.region.end - r.code.region.begin, max_code_bytes);
        if (auto bytes = perf::read_memory(pid, r.code.region.begin, size)) {
            r.bytes = {r.code.region.begin, std::move(*bytes)};
            r.code.frameless_windows = frameless_windows(r.bytes);
            r.rbp_writes = rbp_writes(r.bytes);
        }
    }
}

}  // namespace

AuditReport audit_process(const AuditRequest& q) {
    const perf::EventChoice event = perf::choose_event(q.event, perf::probe_open);
    std::vector<perf::Mapping> maps = perf::read_maps(q.pid);  // throws when the process is gone
    auto symbols = std::make_unique<perf::Symbols>(q.pid);
    perf::ProcessSampler sampler({q.pid, q.system_wide, event.event, q.frequency, 0});

    sampler.start();
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(q.duration_ms);
    bool exited = false;
    while (std::chrono::steady_clock::now() < deadline && !(exited = !alive(q.pid, q.is_child)))
        std::this_thread::sleep_for(poll_interval);
    perf::ProcessRecording recording = sampler.stop();

    // While the process lives, read what it has now: later mappings, modules
    // loaded during the window, its perf map, and the code itself.
    std::vector<JitRegion> regions;
    if (!exited) {
        try {
            std::vector<perf::Mapping> now = perf::read_maps(q.pid);
            now.insert(now.end(), maps.begin(), maps.end());
            maps = std::move(now);
            symbols = std::make_unique<perf::Symbols>(q.pid);
        } catch (const perf::Error&) {
            exited = true;  // it went away just now: keep what was read at attach
        }
    }
    regions = find_jit_regions(maps, recording.mmaps, perf::read_perf_map(q.pid));
    read_code(q.pid, regions, recording.samples);
    for (const JitRegion& r : regions) symbols->add_region(r.code.region);

    AuditReport report = analyse(recording, regions, maps, *symbols, q.expect);
    report.pid = q.pid;
    report.event = event.event.name;
    report.event_note = event.note;
    report.mode = q.system_wide ? "every CPU (system-wide), this process's samples" : "every thread of the process";
    report.exited = exited;
    if (exited)
        report.notes.push_back("the process exited during the window; code bytes and later mappings could not be read");
    report.notes.insert(report.notes.end(), recording.notes.begin(), recording.notes.end());
    if (recording.stats.lost) report.notes.push_back(std::to_string(recording.stats.lost) + " samples were lost");
    return report;
}

// Returns once the child has exec'd the command (a close-on-exec pipe reads EOF
// then), so its /proc files and modules are the command's, not a half-way fork's;
// a failed exec is an error naming the command and why.
pid_t start_child(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    if (argv.empty()) throw std::runtime_error("no command to start");
    int exec_status[2];
    if (pipe2(exec_status, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    const pid_t pid = fork();
    if (pid < 0) {
        close(exec_status[0]);
        close(exec_status[1]);
        throw std::runtime_error(std::string("fork failed: ") + std::strerror(errno));
    }
    if (pid == 0) {
        close(exec_status[0]);
        dup2(STDERR_FILENO, STDOUT_FILENO);
        for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
        execvp(args[0], args.data());
        const int error = errno;
        (void)!write(exec_status[1], &error, sizeof error);
        _exit(127);
    }
    close(exec_status[1]);
    int error = 0;
    ssize_t n;
    while ((n = read(exec_status[0], &error, sizeof error)) < 0 && errno == EINTR) {
    }
    close(exec_status[0]);
    if (n == sizeof error) {
        waitpid(pid, nullptr, 0);
        throw std::runtime_error("cannot start '" + argv[0] + "': " + std::strerror(error));
    }
    return pid;
}

bool child_survives(pid_t pid, uint64_t ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (std::chrono::steady_clock::now() < deadline) {
        if (!alive(pid, true)) return false;
        std::this_thread::sleep_for(poll_interval);
    }
    return alive(pid, true);
}

void stop_child(pid_t pid) {
    if (kill(pid, SIGTERM) != 0) return;  // reaped already
    if (!child_survives(pid, 2000)) return;
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
}

AuditReport audit_started(const std::vector<std::string>& argv, uint64_t delay_ms, AuditRequest request) {
    const pid_t child = start_child(argv);
    if (!child_survives(child, delay_ms))
        throw std::runtime_error("'" + argv[0] + "' exited within --delay-ms=" + std::to_string(delay_ms) +
                                 " (or could not be started)");
    request.pid = child;
    request.is_child = true;
    AuditReport report;
    try {
        report = audit_process(request);
    } catch (...) {
        stop_child(child);
        throw;
    }
    stop_child(child);
    for (const auto& a : argv) report.command += (report.command.empty() ? "" : " ") + a;
    return report;
}

}  // namespace benchfp::harness
