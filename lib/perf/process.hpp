#pragma once
// Reading a foreign process through /proc without its cooperation: its
// threads, its mappings, the perf map a JIT may have written, its memory.
// Nothing here knows what a JIT is: an anonymous executable mapping is only
// reported as such; the harness decides what it means.
#include "perf/symbols.hpp"

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace benchfp::perf {

// One line of /proc/PID/maps.
struct Mapping {
    uint64_t begin = 0, end = 0, offset = 0;
    std::string perms;  // "r-xp"
    std::string path;   // empty for anonymous, "[stack]", "[heap]", "/usr/lib/..."
    bool executable() const { return perms.size() > 2 && perms[2] == 'x'; }
    bool writable() const { return perms.size() > 1 && perms[1] == 'w'; }
    // Anonymous (no file, not [vdso]/[vsyscall]/...): where generated code lives.
    bool anonymous() const { return path.empty() || path.rfind("[anon", 0) == 0 || path == "//anon"; }
    bool contains(uint64_t addr) const { return addr >= begin && addr < end; }
};

bool process_exists(pid_t pid);
// Whether it exists and is no zombie (an exited process its parent has not
// reaped yet still exists); false when it is gone.
bool process_alive(pid_t pid);

// The fields of /proc/PID/stat the harness reads; nothing when the process is gone.
struct ProcessStat {
    std::string comm;
    char state = 0;  // 'R', 'S', ..., 'Z' for a zombie
    pid_t parent = 0;
    pid_t process_group = 0;
    unsigned long flags = 0;  // PF_* (PF_KTHREAD: a kernel thread)
};
std::optional<ProcessStat> read_stat(pid_t pid);

// Why a process that exists has nothing to audit, or empty: a kernel thread
// has no user-space code, a zombie has exited and waits to be reaped (both have
// no mappings, where libdw's report reads "No such process"), and the id of a
// thread other than a process's first is not the process's id.
std::string unauditable_reason(pid_t pid);

// Whether a process of group `group` is alive (not a zombie), from /proc.
bool group_has_live_process(pid_t group);
// The processes whose parent is `parent`, zombies included, from /proc (the
// parent tells them apart with waitid, as only it can without a race).
std::vector<pid_t> children_of(pid_t parent);

// The thread ids in /proc/PID/task; empty when the process is gone.
std::vector<pid_t> thread_ids(pid_t pid);

// The thread's name (/proc/PID/task/TID/comm), empty when it is gone.
std::string thread_name(pid_t pid, pid_t tid);

// /proc/PID/maps; throws Error(system) naming the file when it cannot be read.
std::vector<Mapping> read_maps(pid_t pid);
std::vector<Mapping> parse_maps(const std::string& text);

// /tmp/perf-PID.map ("START SIZE NAME" per line, hex), when the process wrote
// one; empty otherwise. Lines that do not parse are skipped.
std::vector<CodeRegion> read_perf_map(pid_t pid);
std::vector<CodeRegion> parse_perf_map(const std::string& text);

// Bytes of the process's memory (/proc/PID/mem); nothing when unreadable.
std::optional<std::vector<uint8_t>> read_memory(pid_t pid, uint64_t addr, size_t size);

}  // namespace benchfp::perf
