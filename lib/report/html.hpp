#pragma once
// Text made safe to put inside an HTML page: every report page benchfp writes
// embeds its Markdown this way, so nothing in a name or a chain becomes markup.
#include <string>
#include <string_view>

namespace benchfp::report {

std::string escape_html(std::string_view text);  // & < > " ' as entities

}  // namespace benchfp::report
