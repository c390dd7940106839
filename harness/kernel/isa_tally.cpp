#include "kernel/isa_tally.hpp"

#include <sstream>

namespace benchfp::harness {

void IsaTally::add(const KernelCase& c, bool ran) {
    Counts& counts = by_isa_[c.spec.isa];
    ++(ran ? counts.ran : counts.skipped);
    if (!ran && counts.unusable.empty()) jit::isa_usable(c.spec.isa, cap_, &counts.unusable);  // says why, if not
    counts.asked_explicitly |= c.isa_explicit;
}

size_t IsaTally::ran() const {
    size_t total = 0;
    for (const auto& [isa, counts] : by_isa_) total += counts.ran;
    return total;
}

std::string IsaTally::line() const {
    std::ostringstream out;
    out << "isa:";
    const char* separator = " ";
    for (const auto& [isa, counts] : by_isa_) {
        out << separator << jit::to_string(isa) << " ran:" << counts.ran << " skipped:" << counts.skipped;
        if (!counts.unusable.empty()) out << " (not usable here: " << counts.unusable << ")";
        separator = ", ";
    }
    return out.str();
}

std::string IsaTally::untested_failure(const std::set<std::string>& allowed) const {
    if (!by_isa_.empty() && ran() == 0) return "no case ran: every case was skipped, so nothing was tested";
    std::string failure;
    for (const auto& [isa, counts] : by_isa_) {
        const std::string name = jit::to_string(isa);
        if (!counts.asked_explicitly || counts.unusable.empty() || allowed.count(name)) continue;
        failure += (failure.empty() ? "" : "; ") + std::string("--isa=") + name + " was asked for but cannot run here (" +
                   counts.unusable + "): its cases were skipped; --allow-untested=" + name + " accepts that";
    }
    return failure;
}

}  // namespace benchfp::harness
