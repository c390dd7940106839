#include "jit/frame_policy.hpp"
#include "jit/isa.hpp"

#include <gtest/gtest.h>

#include <cstdlib>

using namespace benchfp::jit;

TEST(Isa, NamesRoundTrip) {
    for (Isa isa : all_isas) EXPECT_EQ(parse_isa(to_string(isa)), isa);
    EXPECT_EQ(parse_isa("avx9"), std::nullopt);
    EXPECT_EQ(parse_isa("AVX2"), std::nullopt);
    for (FramePolicy p : all_frame_policies) EXPECT_EQ(parse_frame_policy(to_string(p)), p);
    EXPECT_EQ(parse_frame_policy("omit"), std::nullopt);
}

TEST(Isa, CapFromEnvironment) {
    setenv("BENCHFP_MAX_CPU_ISA", "avx2", 1);
    EXPECT_EQ(isa_cap_from_env(), Isa::avx2);
    setenv("BENCHFP_MAX_CPU_ISA", "avx3", 1);
    EXPECT_THROW(isa_cap_from_env(), std::invalid_argument);
    unsetenv("BENCHFP_MAX_CPU_ISA");
    EXPECT_EQ(isa_cap_from_env(), std::nullopt);
}

TEST(Isa, CapAndHostDecideUsability) {
    const auto host = host_isa();
    ASSERT_TRUE(host.has_value()) << "benchfp needs at least SSE4.1";
    std::string why;
    EXPECT_TRUE(isa_usable(Isa::sse41, std::nullopt, &why)) << why;
    EXPECT_FALSE(isa_usable(*host, Isa::sse41, &why) && *host != Isa::sse41);
    if (*host != Isa::avx512) {
        EXPECT_FALSE(isa_usable(Isa::avx512, std::nullopt, &why));
        EXPECT_NE(why.find("host lacks avx512"), std::string::npos) << why;
    } else {
        EXPECT_FALSE(isa_usable(Isa::avx512, Isa::avx2, &why));
        EXPECT_NE(why.find("above the ISA cap avx2"), std::string::npos) << why;
    }
}
