#include "jit/registry.hpp"

#include "jit/kernels/conv.hpp"
#include "jit/kernels/eltwise.hpp"
#include "jit/kernels/gemm.hpp"
#include "jit/kernels/reduce.hpp"
#include "jit/kernels/reorder.hpp"

#include <stdexcept>

namespace benchfp::jit {

namespace {

template <typename Enum, size_t N>
std::vector<std::string> names_of(const Enum (&values)[N]) {
    std::vector<std::string> out;
    for (Enum value : values) out.emplace_back(to_string(value));
    return out;
}

// Parses the alg of a spec with `parse` and builds it with `make`.
template <auto parse, auto make>
std::unique_ptr<Generator> build_with(const KernelSpec& spec) {
    const auto alg = parse(spec.alg);
    if (!alg) throw std::invalid_argument("unknown " + spec.kernel + " alg '" + spec.alg + "'");
    return make(*alg, spec.isa, spec.frame);
}

bool any_isa(Isa) { return true; }

// The reorder algs differ only in how the problem maps to a batched transpose.
std::unique_ptr<Generator> build_reorder(const KernelSpec& spec) {
    if (spec.alg != "transpose" && spec.alg != "nchw2nhwc" && spec.alg != "nhwc2nchw")
        throw std::invalid_argument("unknown reorder alg '" + spec.alg + "'");
    return make_reorder_kernel(spec.isa, spec.frame);
}

// Families with one algorithm, f32.
template <auto make>
std::unique_ptr<Generator> build_f32(const KernelSpec& spec) {
    if (spec.alg != "f32") throw std::invalid_argument("unknown " + spec.kernel + " alg '" + spec.alg + "'");
    return make(spec.isa, spec.frame);
}

}  // namespace

const std::vector<KernelFamily>& kernel_families() {
    static const std::vector<KernelFamily> families = {
        {"eltwise", names_of(all_eltwise_algs), any_isa, build_with<parse_eltwise_alg, make_eltwise_kernel>},
        {"reduce", names_of(all_reduce_algs), any_isa, build_with<parse_reduce_alg, make_reduce_kernel>},
        {"gemm", {"f32"}, gemm_supports, build_f32<make_gemm_kernel>},
        {"conv", {"f32"}, conv_supports, build_f32<make_conv_kernel>},
        {"reorder", {"transpose", "nchw2nhwc", "nhwc2nchw"}, any_isa, build_reorder},
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
