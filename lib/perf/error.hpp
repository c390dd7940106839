#pragma once
// Errors of the sampling layer, classified so that the harness can tell a user
// what to do (lower perf_event_paranoid, use another event). A run without any
// sample is not an error here: the unwind check reports it as an inconclusive case.
#include <stdexcept>
#include <string>

namespace benchfp::perf {

enum class ErrorKind {
    refused,     // EACCES/EPERM: paranoid level or missing CAP_PERFMON
    absent,      // ENOSYS/ENOENT: no perf_event_open, or the event does not exist here
    bad_event,   // libpfm4 cannot encode the event name
    system,      // anything else (mmap, ioctl, ...)
};

class Error : public std::runtime_error {
public:
    Error(ErrorKind kind, const std::string& message) : std::runtime_error(message), kind_(kind) {}
    ErrorKind kind() const { return kind_; }

private:
    ErrorKind kind_;
};

// Builds the message for a failed perf_event_open(2), naming the knobs that fix it.
Error open_error(const std::string& event, int err);

}  // namespace benchfp::perf
