#pragma once
// Writing a file so that no reader ever sees half of it and a failed write is
// an error, never a silent truncation: every file benchfp writes (results,
// baselines, reports, profiles) goes through here.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace benchfp::report {

// Writes `data` to `path` atomically: a temporary file in the same directory,
// every byte written and flushed to disk, closed with its error checked, then
// renamed over `path` (so the old file stays whole if anything fails), and the
// directory synced. A replaced file keeps its mode; a new one gets 0666 less
// the umask. A symbolic link is written through (the file it names is
// replaced; the link stays). Paths
// that exist and are not regular files (/dev/stdout, /dev/full, a FIFO) are
// written in place, with the same checks. Throws std::runtime_error naming the
// path and the system's reason.
void write_file(const std::string& path, std::string_view data);

// Writes all of `data` to `fd`, retrying short writes and EINTR; returns 0 or
// the errno of the failure (EIO for a write that made no progress). For files
// that are streamed rather than written whole (perf maps, jitdump).
int write_fully(int fd, std::string_view data);

// Clears O_NONBLOCK on `fd`, which was opened with it so that opening a FIFO
// would not wait for the other end; 0 or the errno of the failure.
int clear_nonblocking(int fd);

// Throws std::runtime_error naming `path` unless a file can be created there
// (its directory exists and takes a new file, which is created and removed
// again; it is not a directory): to check an output path before a long run
// rather than after it. A device or FIFO is checked for write permission only.
void check_writable(const std::string& path);

// Throws std::runtime_error naming both options unless the non-empty paths of
// `outputs` (option name, path) name different files (compared as absolute,
// normalized paths, symbolic links resolved where they exist): two outputs of
// one run written to one file would keep only the last. Paths that exist and
// are not regular files (/dev/null) are written in place: any number may share one.
struct NamedOutput {
    std::string option, path;
};
void check_distinct_outputs(std::initializer_list<NamedOutput> outputs);
// Throws std::runtime_error naming both options when an output of `outputs`
// is the file an input of `inputs` names (compared as check_distinct_outputs
// compares): writing it would replace what the run read, whose results would
// then be all that is left of it.
using NamedInput = NamedOutput;
void check_inputs_kept(const std::vector<NamedOutput>& outputs, const std::vector<NamedInput>& inputs);
// Throws std::runtime_error naming both options unless `inputs` name different
// files (compared as check_distinct_outputs compares): one file given twice
// (or through a link) would be read as two runs, a re-run of itself.
void check_distinct_inputs(const std::vector<NamedInput>& inputs);
// Both checks for a run's outputs before it starts: each non-empty path
// check_writable (the message led by its option; "-", standard output
// elsewhere, is refused), then check_distinct_outputs.
void check_outputs(std::initializer_list<NamedOutput> outputs);

// Creates `dir` and its parents (nothing for ""): throws std::runtime_error
// naming it and `what` ("report", "baseline") when it cannot, or a file is in
// the way. Returns the directories it made, outermost first (none when `dir`
// was there): a run that then fails to write takes them back
// (remove_made_directories) rather than leave empty directories behind.
using MadeDirectories = std::vector<std::string>;
// "-" is refused: standard output to other tools, never a directory here.
MadeDirectories make_directories(const std::string& dir, const std::string& what);
// Removes what make_directories made, innermost first, each only while it is
// an empty directory (rmdir): a directory that holds a file stays, with its parents.
void remove_made_directories(const MadeDirectories& made);
// What a run made with make_directories (or check_file_set), taken back when
// the guard goes out of scope unless keep() was called: whichever way the run
// fails, an early return or an exception, it leaves no empty directories.
class MadeDirectoriesGuard {
public:
    MadeDirectoriesGuard() = default;
    MadeDirectoriesGuard(const MadeDirectoriesGuard&) = delete;
    MadeDirectoriesGuard& operator=(const MadeDirectoriesGuard&) = delete;
    ~MadeDirectoriesGuard() {
        if (!kept_) remove_made_directories(made_);
    }
    // Outer directories before inner ones: what is added later is taken back first.
    void add(const MadeDirectories& made) { made_.insert(made_.end(), made.begin(), made.end()); }
    void keep() { kept_ = true; }

private:
    MadeDirectories made_;
    bool kept_ = false;
};

// A report's files, written as one set into `dir` (created with its parents)
// by write_files: a failure leaves the set there was (each file is whole or
// absent either way, but old and new files side by side would read as one
// report). check_file_set makes the same checks and writes nothing: before a
// long run rather than after it. write_file_set removes the directories it
// made when the files cannot be written there; check_file_set leaves what it
// made for the run that follows and returns it, for the caller to take back
// (remove_made_directories) if that run fails. Both throw std::runtime_error naming the path.
struct NamedText {
    std::string name, text;
};
MadeDirectories check_file_set(const std::string& dir, const std::vector<std::string>& names);
void write_file_set(const std::string& dir, const std::vector<NamedText>& files);

// Writes several files (each `name` a path) as write_file does each, but in two
// phases, so that a failure leaves every one of them as it was: all temporaries
// are written before the first rename. For one run's outputs in different
// folders (a profile, its folded stacks, its summary), where one file new beside
// another one old would read as one run. Paths written in place (/dev/stdout, a
// FIFO) cannot be undone: they are written first, before any temporary exists,
// so a later failure leaves them written; the message names the file that failed.
void write_files(const std::vector<NamedText>& files);

}  // namespace benchfp::report
