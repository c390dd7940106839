#pragma once
// A peer: other code doing the same work as a kernel, timed side by side with
// it in perf mode (--vs). Peers know nothing of cases or families: the family's
// workload hands them its buffers (a oneDNN primitive, see peers/onednn.hpp)
// or a size (the copy and FMA-peak references below).
#include "jit/isa.hpp"

#include <cstddef>
#include <memory>
#include <stdexcept>

namespace benchfp::harness {

class Peer {
public:
    virtual ~Peer() = default;
    virtual void run() = 0;
};

// Thrown where a peer has no equivalent of this one problem, though it has for
// the family (oneDNN's reduction refuses a row of one element): the case is
// timed without it, its ratio "n/a", the reason in its record.
struct PeerUnavailable : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// A plain streaming copy (memcpy) of `bytes`: the bandwidth reference.
std::unique_ptr<Peer> make_copy_peer(size_t bytes);

// The register-only FMA loop of an ISA on `threads` threads at once: the compute
// reference. Sets the flops one run does (all threads together).
std::unique_ptr<Peer> make_fma_peak_peer(jit::Isa isa, int threads, double& flops_per_run);

// The same loop's rate on the calling thread, flops per second: the best of a
// few short runs (about 2 ms in all at avx512 on a Zen 4 guest). For choices
// that depend on how fast an ISA's FMAs are on this CPU (gemm's B panels).
double fma_peak_rate(jit::Isa isa);

}  // namespace benchfp::harness
