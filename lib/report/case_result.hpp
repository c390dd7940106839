#pragma once
// The result model of harness cases: benchdnn-style status lines, the closing
// summary, and the JSON record of a run.
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace benchfp::report {

enum class State { passed, failed, skipped, mistrusted, listed };
const char* to_string(State state);  // PASSED, FAILED, SKIPPED, MISTRUSTED, LISTED

struct CaseResult {
    int index = 0;
    State state = State::failed;
    std::string detail;  // what is shown in parentheses: tallies, errors, skip reason
    double ms = 0;       // wall time of the case
    std::string repro;   // options and problem that reproduce the case alone
    nlohmann::json record = nlohmann::json::object();  // spec, measures, environment
};

// "0:PASSED (unwind full:1532/1532 ...) (1003 ms) __REPRO: --kernel=eltwise ... 1048576"
std::string status_line(const CaseResult& result);

struct Summary {
    int tests = 0, passed = 0, skipped = 0, failed = 0, mistrusted = 0, listed = 0;
    void add(State state);
    std::string line() const;  // "tests:N passed:N skipped:N mistrusted:N failed:N" (+ " listed:N")
    int exit_status() const { return failed ? 1 : 0; }
};

// The schema tag of a results file (results/schemas/kernel-results.schema.json).
// Files before it carried {"benchfp": {"schema": "benchfp.results/1"}}: readers take both.
inline constexpr const char* results_schema = "benchfp.kernel-results/1";
inline constexpr const char* old_results_schema = "benchfp.results/1";

// Whether a parsed document says it is a benchfp results file (either tag), and
// what is wrong with its tag if so: "" when it is one of the two.
bool claims_results_json(const nlohmann::json& doc);
std::string results_schema_problem(const nlohmann::json& doc);

// The results file's text: {"schema": results_schema, "units": ..., "host": host,
// "summary": ..., "cases": [records]}.
std::string results_json(const nlohmann::json& host, const std::vector<CaseResult>& results, const Summary& summary);

}  // namespace benchfp::report
