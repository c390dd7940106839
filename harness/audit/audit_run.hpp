#pragma once
// One audit of one process: attach, sample the window, read what the process
// left (maps, perf map, code bytes), judge. Shared by `benchfp audit` and the
// --target=onednn comparison.
#include "audit/audit_analysis.hpp"

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

namespace benchfp::harness {

// A command benchfp started: its pid (also its process group's id), and the
// children benchfp had before it (a shell that exec'd benchfp keeps its own),
// which are never signalled nor reaped as the command's. The command is never
// reaped before stop_child: its pid keeps its group's id from being reused.
struct StartedCommand {
    pid_t pid = 0;
    std::set<pid_t> earlier_children;
};

struct AuditRequest {
    pid_t pid = 0;
    const StartedCommand* child = nullptr;  // set when the process is a command benchfp started
    uint64_t duration_ms = 1000;
    bool system_wide = false;
    std::vector<std::string> expect;
    std::optional<std::string> event;
    uint64_t frequency = 4000;
};

// Throws perf::Error (refused, gone) with a message for the user.
AuditReport audit_process(const AuditRequest& request);

// Runs `attach` (the attach's reads of process `pid` and its sampler's start)
// until it returns: while it throws perf::Error of kind system and the process
// lives, again 20 ms after each try, until `settle` has passed since the first
// (why: audit_run.cpp). Returns a note for the report saying what failed first
// when a later try worked, empty when the first did. Throws std::runtime_error
// "process PID exited before it could be audited (...)" when it exits
// meanwhile; the last error (with the first, when they differ) once `settle`
// has passed or a stop signal came (SIGINT, SIGTERM, SIGHUP while a command of
// benchfp's runs); and any other error at once.
std::string attach_retried(pid_t pid, bool is_child, const std::function<void()>& attach,
                           std::chrono::milliseconds settle = std::chrono::seconds(1));

// Starts `argv` in a process group of its own, with its stdout sent to our
// stderr (ours is the report) and its stdin from /dev/null; throws
// std::runtime_error when it cannot.
StartedCommand start_child(const std::vector<std::string>& argv, const std::vector<std::string>& env = {});
// Waits `ms` unless the child exits first; false when it did.
bool child_survives(const StartedCommand& command, uint64_t ms);
// SIGTERM to it, its process group and what left the group once orphaned to
// benchfp (the subreaper of its descendants while audit_started runs), then
// SIGKILL to what is left after a grace period of 2 s; reaps it, last.
void stop_child(const StartedCommand& command);

// Thrown by audit_started when SIGINT, SIGTERM or SIGHUP came while it ran,
// once the command is stopped: the caller takes back what it made (files,
// directories), then calls end_by_signal.
struct StoppedBySignal : std::runtime_error {
    explicit StoppedBySignal(int signal);
    int signal;
};
// Raises `signal` with the action it had before the audit (by default, the end
// of benchfp by that signal); returns the exit status 2 if that action returns.
int end_by_signal(int signal);

// Starts `argv`, lets it run `delay_ms` (attached mid-run, as a fleet profiler
// is), audits it with `request` (its pid and is_child filled in here), and
// stops it, also when the audit throws. Throws std::runtime_error when the
// command exits within the delay or cannot be started, and StoppedBySignal
// when SIGINT, SIGTERM or SIGHUP came meanwhile (the audit stops at its next
// poll). The command is started in a process group of its own, with benchfp
// as the subreaper of what it starts; all of it is stopped with it, also when
// the command exits first or a process left the group.
AuditReport audit_started(const std::vector<std::string>& argv, uint64_t delay_ms, AuditRequest request);

}  // namespace benchfp::harness
