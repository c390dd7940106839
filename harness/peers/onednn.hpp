#pragma once
// oneDNN (Debian's libdnnl) as a peer, through its C API: the pieces every
// family's oneDNN peer is made of (families/<name>/ describe the primitive).
// A peer's OpenMP thread count is set to the case's --threads before each run.
#include "peers/peer.hpp"

#include <dnnl.h>

#include <memory>
#include <string>
#include <vector>

namespace benchfp::harness::onednn {

// Throws std::runtime_error naming `what` unless status is dnnl_success.
void check(dnnl_status_t status, const char* what);

// A dense f32 memory descriptor of `dims` in the layout `tag`.
dnnl_memory_desc_t plain_desc(std::vector<dnnl_dim_t> dims, dnnl_format_tag_t tag);

// The CPU engine every peer runs on.
dnnl_engine_t engine();

// The highest ISA oneDNN's kernels use here ("avx512_core"): the host's best
// unless ONEDNN_MAX_CPU_ISA caps it, which is how a vs-onednn figure is made
// at the case's own ISA (oneDNN takes one cap per process).
std::string effective_isa();

// Sets oneDNN's (OpenMP's) thread count for the next call.
void set_threads(int threads);

// A primitive with its memories bound to a workload's buffers.
class PrimitivePeer final : public Peer {
public:
    PrimitivePeer(dnnl_primitive_desc_t pd, int threads);  // takes ownership of pd
    ~PrimitivePeer() override;
    void bind(int arg, const dnnl_memory_desc_t& md, const void* data);
    void run() override;

private:
    int threads_;
    dnnl_primitive_t primitive_ = nullptr;
    std::vector<dnnl_exec_arg_t> args_;
};

// The primitive of an operation descriptor (dnnl_*_desc_t) on the CPU engine.
std::unique_ptr<PrimitivePeer> make_peer(const_dnnl_op_desc_t desc, int threads);

}  // namespace benchfp::harness::onednn
