#pragma once
// `benchfp audit --target=onednn`: oneDNN's primitives (sgemm, eltwise, conv,
// reorder) in build/benchfp_onednn_target, each audited from outside, side by
// side with benchfp's own kernel in each frame policy, audited the same way.
#include "commands/audit_command.hpp"

namespace benchfp::harness {

int run_onednn_comparison(const AuditOptions& options);

}  // namespace benchfp::harness
