#pragma once
// The command line of benchfp: which subcommand, with its options, and the
// dispatch of every subcommand but `kernel`'s case loop, which main() drives
// itself (its sampled calls must run under main -> foo -> bar).
#include "commands/alloc_command.hpp"
#include "commands/audit_command.hpp"
#include "commands/judge_command.hpp"
#include "commands/kernel_command.hpp"

#include <memory>

namespace benchfp::harness {

enum class Command {
    done,        // nothing more to do (help printed, or bad usage): exit with `status`
    kernel,      // benchfp kernel, and benchfp with no arguments (the default suite)
    kernel_list, // benchfp kernel --list
    alloc_profile,
    judge,
    audit,
    version,
};

struct CommandLine {
    Command command = Command::done;
    int status = 0;
    KernelRunOptions kernel;
    AllocProfileOptions alloc_profile;
    JudgeOptions judge;
    AuditOptions audit;
};

// Never throws: bad usage prints its message and yields Command::done, status 2.
CommandLine parse_command_line(int argc, char** argv);

// Runs any command but `kernel`; returns the exit status.
int run_command(const CommandLine& command_line);

// Expands a kernel run's cases; on bad usage prints the message and returns null.
std::unique_ptr<KernelRun> start_kernel_run(const KernelRunOptions& options);

}  // namespace benchfp::harness
