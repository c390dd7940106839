#pragma once
// A peer: other code doing the same work as a kernel, timed side by side with
// it in perf mode (--vs). Peers know nothing of cases or families: the family's
// workload hands them its buffers (a oneDNN primitive, see peers/onednn.hpp)
// or a size (the copy and FMA-peak references below).
#include "jit/isa.hpp"

#include <cstddef>
#include <memory>

namespace benchfp::harness {

class Peer {
public:
    virtual ~Peer() = default;
    virtual void run() = 0;
};

// A plain streaming copy (memcpy) of `bytes`: the bandwidth reference.
std::unique_ptr<Peer> make_copy_peer(size_t bytes);

// The register-only FMA loop of an ISA on `threads` threads at once: the compute
// reference. Sets the flops one run does (all threads together).
std::unique_ptr<Peer> make_fma_peak_peer(jit::Isa isa, int threads, double& flops_per_run);

}  // namespace benchfp::harness
