#pragma once
// Rules every command line (and batch line) of benchfp holds its options to,
// where CLI11 2.1 is looser:
// - whole numbers read as decimal, and only as what fits their type: CLI11
//   converts integers with strtoull/strtoll in base 0, so `--threads=010` ran
//   8 threads and `--seed=0x10` seed 16, where problem strings read 064 as 64;
//   and a signed value past 2^63 - 1 was capped there, not refused
//   (`--period=99999999999999999999` ran with 9223372036854775807);
// - fractions read as decimal numbers: strtod took ' 0.5' and 0x1p-3;
// - a flag given once and without a value: `--all --all` was taken, and
//   `--all=0` read as no --all.
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdlib>
#include <string>

namespace benchfp::harness {

// Calls fn(option) for every option of `app` and of its subcommands.
template <typename Fn>
void for_each_option(CLI::App& app, Fn fn) {
    for (CLI::Option* option : app.get_options()) fn(option);
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) for_each_option(*sub, fn);
}

// An option's type as its help names it: "INT", "FLOAT", ... ("INT:INT in
// [1 - 1024]" once a validator has added its text).
inline std::string option_type(const CLI::Option* option) {
    const std::string full = option->get_type_name();
    return full.substr(0, full.find(':'));
}

// Whole numbers: decimal digits, a '-' first only for a signed option, no
// leading zero, and a value its type holds.
inline CLI::Validator decimal_whole_number(bool is_signed) {
    return CLI::Validator(
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
        "", "DECIMAL");  // no description: the help reads "INT", not "INT:DECIMAL"
}

// Fractions: [+-] digits [. digits] [e [+-] digits], or [+-] . digits [e ...],
// as the help writes them (0.01, 1e-3).
inline CLI::Validator decimal_number() {
    return CLI::Validator(
        [](std::string& text) -> std::string {
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
        "", "DECIMAL");
}

// Applies the rules above to every option of `app` and of its subcommands
// (call it after the options are added). The number checks run before the
// option's own (CLI11's transform() puts them first), so that `--pid=1e3` is
// "not a whole number", not "not in range".
inline void apply_option_rules(CLI::App& app) {
    for_each_option(app, [](CLI::Option* option) {
        const std::string type = option_type(option);
        if (type == "INT" || type == "UINT") option->transform(decimal_whole_number(type == "INT"));
        if (type == "FLOAT") option->transform(decimal_number());
        // A flag, but for -h/--help: asking for help twice (`-h --help`) is
        // still asking for help, as in git and perf, not a usage error.
        if (option->get_expected_max() == 0 && !option->check_lname("help"))
            option->multi_option_policy(CLI::MultiOptionPolicy::Throw)->disable_flag_override();
    });
}

}  // namespace benchfp::harness
