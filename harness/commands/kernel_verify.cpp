// KernelRun's verify mode: what the static frame verifier (jit/verifier.hpp)
// found in a case's kernel, every instruction on every path.
#include "commands/kernel_command.hpp"

#include "commands/kernel_run_state.hpp"
#include "families/family.hpp"

#include <sstream>

namespace benchfp::harness {

void KernelRun::run_verify(const KernelCase& c) {
    const auto begun = Clock::now();
    std::unique_ptr<jit::Generator> kernel;
    try {
        kernel = build_kernel(c.spec);
    } catch (const jit::VerifyError& e) {  // the build verified it and refused it
        record(c, report::State::failed, std::string("verify: ") + e.what(), ms_since(begun), {{"verify", {{"failure", e.what()}}}});
        return;
    }
    // Built with --no-verify: verify mode verifies anyway, that is what it is for.
    const jit::Verification v = kernel->verification() ? *kernel->verification()
                                                        : jit::verify(kernel->layout(), c.spec.frame);
    std::ostringstream detail;
    detail << "verify instructions:" << v.instructions << " paths:" << v.paths << " rbp prologue:" << v.rbp_prologue
           << " body:" << v.rbp_body << " epilogue:" << v.rbp_epilogue;
    if (v.rbp_clobbered) detail << " (rbp clobbered)";
    if (!v.passed()) detail << " " << v.failure;
    nlohmann::json record_json = {{"instructions", v.instructions}, {"paths", v.paths},
                                  {"rbp", {{"prologue", v.rbp_prologue}, {"body", v.rbp_body}, {"epilogue", v.rbp_epilogue}}},
                                  {"rbp_clobbered", v.rbp_clobbered}, {"code_bytes", kernel->layout().size},
                                  {"prologue_end", kernel->layout().prologue_end},
                                  {"epilogue_begin", kernel->layout().epilogue_begin}};
    if (!v.passed()) record_json["failure"] = v.failure;
    record(c, v.passed() ? report::State::passed : report::State::failed, detail.str(), ms_since(begun),
           {{"verify", record_json}});
}

}  // namespace benchfp::harness
