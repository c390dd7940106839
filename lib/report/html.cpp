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

bool ascii_alnum(char ch) { return (ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z'); }

// Whether the `_` at i stands between two letters or digits, where CommonMark
// lets it neither open nor close emphasis: small_churn stays as written.
bool intraword_underscore(std::string_view text, size_t i) {
    return i > 0 && i + 1 < text.size() && ascii_alnum(text[i - 1]) && ascii_alnum(text[i + 1]);
}

}  // namespace

std::string markdown_text(std::string_view text) {
    std::string out;
    out.reserve(text.size());
    for (size_t i = 0; i < text.size(); ++i) {
        const char ch = text[i];
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
        // An underscore elsewhere opens or closes emphasis as `*` does (_x_ in
        // an id showed as an italic x, its underscores gone).
        case '_': out += intraword_underscore(text, i) ? "_" : "\\_"; break;
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
