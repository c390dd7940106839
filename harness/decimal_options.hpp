#pragma once
// Whole-number options read as decimal, and only as what fits their type.
// CLI11 2.1 converts integers with strtoull/strtoll in base 0: `--threads=010`
// ran 8 threads and `--seed=0x10` seed 16, where problem strings read 064 as
// 64; and a signed value past 2^63 - 1 was capped there, not refused
// (`--period=99999999999999999999` ran with 9223372036854775807).
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace benchfp::harness {

// Adds the check to every INT and UINT option of `app` and of its subcommands
// (call it after the options are added): decimal digits, a '-' first only for
// a signed option, no leading zero, and a value its type holds. It runs before
// the option's own checks (CLI11's transform() puts it first), so that
// `--pid=1e3` is "not a whole number", not "not in range".
inline void require_decimal_whole_numbers(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        // "INT", or "INT:INT in [1 - 1024]" once a validator has added its text.
        const std::string full = option->get_type_name(), type = full.substr(0, full.find(':'));
        if (type != "INT" && type != "UINT") continue;
        const bool is_signed = type == "INT";
        option->transform(CLI::Validator(
            [is_signed](std::string& text) -> std::string {
                const bool negative = is_signed && text.starts_with('-');
                const std::string digits = negative ? text.substr(1) : text;
                if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos)
                    return "'" + text + "' is not a whole number in decimal digits";
                if (digits.size() > 1 && digits[0] == '0') return "'" + text + "': a leading 0 (decimal digits only, no octal)";
                errno = 0;
                if (is_signed) (void)std::strtoll(text.c_str(), nullptr, 10);
                else (void)std::strtoull(text.c_str(), nullptr, 10);
                if (errno == ERANGE) return "'" + text + (negative ? "' is too small" : "' is too large");
                return "";
            },
            "", "DECIMAL"));  // no description: the help reads "INT", not "INT:DECIMAL"
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) require_decimal_whole_numbers(*sub);
}

// The same for every FLOAT option: a decimal number, as written in the help
// (0.01, 1e-3), where CLI11's strtod took ' 0.5' (a leading blank) and
// 0x1p-3 (a hexadecimal float) that the whole-number options refuse.
inline void require_decimal_floats(CLI::App& app) {
    for (CLI::Option* option : app.get_options()) {
        const std::string full = option->get_type_name(), type = full.substr(0, full.find(':'));
        if (type != "FLOAT") continue;
        option->transform(CLI::Validator(
            [](std::string& text) -> std::string {
                // [+-] digits [. digits] [e [+-] digits], or [+-] . digits [e ...]
                size_t i = text.starts_with('-') || text.starts_with('+') ? 1 : 0;
                const auto digits = [&] {
                    const size_t from = i;
                    while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
                    return i - from;
                };
                size_t mantissa = digits();
                if (i < text.size() && text[i] == '.') ++i, mantissa += digits();
                bool valid = mantissa > 0;
                if (valid && i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
                    ++i;
                    if (i < text.size() && (text[i] == '-' || text[i] == '+')) ++i;
                    valid = digits() > 0;
                }
                return valid && i == text.size() ? "" : "'" + text + "' is not a decimal number";
            },
            "", "DECIMAL"));
    }
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) require_decimal_floats(*sub);
}

}  // namespace benchfp::harness
