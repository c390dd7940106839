#pragma once
// Text made safe to put inside an HTML page: every report page benchfp writes
// embeds its Markdown this way, so nothing in a name or a chain becomes markup.
#include <string>
#include <string_view>

namespace benchfp::report {

std::string escape_html(std::string_view text);  // & < > " ' as entities

// Text from outside (a command line, a thread's name, a CPU model, a symbol)
// as one line of Markdown text: control characters become spaces (a line
// break would start a heading or a table of its own), `<`, `>` and `&` become
// entities (markup otherwise), and `|` is escaped (it would end a table cell),
// as are a backtick, `*` and a backslash (a code span, emphasis, an escape),
// and `_` where it could start or end emphasis (not between letters or digits).
// Quotes stay (escape_html's &#39; would show in a Markdown reader).
std::string markdown_text(std::string_view text);
// Where a code span stands: a table cell, where a `|` ends the cell unless
// escaped (GFM reads the table's `\|` before the span), or a line of its own (a
// list item), where no escape is read inside a span and `\|` would show as written.
enum class MarkdownPlace { table_cell, line };
// The same inside a code span: no entities there (they would show as
// written), a backtick becomes a quote (it would end the span), a `|` is
// escaped in a table cell.
std::string markdown_code(std::string_view text, MarkdownPlace place);
// That code span itself, backticks around it: "`text`".
std::string markdown_code_span(std::string_view text, MarkdownPlace place);

}  // namespace benchfp::report
