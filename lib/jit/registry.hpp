#pragma once
// The kernel families the harness can build, by name: what algorithms and ISAs
// each has, and how to build one from a spec.
#include "jit/generator.hpp"

#include <memory>
#include <string>
#include <vector>

namespace benchfp::jit {

struct KernelSpec {
    std::string kernel;  // family: "eltwise"
    std::string alg;     // algorithm within the family: "relu"
    Isa isa = Isa::avx512;
    FramePolicy frame = FramePolicy::frame;
};

struct KernelFamily {
    std::string name;
    std::vector<std::string> algs;  // the first is the default
    bool (*supports)(Isa);
    std::unique_ptr<Generator> (*build)(const KernelSpec&);
};

const std::vector<KernelFamily>& kernel_families();
const KernelFamily* find_kernel_family(const std::string& name);
std::string known_kernel_families();

// Builds the kernel of a spec. Throws std::invalid_argument for an unknown family
// or algorithm and for an ISA the family has no implementation for.
std::unique_ptr<Generator> build_kernel(const KernelSpec& spec);

}  // namespace benchfp::jit
