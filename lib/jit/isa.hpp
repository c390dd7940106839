#pragma once
// Instruction-set levels the kernels are built for, host detection, and the
// cap (--max-isa / BENCHFP_MAX_CPU_ISA, like ONEDNN_MAX_CPU_ISA).
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

namespace benchfp::jit {

enum class Isa { sse41, avx2, avx512 };  // ordered: each level includes the previous

inline constexpr Isa all_isas[] = {Isa::sse41, Isa::avx2, Isa::avx512};

const char* to_string(Isa isa);
inline void PrintTo(Isa isa, std::ostream* os) { *os << to_string(isa); }  // readable test names
std::optional<Isa> parse_isa(std::string_view name);
std::string known_isas();  // "sse41, avx2, avx512" for messages

// The highest level this CPU supports (avx512 = avx512f+bw+vl+dq); nothing below sse41.
std::optional<Isa> host_isa();

// The cap from the environment variable BENCHFP_MAX_CPU_ISA, if set.
// Throws std::invalid_argument naming the variable when its value is not an ISA.
std::optional<Isa> isa_cap_from_env();

// Whether `isa` may run: the host has it and it is not above the cap.
// When it may not, `why` says which of the two.
bool isa_usable(Isa isa, std::optional<Isa> cap, std::string* why = nullptr);

}  // namespace benchfp::jit
