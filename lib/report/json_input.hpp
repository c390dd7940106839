#pragma once
// Reading JSON that someone else wrote: every file benchfp reads is checked
// against its schema as it is read, so bad input is an InputError naming the
// file, the field and what was expected -- never an exception from deep inside
// nlohmann::json, never a value that is silently out of range.
//
// The seam: readers walk a document through `In` (a value and where it is);
// every accessor checks the type and, for numbers, a stated range.
#include <nlohmann/json.hpp>

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace benchfp::report {

// Bad input: the message names the file and the problem. Exit status 2.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The whole file parsed; `what` says what it should be ("baseline"). Missing,
// a directory, unreadable, empty, not a regular file or a pipe (/dev/zero, a
// terminal), a FIFO that no process opens for writing within 10 s (waited on no
// longer), not JSON, a number out of double's range: InputError.
nlohmann::json read_json_file(const std::string& path, const std::string& what);
nlohmann::json parse_json_text(std::string_view text, const std::string& path, const std::string& what);

// The values a number may take, closed at both ends. Zero passes only when
// `lo` is zero; subnormal numbers never pass (no measurement is 1e-310).
struct Range {
    double lo, hi;
};

// A JSON value and where it is: "<file>: <where>: " starts every message
// (where is a path of keys and indices, "benchmarks[3].real_time"; empty: the document).
class In {
public:
    In(const nlohmann::json& value, std::string file, std::string where)
        : value_(&value), file_(std::move(file)), where_(std::move(where)) {}

    const nlohmann::json& json() const { return *value_; }
    const std::string& file() const { return file_; }
    const std::string& where() const { return where_; }

    // Members of an object (this value must be one).
    bool has(const std::string& key) const;
    In at(const std::string& key) const;                           // required
    std::optional<In> find(const std::string& key) const;          // optional
    std::string string(const std::string& key) const;              // required string
    std::string string_or(const std::string& key, std::string fallback) const;
    double number(const std::string& key, Range range) const;      // required number in range
    double number_or(const std::string& key, double fallback, Range range) const;
    // A count (repetitions, iterations, threads): a whole number in range, or
    // `fallback` where the key is absent; a fraction is refused, not truncated.
    double whole_number_or(const std::string& key, double fallback, Range range) const;
    bool boolean_or(const std::string& key, bool fallback) const;
    std::vector<std::string> strings_or(const std::string& key) const;  // optional list of strings

    // This value itself.
    const In& expect_object() const;
    const In& expect_array() const;
    std::string as_string() const;
    double as_number(Range range) const;
    std::vector<In> elements() const;                              // of an array
    std::vector<std::pair<std::string, In>> members() const;       // of an object

    [[noreturn]] void fail(const std::string& problem) const;     // "<file>: <where>: <problem>"

private:
    In member(const std::string& key) const;
    std::string path_to(const std::string& key) const;  // "benchmarks.alloc/x/off.min_ns"
    const nlohmann::json* value_;
    std::string file_, where_;
};

}  // namespace benchfp::report
