// benchfp_onednn_target: a small program that calls oneDNN the way an
// application does, for `benchfp audit --target=onednn` to look at from
// outside, as a fleet profiler would: main -> foo -> bar -> a oneDNN primitive,
// in a loop for the duration, on the main thread and on threads of its own
// (oneDNN adds its OpenMP workers).
//
//   benchfp_onednn_target PRIMITIVE DURATION_MS [THREADS]
//   PRIMITIVE: sgemm | eltwise | conv | reorder
//
// Built with frame pointers and without sibling calls, like benchfp's own
// callers, so that the chain above oneDNN is walkable whenever oneDNN keeps rbp.
#include <oneapi/dnnl/dnnl.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;
using dnnl::memory;
using tag = memory::format_tag;

struct Job {
    std::function<void()> call;
    Clock::time_point deadline;
};

std::function<void()> make_primitive(const std::string& name, dnnl::engine& eng, dnnl::stream& strm) {
    if (name == "sgemm") {
        const dnnl_dim_t n = 192;
        auto buf = std::make_shared<std::vector<float>>(3 * n * n, 0.5f);
        return [buf, n] {
            float* a = buf->data();
            dnnl::sgemm('N', 'N', n, n, n, 1.f, a, n, a + n * n, n, 0.f, a + 2 * n * n, n);
        };
    }
    if (name == "eltwise") {
        memory::desc md({1 << 18}, memory::data_type::f32, tag::a);
        auto src = std::make_shared<memory>(md, eng), dst = std::make_shared<memory>(md, eng);
        auto pd = dnnl::eltwise_forward::primitive_desc(
            {dnnl::prop_kind::forward_inference, dnnl::algorithm::eltwise_exp, md, 0.f, 0.f}, eng);
        auto prim = std::make_shared<dnnl::eltwise_forward>(pd);
        return [=, &strm] {
            prim->execute(strm, {{DNNL_ARG_SRC, *src}, {DNNL_ARG_DST, *dst}});
            strm.wait();
        };
    }
    if (name == "conv") {
        const memory::dims src_dims{1, 32, 28, 28}, wei_dims{32, 32, 3, 3}, dst_dims{1, 32, 28, 28};
        auto any = [](const memory::dims& d) { return memory::desc(d, memory::data_type::f32, tag::any); };
        auto pd = dnnl::convolution_forward::primitive_desc(
            {dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, any(src_dims), any(wei_dims),
             any(dst_dims), {1, 1}, {1, 1}, {1, 1}},
            eng);
        auto src = std::make_shared<memory>(pd.src_desc(), eng), wei = std::make_shared<memory>(pd.weights_desc(), eng),
             dst = std::make_shared<memory>(pd.dst_desc(), eng);
        auto prim = std::make_shared<dnnl::convolution_forward>(pd);
        return [=, &strm] {
            prim->execute(strm, {{DNNL_ARG_SRC, *src}, {DNNL_ARG_WEIGHTS, *wei}, {DNNL_ARG_DST, *dst}});
            strm.wait();
        };
    }
    if (name == "reorder") {
        const memory::dims dims{8, 64, 32, 32};
        auto src = std::make_shared<memory>(memory::desc(dims, memory::data_type::f32, tag::nchw), eng);
        auto dst = std::make_shared<memory>(memory::desc(dims, memory::data_type::f32, tag::nhwc), eng);
        auto prim = std::make_shared<dnnl::reorder>(*src, *dst);
        return [=, &strm] {
            prim->execute(strm, *src, *dst);
            strm.wait();
        };
    }
    return nullptr;
}

}  // namespace

// The caller frames a fleet profile should show above oneDNN's code.
extern "C" __attribute__((noinline)) void bar(Job* job) {
    do job->call();
    while (Clock::now() < job->deadline);
}
extern "C" __attribute__((noinline)) void foo(Job* job) { bar(job); }

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: %s sgemm|eltwise|conv|reorder DURATION_MS [THREADS]\n", argv[0]);
        return 2;
    }
    dnnl::engine eng(dnnl::engine::kind::cpu, 0);
    const int threads = argc > 3 ? std::atoi(argv[3]) : 1;
    const auto deadline = Clock::now() + std::chrono::milliseconds(std::atol(argv[2]));
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t)
        workers.emplace_back([&, name = std::string(argv[1])] {
            dnnl::stream strm(eng);
            Job job{make_primitive(name, eng, strm), deadline};
            if (job.call) foo(&job);
        });
    dnnl::stream strm(eng);
    Job job{make_primitive(argv[1], eng, strm), deadline};
    if (!job.call) {
        std::fprintf(stderr, "unknown primitive '%s'\n", argv[1]);
        std::exit(2);
    }
    foo(&job);
    for (auto& w : workers) w.join();
    return 0;
}
