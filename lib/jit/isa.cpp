#include "jit/isa.hpp"

#include "jit/enum_names.hpp"

#include <xbyak/xbyak_util.h>

#include <cstdlib>
#include <stdexcept>

namespace benchfp::jit {

const char* to_string(Isa isa) {
    switch (isa) {
    case Isa::sse41: return "sse41";
    case Isa::avx2: return "avx2";
    case Isa::avx512: return "avx512";
    }
    return "?";
}

std::optional<Isa> parse_isa(std::string_view name) { return parse_name(name, all_isas); }

std::string known_isas() { return join_names(all_isas); }

std::optional<Isa> host_isa() {
    using Cpu = Xbyak::util::Cpu;
    static const Cpu cpu;
    if (cpu.has(Cpu::tAVX512F | Cpu::tAVX512BW | Cpu::tAVX512VL | Cpu::tAVX512DQ)) return Isa::avx512;
    if (cpu.has(Cpu::tAVX2 | Cpu::tFMA)) return Isa::avx2;
    if (cpu.has(Cpu::tSSE41)) return Isa::sse41;
    return std::nullopt;
}

std::optional<Isa> isa_cap_from_env() {
    const char* value = std::getenv("BENCHFP_MAX_CPU_ISA");
    if (!value || !*value) return std::nullopt;
    if (auto isa = parse_isa(value)) return isa;
    throw std::invalid_argument(std::string("BENCHFP_MAX_CPU_ISA=") + value + " is not an ISA (known: " +
                                known_isas() + ")");
}

bool isa_usable(Isa isa, std::optional<Isa> cap, std::string* why) {
    const auto host = host_isa();
    if (!host || isa > *host) {
        if (why) *why = std::string("host lacks ") + to_string(isa) + " (host max: " + (host ? to_string(*host) : "none") + ")";
        return false;
    }
    if (cap && isa > *cap) {
        if (why) *why = std::string(to_string(isa)) + " is above the ISA cap " + to_string(*cap);
        return false;
    }
    return true;
}

}  // namespace benchfp::jit
