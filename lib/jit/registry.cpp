#include "jit/registry.hpp"

#include "jit/kernels/eltwise.hpp"

#include <stdexcept>

namespace benchfp::jit {

namespace {

std::unique_ptr<Generator> build_eltwise(const KernelSpec& spec) {
    const auto alg = parse_eltwise_alg(spec.alg);
    if (!alg) throw std::invalid_argument("unknown eltwise alg '" + spec.alg + "' (known: " + known_eltwise_algs() + ")");
    return make_eltwise_kernel(*alg, spec.isa, spec.frame);
}

template <typename Enum, size_t N>
std::vector<std::string> names_of(const Enum (&values)[N]) {
    std::vector<std::string> out;
    for (Enum value : values) out.emplace_back(to_string(value));
    return out;
}

}  // namespace

const std::vector<KernelFamily>& kernel_families() {
    static const std::vector<KernelFamily> families = {
        {"eltwise", names_of(all_eltwise_algs), eltwise_supports, build_eltwise},
    };
    return families;
}

const KernelFamily* find_kernel_family(const std::string& name) {
    for (const auto& family : kernel_families())
        if (family.name == name) return &family;
    return nullptr;
}

std::string known_kernel_families() {
    std::string out;
    for (const auto& family : kernel_families()) out += (out.empty() ? "" : ", ") + family.name;
    return out;
}

std::unique_ptr<Generator> build_kernel(const KernelSpec& spec) {
    const KernelFamily* family = find_kernel_family(spec.kernel);
    if (!family)
        throw std::invalid_argument("unknown kernel '" + spec.kernel + "' (known: " + known_kernel_families() + ")");
    if (!family->supports(spec.isa))
        throw std::invalid_argument(spec.kernel + " has no " + to_string(spec.isa) + " implementation");
    return family->build(spec);
}

}  // namespace benchfp::jit
