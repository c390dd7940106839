#pragma once
// A workload is a built kernel with its data: what a case runs, whatever the
// mode. Each family has one (families/<name>/): its driver, its reference and
// tolerance (check()), and its oneDNN peer.
#include "families/kernel_case.hpp"
#include "jit/generator.hpp"
#include "jit_call.hpp"
#include "page_aligned.hpp"
#include "parallel.hpp"
#include "peers/peer.hpp"

#include <nlohmann/json.hpp>

#include <functional>
#include <initializer_list>
#include <optional>
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
    explicit Workload(int threads);
    virtual ~Workload() = default;
    // Kernels for the same data: 0 is the case's own; add_variant builds another
    // (another frame policy), so variants are timed on the very same buffers.
    const jit::Generator& kernel(size_t variant = 0) const { return *kernels_.at(variant); }
    size_t add_variant(const KernelSpec& spec);
    // What bar calls: the JIT kernel itself when the problem is one call of it
    // (direct_args), else benchfp_workload_driver, which runs run(variant).
    WorkloadCall call(size_t variant = 0) const;
    // The whole problem once, with the kernel of `variant`; every JIT call goes
    // through benchfp_call_jit.
    virtual void run(size_t variant) const = 0;

    virtual CorrOutcome check() = 0;  // runs the problem once against the reference
    virtual double flops() const { return 0; }  // per call; 0 when GB/s is the measure
    virtual double bytes() const = 0;           // memory read and written per call
    virtual size_t input_bytes() const = 0;     // the main input's size: what a plain copy peer copies
    // oneDNN on the same problem; throws UsageError where it has no equivalent.
    virtual std::unique_ptr<Peer> onednn_peer();
    int threads() const { return pool_->size(); }  // of the parallel section, the calling thread included
    const std::vector<pid_t>& worker_tids() const { return pool_->worker_tids(); }

protected:
    // The argument block when the problem is one call of the kernel, else null.
    virtual const void* direct_args() const { return nullptr; }
    ThreadPool& pool() const { return *pool_; }

    std::vector<std::unique_ptr<jit::Generator>> kernels_;

private:
    std::unique_ptr<ThreadPool> pool_;
    mutable std::vector<std::unique_ptr<DriverContext>> contexts_;
};

// A problem that is one call of the kernel per thread, each on its own slice of
// the data (Args: the kernel's argument block). With one thread the problem is a
// single call, and bar calls the kernel directly.
template <typename Args>
class SlicedWorkload : public Workload {
public:
    using Workload::Workload;
    void run(size_t variant) const override {
        const jit::KernelFn fn = kernel(variant).entry();
        pool().parallel([&](int ithr, int) { benchfp_call_jit(fn, &slices_[ithr]); });
    }

protected:
    const void* direct_args() const override { return slices_.size() == 1 ? &slices_[0] : nullptr; }
    std::vector<Args> slices_;  // one per thread of the parallel section
};

// Dims "AxBx..." (or one count), each positive, product bounded. Throws UsageError
// naming the problem and `expected` (what the family takes).
std::vector<size_t> parse_dims(const std::string& problem, const std::string& where, const std::string& expected);

// The product of sizes read from user input, or nullopt when it would wrap size_t.
std::optional<size_t> checked_product(std::initializer_list<size_t> factors);

// Bytes of `floats` f32 values plus, in corr mode, `corr_floats` more (the
// reference and its bounds): what a family's bytes_needed adds up.
double buffer_bytes(const KernelCase& c, double floats, double corr_floats);

// Seeded uniform values in [lo, hi].
void fill_uniform(std::span<float> values, unsigned seed, float lo, float hi);

// Compares a kernel's output with the reference: |got[i] - want[i]| <= bound(i)
// everywhere, reporting the worst element. MISTRUSTED when more than 95% of the
// reference is zero, where a broken kernel could pass unnoticed. `tolerance`
// describes the bound for the status line.
CorrOutcome compare_outputs(std::span<const float> got, std::span<const float> want,
                            const std::function<double(size_t)>& bound, const std::string& tolerance);

}  // namespace benchfp::harness
