#include "report/html.hpp"

namespace benchfp::report {

std::string escape_html(std::string_view text) {
    std::string escaped;
    escaped.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
        case '<': escaped += "&lt;"; break;
        case '>': escaped += "&gt;"; break;
        case '&': escaped += "&amp;"; break;
        case '"': escaped += "&quot;"; break;
        case '\'': escaped += "&#39;"; break;
        default: escaped += ch;
        }
    }
    return escaped;
}

namespace {

bool control(char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }

}  // namespace

std::string markdown_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        switch (ch) {
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '&': out += "&amp;"; break;
        case '|': out += "\\|"; break;
        // Backslash escapes: a backtick would open a code span, an asterisk
        // emphasis (or end the bold verdict line around the text), and a
        // backslash of the text's own would escape what follows it.
        case '`':
        case '*':
        case '\\': out += '\\'; out += ch; break;
        default: out += control(ch) ? ' ' : ch;
        }
    }
    return out;
}

std::string markdown_code(std::string_view text, MarkdownPlace place) {
    std::string out;
    out.reserve(text.size());
    for (char ch : text) {
        if (ch == '|' && place == MarkdownPlace::table_cell) out += "\\|";
        else if (ch == '`') out += '\'';
        else out += control(ch) ? ' ' : ch;
    }
    return out;
}

std::string markdown_code_span(std::string_view text, MarkdownPlace place) { return '`' + markdown_code(text, place) + '`'; }

}  // namespace benchfp::report
