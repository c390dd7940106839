#pragma once
// `benchfp audit --target=onednn`: oneDNN's primitives (sgemm, eltwise, conv,
// reorder) in build/benchfp_onednn_target, each audited from outside, side by
// side with benchfp's own kernel in each frame policy, audited the same way.
#include "audit/audit_run.hpp"

#include <cstdint>
#include <string>

namespace benchfp::harness {

// The summary table's rows for one program: one per thread that had JIT
// samples, each with the process's top culprit (the rbp write that broke the
// most samples); names from the process (its threads') and the disassembly
// stay in their cells.
std::string onednn_comparison_rows(const std::string& name, const AuditReport& report);

// Each subject is started, audited with `request` after `delay_ms` (an empty
// request.expect means `bar`, `foo`), and stopped; the table goes to stdout
// and, with a non-empty report_dir, to report_dir/summary.md beside each
// subject's own report. Returns the exit status.
int run_onednn_comparison(AuditRequest request, uint64_t delay_ms, const std::string& report_dir);

}  // namespace benchfp::harness
