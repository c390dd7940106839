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

}  // namespace

bool process_exists(pid_t pid) { return pid > 0 && (kill(pid, 0) == 0 || errno == EPERM); }

std::string unauditable_reason(pid_t pid) {
    // /proc/PID/stat: "pid (comm) state ppid pgrp session tty_nr tpgid flags ...";
    // comm may hold spaces and parentheses, so the fields start after the last ')'.
    const std::string stat = slurp(proc_path(pid, "stat")).value_or("");
    const auto close = stat.rfind(')');
    if (close == std::string::npos) return {};
    std::istringstream fields(stat.substr(close + 1));
    char state = 0;
    long long skip = 0;
    unsigned long flags = 0;
    if (!(fields >> state >> skip >> skip >> skip >> skip >> skip >> flags)) return {};
    const std::string who = "process " + std::to_string(pid) + " (" + stat.substr(stat.find('(') + 1, close - stat.find('(') - 1) + ")";
    if (state == 'Z') return who + " is a zombie: it has exited and waits for its parent to reap it";
    constexpr unsigned long kernel_thread = 0x00200000;  // PF_KTHREAD
    if (flags & kernel_thread) return who + " is a kernel thread: it has no user-space code to audit";
    return {};
}

std::vector<pid_t> thread_ids(pid_t pid) {
    std::vector<pid_t> tids;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(proc_path(pid, "task"), ec))
        tids.push_back(static_cast<pid_t>(std::stol(entry.path().filename().string())));
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
