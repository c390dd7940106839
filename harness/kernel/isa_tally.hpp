#pragma once
// How many cases ran per ISA, and why the others did not: the summary's `isa:`
// line, and the rules that keep a run from passing without testing anything
// (issue 10): a run in which no case ran fails, and so does one in which an
// ISA the command line named (--isa=avx512, not max) could not run here,
// unless --allow-untested names it.
#include "families/kernel_case.hpp"

#include <map>
#include <optional>
#include <set>
#include <string>

namespace benchfp::harness {

class IsaTally {
public:
    explicit IsaTally(std::optional<jit::Isa> cap) : cap_(cap) {}

    void add(const KernelCase& c, bool ran);
    size_t ran() const;
    // "isa: sse41 ran:8 skipped:0, avx2 ran:8 skipped:0, avx512 ran:0 skipped:8 (not usable here: ...)"
    std::string line() const;
    // Why the run must fail although no case did ("" when it need not), given the ISAs allowed untested.
    std::string untested_failure(const std::set<std::string>& allowed) const;

private:
    struct Counts {
        size_t ran = 0, skipped = 0;
        std::string unusable;          // why the ISA cannot run here (host or cap); empty when it can
        bool asked_explicitly = false;  // a case named it on the command line
    };
    std::optional<jit::Isa> cap_;
    std::map<jit::Isa, Counts> by_isa_;
};

}  // namespace benchfp::harness
