#pragma once
// Opt-in JIT symbolization (`benchfp kernel --jit-profile=map,jitdump`, or
// BENCHFP_JIT_PROFILE): every kernel benchfp builds is announced to
// /tmp/perf-PID.map (perf report names it) and/or a jitdump file
// /tmp/jit-PID.dump (`perf record -k 1` then `perf inject --jit` turns it into
// an ELF per kernel). Off by default: a fleet profiler must not need it, and
// writing it costs a file per process for its whole life.
//
// Files are created with O_CREAT|O_EXCL|O_NOFOLLOW: a symlink planted in /tmp,
// or another user's file, is never followed nor clobbered; the run then stops
// before its first case, as for any output asked for that cannot be written
// (exit 2). A regular file of this user there is a stale one, left by an
// earlier process of the same pid (perf maps outlive their process, for perf
// report): it is replaced. The files are streams,
// written as kernels are built so that a profiler attached mid-run reads them:
// not written whole through a temporary as the other outputs are. A write that
// fails mid-run ends that file there, with a warning, and the run's exit status
// is 2 (jit_profile_failed).
// (Xbyak's util::Profiler writes the same perf-map lines but opens the file
// with fopen("a+"), which follows symlinks and appends to a stranger's file.)
#include <string>

namespace benchfp::harness {

struct JitProfileChoice {
    bool map = false, jitdump = false;
};

// "map", "jitdump", "map,jitdump" or "" (off); throws UsageError on anything
// else, prefixed with `where` (the command line, or BENCHFP_JIT_PROFILE).
JitProfileChoice parse_jit_profile(const std::string& text, const std::string& where = "command line");

// Opens the files and installs the observer of jit::Generator::build() for
// the rest of the process. Throws UsageError naming a file it cannot make.
void start_jit_profile(const JitProfileChoice& choice);
// Whether a write to one of the files failed since start_jit_profile.
bool jit_profile_failed();

}  // namespace benchfp::harness
