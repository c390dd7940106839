// The streaming kernels (eltwise, reduce) lay their loops out alike under
// every frame policy: from the first loop head on, every instruction starts at
// the same offset and has the same length, whatever registers the policy's
// GPR pool gave. The policies then differ in time only by what the policy
// does (the link, and under clobber which value lives in rbp), not by where
// the loops' instructions sit in their cache lines: a loop a byte longer or
// shorter under clobber ([rbp] takes a displacement byte, add has a short form
// for rax) read 0.4-0.8% as frame and preserve's cost on exp avx2 (README,
// frame cost).
#include "jit/disassembly.hpp"
#include "jit/kernels/eltwise.hpp"
#include "jit/kernels/reduce.hpp"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace benchfp::jit;

// (offset, length) of every instruction but the nops, from `from` to the epilogue.
std::vector<std::pair<size_t, unsigned>> instructions(const Generator& kernel, size_t from) {
    const Disassembler disassembler;
    const CodeRegionInfo& layout = kernel.layout();
    std::vector<std::pair<size_t, unsigned>> found;
    for (size_t at = 0; at < layout.epilogue_begin;) {
        const auto insn = disassembler.decode(layout.begin + at, layout.epilogue_begin - at);
        if (!insn) {
            ADD_FAILURE() << kernel.name() << ": no instruction decodes at +" << at;
            break;
        }
        if (at >= from && !insn->nop) found.emplace_back(at, insn->size);
        at += insn->size;
    }
    return found;
}

void expect_alike_under_every_policy(const std::string& what,
                                     const std::function<std::unique_ptr<Generator>(FramePolicy)>& make) {
    const auto clobber = make(FramePolicy::clobber);
    // From the first loop head on (the policies' prologues differ in length
    // before it, which the nops before it absorb).
    ASSERT_FALSE(clobber->loop_heads().empty()) << what;
    const size_t from = clobber->loop_heads().front();
    const auto expected = instructions(*clobber, from);
    ASSERT_FALSE(expected.empty()) << what;
    for (FramePolicy policy : {FramePolicy::preserve, FramePolicy::frame}) {
        const auto kernel = make(policy);
        EXPECT_EQ(kernel->loop_heads(), clobber->loop_heads()) << what << " " << to_string(policy);
        EXPECT_EQ(kernel->layout().epilogue_begin, clobber->layout().epilogue_begin) << what << " " << to_string(policy);
        const auto got = instructions(*kernel, from);
        ASSERT_EQ(got.size(), expected.size()) << what << " " << to_string(policy);
        for (size_t i = 0; i < got.size(); ++i) {
            ASSERT_EQ(got[i], expected[i]) << what << " " << to_string(policy) << ": instruction " << i
                                           << " (offset, length) differs from clobber's";
        }
    }
}

TEST(PolicyLayout, StreamingKernelsLayTheirLoopsOutAlikeUnderEveryPolicy) {
    for (Isa isa : all_isas) {  // generated only, never run: any CPU checks every ISA
        for (EltwiseAlg alg : all_eltwise_algs) {
            expect_alike_under_every_policy(std::string("eltwise ") + to_string(alg) + " " + to_string(isa),
                                            [&](FramePolicy p) { return make_eltwise_kernel(alg, isa, p); });
        }
        for (ReduceAlg alg : all_reduce_algs) {
            expect_alike_under_every_policy(std::string("reduce ") + to_string(alg) + " " + to_string(isa),
                                            [&](FramePolicy p) { return make_reduce_kernel(alg, isa, p); });
        }
    }
}

}  // namespace
