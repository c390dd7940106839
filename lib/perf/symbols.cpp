#include "perf/symbols.hpp"

#include "perf/error.hpp"

#include <cxxabi.h>
#include <elfutils/libdwfl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <memory>
#include <regex>

namespace benchfp::perf {

namespace {

char* no_debuginfo_path = nullptr;

const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_linux_proc_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = nullptr,
    .debuginfo_path = &no_debuginfo_path,
};

}  // namespace

std::string demangle(const char* name) {
    int status = 0;
    std::unique_ptr<char, decltype(&std::free)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), &std::free);
    return status == 0 && out ? std::string(out.get()) : std::string(name);
}

std::string without_clone_suffix(std::string name) {
    // Demangled C++: "f(int) [clone .cold]", possibly several; C or undemangled: "f.cold", "f.constprop.0".
    static const std::regex demangled(R"(( \[clone \.[A-Za-z_]+(\.[0-9]+)?\])+$)");
    static const std::regex raw(R"((\.(cold|constprop|isra|part|lto_priv|localalias)(\.[0-9]+)?)+$)");
    name = std::regex_replace(name, demangled, "");
    return std::regex_replace(name, raw, "");
}

Symbols::Symbols(pid_t pid) {
    dwfl_ = dwfl_begin(&callbacks);
    if (!dwfl_) throw Error(ErrorKind::system, std::string("dwfl_begin failed: ") + dwfl_errmsg(-1));
    // dwfl_linux_proc_report answers an errno of its own when /proc/PID/maps
    // cannot be read (ESRCH: the process has exited), where dwfl_errmsg says "no error".
    const int reported = dwfl_linux_proc_report(dwfl_, pid ? pid : getpid());
    if (reported != 0 || dwfl_report_end(dwfl_, nullptr, nullptr) != 0) {
        std::string message = reported > 0 ? std::strerror(reported) : dwfl_errmsg(-1);
        // libdw's own answer when /proc/PID/auxv has no entry it knows (a process
        // between its exec and its first instruction) or a line of maps does not parse.
        if (reported == ENOEXEC)
            message += " (libdw found no entry it knows in its auxv, or a line of its maps it cannot read)";
        dwfl_end(dwfl_);
        const std::string whose = pid ? "process " + std::to_string(pid) + "'s" : std::string("this process's");
        throw Error(ErrorKind::system, "cannot read " + whose + " modules with libdw: " + message);
    }
}

Symbols::~Symbols() { dwfl_end(dwfl_); }

void Symbols::add_region(const CodeRegion& region) { regions_.push_back(region); }

const CodeRegion* Symbols::region_at(uint64_t addr) const {
    for (const auto& region : regions_)
        if (region.contains(addr)) return &region;
    return nullptr;
}

std::string Symbols::name(uint64_t addr) const {
    if (const CodeRegion* region = region_at(addr)) return region->name;
    if (auto it = cache_.find(addr); it != cache_.end()) return it->second;
    std::string result = unknown_symbol;
    if (Dwfl_Module* module = dwfl_addrmodule(dwfl_, addr))
        if (const char* symbol = dwfl_module_addrname(module, addr)) result = demangle(symbol);
    cache_.emplace(addr, result);
    return result;
}

SourceLine Symbols::source_line(uint64_t addr) const {
    SourceLine out;
    if (region_at(addr)) return out;  // generated code has no line table
    Dwfl_Module* module = dwfl_addrmodule(dwfl_, addr);
    Dwfl_Line* line = module ? dwfl_module_getsrc(module, addr) : nullptr;
    int number = 0;
    if (const char* file = line ? dwfl_lineinfo(line, nullptr, &number, nullptr, nullptr, nullptr) : nullptr) {
        // A relative name (a build through ccache with base_dir, or -fdebug-prefix-map)
        // is relative to the compilation directory: made whole, so pprof -list finds it.
        std::filesystem::path path(file);
        const char* comp_dir = path.is_relative() ? dwfl_line_comp_dir(line) : nullptr;
        if (comp_dir) path = (std::filesystem::path(comp_dir) / path).lexically_normal();
        out.file = path.string();
        out.line = number;
    }
    return out;
}

std::vector<std::string> Symbols::frame_names(const Sample& sample) const {
    std::vector<std::string> names;
    names.reserve(sample.chain.size());
    for (size_t i = 0; i < sample.chain.size(); ++i)
        names.push_back(name(i == 0 ? sample.chain[i] : sample.chain[i] - 1));
    return names;
}

}  // namespace benchfp::perf
