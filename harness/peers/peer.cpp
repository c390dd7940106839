#include "peers/peer.hpp"

#include "jit/kernels/gemm.hpp"
#include "jit_call.hpp"
#include "page_aligned.hpp"
#include "parallel.hpp"

#include <chrono>
#include <cstring>

namespace benchfp::harness {

namespace {

class CopyPeer final : public Peer {
public:
    explicit CopyPeer(size_t bytes) : src_(bytes / 4, 1.0f), dst_(bytes / 4, 0.0f) {}
    void run() override { std::memcpy(dst_.data(), src_.data(), src_.size() * sizeof(float)); }

private:
    FloatBuffer src_, dst_;
};

// Every thread of the case runs the loop at once: the peak of as many cores as
// the kernel uses, so "of peak" stays a fraction with --threads.
class FmaPeakPeer final : public Peer {
public:
    FmaPeakPeer(jit::Isa isa, int threads) : kernel_(jit::make_fma_peak_kernel(isa)), pool_(threads) {}
    void run() override {
        const jit::KernelFn fn = kernel_->entry();
        pool_.parallel([&](int, int) { benchfp_call_jit(fn, &args_); });
    }
    // 1.7 ms (avx2) to 7 ms (avx512) on the AMD EPYC Zen 4 guest: long enough that
    // waking the pool's workers is noise. At 100000 (0.17 ms at avx2) a wake cost
    // a tenth of the loop, and gemm 1024^3 at --threads=2 read 1.15 "of peak".
    static constexpr size_t iterations = 1000000;

private:
    std::unique_ptr<jit::Generator> kernel_;
    jit::FmaPeakArgs args_{iterations};
    ThreadPool pool_;
};

}  // namespace

std::unique_ptr<Peer> make_copy_peer(size_t bytes) { return std::make_unique<CopyPeer>(bytes); }

std::unique_ptr<Peer> make_fma_peak_peer(jit::Isa isa, int threads, double& flops_per_run) {
    flops_per_run = threads * FmaPeakPeer::iterations * jit::fma_peak_flops_per_iteration(isa);
    return std::make_unique<FmaPeakPeer>(isa, threads);
}

double fma_peak_rate(jit::Isa isa) {
    // A run is descheduled or slowed, never sped up: the best of 5 is the rate,
    // after one untimed run (the clock ramps up from idle). Called directly,
    // not through benchfp_call_jit: step and abi modes make that call step or
    // probe its kernel, and this loop is no case's.
    constexpr size_t iterations = 50000;
    constexpr int runs = 5;
    const auto kernel = jit::make_fma_peak_kernel(isa);
    const jit::KernelFn fn = kernel->entry();
    jit::FmaPeakArgs args{iterations};
    fn(&args);
    double best_seconds = 0;
    for (int run = 0; run < runs; ++run) {
        const auto start = std::chrono::steady_clock::now();
        fn(&args);
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        if (run == 0 || seconds < best_seconds) best_seconds = seconds;
    }
    return iterations * jit::fma_peak_flops_per_iteration(isa) / best_seconds;
}

}  // namespace benchfp::harness
