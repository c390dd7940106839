#include "perf/process.hpp"

#include "perf/error.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace benchfp::perf {

namespace {

std::string proc_path(pid_t pid, const std::string& rest) { return "/proc/" + std::to_string(pid) + "/" + rest; }

std::optional<std::string> slurp(const std::string& path) {
    std::ifstream in(path);
    if (!in) return std::nullopt;
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// Every entry of a /proc directory named by a process or thread id, to
// `visit` (false from it: stop). Incremented with an error code: a range-for's
// increment throws, and a process or thread that exits mid-scan is no error.
template <typename Visit>
void for_each_id(const std::string& directory, Visit visit) {
    std::error_code ec;
    for (std::filesystem::directory_iterator it(directory, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.empty() || name.size() > 9 || name.find_first_not_of("0123456789") != std::string::npos) continue;
        if (!visit(static_cast<pid_t>(std::stol(name)))) return;
    }
}

}  // namespace

bool process_exists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

std::optional<ProcessStat> read_stat(pid_t pid) {
    // "pid (comm) state ppid pgrp ... flags ...": comm may hold spaces and
    // parentheses, so the fields start after the last ')'.
    const std::string stat = slurp(proc_path(pid, "stat")).value_or("");
    const auto open = stat.find('('), close = stat.rfind(')');
    if (open == std::string::npos || close == std::string::npos || close < open) return std::nullopt;
    std::istringstream fields(stat.substr(close + 1));
    ProcessStat out;
    out.comm = stat.substr(open + 1, close - open - 1);
    long long session = 0, terminal = 0, terminal_group = 0;
    if (!(fields >> out.state >> out.parent >> out.process_group >> session >> terminal >> terminal_group >> out.flags))
        return std::nullopt;
    return out;
}

namespace {

// /proc says 'Z' of a process whose main thread has exited while others still
// run: a zombie is one with no thread left but that one.
bool zombie(pid_t pid, const ProcessStat& stat) { return stat.state == 'Z' && thread_ids(pid).size() <= 1; }

}  // namespace

bool process_alive(pid_t pid) {
    if (!process_exists(pid)) return false;
    const std::optional<ProcessStat> stat = read_stat(pid);
    return stat && !zombie(pid, *stat);
}

namespace {

// The process (thread group) a thread id belongs to, from /proc/ID/status's
// Tgid line: ID itself for a process, or nothing when it cannot be read.
std::optional<pid_t> thread_group_of(pid_t id) {
    std::istringstream status(slurp(proc_path(id, "status")).value_or(""));
    for (std::string line; std::getline(status, line);)
        if (line.starts_with("Tgid:")) {
            pid_t group = 0;
            std::istringstream(line.substr(5)) >> group;
            return group > 0 ? std::optional<pid_t>(group) : std::nullopt;
        }
    return std::nullopt;
}

}  // namespace

std::string unauditable_reason(pid_t pid) {
    const std::optional<ProcessStat> stat = read_stat(pid);
    if (!stat) return {};
    // A thread's id opens /proc/ID like a process's, and its samples carry
    // the process's id: a window of them would read "no sample" (exit 1).
    if (const std::optional<pid_t> group = thread_group_of(pid); group && *group != pid)
        return std::to_string(pid) + " is a thread (" + stat->comm + ") of process " + std::to_string(*group) +
               ": --pid takes the process's id";
    const std::string who = "process " + std::to_string(pid) + " (" + stat->comm + ")";
    if (zombie(pid, *stat)) return who + " is a zombie: it has exited and waits for its parent to reap it";
    constexpr unsigned long kernel_thread = 0x00200000;  // PF_KTHREAD
    if (stat->flags & kernel_thread) return who + " is a kernel thread: it has no user-space code to audit";
    return {};
}

namespace {

// Every process of /proc with its stat fields, to `visit` (false from it: stop).
template <typename Visit>
void for_each_process(Visit visit) {
    for_each_id("/proc", [&](pid_t pid) {
        const std::optional<ProcessStat> stat = read_stat(pid);
        return !stat || visit(pid, *stat);
    });
}

}  // namespace

bool group_has_live_process(pid_t group) {
    bool found = false;
    for_each_process([&](pid_t pid, const ProcessStat& stat) {
        found = stat.process_group == group && !zombie(pid, stat);
        return !found;
    });
    return found;
}

std::vector<pid_t> children_of(pid_t parent) {
    std::vector<pid_t> children;
    for_each_process([&](pid_t pid, const ProcessStat& stat) {
        if (stat.parent == parent) children.push_back(pid);
        return true;
    });
    return children;
}

std::vector<pid_t> thread_ids(pid_t pid) {
    std::vector<pid_t> tids;
    for_each_id(proc_path(pid, "task"), [&](pid_t tid) {
        tids.push_back(tid);
        return true;
    });
    return tids;
}

std::string thread_name(pid_t pid, pid_t tid) {
    std::string name = slurp(proc_path(pid, "task/" + std::to_string(tid) + "/comm")).value_or("");
    while (!name.empty() && name.back() == '\n') name.pop_back();
    return name;
}

std::vector<Mapping> parse_maps(const std::string& text) {
    // begin-end perms offset dev inode [path]
    std::vector<Mapping> maps;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream in(line);
        Mapping m;
        std::string range, dev, inode;
        if (!(in >> range >> m.perms >> std::hex >> m.offset >> dev >> inode)) continue;
        const auto dash = range.find('-');
        if (dash == std::string::npos) continue;
        m.begin = std::stoull(range.substr(0, dash), nullptr, 16);
        m.end = std::stoull(range.substr(dash + 1), nullptr, 16);
        std::getline(in >> std::ws, m.path);
        maps.push_back(m);
    }
    return maps;
}

std::vector<Mapping> read_maps(pid_t pid) {
    const auto text = slurp(proc_path(pid, "maps"));
    if (!text) throw Error(ErrorKind::system, "cannot read " + proc_path(pid, "maps") + ": " + std::strerror(errno));
    return parse_maps(*text);
}

std::vector<CodeRegion> parse_perf_map(const std::string& text) {
    std::vector<CodeRegion> regions;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::istringstream in(line);
        uint64_t start = 0, size = 0;
        CodeRegion r;
        if (!(in >> std::hex >> start >> size) || size == 0) continue;
        std::getline(in >> std::ws, r.name);
        r.begin = start;
        r.end = start + size;
        regions.push_back(r);
    }
    return regions;
}

std::vector<CodeRegion> read_perf_map(pid_t pid) {
    return parse_perf_map(slurp("/tmp/perf-" + std::to_string(pid) + ".map").value_or(""));
}

std::optional<std::vector<uint8_t>> read_memory(pid_t pid, uint64_t addr, size_t size) {
    const int fd = open(proc_path(pid, "mem").c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::vector<uint8_t> bytes(size);
    const ssize_t n = pread(fd, bytes.data(), size, static_cast<off_t>(addr));
    close(fd);
    if (n <= 0) return std::nullopt;
    bytes.resize(static_cast<size_t>(n));
    return bytes;
}

}  // namespace benchfp::perf
