#include "audit/audit_run.hpp"

#include "perf/attach.hpp"
#include "perf/error.hpp"
#include "perf/event.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <thread>

namespace benchfp::harness {

namespace {

constexpr size_t max_code_bytes = 16u << 20;  // read at most this much of one region
constexpr auto poll_interval = std::chrono::milliseconds(20);

// A signal that asks benchfp to end (SIGINT from the terminal, SIGTERM, SIGHUP),
// noted while a command of ours runs: the audit ends at its next poll, the
// command's process group is stopped as at the end of a window, and the signal
// is raised again with benchfp's former action (StopSignals). Without it, the
// command (in a process group of its own, so the terminal's Ctrl-C does not
// reach it) would outlive benchfp.
volatile sig_atomic_t stop_signal = 0;

void note_stop_signal(int signal) { stop_signal = signal; }

bool stop_requested() { return stop_signal != 0; }

class StopSignals {
public:
    StopSignals() {
        struct sigaction action = {};
        action.sa_handler = note_stop_signal;
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < signals.size(); ++i) {
            sigaction(signals[i], nullptr, &former[i]);
            // An ignored signal stays ignored (nohup's SIGHUP): it asks for nothing.
            if (former[i].sa_handler != SIG_IGN) sigaction(signals[i], &action, nullptr);
        }
    }
    ~StopSignals() { restore(); }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

    // Once the command is stopped: ends benchfp as the signal asked, or throws
    // when its former action returns (a handler of the embedding program).
    void raise_noted() {
        const int signal = stop_signal;
        if (!signal) return;
        restore();
        stop_signal = 0;
        ::raise(signal);
        throw std::runtime_error("stopped by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")");
    }

private:
    static constexpr std::array<int, 3> signals = {SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> former = {};
    bool restored = false;

    void restore() {
        if (restored) return;
        restored = true;
        for (size_t i = 0; i < signals.size(); ++i) sigaction(signals[i], &former[i], nullptr);
    }
};

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
    while (std::chrono::steady_clock::now() < deadline && !stop_requested() && !(exited = !alive(q.pid, q.is_child)))
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
        setpgid(0, 0);  // a group of its own: stop_child stops what it starts too
        dup2(STDERR_FILENO, STDOUT_FILENO);
        // Its input is nothing: in a background group, a read of the terminal
        // would stop it (SIGTTIN) for the whole window.
        if (const int null = open("/dev/null", O_RDONLY); null >= 0) dup2(null, STDIN_FILENO);
        for (const std::string& e : env) putenv(const_cast<char*>(e.c_str()));
        execvp(args[0], args.data());
        const int error = errno;
        (void)!write(exec_status[1], &error, sizeof error);
        _exit(127);
    }
    close(exec_status[1]);
    setpgid(pid, pid);  // as the child does: whichever runs first, the group exists before exec
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
    while (std::chrono::steady_clock::now() < deadline && !stop_requested()) {
        if (!alive(pid, true)) return false;
        std::this_thread::sleep_for(poll_interval);
    }
    return alive(pid, true);
}

namespace {

// Whether any process of group `group` is left, reaping its leader (our child)
// when it has exited: a zombie leader would count as one.
bool group_left(pid_t group) {
    waitpid(group, nullptr, WNOHANG);
    return kill(-group, 0) == 0 || errno == EPERM;
}

}  // namespace

void stop_child(pid_t pid) {
    // The whole group: a shell's or a launcher's own children too, which a
    // signal to the command alone would leave running.
    kill(-pid, SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(2000);
    while (group_left(pid) && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(poll_interval);
    kill(-pid, SIGKILL);  // what the grace period did not end; nothing when the group is gone
    waitpid(pid, nullptr, 0);
}

AuditReport audit_started(const std::vector<std::string>& argv, uint64_t delay_ms, AuditRequest request) {
    StopSignals signals;
    const pid_t child = start_child(argv);
    if (!child_survives(child, delay_ms)) {
        if (stop_requested()) {
            stop_child(child);
            signals.raise_noted();
        }
        throw std::runtime_error("'" + argv[0] + "' exited within --delay-ms=" + std::to_string(delay_ms) +
                                 " (or could not be started)");
    }
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
    signals.raise_noted();
    for (const auto& a : argv) report.command += (report.command.empty() ? "" : " ") + a;
    return report;
}

}  // namespace benchfp::harness
