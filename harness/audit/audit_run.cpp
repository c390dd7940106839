#include "audit/audit_run.hpp"

#include "perf/attach.hpp"
#include "perf/error.hpp"
#include "perf/event.hpp"
#include "perf/process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <functional>
#include <iostream>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <thread>

namespace benchfp::harness {

namespace {

constexpr size_t max_code_bytes = 16u << 20;  // read at most this much of one region
constexpr auto poll_interval = std::chrono::milliseconds(20);

// A signal that asks benchfp to end (SIGINT from the terminal, SIGTERM, SIGHUP),
// noted while a command of ours runs (StopSignals): the audit stops sampling at
// its next poll, the command's process group is stopped as at the end of a
// window, and audit_started throws StoppedBySignal, which the audit command
// raises again once it has taken back what it made. Without it, the command (in
// a process group of its own, so the terminal's Ctrl-C does not reach it) would
// outlive benchfp.
std::atomic<int> stop_signal{0};
static_assert(std::atomic<int>::is_always_lock_free, "written by a signal handler");

void note_stop_signal(int signal) { stop_signal.store(signal, std::memory_order_relaxed); }

bool stop_requested() { return stop_signal.load(std::memory_order_relaxed) != 0; }

// Notes the three signals while it lives, and restores their former actions
// after. A signal ignored when it starts stays ignored: nohup's SIGHUP, or
// SIGINT in a job a non-interactive shell put in the background, asks for nothing.
class StopSignals {
public:
    StopSignals() {
        stop_signal.store(0);
        struct sigaction action = {};
        action.sa_handler = note_stop_signal;
        action.sa_flags = SA_RESTART;  // the final waitpid is not cut short by a second signal
        sigemptyset(&action.sa_mask);
        for (size_t i = 0; i < signals.size(); ++i) {
            sigaction(signals[i], nullptr, &former[i]);
            if (former[i].sa_handler != SIG_IGN) sigaction(signals[i], &action, nullptr);
        }
    }
    ~StopSignals() {
        for (size_t i = 0; i < signals.size(); ++i) sigaction(signals[i], &former[i], nullptr);
    }
    StopSignals(const StopSignals&) = delete;
    StopSignals& operator=(const StopSignals&) = delete;

private:
    static constexpr std::array<int, 3> signals = {SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> former = {};
};

// A child's exit as waitid reports it, without reaping it: nothing while it runs.
std::optional<siginfo_t> child_exit(pid_t pid) {
    siginfo_t info = {};
    if (waitid(P_PID, pid, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return std::nullopt;
    return info;
}

// A child that has exited stays a zombie until reaped. waitid's WNOWAIT sees
// the exit without reaping it, so its pid, which is also its process group's
// id, stays taken until stop_child signals the group and reaps it last:
// otherwise another process could take the id in between and get the signals.
bool alive(pid_t pid, bool is_child) {
    if (is_child) return !child_exit(pid);
    return perf::process_alive(pid);  // not its parent: a zombie has exited all the same
}

// How a child of benchfp that has exited ended ("exit status 7", "killed by
// SIGSEGV"), read without reaping it (see alive); empty while it runs.
std::string how_child_ended(pid_t pid) {
    const std::optional<siginfo_t> ended = child_exit(pid);
    if (!ended) return "";
    const siginfo_t& info = *ended;
    if (info.si_code == CLD_EXITED) return "exit status " + std::to_string(info.si_status);
    const char* name = sigabbrev_np(info.si_status);
    return (name ? "killed by SIG" + std::string(name) : "killed by signal " + std::to_string(info.si_status)) +
           (info.si_code == CLD_DUMPED ? ", core dumped" : "");
}

// What the attach read, and the sampler it started.
struct Attached {
    std::vector<perf::Mapping> maps;
    std::unique_ptr<perf::Symbols> symbols;
    std::optional<perf::ProcessSampler> sampler;
};

void attach_once(const AuditRequest& q, const perf::EventChoice& event, Attached& a) {
    a.sampler.reset();  // a failed try's: its events closed
    a.maps = perf::read_maps(q.pid);  // throws when the process is gone
    a.symbols = std::make_unique<perf::Symbols>(q.pid);
    a.sampler.emplace(perf::AttachOptions{q.pid, q.system_wide, event.event, q.frequency, 0});
    a.sampler->start();
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

// What the command started that left its process group (setsid, a new group)
// comes back to benchfp when its parent dies, as benchfp is the subreaper of
// its descendants while an audited command runs (audit_started): these
// orphans, benchfp's children but the command and those that were there before
// it (a shell that exec'd benchfp keeps its own).
bool orphan_of(const StartedCommand& command, pid_t child) {
    return child != command.pid && !command.earlier_children.count(child);
}

// The orphans alive, as alive() sees a child: a process whose main thread
// exited reads 'Z' in /proc while others run.
std::vector<pid_t> live_orphans(const StartedCommand& command) {
    std::vector<pid_t> orphans;
    for (const pid_t child : perf::children_of(getpid()))
        if (orphan_of(command, child) && alive(child, true)) orphans.push_back(child);
    return orphans;
}

// Reaps the orphans that have exited: a window may last an hour, and a program
// that starts helpers would otherwise pile up zombies under benchfp. A scan of
// /proc costs a millisecond or two, beside the process being sampled: the
// windows' polls call it once a second (reap_every).
constexpr int reap_every = 50;  // polls of poll_interval
void reap_exited_orphans(const StartedCommand& command) {
    for (const pid_t child : perf::children_of(getpid()))
        if (orphan_of(command, child)) waitpid(child, nullptr, WNOHANG);
}

// Whether anything of the command is alive: itself (it may have left its
// group), its group, or an orphan of it.
bool anything_left(const StartedCommand& command) {
    return alive(command.pid, true) || perf::group_has_live_process(command.pid) || !live_orphans(command).empty();
}

// `signal` to the command, its group, and each orphan with the group it leads,
// if any (a setsid'd child leads one). No id here can be another process's: the
// command and the orphans are benchfp's unreaped children, and a group's id is
// its leader's pid, never reused while the group has a member.
// signal_orphans: the orphans alone, each once when `signalled` keeps count.
void signal_orphans(const StartedCommand& command, int signal, std::set<pid_t>* signalled = nullptr) {
    for (const pid_t orphan : live_orphans(command)) {
        if (signalled && !signalled->insert(orphan).second) continue;
        kill(-orphan, signal);
        kill(orphan, signal);
    }
}
void signal_all(const StartedCommand& command, int signal, std::set<pid_t>* signalled = nullptr) {
    kill(-command.pid, signal);
    kill(command.pid, signal);
    signal_orphans(command, signal, signalled);
}


}  // namespace

// A step of the attach fails while the process exits, before it is a zombie
// its parent can wait for ("No such process" from libdw, no thread left to
// sample): under load a command exiting at once failed that way in 11 of 60
// tries here. And a fresh-machine CI run (2026-12-06) failed once on a live
// process attached at its exec, libdw answering "Exec format error" (ENOEXEC:
// no auxv entry it knows, or a maps line it cannot parse). The kernel's order
// allows the first: the close-on-exec pipe start_child waits on closes before
// the program is mapped and its auxv written. But reads of the auxv right
// after that never found it empty here, so the cause is not established. So a
// failed attach is tried again while the process lives, and the report says it was.
std::string attach_retried(pid_t pid, bool is_child, const std::function<void()>& attach,
                           std::chrono::milliseconds settle) {
    const auto first = std::chrono::steady_clock::now();
    std::string first_error;
    for (int tries = 1;; ++tries) {
        try {
            attach();
            if (first_error.empty()) return "";
            const auto ms =
                std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - first);
            return "the attach's first try failed (" + first_error + "); try " + std::to_string(tries) +
                   " worked, " + std::to_string(ms.count()) + " ms after the first";
        } catch (const perf::Error& e) {
            // A refused or unknown event is the host's answer, whatever the process does.
            if (e.kind() != perf::ErrorKind::system) throw;
            if (first_error.empty()) first_error = e.what();
            // Said as what happened: libdw's "No such process" of a zombie says less.
            if (!alive(pid, is_child))
                throw std::runtime_error("process " + std::to_string(pid) + " exited before it could be audited (" +
                                         e.what() + ")");
            if (stop_requested() || std::chrono::steady_clock::now() - first >= settle) {
                if (first_error == e.what()) throw;
                throw perf::Error(e.kind(), std::string(e.what()) + " (its first try: " + first_error + ")");
            }
            std::this_thread::sleep_for(poll_interval);
        }
    }
}

AuditReport audit_process(const AuditRequest& q) {
    const perf::EventChoice event = perf::choose_event(q.event, perf::probe_open);
    Attached attached;
    const std::string attach_note =
        attach_retried(q.pid, q.child != nullptr, [&] { attach_once(q, event, attached); });
    std::vector<perf::Mapping>& maps = attached.maps;
    std::unique_ptr<perf::Symbols>& symbols = attached.symbols;
    perf::ProcessSampler& sampler = *attached.sampler;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(q.duration_ms);
    bool exited = false;
    for (int poll = 1; std::chrono::steady_clock::now() < deadline && !stop_requested() &&
                       !(exited = !alive(q.pid, q.child != nullptr));
         ++poll) {
        if (q.child && poll % reap_every == 0) reap_exited_orphans(*q.child);
        std::this_thread::sleep_for(poll_interval);
    }
    perf::ProcessRecording recording = sampler.stop();
    if (stop_requested()) return {};  // nothing more to read: the caller stops the command and ends

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
    report.event_is_clock = event.event.is_clock();
    report.event_note = event.note;
    report.mode = q.system_wide ? "every CPU (system-wide), this process's samples" : "every thread of the process";
    report.exited = exited;
    if (exited) {
        if (q.child) report.ended = how_child_ended(q.pid);  // another's process: its parent's to know
        report.notes.push_back("the process exited during the window" +
                               (report.ended.empty() ? "" : " (" + report.ended + ")") +
                               "; code bytes and later mappings could not be read");
    }
    if (!attach_note.empty()) report.notes.push_back(attach_note);
    report.notes.insert(report.notes.end(), recording.notes.begin(), recording.notes.end());
    if (recording.stats.lost) report.notes.push_back(std::to_string(recording.stats.lost) + " samples were lost");
    return report;
}

// Returns once the child is past the point of no return of its exec (a
// close-on-exec pipe reads EOF then), so it is the command's pid, not a
// half-way fork's; a failed exec is an error naming the command and why. The
// kernel may still be mapping the program then (see attach_retried).
StartedCommand start_child(const std::vector<std::string>& argv, const std::vector<std::string>& env) {
    if (argv.empty()) throw std::runtime_error("no command to start");
    StartedCommand started;
    for (const pid_t earlier : perf::children_of(getpid())) started.earlier_children.insert(earlier);
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
        // Not close-on-exec: with benchfp's own stdin closed, /dev/null is opened as 0 itself.
        if (const int null = open("/dev/null", O_RDONLY); null > STDIN_FILENO) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
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
        // execvp's EACCES of a directory reads "Permission denied": said as what it is.
        std::error_code ec;
        const bool directory = argv[0].find('/') != std::string::npos && std::filesystem::is_directory(argv[0], ec);
        throw std::runtime_error("cannot start '" + argv[0] + "': " + (directory ? "a directory" : std::strerror(error)));
    }
    started.pid = pid;
    return started;
}


bool child_survives(const StartedCommand& command, uint64_t ms) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (int poll = 1; std::chrono::steady_clock::now() < deadline && !stop_requested(); ++poll) {
        if (!alive(command.pid, true)) return false;
        if (poll % reap_every == 0) reap_exited_orphans(command);
        std::this_thread::sleep_for(poll_interval);
    }
    return alive(command.pid, true);
}

void stop_child(const StartedCommand& command) {
    // The whole group: a shell's or a launcher's own children too, which a
    // signal to the command alone would leave running. The command is not
    // reaped before the end (see alive), so its group's id is still its own.
    std::set<pid_t> terminated;  // each orphan gets one SIGTERM: a second one means "now" to many programs
    signal_all(command, SIGTERM, &terminated);
    const auto grace_end = std::chrono::steady_clock::now() + std::chrono::milliseconds(2000);
    while (anything_left(command) && std::chrono::steady_clock::now() < grace_end) {
        std::this_thread::sleep_for(poll_interval);
        signal_orphans(command, SIGTERM, &terminated);  // orphaned since the last look: their one SIGTERM
    }
    // What the grace period did not end; a killed process's children become
    // orphans of benchfp in turn, so again until nothing is left (bounded).
    for (int round = 0; round < 50 && anything_left(command); ++round) {
        signal_all(command, SIGKILL);
        std::this_thread::sleep_for(poll_interval);
    }
    reap_exited_orphans(command);
    // The command last, polled: one that outlives SIGKILL (uninterruptible
    // sleep on a dead NFS or FUSE mount) is left to init after 10 s, where a
    // blocking wait would hang benchfp.
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (waitpid(command.pid, nullptr, WNOHANG) == 0 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(poll_interval);
}

StoppedBySignal::StoppedBySignal(int signal)
    : std::runtime_error("stopped by signal " + std::to_string(signal) + " (" + strsignal(signal) + ")"),
      signal(signal) {}

namespace {

// While it lives, benchfp is the subreaper of its descendants (prctl): a
// process the command started in a session or group of its own is orphaned to
// benchfp, not to init, so that stop_child finds it. And SIGCHLD has its
// default action: inherited as ignored (or SA_NOCLDWAIT), children would be
// reaped at once, and the command's pid would no longer hold its group's id.
// Both as they were after.
class Subreaper {
public:
    Subreaper() {
        prctl(PR_GET_CHILD_SUBREAPER, &former_subreaper_);
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        struct sigaction keep = {};
        keep.sa_handler = SIG_DFL;
        sigemptyset(&keep.sa_mask);
        sigaction(SIGCHLD, &keep, &former_sigchld_);
    }
    ~Subreaper() {
        sigaction(SIGCHLD, &former_sigchld_, nullptr);
        prctl(PR_SET_CHILD_SUBREAPER, former_subreaper_);
    }
    Subreaper(const Subreaper&) = delete;
    Subreaper& operator=(const Subreaper&) = delete;

private:
    int former_subreaper_ = 0;
    struct sigaction former_sigchld_ = {};
};

}  // namespace

AuditReport audit_started(const std::vector<std::string>& argv, uint64_t delay_ms, AuditRequest request) {
    const StopSignals signals;
    const Subreaper subreaper;
    const StartedCommand child = start_child(argv);
    AuditReport report;
    try {
        if (child_survives(child, delay_ms)) {
            request.pid = child.pid;
            request.child = &child;
            report = audit_process(request);
        } else if (!stop_requested()) {
            const std::string how = how_child_ended(child.pid);
            throw std::runtime_error("'" + argv[0] + "' exited within --delay-ms=" + std::to_string(delay_ms) +
                                     (how.empty() ? "" : " (" + how + ")"));
        }
    } catch (...) {
        stop_child(child);  // also what it started, when it exited itself
        if (stop_requested()) throw StoppedBySignal(stop_signal.load());  // the reason the audit failed
        throw;
    }
    stop_child(child);
    if (stop_requested()) throw StoppedBySignal(stop_signal.load());
    for (const auto& a : argv) report.command += (report.command.empty() ? "" : " ") + a;
    return report;
}

int end_by_signal(int signal) {
    ::raise(signal);  // its former action is back (StopSignals): by default, benchfp ends here
    std::cerr << "benchfp audit: stopped by signal " << signal << " (" << strsignal(signal) << ")\n";
    return 2;
}

}  // namespace benchfp::harness
