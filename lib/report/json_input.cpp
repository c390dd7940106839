#include "report/json_input.hpp"

#include "report/file.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <set>
#include <sstream>
#include <vector>

namespace benchfp::report {

nlohmann::json parse_json_text(std::string_view text, const std::string& path, const std::string& what) {
    // nlohmann's parser ends the input at a NUL byte, so a file that went on
    // past one (garbage after it) parsed as its first part.
    if (const size_t nul = text.find('\0'); nul != std::string_view::npos)
        throw InputError(path + ": " + what + " is not valid JSON: a NUL byte at offset " + std::to_string(nul));
    // A key twice in one object: the parser keeps the last, and a value that
    // was read (a baseline's, a limit) would silently be another one.
    std::vector<std::set<std::string>> keys;  // of each object being parsed, innermost last
    std::string duplicate;
    const auto check_keys = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
        using event_t = nlohmann::json::parse_event_t;
        if (event == event_t::object_start) keys.emplace_back();
        else if (event == event_t::object_end) keys.pop_back();
        else if (event == event_t::key && !keys.back().insert(parsed.get<std::string>()).second && duplicate.empty())
            duplicate = parsed.get<std::string>();
        return true;
    };
    try {
        nlohmann::json doc = nlohmann::json::parse(text, check_keys);
        if (!duplicate.empty())
            throw InputError(path + ": " + what + " is not valid here: the key \"" + duplicate + "\" twice in one object");
        return doc;
    } catch (const nlohmann::json::parse_error& e) {
        throw InputError(path + ": " + what + " is not valid JSON (truncated or corrupt): " + e.what());
    } catch (const nlohmann::json::exception& e) {  // out_of_range: a number like 1e400
        throw InputError(path + ": " + what + " holds a value JSON cannot represent here: " + e.what());
    }
}

namespace {

// How long a FIFO that nobody has open for writing is waited on: a named
// FIFO's writer may start after its reader (mkfifo f; benchfp judge
// --current=f & producer > f), but a FIFO that no process opens is a
// mistake, to be said rather than waited on forever.
constexpr int fifo_writer_wait_ms = 10000;

// read(2) of up to `size` bytes, retried on EINTR: the count (0 at end of
// file), or -1 for EAGAIN (a non-blocking pipe whose writer has not written
// yet). Any other error is an InputError.
ssize_t read_some(int fd, char* buffer, size_t size, const std::string& path, const std::string& what) {
    for (;;) {
        const ssize_t n = ::read(fd, buffer, size);
        if (n >= 0 || errno == EAGAIN) return n;
        if (errno != EINTR) throw InputError(path + ": cannot read " + what + ": " + std::strerror(errno));
    }
}

// A FIFO or pipe read non-blocking until a writer has it open: a read says
// EAGAIN while a writer has it open and has not written yet, and end of file
// while none has it open (none yet, or one came and went). poll() wakes when a
// writer writes or closes, not when it opens, so the read is asked again every
// 100 ms, up to fifo_writer_wait_ms. Returns what was read (maybe nothing: the
// caller then reads on, blocking, to the end).
std::string first_read_of_pipe(int fd, const std::string& path, const std::string& what) {
    constexpr int step_ms = 100;
    char buffer[1 << 12];
    bool woken = false;  // poll said a writer wrote, or came and went
    for (int waited_ms = 0;; waited_ms += step_ms) {
        const ssize_t n = read_some(fd, buffer, sizeof buffer, path, what);
        if (n > 0) return std::string(buffer, static_cast<size_t>(n));
        if (n < 0 || woken) return "";  // a writer has it open, or one came and went with nothing
        if (waited_ms >= fifo_writer_wait_ms)
            throw InputError(path + ": " + what + " is a FIFO that no process opened for writing within " +
                             std::to_string(fifo_writer_wait_ms / 1000) + " s");
        pollfd p{fd, POLLIN, 0};
        int ready;
        do ready = ::poll(&p, 1, step_ms);
        while (ready < 0 && errno == EINTR);
        woken = ready > 0;
    }
}

// The whole of an input file, or an InputError saying why not. Only regular
// files and pipes: /dev/zero would be read until memory ran out, a terminal
// until someone typed. /proc files are regular (size 0, text read). A pipe
// with a writer (a shell's <(...)) is read as it comes; see first_read_of_pipe.
std::string read_input_text(const std::string& path, const std::string& what) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);  // a FIFO's open waits for no writer
    if (fd < 0) {
        const int error = errno;
        throw InputError(path + ": cannot open " + what + ": " +
                         (error == ENOENT ? std::string("no such file") : std::strerror(error)));
    }
    struct Closer {
        int fd;
        ~Closer() { ::close(fd); }
    } closer{fd};
    struct stat st {};
    if (::fstat(fd, &st) != 0) throw InputError(path + ": cannot open " + what + ": " + std::strerror(errno));
    // An open directory reads nothing without complaint.
    if (S_ISDIR(st.st_mode)) throw InputError(path + ": cannot open " + what + ": is a directory");
    const bool pipe = S_ISFIFO(st.st_mode);
    if (!pipe && !S_ISREG(st.st_mode)) throw InputError(path + ": cannot open " + what + ": not a regular file or a pipe");
    std::string text = pipe ? first_read_of_pipe(fd, path, what) : "";
    if (const int error = clear_nonblocking(fd)) throw InputError(path + ": cannot open " + what + ": " + std::strerror(error));
    char buffer[1 << 16];
    for (ssize_t n; (n = read_some(fd, buffer, sizeof buffer, path, what)) != 0;) {
        // Blocking now: EAGAIN cannot come, and would be no end of file if it did.
        if (n < 0) throw InputError(path + ": cannot read " + what + ": " + std::strerror(EAGAIN));
        text.append(buffer, static_cast<size_t>(n));
    }
    if (text.empty()) throw InputError(path + ": " + what + (pipe ? " is a FIFO or pipe that ended with nothing written to it" : " file is empty"));
    return text;
}

}  // namespace

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
    return parse_json_text(read_input_text(path, what), path, what);
}

namespace {

// What a value is, for a message. An array or object is described by its
// size, not dumped: dump() recurses once per level, and an input nested 100000
// deep ran it out of stack (SIGSEGV) where the parser had taken it.
std::string found(const nlohmann::json& v) {
    if (v.is_array() || v.is_object())
        return std::string(v.type_name()) + " of " + std::to_string(v.size()) + (v.is_array() ? " elements" : " members");
    std::string text = v.dump();
    if (text.size() > 40) text = text.substr(0, 37) + "...";
    return std::string(v.type_name()) + " " + text;
}

std::string range_text(Range r) {
    std::ostringstream out;
    out << "a number from " << r.lo << " to " << r.hi;
    return out.str();
}

}  // namespace

void In::fail(const std::string& problem) const {
    throw InputError(file_ + ": " + (where_.empty() ? "" : where_ + ": ") + problem);
}

const In& In::expect_object() const {
    if (!value_->is_object()) fail("expected an object, found " + found(*value_));
    return *this;
}

const In& In::expect_array() const {
    if (!value_->is_array()) fail("expected a list, found " + found(*value_));
    return *this;
}

In In::member(const std::string& key) const { return In(value_->at(key), file_, path_to(key)); }

std::string In::path_to(const std::string& key) const { return where_.empty() ? key : where_ + "." + key; }

bool In::has(const std::string& key) const { return expect_object().value_->contains(key); }

In In::at(const std::string& key) const {
    if (!has(key)) fail("has no \"" + key + "\"");
    return member(key);
}

std::optional<In> In::find(const std::string& key) const {
    if (!has(key)) return std::nullopt;
    return member(key);
}

std::string In::as_string() const {
    if (!value_->is_string()) fail("expected a string, found " + found(*value_));
    return value_->get<std::string>();
}

double In::as_number(Range range) const {
    if (!value_->is_number()) fail("expected " + range_text(range) + ", found " + found(*value_));
    const double v = value_->get<double>();
    const bool zero_allowed = v == 0 && range.lo == 0;
    if (!(v >= range.lo && v <= range.hi) || (!zero_allowed && !std::isnormal(v)))
        fail("expected " + range_text(range) + ", found " + found(*value_));
    return v;
}

std::string In::string(const std::string& key) const { return at(key).as_string(); }

std::string In::string_or(const std::string& key, std::string fallback) const {
    const auto v = find(key);
    return v ? v->as_string() : std::move(fallback);
}

double In::number(const std::string& key, Range range) const { return at(key).as_number(range); }

double In::number_or(const std::string& key, double fallback, Range range) const {
    const auto v = find(key);
    return v ? v->as_number(range) : fallback;
}

double In::whole_number_or(const std::string& key, double fallback, Range range) const {
    const double value = number_or(key, fallback, range);
    if (value != std::floor(value)) at(key).fail("expected a whole number");
    return value;
}

bool In::boolean_or(const std::string& key, bool fallback) const {
    const auto v = find(key);
    if (!v) return fallback;
    if (!v->value_->is_boolean()) v->fail("expected true or false, found " + found(*v->value_));
    return v->value_->get<bool>();
}

std::vector<std::string> In::strings_or(const std::string& key) const {
    std::vector<std::string> out;
    if (const auto v = find(key))
        for (const In& e : v->elements()) out.push_back(e.as_string());
    return out;
}

std::vector<In> In::elements() const {
    expect_array();
    std::vector<In> out;
    for (size_t i = 0; i < value_->size(); ++i) out.emplace_back((*value_)[i], file_, where_ + "[" + std::to_string(i) + "]");
    return out;
}

std::vector<std::pair<std::string, In>> In::members() const {
    expect_object();
    std::vector<std::pair<std::string, In>> out;
    for (const auto& [key, v] : value_->items()) out.emplace_back(key, In(v, file_, path_to(key)));
    return out;
}

}  // namespace benchfp::report
