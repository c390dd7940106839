#include "report/file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <stdexcept>
#include <system_error>
#include <utility>
#include <vector>

namespace benchfp::report {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what, int error) {
    throw std::runtime_error("cannot write '" + path + "': " + what + ": " + std::strerror(error));
}

std::string directory_of(const std::string& path) {
    const size_t slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    return slash == 0 ? "/" : path.substr(0, slash);
}

// A temporary name beside `path`: the pid and a counter keep this process's
// writers apart; a file left by an earlier process of the same pid makes
// create_temporary's O_EXCL open fail, and it tries the next counter.
std::string temporary_name(const std::string& path) {
    static std::atomic<unsigned> counter{0};
    return path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
}

// O_EXCL never opens a file someone planted; the mode 0666 is narrowed by the
// umask in the kernel, as for any file a program creates (reading the umask
// here would mean setting it, which races with other threads creating files).
int create_temporary(const std::string& path, std::string& temporary) {
    for (int attempt = 0; attempt < 100; ++attempt) {
        temporary = temporary_name(path);
        const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd >= 0 || errno != EEXIST) return fd;
    }
    errno = EEXIST;
    return -1;
}

// The rename is only durable once the directory entry is on disk too.
int sync_directory(const std::string& directory) {
    const int fd = ::open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return errno;
    const int error = ::fsync(fd) == 0 || errno == EINVAL ? 0 : errno;  // EINVAL: a file system without it
    ::close(fd);
    return error;
}

// A symbolic link stays a link: the file it names is replaced, as a shell's
// `>` would write through it. A dangling link is an error, not a new file
// somewhere the caller did not name.
std::string resolve_link(const std::string& path) {
    struct stat link{};
    if (::lstat(path.c_str(), &link) != 0 || !S_ISLNK(link.st_mode)) return path;
    char* target = ::realpath(path.c_str(), nullptr);
    if (!target) fail(path, "it is a symbolic link to a file that cannot be resolved", errno);
    std::string resolved(target);
    std::free(target);
    return resolved;
}

void write_in_place(const std::string& path, std::string_view data) {
    // O_NONBLOCK: a FIFO nobody reads is an error (ENXIO) rather than a run that
    // hangs at its very end; the writes themselves block as usual.
    const int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) fail(path, errno == ENXIO ? "open (a FIFO with no reader)" : "open", errno);
    if (const int error = clear_nonblocking(fd)) {
        ::close(fd);
        fail(path, "clear O_NONBLOCK", error);
    }
    const int error = write_fully(fd, data);
    const int closed = ::close(fd) == 0 ? 0 : errno;
    if (error) fail(path, "write", error);
    if (closed) fail(path, "close", closed);
}

}  // namespace

int clear_nonblocking(int fd) {
    const int flags = ::fcntl(fd, F_GETFL);
    return flags >= 0 && ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) == 0 ? 0 : errno;
}

int write_fully(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n < 0 ? errno : EIO;
        data.remove_prefix(static_cast<size_t>(n));
    }
    return 0;
}

namespace {

// What is at `named` before it is written: nothing, a regular file (replaced
// through a temporary, keeping its mode), or something written in place (a
// device, a FIFO; /dev/stdout is a link to a pipe or terminal, written through
// the name given). Throws for a directory. One stat, shared by the writers and
// check_writable, which must agree on it.
struct Existing {
    bool exists = false;
    mode_t mode = 0;
    bool in_place() const { return exists && !S_ISREG(mode); }
};

Existing existing_at(const std::string& named) {
    struct stat found{};
    if (::stat(named.c_str(), &found) != 0) return {};
    if (S_ISDIR(found.st_mode)) fail(named, "it is a directory", EISDIR);
    return {true, found.st_mode};
}

// A file of a set on its way: its bytes in a temporary beside `path`, flushed
// and closed, waiting for the rename.
struct Staged {
    std::string path;  // where it goes: the name given, a symbolic link resolved
    std::string temporary;
};

Staged stage(const std::string& named, std::string_view data, const Existing& existing) {
    Staged staged{resolve_link(named), ""};
    const int fd = create_temporary(staged.path, staged.temporary);
    if (fd < 0) fail(named, "create a temporary file in " + directory_of(staged.path), errno);
    // A replaced file keeps its permissions.
    int error = existing.exists && ::fchmod(fd, existing.mode & 07777) != 0 ? errno : 0;
    if (!error) error = write_fully(fd, data);
    if (!error && ::fsync(fd) != 0) error = errno;
    if (::close(fd) != 0 && !error) error = errno;
    if (error) {
        ::unlink(staged.temporary.c_str());
        fail(staged.path, "write", error);
    }
    return staged;
}

void discard(const std::vector<Staged>& staged, size_t from = 0) {
    for (size_t i = from; i < staged.size(); ++i) ::unlink(staged[i].temporary.c_str());
}

// Three steps, so that a failure leaves every replaced file as it was: the
// paths written in place first (a write there cannot be undone, and no
// temporary exists yet that a process killed in it, by SIGPIPE from a closed
// /dev/stdout, would leave behind); then every other file's temporary; only
// then is each temporary renamed over its file. A rename within one directory
// fails only when the file system does (EIO, a read-only remount): the files
// renamed before it are then new and the message says which one was not.
using PathText = std::pair<std::string, std::string_view>;

void write_all(const std::vector<PathText>& files) {
    std::vector<std::pair<const PathText*, Existing>> replaced;
    for (const PathText& file : files) {
        if (file.first.empty()) throw std::runtime_error("cannot write a file with an empty name");
        const Existing existing = existing_at(file.first);
        if (existing.in_place()) write_in_place(file.first, file.second);
        else replaced.emplace_back(&file, existing);
    }
    std::vector<Staged> staged;
    staged.reserve(replaced.size());  // no allocation between a temporary's creation and its entry here
    try {
        for (const auto& [file, existing] : replaced) staged.push_back(stage(file->first, file->second, existing));
    } catch (...) {
        discard(staged);
        throw;
    }
    for (size_t i = 0; i < staged.size(); ++i) {
        if (::rename(staged[i].temporary.c_str(), staged[i].path.c_str()) == 0) continue;
        const int error = errno;
        discard(staged, i);
        fail(staged[i].path, i == 0 ? "rename" : "rename (the files before it in this set are written)", error);
    }
    for (const Staged& s : staged)
        if (const int synced = sync_directory(directory_of(s.path))) fail(s.path, "sync its directory", synced);
}

}  // namespace

void write_file(const std::string& path, std::string_view data) { write_all({{path, data}}); }

void write_files(const std::vector<NamedText>& files) {
    std::vector<PathText> all;
    for (const NamedText& file : files) all.emplace_back(file.name, file.text);
    write_all(all);
}

void check_writable(const std::string& path) {
    if (path.empty()) throw std::runtime_error("an output path is empty");
    const Existing existing = existing_at(path);
    if (existing.exists && ::access(path.c_str(), W_OK) != 0) fail(path, "no write permission", errno);
    if (existing.in_place()) return;
    // A regular file is replaced through a temporary beside it: its directory must take one.
    // The temporary goes where write_file puts it: beside the file a link names.
    const std::string target = resolve_link(path);
    const std::string directory = directory_of(target);
    if (::access(directory.c_str(), W_OK | X_OK) != 0) fail(path, "its directory " + directory, errno);
    // access() answers from the mode bits, and root passes it on /sys or a
    // read-only mount: a temporary created and removed is the file system's
    // answer (seen by a watcher of the directory as a file that comes and goes).
    std::string probe;
    const int fd = create_temporary(target, probe);
    if (fd < 0) fail(path, "create a temporary file in " + directory, errno);
    ::close(fd);
    if (::unlink(probe.c_str()) != 0) fail(path, "remove the temporary file " + probe, errno);
}

namespace {

// Which file a path names, to compare two paths: absolute, normalized, symbolic
// links resolved where they exist. None for an empty path or an existing file
// that is not regular (/dev/null: written in place, any number may share one).
std::optional<std::filesystem::path> file_identity(const std::string& path) {
    if (path.empty()) return std::nullopt;
    struct stat existing{};
    if (::stat(path.c_str(), &existing) == 0 && !S_ISREG(existing.st_mode)) return std::nullopt;
    std::error_code ec;
    const std::filesystem::path absolute = std::filesystem::absolute(path, ec);
    // weakly_canonical keeps a relative path relative where its first element does not exist.
    std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, ec);
    if (ec) resolved = absolute.lexically_normal();
    return resolved;
}

}  // namespace

namespace {

// The first two of `files` that name one file (file_identity), if two do.
std::optional<std::pair<const NamedOutput*, const NamedOutput*>> same_file_twice(std::span<const NamedOutput> files) {
    std::vector<std::pair<const NamedOutput*, std::filesystem::path>> seen;
    for (const NamedOutput& file : files) {
        const auto resolved = file_identity(file.path);
        if (!resolved) continue;
        for (const auto& [earlier, path] : seen)
            if (path == *resolved) return std::pair{earlier, &file};
        seen.emplace_back(&file, *resolved);
    }
    return std::nullopt;
}

}  // namespace

void check_distinct_outputs(std::initializer_list<NamedOutput> outputs) {
    if (const auto twice = same_file_twice({outputs.begin(), outputs.size()}))
        throw std::runtime_error(twice->first->option + " and " + twice->second->option + " name the same file '" +
                                 twice->second->path + "': one would replace the other");
}

void check_distinct_inputs(const std::vector<NamedInput>& inputs) {
    if (const auto twice = same_file_twice(inputs))
        throw std::runtime_error(twice->first->option + " and " + twice->second->option + " name the same file '" +
                                 twice->second->path + "': it would be read twice");
}

void check_inputs_kept(const std::vector<NamedOutput>& outputs, const std::vector<NamedInput>& inputs) {
    for (const NamedOutput& output : outputs) {
        const auto written = file_identity(output.path);
        if (!written) continue;
        for (const NamedInput& input : inputs)
            if (file_identity(input.path) == written)
                throw std::runtime_error(output.option + " names '" + output.path + "', the file " + input.option +
                                         " reads: writing it would replace that input");
    }
}

void check_outputs(std::initializer_list<NamedOutput> outputs) {
    for (const NamedOutput& output : outputs) {
        if (output.path.empty()) continue;
        // Many tools read "-" as standard output; every output here is a file
        // written whole through a temporary, so "-" would be a file named "-".
        if (output.path == "-") throw std::runtime_error(output.option + "=-: name a file (not standard output)");
        try {
            check_writable(output.path);
        } catch (const std::runtime_error& e) {
            throw std::runtime_error(output.option + ": " + e.what());
        }
    }
    check_distinct_outputs(outputs);
}

MadeDirectories make_directories(const std::string& dir, const std::string& what) {
    if (dir.empty()) return {};  // the working directory
    if (dir == "-") throw std::runtime_error("-: name a " + what + " directory (not standard output)");
    struct stat found{};
    if (::stat(dir.c_str(), &found) == 0) {
        if (!S_ISDIR(found.st_mode))
            throw std::runtime_error(dir + ": cannot create " + what + " directory: a file of that name is in the way");
        return {};
    }
    // The path as given, each element in turn from the first that is not
    // there (lstat: a link, even a dangling one, is there), made one at a time
    // so that exactly what was made is known. "a/../b" keeps its "..": the
    // write goes through the same path.
    std::vector<std::string> missing;
    std::string at = dir;
    while (at.size() > 1 && at.back() == '/') at.pop_back();
    while (!at.empty() && ::lstat(at.c_str(), &found) != 0) {
        missing.push_back(at);
        const size_t slash = at.find_last_of('/');
        if (slash == std::string::npos) break;
        at.resize(slash);
        while (at.size() > 1 && at.back() == '/') at.pop_back();
        if (at == "/") break;
    }
    MadeDirectories made;
    for (auto it = missing.rbegin(); it != missing.rend(); ++it) {
        if (::mkdir(it->c_str(), 0777) == 0) {
            made.push_back(*it);
            continue;
        }
        const int error = errno;
        // There after all ("n/.." once n is made, or another process made it): not ours.
        if (error == EEXIST && ::stat(it->c_str(), &found) == 0 && S_ISDIR(found.st_mode)) continue;
        remove_made_directories(made);
        throw std::runtime_error(dir + ": cannot create " + what + " directory: " + *it + ": " + std::strerror(error));
    }
    if (::stat(dir.c_str(), &found) != 0 || !S_ISDIR(found.st_mode)) {
        remove_made_directories(made);
        throw std::runtime_error(dir + ": cannot create " + what + " directory");
    }
    return made;
}

void remove_made_directories(const MadeDirectories& made) {
    // rmdir, never remove(): it takes away nothing but an empty directory.
    for (auto it = made.rbegin(); it != made.rend(); ++it)
        if (::rmdir(it->c_str()) != 0) return;  // not empty: it stays, and so do its parents
}

MadeDirectories check_file_set(const std::string& dir, const std::vector<std::string>& names) {
    MadeDirectories made = make_directories(dir, "report");
    try {
        for (const std::string& name : names) check_writable((std::filesystem::path(dir) / name).string());
    } catch (...) {
        remove_made_directories(made);  // its own failure takes back what it made
        throw;
    }
    return made;
}

void write_file_set(const std::string& dir, const std::vector<NamedText>& files) {
    std::vector<std::string> names;
    for (const NamedText& file : files) names.push_back(file.name);
    const MadeDirectories made = check_file_set(dir, names);
    std::vector<PathText> paths;  // the texts viewed, not copied
    for (const NamedText& file : files) paths.emplace_back((std::filesystem::path(dir) / file.name).string(), file.text);
    try {
        write_all(paths);
    } catch (...) {
        remove_made_directories(made);  // only where nothing was written: a directory with a file stays
        throw;
    }
}

}  // namespace benchfp::report
