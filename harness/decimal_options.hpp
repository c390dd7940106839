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

}  // namespace benchfp::harness
