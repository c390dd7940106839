// benchfp: validation and benchmarking of profilable hot code. See README.md.
//
// main stays tiny because it is a frame the unwind check looks for: every
// subcommand runs elsewhere (command_line.cpp, commands/), and a kernel run
// hands back each call that must be sampled, which main makes through foo and
// bar, so a sample's chain reads kernel <- bar <- foo <- main.
#include "callers.hpp"
#include "command_line.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
    using namespace benchfp::harness;
    try {
        const CommandLine command_line = parse_command_line(argc, argv);
        if (command_line.command != Command::kernel) return run_command(command_line);
        const auto run = start_kernel_run(command_line.kernel);
        if (!run) return 2;
        while (SampledCall* call = run->next_sampled_call()) foo(call);
        return run->exit_status();
    } catch (const std::exception& e) {  // never an abort: a failure with its reason
        std::fprintf(stderr, "benchfp: unexpected error: %s\n", e.what());
        return 1;
    }
}
