// Every family's problem parser, through the family table: any string either
// parses or is a UsageError; what parses has a finite, non-negative memory need
// (computed without allocating). And each family's random problems parse.
#include "families/family.hpp"
#include "fuzz_input.hpp"
#include "usage_error.hpp"

#include <cmath>
#include <cstdlib>
#include <random>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace benchfp::harness;
    benchfp::fuzz::Input in(data, size);
    const auto& table = families();
    const Family& family = table[in.take<uint8_t>() % table.size()];
    const std::string& alg = family.algs[in.take<uint8_t>() % family.algs.size()];
    const auto seed = in.take<uint32_t>();
    const std::string problem = in.rest();

    std::mt19937 rng(seed);
    family.validate(alg, family.random_problem(alg, rng), "random");  // must not throw

    try {
        family.validate(alg, problem, "fuzz");
    } catch (const UsageError&) {
        return 0;
    }
    KernelCase c;
    c.spec.kernel = family.name;
    c.spec.alg = alg;
    c.problem = problem;
    const double bytes = family.bytes_needed(c);
    if (!std::isfinite(bytes) || bytes < 0) std::abort();
    return 0;
}
