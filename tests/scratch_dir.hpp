#pragma once
// A test process's scratch directory: made under the system's temp directory
// on first use, removed with everything in it when the process exits. ctest
// runs every discovered test in a process of its own, so a file per process
// left behind adds up: one week of runs had left 191 benchfp_pprof_* and 32
// benchfp_tools_* directories and 80 benchfp_robust_* files in /tmp.
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>

namespace benchfp::test {

class ScratchDir {
public:
    explicit ScratchDir(const std::string& prefix)
        : path_(std::filesystem::temp_directory_path() / (prefix + std::to_string(::getpid()))), owner_(::getpid()) {
        // Empty at the start: a killed run of a process with the same pid may
        // have left one.
        std::filesystem::remove_all(path_);
        std::filesystem::create_directories(path_);
    }
    ~ScratchDir() {
        // Only the process that made it: a forked child that exits runs this too.
        if (::getpid() != owner_) return;
        std::error_code ignored;  // removal stops at the first error; a destructor cannot report it
        std::filesystem::remove_all(path_, ignored);
    }
    ScratchDir(const ScratchDir&) = delete;
    ScratchDir& operator=(const ScratchDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

private:
    std::filesystem::path path_;
    pid_t owner_;
};

// NAME inside this process's scratch directory "<prefix><pid>" (the prefix of
// the first call names it: one test file, one prefix).
inline std::string scratch_path(const std::string& prefix, const std::string& name) {
    static const ScratchDir dir(prefix);
    return (dir.path() / name).string();
}

}  // namespace benchfp::test
