#pragma once
// Names code addresses of a process (this one by default): registered JIT
// regions first, then the functions of the loaded ELF objects through libdw
// (symbol tables included, so static functions resolve too, unlike dladdr).
#include "perf/ring.hpp"

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

struct Dwfl;

namespace benchfp::perf {

// A named range of generated code, [begin, end).
struct CodeRegion {
    std::string name;
    uint64_t begin = 0;
    uint64_t end = 0;
    bool contains(uint64_t addr) const { return addr >= begin && addr < end; }
};

inline constexpr const char* unknown_symbol = "[unknown]";

// A symbol name as a reader writes it: demangled (C++), unchanged otherwise.
std::string demangle(const char* name);

// A function's name without the compiler's clone suffixes (" [clone .cold]",
// ".constprop.0", ".isra.0", ".part.0", ".cold"): the hot and cold parts of one
// function, or its specialized copies, are one function to a reader.
std::string without_clone_suffix(std::string name);

// Where an address is in the source, from its module's DWARF line table.
struct SourceLine {
    std::string file;  // empty where the module has no line table
    int line = 0;
};

class Symbols {
public:
    // Reports the modules mapped now in process `pid` (0: this process), read
    // from its /proc/PID/maps and its own ELF files. Throws Error naming the pid.
    explicit Symbols(pid_t pid = 0);
    ~Symbols();
    Symbols(const Symbols&) = delete;
    Symbols& operator=(const Symbols&) = delete;

    void add_region(const CodeRegion& region);
    void clear_regions() { regions_.clear(); }
    const CodeRegion* region_at(uint64_t addr) const;

    // The JIT region's name, the demangled function name, or "[unknown]".
    std::string name(uint64_t addr) const;

    // The source file and line of an address, where debug info has them.
    SourceLine source_line(uint64_t addr) const;

    // Names of every frame of a sample, innermost first. Frames above the first
    // are return addresses: they are looked up at addr - 1, inside the call.
    std::vector<std::string> frame_names(const Sample& sample) const;

private:
    Dwfl* dwfl_ = nullptr;
    std::vector<CodeRegion> regions_;
    mutable std::unordered_map<uint64_t, std::string> cache_;
};

}  // namespace benchfp::perf
