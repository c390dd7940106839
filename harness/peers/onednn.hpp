#pragma once
// oneDNN (Debian's libdnnl) as a peer, through its C API: the pieces every
// family's oneDNN peer is made of (families/<name>/ describe the primitive).
// A peer's OpenMP thread count is set to the case's --threads before its
// primitive descriptor is created and before each run.
#include "peers/peer.hpp"

#include <dnnl.h>

#include <memory>
#include <string>
#include <vector>

namespace benchfp::harness::onednn {

// Throws std::runtime_error naming `what` unless status is dnnl_success.
void check(dnnl_status_t status, const char* what);

// A dense f32 memory descriptor of `dims` in the layout `tag`, or with
// dnnl_format_tag_any, one whose layout the primitive chooses.
dnnl_memory_desc_t plain_desc(std::vector<dnnl_dim_t> dims, dnnl_format_tag_t tag);

// The CPU engine every peer runs on.
dnnl_engine_t engine();

// The highest ISA oneDNN's kernels use here ("avx512_core"): the host's best
// unless ONEDNN_MAX_CPU_ISA caps it, which is how a vs-onednn figure is made
// at the case's own ISA (oneDNN takes one cap per process).
std::string effective_isa();

// Sets oneDNN's (OpenMP's) thread count for what comes next. A primitive
// descriptor can fix its count when it is created: oneDNN 2.6's gemm-based
// convolution takes the count then and runs that many threads whatever the
// count at execution (at --threads=1 it ran on 2, and vs-onednn compared one
// of our threads with two of oneDNN's). So set it before creating one, as
// make_peer does, and again before each run (PrimitivePeer::run).
void set_threads(int threads);

// A primitive with its memories bound to a workload's buffers.
class PrimitivePeer final : public Peer {
public:
    PrimitivePeer(dnnl_primitive_desc_t pd, int threads);  // takes ownership of pd
    ~PrimitivePeer() override;
    PrimitivePeer(const PrimitivePeer&) = delete;  // it owns oneDNN handles
    PrimitivePeer& operator=(const PrimitivePeer&) = delete;
    void bind(int arg, const dnnl_memory_desc_t& md, const void* data);
    // Binds `arg` in the layout the primitive chose for it (created with
    // dnnl_format_tag_any, queried with `layout`), converted once from `data`
    // in layout `md`, here and not in run(): weights, which a user reorders
    // once and keeps, as benchdnn's --wtag=any does. Later changes to `data` do
    // not reach the copy; a peer is a timing reference, its output unchecked.
    void bind_converted(int arg, dnnl_query_t layout, const dnnl_memory_desc_t& md, const void* data);
    void run() override;

private:
    int threads_;
    dnnl_primitive_desc_t pd_ = nullptr;
    dnnl_primitive_t primitive_ = nullptr;
    std::vector<dnnl_exec_arg_t> args_;
};

// The primitive of an operation descriptor (dnnl_*_desc_t) on the CPU engine.
std::unique_ptr<PrimitivePeer> make_peer(const_dnnl_op_desc_t desc, int threads);

}  // namespace benchfp::harness::onednn
