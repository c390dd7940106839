#pragma once
// A workload is a built kernel with its data: what a case runs, whatever the
// mode. One implementation per kernel family (the family's driver).
#include "jit/generator.hpp"
#include "kernel_cases.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace benchfp::harness {

struct CorrOutcome {
    bool passed = false;
    bool mistrusted = false;  // the check could not fail: degenerate reference output
    std::string detail;       // for the status line
    nlohmann::json record;    // errors and where they are
};

// One execution of the problem: what perf mode times and unwind mode samples.
struct WorkloadCall {
    jit::KernelFn fn = nullptr;
    const void* arg = nullptr;
    // The function between bar and the JIT code (it calls the JIT kernel), or
    // empty when fn is the JIT kernel itself and bar calls it directly.
    std::string jit_caller;
};

class Workload {
public:
    virtual ~Workload() = default;
    const jit::Generator& kernel() const { return *kernel_; }
    virtual WorkloadCall call() const = 0;
    virtual CorrOutcome check() = 0;  // runs the problem once against the reference
    virtual double flops() const { return 0; }  // per call; 0 when GB/s is the measure
    virtual double bytes() const = 0;           // memory read and written per call

protected:
    std::unique_ptr<jit::Generator> kernel_;
};

// Throws UsageError (prefixed with `where`) when `problem` is not a valid
// descriptor for the kernel family.
void validate_problem(const std::string& kernel, const std::string& problem, const std::string& where);

std::unique_ptr<Workload> make_workload(const KernelCase& c);

// Dims "AxBx..." (or one count), each positive, product bounded. Throws UsageError
// naming the problem and `expected` (what the family takes).
std::vector<size_t> parse_dims(const std::string& problem, const std::string& where, const std::string& expected);

// Seeded uniform values in [lo, hi].
void fill_uniform(std::span<float> values, unsigned seed, float lo, float hi);

// Compares a kernel's output with the reference: |got[i] - want[i]| <= bound(i)
// everywhere, reporting the worst element. MISTRUSTED when more than 95% of the
// reference is zero, where a broken kernel could pass unnoticed. `tolerance`
// describes the bound for the status line.
CorrOutcome compare_outputs(std::span<const float> got, std::span<const float> want,
                            const std::function<double(size_t)>& bound, const std::string& tolerance);

}  // namespace benchfp::harness
