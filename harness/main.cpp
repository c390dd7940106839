// benchfp: validation and benchmarking of profilable hot code. See README.md.
//
// main stays tiny because it is a frame the unwind check looks for: the session
// runs everything else and hands back each kernel call that must be sampled,
// which main makes through foo and bar, so a sample's chain reads
// kernel <- bar <- foo <- main.
#include "callers.hpp"
#include "session.hpp"

int main(int argc, char** argv) {
    benchfp::harness::Session session(argc, argv);
    while (benchfp::harness::SampledCall* call = session.next_sampled_call()) foo(call);
    return session.exit_status();
}
