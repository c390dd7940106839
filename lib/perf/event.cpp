#include "perf/event.hpp"

#include "perf/error.hpp"

#include <perfmon/pfmlib_perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <mutex>

namespace benchfp::perf {

namespace {

void initialize_pfm() {
    static std::once_flag once;
    static int status = PFM_SUCCESS;
    std::call_once(once, [] { status = pfm_initialize(); });
    if (status != PFM_SUCCESS)
        throw Error(ErrorKind::system, std::string("libpfm4 initialization failed: ") + pfm_strerror(status));
}

bool no_such_hardware(int err) {
    // What perf_event_open answers for a hardware event on a host without a PMU
    // (KVM guests without vPMU: ENOENT; some kernels: EOPNOTSUPP or ENODEV).
    return err == ENOENT || err == EOPNOTSUPP || err == ENODEV;
}

}  // namespace

bool Event::is_clock() const {
    return attr.type == PERF_TYPE_SOFTWARE &&
           (attr.config == PERF_COUNT_SW_TASK_CLOCK || attr.config == PERF_COUNT_SW_CPU_CLOCK);
}

Error open_error(const std::string& event, int err) {
    std::string what = "perf_event_open(" + event + ") failed: " + std::strerror(err) + ". ";
    if (err == EACCES || err == EPERM)
        return Error(ErrorKind::refused,
                     what + "perf_event_open refused: lower /proc/sys/kernel/perf_event_paranoid "
                            "(e.g. sysctl kernel.perf_event_paranoid=1) or grant CAP_PERFMON");
    if (err == ENOSYS)
        return Error(ErrorKind::absent, what + "this kernel has no perf_event_open");
    if (no_such_hardware(err))
        return Error(ErrorKind::absent, what + "the event does not exist on this host (no hardware PMU?); "
                                               "try --event=" + fallback_event);
    return Error(ErrorKind::system, what);
}

Event encode_event(const std::string& name) {
    initialize_pfm();
    Event event;
    event.name = name;
    pfm_perf_encode_arg_t arg;
    std::memset(&arg, 0, sizeof arg);
    arg.size = sizeof arg;
    arg.attr = &event.attr;
    char* fstr = nullptr;
    arg.fstr = &fstr;
    const int status = pfm_get_os_event_encoding(name.c_str(), PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    std::free(fstr);
    if (status != PFM_SUCCESS)
        throw Error(ErrorKind::bad_event, "unknown event '" + name + "': " + pfm_strerror(status));
    event.attr.size = sizeof(perf_event_attr);
    return event;
}

EventChoice choose_event(const std::optional<std::string>& requested, const OpenProbe& probe) {
    const std::string name = requested.value_or(default_event);
    const bool may_fall_back = !requested.has_value();

    try {
        Event event = encode_event(name);
        const int err = probe(event.attr);
        if (err == 0) return {event, ""};
        if (!may_fall_back || !no_such_hardware(err)) throw open_error(name, err);
    } catch (const Error& e) {
        if (!may_fall_back || e.kind() != ErrorKind::bad_event) throw;
    }

    // Both ways (no such event, or the kernel has no counter for it) mean the same to a reader:
    // the errno text ("No such file or directory") would not say it.
    Event fallback = encode_event(fallback_event);
    if (const int err = probe(fallback.attr); err != 0) throw open_error(fallback_event, err);
    return {fallback, "no hardware PMU on this host (" + name + " unavailable), using " + fallback_event};
}

int probe_open(const perf_event_attr& attr) {
    perf_event_attr copy = attr;
    copy.disabled = 1;
    const long fd = syscall(SYS_perf_event_open, &copy, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0) return errno;
    close(static_cast<int>(fd));
    return 0;
}

}  // namespace benchfp::perf
