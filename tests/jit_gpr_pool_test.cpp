// The GPR pool: what it hands out under each policy, and values past the last
// register living in stack slots that round-trip, with every callee-saved
// register restored.
#include "callee_saved_probe.hpp"
#include "jit/generator.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>

using namespace benchfp::jit;

namespace {

constexpr int value_count = 20;  // more than any policy has registers for

// Loads value_count words into pool values, then writes them back in reverse
// order, so a wrong slot or a clobbered register shows in the output.
class SpillProbe final : public Generator {
public:
    explicit SpillProbe(FramePolicy policy) : Generator("spill_probe", Isa::sse41, policy) {
        scratch_ = pool().take_register("scratch");
        for (auto& v : values_) v = pool().take("value");
    }

private:
    void generate_body() override {
        using namespace Xbyak::util;
        // A temporary for memory-to-memory moves, saved around each use: it may hold a value.
        const Xbyak::Reg64 tmp = scratch_ == rax ? rcx : rax;
        mov(scratch_, ptr[abi_param]);  // input words
        setup_done();
        for (int i = 0; i < value_count; ++i) {
            if (values_[i].spilled()) {
                push(tmp);
                mov(tmp, ptr[scratch_ + 8 * i]);
                mov(ptr[rsp + 8 + 8 * values_[i].slot()], tmp);  // slot addresses shift by the push
                pop(tmp);
            } else {
                mov(values_[i].reg(), ptr[scratch_ + 8 * i]);
            }
        }
        mov(scratch_, ptr[abi_param + 8]);  // output words
        for (int i = 0; i < value_count; ++i) {
            const GprValue& v = values_[value_count - 1 - i];
            if (v.spilled()) {
                push(tmp);
                mov(tmp, ptr[rsp + 8 + 8 * v.slot()]);
                mov(ptr[scratch_ + 8 * i], tmp);
                pop(tmp);
            } else {
                mov(ptr[scratch_ + 8 * i], v.reg());
            }
        }
    }

    Xbyak::Reg64 scratch_;
    std::array<GprValue, value_count> values_;
};

}  // namespace

TEST(GprPool, NeverHandsOutRbpOrRspUnlessClobber) {
    for (FramePolicy policy : all_frame_policies) {
        GprPool pool(policy);
        bool saw_rbp = false;
        for (int i = 0; i < value_count; ++i) {
            const GprValue v = pool.take("value");
            if (v.spilled()) continue;
            EXPECT_NE(v.reg(), Xbyak::util::rsp);
            EXPECT_NE(v.reg(), Xbyak::util::rdi);  // the argument block
            saw_rbp |= v.reg() == Xbyak::util::rbp;
        }
        EXPECT_EQ(saw_rbp, policy == FramePolicy::clobber) << to_string(policy);
        EXPECT_EQ(pool.spilled(), policy == FramePolicy::clobber ? value_count - 14 : value_count - 13);
        EXPECT_THROW(pool.take_register("one too many"), std::runtime_error);
    }
}

TEST(GprPool, CallerSavedBeforeCalleeSaved) {
    GprPool pool(FramePolicy::frame);
    for (int i = 0; i < 8; ++i) EXPECT_FALSE(GprPool::is_callee_saved(pool.take("caller").reg()));
    EXPECT_TRUE(GprPool::is_callee_saved(pool.take("callee").reg()));
    EXPECT_EQ(pool.callee_saved_taken().size(), 1u);
    EXPECT_EQ(pool.summary(), "gprs:9 callee-saved:1 (rbx) spilled:0");
}

TEST(GprPool, SpillSlotsKeepTheStackAligned) {
    GprPool pool(FramePolicy::frame);
    for (int i = 0; i < 14; ++i) pool.take("value");
    EXPECT_EQ(pool.spilled(), 1);
    EXPECT_EQ(pool.spill_bytes(), 16u);
}

TEST(GprPool, TheScratchAreaLiesAboveTheSpillSlots) {
    GprPool pool(FramePolicy::frame);
    for (int i = 0; i < 14; ++i) pool.take("value");  // one slot spilled
    pool.reserve_scratch(1024 + 64);
    EXPECT_EQ(pool.spill_bytes(), (8 + 1024 + 64 + 15) & ~size_t{15});
    EXPECT_EQ(pool.scratch_offset(), 8u);
    EXPECT_EQ(pool.spilled(), 1);  // the scratch is not counted as spilled values
    // After the prologue (seal), a spill or scratch would lie outside the frame it made.
    pool.seal();
    EXPECT_THROW(pool.take("late"), std::logic_error);
    EXPECT_THROW(pool.reserve_scratch(8), std::logic_error);
}

class SpillRoundTrip : public testing::TestWithParam<FramePolicy> {};

TEST_P(SpillRoundTrip, SpilledValuesRoundTripAndCalleeSavedAreRestored) {
    SpillProbe probe_kernel(GetParam());
    probe_kernel.build();
    EXPECT_GT(probe_kernel.gprs().spilled(), 0);
    std::array<uint64_t, value_count> in{}, out{};
    for (int i = 0; i < value_count; ++i) in[i] = 0x1000 + 17 * i;
    const void* args[2] = {in.data(), out.data()};
    const benchfp::test::CalleeSavedProbe canaries;
    EXPECT_EQ(canaries.run(probe_kernel.entry(), args), 0u) << "a callee-saved register was not restored";
    for (int i = 0; i < value_count; ++i) EXPECT_EQ(out[i], in[value_count - 1 - i]) << i;
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, SpillRoundTrip, testing::ValuesIn(all_frame_policies),
                         [](const auto& info) { return std::string(to_string(info.param)); });
