#include "jit_profile.hpp"

#include "kernel/case_options.hpp"
#include "quoted.hpp"

#include "jit/code_regions.hpp"
#include "report/file.hpp"
#include "usage_error.hpp"

#include <elf.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <iostream>
#include <mutex>
#include <sstream>
#include <vector>

namespace benchfp::harness {

namespace {

// The jitdump format of tools/perf/Documentation/jitdump-specification.txt.
constexpr uint32_t jitdump_magic = 0x4A695444;  // "JiTD"
constexpr uint32_t jit_code_load = 0;

struct JitdumpHeader {
    uint32_t magic = jitdump_magic, version = 1, total_size = sizeof(JitdumpHeader), elf_mach = EM_X86_64,
             pad1 = 0, pid = 0;
    uint64_t timestamp = 0, flags = 0;
};
struct CodeLoad {
    uint32_t id = jit_code_load, total_size = 0;
    uint64_t timestamp = 0;
    uint32_t pid = 0, tid = 0;
    uint64_t vma = 0, code_addr = 0, code_size = 0, code_index = 0;
};

// perf inject --jit matches records to samples with `perf record -k 1`: CLOCK_MONOTONIC.
uint64_t monotonic_ns() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

// A file asked for that cannot be made is bad input, before any case runs.
// A regular file of this user already at this pid's name was left by an
// earlier process that had this pid (it has ended: the pid is ours now), and is
// replaced; a link or another user's file never is (/tmp is sticky: nobody
// else can swap ours for a link between the lstat and the unlink).
int create_exclusive(const std::string& path) {
    constexpr int flags = O_CREAT | O_EXCL | O_NOFOLLOW | O_RDWR | O_CLOEXEC;
    int fd = open(path.c_str(), flags, 0644);
    struct stat left{};
    if (fd < 0 && errno == EEXIST && ::lstat(path.c_str(), &left) == 0 && S_ISREG(left.st_mode) &&
        left.st_uid == ::geteuid() && ::unlink(path.c_str()) == 0)
        fd = open(path.c_str(), flags, 0644);
    if (fd < 0) throw UsageError("--jit-profile: cannot write " + path + ": " + std::strerror(errno));
    return fd;
}

struct Files {
    std::mutex mutex;  // kernels may be built on several threads
    int map = -1, jitdump = -1;
    uint64_t index = 0;
    bool failed = false;  // a write failed: the run's exit status says so (jit_profile_failed)
};
Files files;

// A write that fails closes that file and says so once: a perf map with a
// kernel missing would name its samples wrongly without telling anyone.
void write_or_stop(int& fd, const char* what, std::string_view data) {
    if (fd < 0) return;
    if (const int error = report::write_fully(fd, data)) {
        std::cerr << "benchfp: warning: --jit-profile: writing the " << what << " failed (" << std::strerror(error)
                  << "); it stops here and lacks the kernels built from now on\n";
        ::close(fd);
        fd = -1;
        files.failed = true;
    }
}

std::string_view bytes_of(const void* data, size_t size) { return {static_cast<const char*>(data), size}; }

void announce(const jit::CodeRegionInfo& r) {
    std::lock_guard lock(files.mutex);
    std::ostringstream line;
    line << std::hex << r.begin << ' ' << r.size << ' ' << r.name << '\n';
    write_or_stop(files.map, "perf map", line.str());
    if (files.jitdump < 0) return;
    CodeLoad load;
    load.total_size = static_cast<uint32_t>(sizeof load + r.name.size() + 1 + r.size);
    load.timestamp = monotonic_ns();
    load.pid = static_cast<uint32_t>(getpid());
    load.tid = static_cast<uint32_t>(gettid());
    load.vma = load.code_addr = r.begin;
    load.code_size = r.size;
    load.code_index = files.index++;
    std::string record(bytes_of(&load, sizeof load));
    record.append(r.name.c_str(), r.name.size() + 1);
    record.append(bytes_of(reinterpret_cast<const void*>(r.begin), r.size));
    // One write per record: a failure stops the file there (a partly written
    // last record, which perf inject reports as truncated; the warning says so).
    write_or_stop(files.jitdump, "jitdump file", record);
}

}  // namespace

JitProfileChoice parse_jit_profile(const std::string& text, const std::string& where) {
    JitProfileChoice choice;
    if (text.empty()) return choice;
    for (const std::string& item : split_list(text, "--jit-profile", where)) {
        if (item == "map") choice.map = true;
        else if (item == "jitdump") choice.jitdump = true;
        else throw UsageError(where + ": unknown --jit-profile " + quoted_token(item) + " (known: map, jitdump)");
    }
    return choice;
}

// What start_jit_profile has made so far, taken back if it does not finish:
// a run that stops before its first case leaves no profile file in /tmp.
struct Started {
    std::vector<std::pair<int*, std::string>> files;  // its descriptor, its path
    bool done = false;
    ~Started() {
        if (done) return;
        for (auto& [fd, path] : files) {
            ::close(*fd);
            *fd = -1;
            ::unlink(path.c_str());  // ours: created with O_EXCL
        }
    }
};

void start_jit_profile(const JitProfileChoice& choice) {
    const std::string pid = std::to_string(getpid());
    Started started;
    if (choice.map) {
        const std::string path = "/tmp/perf-" + pid + ".map";
        files.map = create_exclusive(path);
        started.files.emplace_back(&files.map, path);
    }
    if (choice.jitdump) {
        const std::string path = "/tmp/jit-" + pid + ".dump";
        files.jitdump = create_exclusive(path);
        started.files.emplace_back(&files.jitdump, path);
        JitdumpHeader header;
        header.pid = static_cast<uint32_t>(getpid());
        header.timestamp = monotonic_ns();
        // perf record learns of the file from this executable mapping of it:
        // perf inject --jit finds jit-PID.dump through the MMAP record.
        const int error = report::write_fully(files.jitdump, bytes_of(&header, sizeof header));
        if (error || mmap(nullptr, sysconf(_SC_PAGESIZE), PROT_READ | PROT_EXEC, MAP_PRIVATE, files.jitdump, 0) == MAP_FAILED)
            throw UsageError("--jit-profile: cannot " + std::string(error ? "write " : "map ") + path + ": " +
                             std::strerror(error ? error : errno));
    }
    started.done = true;
    if (files.map >= 0 || files.jitdump >= 0) jit::set_code_observer(announce);
}

bool jit_profile_failed() {
    std::lock_guard lock(files.mutex);
    return files.failed;
}

}  // namespace benchfp::harness
