#include "peers/onednn.hpp"

#include <stdexcept>
#include <string>

extern "C" void omp_set_num_threads(int);  // libgomp, which libdnnl runs on

namespace benchfp::harness::onednn {

namespace {

struct Runtime {
    dnnl_engine_t engine = nullptr;
    dnnl_stream_t stream = nullptr;
    Runtime() {
        check(dnnl_engine_create(&engine, dnnl_cpu, 0), "engine creation");
        check(dnnl_stream_create(&stream, engine, dnnl_stream_default_flags), "stream creation");
    }
};
Runtime& runtime() {
    static Runtime r;
    return r;
}

}  // namespace

void check(dnnl_status_t status, const char* what) {
    if (status != dnnl_success)
        throw std::runtime_error(std::string("oneDNN: ") + what + " failed (status " + std::to_string(status) + ")");
}

dnnl_memory_desc_t plain_desc(std::vector<dnnl_dim_t> dims, dnnl_format_tag_t tag) {
    dnnl_memory_desc_t md;
    check(dnnl_memory_desc_init_by_tag(&md, static_cast<int>(dims.size()), dims.data(), dnnl_f32, tag),
          "memory descriptor");
    return md;
}

dnnl_engine_t engine() { return runtime().engine; }

std::string effective_isa() {
    switch (dnnl_get_effective_cpu_isa()) {
        case dnnl_cpu_isa_sse41: return "sse41";
        case dnnl_cpu_isa_avx: return "avx";
        case dnnl_cpu_isa_avx2: return "avx2";
        case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
        case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
        case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
        case dnnl_cpu_isa_avx512_core: return "avx512_core";
        case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
        case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
        case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
        case dnnl_cpu_isa_all: return "all";
    }
    return "unknown";
}

void set_threads(int threads) { omp_set_num_threads(threads); }

PrimitivePeer::PrimitivePeer(dnnl_primitive_desc_t pd, int threads) : threads_(threads), pd_(pd) {
    const dnnl_status_t status = dnnl_primitive_create(&primitive_, pd);
    if (status != dnnl_success) dnnl_primitive_desc_destroy(pd);
    check(status, "primitive creation");
}

PrimitivePeer::~PrimitivePeer() {
    for (auto& arg : args_) dnnl_memory_destroy(arg.memory);
    dnnl_primitive_destroy(primitive_);
    dnnl_primitive_desc_destroy(pd_);
}

void PrimitivePeer::bind(int arg, const dnnl_memory_desc_t& md, const void* data) {
    dnnl_memory_t memory;
    check(dnnl_memory_create(&memory, &md, engine(), const_cast<void*>(data)), "memory creation");
    args_.push_back({arg, memory});
}

void PrimitivePeer::bind_converted(int arg, dnnl_query_t layout, const dnnl_memory_desc_t& md, const void* data) {
    const dnnl_memory_desc_t* chosen = dnnl_primitive_desc_query_md(pd_, layout, 0);
    if (!chosen) throw std::runtime_error("oneDNN: the primitive has no memory for the queried argument");
    if (dnnl_memory_desc_equal(chosen, &md)) return bind(arg, md, data);
    dnnl_memory_t from = nullptr, to = nullptr;
    dnnl_primitive_desc_t reorder_pd = nullptr;
    dnnl_primitive_t reorder = nullptr;
    // Released on every path: a failed check throws.
    struct Release {
        dnnl_memory_t& from;
        dnnl_primitive_desc_t& pd;
        dnnl_primitive_t& reorder;
        ~Release() {
            dnnl_primitive_destroy(reorder);
            dnnl_primitive_desc_destroy(pd);
            dnnl_memory_destroy(from);
        }
    } release{from, reorder_pd, reorder};
    check(dnnl_memory_create(&from, &md, engine(), const_cast<void*>(data)), "memory creation");
    args_.reserve(args_.size() + 1);  // so that the push_back below cannot throw and leak `to`
    check(dnnl_memory_create(&to, chosen, engine(), DNNL_MEMORY_ALLOCATE), "memory creation");
    args_.push_back({arg, to});  // the destructor frees it
    check(dnnl_reorder_primitive_desc_create(&reorder_pd, &md, engine(), chosen, engine(), nullptr),
          "reorder descriptor");
    check(dnnl_primitive_create(&reorder, reorder_pd), "reorder creation");
    const dnnl_exec_arg_t reorder_args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
    check(dnnl_primitive_execute(reorder, runtime().stream, 2, reorder_args), "reorder");
    check(dnnl_stream_wait(runtime().stream), "stream wait");
}

void PrimitivePeer::run() {
    set_threads(threads_);
    check(dnnl_primitive_execute(primitive_, runtime().stream, static_cast<int>(args_.size()), args_.data()),
          "execution");
    check(dnnl_stream_wait(runtime().stream), "stream wait");
}

std::unique_ptr<PrimitivePeer> make_peer(const_dnnl_op_desc_t desc, int threads) {
    set_threads(threads);  // before the descriptor: see set_threads in onednn.hpp
    dnnl_primitive_desc_t pd;
    check(dnnl_primitive_desc_create(&pd, desc, nullptr, engine(), nullptr), "primitive descriptor");
    return std::make_unique<PrimitivePeer>(pd, threads);
}

}  // namespace benchfp::harness::onednn
