#include "report/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace benchfp::report {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
    throw std::runtime_error("cannot write '" + path + "': " + what + ": " + std::strerror(error));
}

// Writes all of data to fd, retrying short writes and EINTR; returns 0 or errno.
int write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return 0;
}

std::string directory_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

void write_in_place(const std::string& path, std::string_view data) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0) fail(path, "open", errno);
    const int error = write_all(fd, data);
    const int closed = ::close(fd) == 0 ? 0 : errno;
    if (error) fail(path, "write", error);
    if (closed) fail(path, "close", closed);
}

}  // namespace

void write_file(const std::string& path, std::string_view data) {
    if (path.empty()) throw std::runtime_error("cannot write a file with an empty name");
    struct stat existing{};
    const bool exists = ::stat(path.c_str(), &existing) == 0;
    if (exists && S_ISDIR(existing.st_mode)) fail(path, "it is a directory", EISDIR);
    if (exists && !S_ISREG(existing.st_mode)) return write_in_place(path, data);

    std::string temporary = path + ".tmp.XXXXXX";
    const int fd = ::mkstemp(temporary.data());
    if (fd < 0) fail(path, "create a temporary file in " + directory_of(path), errno);
    // mkstemp makes it 0600; a results file is as readable as any other file.
    const mode_t mask = ::umask(0);
    ::umask(mask);
    int error = ::fchmod(fd, exists ? existing.st_mode & 07777 : 0666 & ~mask) == 0 ? 0 : errno;
    if (!error) error = write_all(fd, data);
    if (!error && ::fsync(fd) != 0) error = errno;
    if (::close(fd) != 0 && !error) error = errno;
    if (!error && ::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
    if (error) {
        ::unlink(temporary.c_str());
        fail(path, "write", error);
    }
}

void check_writable(const std::string& path) {
    if (path.empty()) throw std::runtime_error("an output path is empty");
    struct stat existing{};
    if (::stat(path.c_str(), &existing) == 0) {
        if (S_ISDIR(existing.st_mode)) fail(path, "it is a directory", EISDIR);
        if (::access(path.c_str(), W_OK) != 0) fail(path, "no write permission", errno);
        return;
    }
    const std::string directory = directory_of(path);
    if (::access(directory.c_str(), W_OK | X_OK) != 0) fail(path, "its directory " + directory, errno);
}

}  // namespace benchfp::report
