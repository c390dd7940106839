#include "command_line.hpp"

#include "option_rules.hpp"
#include "quoted.hpp"
#include "stdout_check.hpp"
#include "usage_error.hpp"
#include "version.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>

namespace benchfp::harness {

namespace {

constexpr const char* default_batch = "cases/default";

CommandLine bad_usage(const std::string& message) {
    std::cerr << "benchfp: " << escaped(message, 300) << '\n';  // CLI11 echoes the arguments as given
    CommandLine out;
    out.status = 2;
    return out;
}

// CLI11 answers `alloc foo` with "A subcommand is required", naming neither
// foo nor what would do: name them.
std::string unknown_alloc_subcommand(int argc, char** argv) {
    if (argc < 3 || std::string(argv[1]) != "alloc") return "";
    const std::string word = argv[2];
    if (word.starts_with("-") || word == "profile") return "";
    return "unknown alloc subcommand " + quoted_token(word) + " (known: profile)";
}

// The option of `app` or its subcommands named `name` that takes a comma list, if any.
const CLI::Option* list_option_named(CLI::App& app, const std::string& name) {
    const CLI::Option* found = nullptr;
    for_each_option(app, [&](const CLI::Option* option) {
        if (!found && option->get_delimiter() == ',' && option->check_name(name)) found = option;
    });
    return found;
}

// CLI11 drops the empty items of a comma list (--expect=bar,,main read as
// bar,main; --untested-isas=avx2, as avx2): refused, as the kernel's lists are.
void reject_empty_list_items(CLI::App& app, const std::vector<std::string>& args) {
    for (size_t i = 0; i < args.size() && args[i] != "--"; ++i) {
        if (!args[i].starts_with("--")) continue;
        const size_t equals = args[i].find('=');
        const std::string name = args[i].substr(0, equals);
        if (!list_option_named(app, name)) continue;
        std::vector<std::string> values;  // --name=a,b; or --name a,b c (a list takes the words up to an option)
        if (equals != std::string::npos) values.push_back(args[i].substr(equals + 1));
        else
            for (size_t k = i + 1; k < args.size() && !args[k].starts_with("-"); ++k) values.push_back(args[k]);
        for (const std::string& value : values)
            if (value.starts_with(',') || value.ends_with(',') || value.find(",,") != std::string::npos)
                throw UsageError("command line: " + name + " '" + value + "' has an empty item");
    }
}

}  // namespace

CommandLine parse_command_line(int argc, char** argv) {
    CommandLine out;
    CLI::App app("benchfp: checks that JIT kernels stay profilable (frame-pointer unwinding) and what it costs.\n"
                 "With no arguments, runs the default suite (" + std::string(default_batch) + ").");
    app.require_subcommand(0, 1);
    bool version = false;
    app.add_flag("--version", version, "print the version, commit, build and the libraries found, then exit");
    CLI::App* kernel = app.add_subcommand("kernel", "build, check and sample JIT kernels (benchdnn-style cases)");
    out.kernel.add_to(*kernel);
    CLI::App* alloc = app.add_subcommand("alloc", "the pool allocator and its allocation profiler");
    alloc->require_subcommand(1);
    CLI::App* profile =
        alloc->add_subcommand("profile", "run a workload under the allocation profiler, write a pprof profile");
    out.alloc_profile.add_to(*profile);
    CLI::App* judge =
        app.add_subcommand("judge", "judge benchmark results against the stored baseline, write the report");
    out.judge.add_to(*judge);
    CLI::App* audit = app.add_subcommand("audit", "what a fleet profiler sees in a running process: every thread, its JIT code");
    out.audit.add_to(*audit);
    apply_option_rules(app);

    if (const std::string unknown = unknown_alloc_subcommand(argc, argv); !unknown.empty()) return bad_usage(unknown);
    try {
        const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
        reject_empty_values(args, "command line");
        reject_empty_list_items(app, args);
    } catch (const UsageError& e) {
        return bad_usage(e.what());
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        out.status = app.exit(e);
        return out;
    } catch (const CLI::ParseError& e) {
        return bad_usage(e.what());
    }
    if (version) out.command = Command::version;
    else if (profile->parsed()) out.command = Command::alloc_profile;
    else if (judge->parsed()) out.command = Command::judge;
    else if (audit->parsed()) out.command = Command::audit;
    else if (kernel->parsed()) out.command = out.kernel.list_families ? Command::kernel_list : Command::kernel;
    else if (argc == 1) {
        out.command = Command::kernel;
        out.kernel.cases.batches = {default_batch};
    } else {
        return bad_usage("give a subcommand (kernel, alloc profile, judge, audit); see benchfp --help");
    }
    if (out.command == Command::kernel_list)  // --list runs nothing: an option of the run would be ignored
        for (const CLI::Option* option : kernel->get_options())
            if (option->count() > 0 && option->get_name() != "--list" && option->get_name() != "--json")
                return bad_usage("--list runs nothing and takes no " + option->get_name() +
                                 " (only --json=FILE or --json=-)");
    return out;
}

namespace {

int run_unchecked(const CommandLine& c) {
    switch (c.command) {
    case Command::done: return c.status;
    case Command::version: std::cout << version_text(); return 0;
    case Command::kernel_list: return list_families(c.kernel.json_path);
    case Command::alloc_profile: return run_alloc_profile(c.alloc_profile);
    case Command::judge: return run_judge(c.judge);
    case Command::audit: return run_audit(c.audit);
    case Command::kernel: break;
    }
    throw std::logic_error("run_command: the kernel command runs from main");
}

}  // namespace

int run_command(const CommandLine& c) { return checked_stdout(run_unchecked(c)); }

std::unique_ptr<KernelRun> start_kernel_run(const KernelRunOptions& options) {
    try {
        return std::make_unique<KernelRun>(options);
    } catch (const UsageError& e) {
        std::cerr << "benchfp: " << e.what() << '\n';
    } catch (const std::invalid_argument& e) {  // e.g. a bad BENCHFP_MAX_CPU_ISA
        std::cerr << "benchfp: " << e.what() << '\n';
    } catch (const std::exception& e) {  // reading the input failed (filesystem, memory): still exit 2, no abort
        std::cerr << "benchfp: " << e.what() << '\n';
    }
    return nullptr;
}

}  // namespace benchfp::harness
