#include "families/kernel_case.hpp"

namespace benchfp::harness {

const char* to_string(Mode mode) {
    switch (mode) {
    case Mode::corr: return "corr";
    case Mode::perf: return "perf";
    case Mode::unwind: return "unwind";
    case Mode::list: return "list";
    case Mode::verify: return "verify";
    case Mode::step: return "step";
    case Mode::abi: return "abi";
    }
    return "?";
}

std::string Peers::list() const {
    std::string out;
    for (auto [on, name] : {std::pair{onednn, "onednn"}, std::pair{copy, "copy"}, std::pair{peak, "peak"}})
        if (on) out += (out.empty() ? "" : ",") + std::string(name);
    return out;
}

}  // namespace benchfp::harness
