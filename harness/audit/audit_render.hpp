#pragma once
// The audit's report: Markdown (also what stdout shows: its tables read well
// in a terminal), JSON, and a self-contained HTML page with everything escaped.
#include "audit/audit_analysis.hpp"
#include "report/file.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <string>
#include <vector>

namespace benchfp::harness {

// "12.5%" of part over whole, "-" when whole is 0; "a, b, c".
std::string percent(uint64_t part, uint64_t whole);
std::string comma_list(const std::vector<std::string>& items);
// The kind with the most samples, "zero (+2 other kinds)" (what rbp held at a culprit).
std::string most_common(const std::map<std::string, uint64_t>& kinds);
// A tally's seven Markdown table cells, "|"-separated without the outer bars:
// JIT samples, full, skipped-caller, broken, prologue, unwind rate, reaches the start.
std::string tally_cells(const AuditTally& tally);

std::string render_audit_markdown(const AuditReport& report);
nlohmann::json render_audit_json(const AuditReport& report);
std::string render_audit_html(const AuditReport& report);

// The files write_audit_report writes into its directory, to check before sampling.
const std::vector<std::string>& audit_report_files();
// Their names and texts, for a caller that writes several reports as one set.
std::vector<report::NamedText> audit_report_texts(const AuditReport& report);
// report.md, report.json, report.html in `dir` (created); throws on I/O errors.
void write_audit_report(const AuditReport& report, const std::string& dir);

}  // namespace benchfp::harness
