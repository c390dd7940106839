#pragma once
// A workload is a built kernel with its data: what a case runs, whatever the
// mode. One implementation per kernel family (the family's driver).
#include "jit/generator.hpp"
#include "kernel_cases.hpp"

#include <nlohmann/json.hpp>

#include <memory>
#include <span>
#include <string>

namespace benchfp::harness {

struct CorrOutcome {
    bool passed = false;
    bool mistrusted = false;   // the check could not fail: degenerate reference output
    std::string detail;        // for the status line
    nlohmann::json record;     // errors and where they are
};

class Workload {
public:
    virtual ~Workload() = default;
    const jit::Generator& kernel() const { return *kernel_; }
    virtual const void* args() const = 0;  // the kernel's argument block
    virtual CorrOutcome check() = 0;       // runs the kernel once against the reference

protected:
    std::unique_ptr<jit::Generator> kernel_;
};

// Throws UsageError (prefixed with `where`) when `problem` is not a valid
// descriptor for the kernel family.
void validate_problem(const std::string& kernel, const std::string& problem, const std::string& where);

std::unique_ptr<Workload> make_workload(const KernelCase& c);

// Compares a kernel's output with the reference: |got - want| <= rel*|want| + abs
// everywhere, reporting the worst element. MISTRUSTED when more than 95% of the
// reference is zero, where a broken kernel could pass unnoticed.
CorrOutcome compare_outputs(std::span<const float> got, std::span<const float> want, double rel, double abs);

}  // namespace benchfp::harness
