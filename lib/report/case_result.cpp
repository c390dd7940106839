#include "report/case_result.hpp"

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace benchfp::report {

const char* to_string(State state) {
    switch (state) {
    case State::passed: return "PASSED";
    case State::failed: return "FAILED";
    case State::skipped: return "SKIPPED";
    case State::mistrusted: return "MISTRUSTED";
    case State::listed: return "LISTED";
    }
    return "?";
}

std::string status_line(const CaseResult& r) {
    std::ostringstream out;
    out << r.index << ':' << to_string(r.state);
    if (!r.detail.empty()) out << " (" << r.detail << ')';
    if (r.state != State::skipped) out << " (" << std::llround(r.ms) << " ms)";
    out << " __REPRO: " << r.repro;
    return out.str();
}

void Summary::add(State state) {
    ++tests;
    switch (state) {
    case State::passed: ++passed; break;
    case State::failed: ++failed; break;
    case State::skipped: ++skipped; break;
    case State::mistrusted: ++mistrusted; break;
    case State::listed: ++listed; break;
    }
}

std::string Summary::line() const {
    std::ostringstream out;
    out << "tests:" << tests << " passed:" << passed << " skipped:" << skipped << " mistrusted:" << mistrusted
        << " failed:" << failed;
    if (listed) out << " listed:" << listed;
    return out.str();
}

bool claims_results_json(const nlohmann::json& doc) {
    return doc.is_object() && (doc.contains("benchfp") ||
                               (doc.contains("schema") && doc.contains("cases") && doc.contains("host")));
}

std::string results_schema_problem(const nlohmann::json& doc) {
    const auto tag_of = [](const nlohmann::json& object) {
        const auto it = object.find("schema");
        return object.is_object() && it != object.end() && it->is_string() ? it->get<std::string>() : "";
    };
    if (doc.is_object() && tag_of(doc) == results_schema) return "";
    if (doc.is_object() && doc.contains("benchfp") && tag_of(doc["benchfp"]) == old_results_schema) return "";
    const std::string found = doc.is_object() ? tag_of(doc) : "";
    return "schema mismatch: expected \"" + std::string(results_schema) + "\" (or {\"benchfp\": {\"schema\": \"" +
           old_results_schema + "\"}}), found \"" + found + "\"";
}

std::string results_json(const nlohmann::json& host, const std::vector<CaseResult>& results, const Summary& summary) {
    nlohmann::json doc;
    doc["schema"] = results_schema;
    // Every duration in the file is milliseconds (its name ends in ms); perf's flops and bytes are per call.
    doc["units"] = {{"ms", "milliseconds"},         {"perf.min_ms", "milliseconds per call"},
                    {"perf.avg_ms", "milliseconds per call"}, {"perf.flops", "floating-point operations per call"},
                    {"perf.bytes", "bytes per call"},       {"perf.peak_gflops", "GFLOP/s"}};
    doc["host"] = host;
    doc["summary"] = {{"tests", summary.tests},     {"passed", summary.passed},
                      {"skipped", summary.skipped}, {"mistrusted", summary.mistrusted},
                      {"failed", summary.failed},   {"listed", summary.listed}};
    doc["cases"] = nlohmann::json::array();
    for (const auto& r : results) {
        nlohmann::json record = r.record;
        record["index"] = r.index;
        record["state"] = to_string(r.state);
        record["detail"] = r.detail;
        record["ms"] = r.ms;
        record["repro"] = r.repro;
        doc["cases"].push_back(std::move(record));
    }
    return doc.dump(2) + "\n";
}

}  // namespace benchfp::report
