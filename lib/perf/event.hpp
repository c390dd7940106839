#pragma once
// Event names through libpfm4, and the choice of the sampling event with its
// announced fallback from a hardware event to a software clock.
#include <linux/perf_event.h>

#include <functional>
#include <optional>
#include <string>

namespace benchfp::perf {

struct Event {
    std::string name;       // as the user wrote it (or the default)
    perf_event_attr attr{}; // type, config, exclusions from libpfm4
    bool is_clock() const;  // a software clock counts nanoseconds
};

inline constexpr const char* default_event = "cycles";
inline constexpr const char* fallback_event = "perf::task-clock";

// Encodes a libpfm4 event string ("cycles", "perf::task-clock", "INST_RETIRED:ANY_P", ...)
// for user-space counting. Throws Error(bad_event) naming the event.
Event encode_event(const std::string& name);

// Tries to open an attribute; returns 0 on success or the errno of perf_event_open.
using OpenProbe = std::function<int(const perf_event_attr&)>;

struct EventChoice {
    Event event;
    std::string note;  // non-empty when a fallback happened: print it
};

// The default event falls back to the software clock when the host has no PMU
// for it (no such event, or it cannot be opened for lack of hardware). An event
// the user named explicitly never falls back, and a refusal (EACCES/EPERM) never
// does either: both are errors the user must see.
EventChoice choose_event(const std::optional<std::string>& requested, const OpenProbe& probe);

// The probe that asks the kernel, for the calling thread.
int probe_open(const perf_event_attr& attr);

}  // namespace benchfp::perf
