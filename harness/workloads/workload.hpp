#pragma once
// A workload is a built kernel with its data: what a case runs, whatever the
// mode. One implementation per kernel family (the family's driver).
#include "jit/generator.hpp"
#include "jit_call.hpp"
#include "kernel_cases.hpp"
#include "parallel.hpp"

#include <nlohmann/json.hpp>

#include <cstdlib>
#include <functional>
#include <new>
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

// A peer library doing the same problem on the workload's buffers.
class Peer {
public:
    virtual ~Peer() = default;
    virtual void run() = 0;
};

// Page-aligned float storage: vector loads and non-temporal stores stay aligned.
template <typename T>
struct PageAligned {
    using value_type = T;
    PageAligned() = default;
    template <typename U>
    PageAligned(const PageAligned<U>&) {}
    T* allocate(size_t n) {
        void* p = std::aligned_alloc(4096, (n * sizeof(T) + 4095) & ~size_t{4095});
        if (!p) throw std::bad_alloc();
        return static_cast<T*>(p);
    }
    void deallocate(T* p, size_t) { std::free(p); }
    template <typename U>
    bool operator==(const PageAligned<U>&) const { return true; }
};
using FloatBuffer = std::vector<float, PageAligned<float>>;

class Workload {
public:
    explicit Workload(int threads);
    virtual ~Workload() = default;
    // Kernels for the same data: 0 is the case's own; add_variant builds another
    // (another frame policy), so variants are timed on the very same buffers.
    const jit::Generator& kernel(size_t variant = 0) const { return *kernels_.at(variant); }
    size_t add_variant(const jit::KernelSpec& spec);
    // What bar calls: the JIT kernel itself when the problem is one call of it
    // (direct_args), else benchfp_workload_driver, which runs run(variant).
    WorkloadCall call(size_t variant = 0) const;
    // The whole problem once, with the kernel of `variant`; every JIT call goes
    // through benchfp_call_jit.
    virtual void run(size_t variant) const = 0;

    struct VariantContext {
        const Workload* workload;
        size_t variant;
    };
    virtual CorrOutcome check() = 0;  // runs the problem once against the reference
    virtual double flops() const { return 0; }  // per call; 0 when GB/s is the measure
    virtual double bytes() const = 0;           // memory read and written per call
    virtual size_t input_bytes() const = 0;     // the main input's size: what a plain copy peer copies
    // oneDNN on the same problem; throws UsageError where it has no equivalent.
    virtual std::unique_ptr<Peer> onednn_peer();

protected:
    // The argument block when the problem is one call of the kernel, else null.
    virtual const void* direct_args() const { return nullptr; }
    ThreadPool& pool() const { return *pool_; }
    int threads() const { return pool_->size(); }  // of the parallel section, the calling thread included

    std::vector<std::unique_ptr<jit::Generator>> kernels_;

private:
    std::unique_ptr<ThreadPool> pool_;
    mutable std::vector<std::unique_ptr<VariantContext>> contexts_;
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

// A plain streaming copy (memcpy) of `bytes`: the bandwidth reference.
std::unique_ptr<Peer> make_copy_peer(size_t bytes);

// The register-only FMA loop of an ISA: the compute reference. Sets the flops
// one run does.
std::unique_ptr<Peer> make_fma_peak_peer(jit::Isa isa, double& flops_per_run);

// Throws UsageError (prefixed with `where`) when the case's problem is not a
// valid descriptor for its kernel family and alg.
void validate_problem(const KernelCase& c, const std::string& where);

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
