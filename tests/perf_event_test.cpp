// Event names through libpfm4 and the fallback logic, with fake probes so every
// branch runs whatever PMU this host has.
#include "perf/error.hpp"
#include "perf/event.hpp"

#include <gtest/gtest.h>

#include <cerrno>

using namespace benchfp::perf;

namespace {
// Answers `err` for the named hardware event and 0 (opened) for software events.
OpenProbe hardware_fails_with(int err) {
    return [err](const perf_event_attr& attr) { return attr.type == PERF_TYPE_SOFTWARE ? 0 : err; };
}
OpenProbe everything_fails_with(int err) {
    return [err](const perf_event_attr&) { return err; };
}
}  // namespace

TEST(PerfEvent, EncodesTheSoftwareClock) {
    const Event e = encode_event("perf::task-clock");
    EXPECT_EQ(e.attr.type, PERF_TYPE_SOFTWARE);
    EXPECT_EQ(e.attr.config, PERF_COUNT_SW_TASK_CLOCK);
    EXPECT_TRUE(e.is_clock());
    EXPECT_EQ(e.attr.exclude_kernel, 1u);  // user space only: works at perf_event_paranoid=2
}

TEST(PerfEvent, UnknownNameIsAnErrorNamingIt) {
    try {
        encode_event("no-such-event-xyz");
        FAIL() << "no exception";
    } catch (const Error& e) {
        EXPECT_EQ(e.kind(), ErrorKind::bad_event);
        EXPECT_NE(std::string(e.what()).find("no-such-event-xyz"), std::string::npos);
    }
}

TEST(PerfEvent, DefaultOpensCyclesWhenTheHostCan) {
    const EventChoice choice = choose_event(std::nullopt, [](const perf_event_attr&) { return 0; });
    // libpfm4 encodes "cycles" on hosts with a PMU model; elsewhere this is the fallback.
    if (choice.note.empty()) EXPECT_EQ(choice.event.name, "cycles");
    else EXPECT_EQ(choice.event.name, fallback_event);
}

TEST(PerfEvent, DefaultFallsBackToTaskClockWithoutAPmuAndSaysSo) {
    for (int err : {ENOENT, EOPNOTSUPP, ENODEV}) {
        const EventChoice choice = choose_event(std::nullopt, hardware_fails_with(err));
        EXPECT_EQ(choice.event.name, fallback_event);
        EXPECT_TRUE(choice.event.is_clock());
        // What a reader needs, not the errno's text ("No such file or directory").
        EXPECT_EQ(choice.note, std::string("no hardware PMU on this host (cycles unavailable), using ") + fallback_event);
    }
}

TEST(PerfEvent, AnExplicitEventNeverFallsBack) {
    try {
        choose_event(std::string("cycles"), hardware_fails_with(ENOENT));
        FAIL() << "no exception";
    } catch (const Error& e) {
        // Either libpfm4 cannot encode it here (bad_event) or the open fails (absent).
        EXPECT_TRUE(e.kind() == ErrorKind::absent || e.kind() == ErrorKind::bad_event) << e.what();
    }
}

TEST(PerfEvent, RefusalIsNeverHiddenByTheFallback) {
    for (int err : {EACCES, EPERM}) {
        try {
            choose_event(std::nullopt, everything_fails_with(err));
            FAIL() << "no exception";
        } catch (const Error& e) {
            EXPECT_EQ(e.kind(), ErrorKind::refused);
            EXPECT_NE(std::string(e.what()).find("perf_event_paranoid"), std::string::npos);
            EXPECT_NE(std::string(e.what()).find("CAP_PERFMON"), std::string::npos);
        }
    }
}

TEST(PerfEvent, FallbackThatCannotOpenEitherIsAnError) {
    EXPECT_THROW(choose_event(std::nullopt, everything_fails_with(ENOENT)), Error);
}

TEST(PerfEvent, OpenErrorsAreClassified) {
    EXPECT_EQ(open_error("x", ENOSYS).kind(), ErrorKind::absent);
    EXPECT_EQ(open_error("x", ENOENT).kind(), ErrorKind::absent);
    EXPECT_EQ(open_error("x", EACCES).kind(), ErrorKind::refused);
    EXPECT_EQ(open_error("x", EINVAL).kind(), ErrorKind::system);
}
