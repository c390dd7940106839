// The human reports on hostile names and the cases a reader must not misread:
// every page and SVG fragment is well-formed markup whatever the benchmark,
// kernel or frame is called, labels read whole, the verdict says what failed,
// a limit failure reads apart from a regression, and the flame graph's layout.
#include "report/flame.hpp"
#include "report/html.hpp"
#include "report/judge.hpp"

#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <regex>

using namespace benchfp::report;

namespace {

const std::string hostile = "BM_Vec<std::pair<int,float>>&/N";
const std::string quoted = "q\"uo'te</script><script>alert(1)</script>";

bool is_name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == ':' || c == '_'; }

// "" when `at` starts a well-formed entity (&lt; &#10003;), else why not.
std::string check_entity(const std::string& s, size_t at) {
    const size_t end = s.find(';', at);
    if (end == std::string::npos || end - at > 10 || end == at + 1) return "raw & at offset " + std::to_string(at);
    for (size_t k = at + 1; k < end; ++k)
        if (!std::isalnum(static_cast<unsigned char>(s[k])) && !(k == at + 1 && s[k] == '#'))
            return "raw & at offset " + std::to_string(at);
    return "";
}

// A strict well-formedness check of what the renderers write: every < starts a
// tag, every & an entity, no raw >, attribute values quoted without < in them,
// tags balanced (HTML's void elements aside). "" when well-formed, else why not.
std::string check_markup(const std::string& s) {
    static const std::set<std::string> void_elements = {"meta", "br", "hr", "img", "input", "link"};
    std::vector<std::string> open;
    for (size_t i = 0; i < s.size();) {
        if (s[i] == '&') {
            if (auto e = check_entity(s, i); !e.empty()) return e;
            ++i;
            continue;
        }
        if (s[i] == '>') return "raw > at offset " + std::to_string(i) + ": " + s.substr(i > 40 ? i - 40 : 0, 80);
        if (s[i] != '<') {
            ++i;
            continue;
        }
        if (s.compare(i, 9, "<!DOCTYPE") == 0) {
            i = s.find('>', i) + 1;
            continue;
        }
        const bool closing = s[i + 1] == '/';
        size_t j = i + 1 + closing;
        std::string name;
        while (j < s.size() && is_name_char(s[j])) name += s[j++];
        if (name.empty()) return "raw < at offset " + std::to_string(i) + ": " + s.substr(i, 60);
        while (j < s.size() && s[j] != '>' && s[j] != '/') {
            if (s[j] == ' ') {
                ++j;
                continue;
            }
            while (j < s.size() && is_name_char(s[j])) ++j;
            if (s[j] != '=' || (s[j + 1] != '\'' && s[j + 1] != '"')) return "unquoted attribute in <" + name + ">";
            const char quote = s[j + 1];
            const size_t end = s.find(quote, j + 2);
            for (size_t k = j + 2; k < end; ++k) {
                if (s[k] == '<') return "raw < in an attribute of <" + name + ">";
                if (s[k] == '&')
                    if (auto e = check_entity(s, k); !e.empty()) return e + " (attribute)";
            }
            j = end + 1;
        }
        const bool self_closing = s[j] == '/';
        i = s.find('>', j) + 1;
        if (closing) {
            if (open.empty() || open.back() != name) return "</" + name + "> closes " + (open.empty() ? "nothing" : "<" + open.back() + ">");
            open.pop_back();
        } else if (!self_closing && !void_elements.count(name)) {
            open.push_back(name);
        }
    }
    return open.empty() ? "" : "<" + open.back() + "> not closed";
}

std::string unescape(std::string s) {
    for (const auto& [entity, ch] : std::vector<std::pair<std::string, std::string>>{
             {"&lt;", "<"}, {"&gt;", ">"}, {"&quot;", "\""}, {"&#39;", "'"}, {"&amp;", "&"}})
        for (size_t at; (at = s.find(entity)) != std::string::npos;) s.replace(at, entity.size(), ch);
    return s;
}

// The text of every <text> element of the SVG fragments, unescaped.
std::vector<std::string> svg_texts(const std::string& html) {
    std::vector<std::string> texts;
    const std::regex text("<text[^>]*>([^<]*)</text>");
    for (auto it = std::sregex_iterator(html.begin(), html.end(), text); it != std::sregex_iterator(); ++it)
        texts.push_back(unescape((*it)[1]));
    return texts;
}

std::vector<std::string> svg_fragments(const std::string& html) {
    std::vector<std::string> out;
    for (size_t at = 0; (at = html.find("<svg", at)) != std::string::npos;) {
        const size_t end = html.find("</svg>", at) + 6;
        out.push_back(html.substr(at, end - at));
        at = end;
    }
    return out;
}

RunResults run_of(std::map<std::string, double> times, std::map<std::string, double> ratios = {}) {
    RunResults r;
    r.fingerprint = {"CPU <&> \"x\"", "avx2", 2};
    r.source = "run<1>.json";
    for (const auto& [name, ns] : times) r.benchmarks[name] = {ns, 64.0, 3, {}, {}};
    r.ratios = ratios;
    return r;
}

Report hostile_report() {
    Tolerances t;
    t.reported_only = {"peer"};
    t.ratio_rules.push_back({"a / b", "a", "b", 1.02, {}});
    const RunResults base = run_of({{hostile, 100}, {"g/" + quoted, 100}, {"g/peer", 100}, {"g/fast", 100}},
                                   {{"g: a / b", 1.025}});
    const RunResults cur = run_of({{hostile, 150}, {"g/" + quoted, 100}, {"g/peer", 300}, {"g/fast", 50}},
                                  {{"g: a / b", 1.021}});
    Report report{{"abc<1>", "main & co", "today", {{"version", "1.0"}}, "a \"test\""},
                  {{cur, base, "base.json", judge(cur, base, t), ""}}, {}};
    report.cases.sources = {"cases.json"};
    report.cases.by_mode_isa[{"unwind", "avx2"}] = {2, 2, 0, 0};
    report.cases.unwind[{"k<&>", "avx2", "clobber"}] = {0, 100, "broken", true};
    report.cases.unwind[{"k<&>", "avx2", "frame"}] = {100, 100, "full", true};
    report.cases.folded_by_frame["clobber"] = {{"[unknown];jit_" + quoted, 100}};
    report.cases.folded_by_frame["frame"] = {{"main;foo;bar;jit_" + hostile, 100}};
    return report;
}

}  // namespace

TEST(HtmlReport, HostileNamesLeaveThePageWellFormedAndReadWhole) {
    const std::string html = render_html(hostile_report());
    EXPECT_EQ(check_markup(html), "") << html;
    EXPECT_EQ(html.find("<script"), std::string::npos);  // the page has none, and a name cannot open one
    const std::vector<std::string> svgs = svg_fragments(html);
    ASSERT_GE(svgs.size(), 3u);  // the lollipop chart and two flame graphs
    for (const std::string& svg : svgs) EXPECT_EQ(check_markup(svg), "") << svg;
    const std::vector<std::string> texts = svg_texts(html);
    EXPECT_NE(std::find(texts.begin(), texts.end(), "time " + hostile), texts.end()) << html;  // the label, whole
    EXPECT_NE(html.find(escape_html(quoted)), std::string::npos);
}

TEST(HtmlReport, VerdictAndFailingRowsComeFirstAndTheRestIsFolded) {
    const std::string html = render_html(hostile_report());
    const size_t verdict = html.find("id='verdict'"), failing = html.find("<tr class='fail'>"),
                 chart = html.find("class='lollipop'"), folded = html.find("<details class='all-rows'>");
    ASSERT_NE(verdict, std::string::npos);
    ASSERT_NE(failing, std::string::npos);
    EXPECT_LT(verdict, failing);
    EXPECT_LT(failing, chart);
    EXPECT_LT(chart, folded);
    EXPECT_NE(html.find("over its absolute limit: 1.021 &gt; 1.020"), std::string::npos) << html;
    // The reported-only peer's 3x is neither charted nor styled as judged.
    const std::string chart_svg = html.substr(chart, html.find("</svg>", chart) - chart);
    EXPECT_EQ(chart_svg.find("g/peer"), std::string::npos);
    EXPECT_NE(chart_svg.find("g/fast"), std::string::npos);  // the improvement is
    EXPECT_NE(html.find("<tr class='reported'><td>time</td><td><code>g/peer</code> <span class='tag'>reported only</span>"),
              std::string::npos);
    EXPECT_NE(html.find("id='unwind-rates'"), std::string::npos);
    EXPECT_NE(html.find("id='flame-frame'"), std::string::npos);
}

TEST(MarkdownReport, NanosoldiersLayoutAndALimitFailureIsNotARegression) {
    const std::string md = render_markdown(hostile_report());
    size_t at = 0;
    for (const char* heading : {"# Benchmark Report\n", "## Job Properties", "*Triggered By:* a \"test\"", "*Tag Predicate:*",
                                "## Results", "denotes a possible regression", "## Kernel cases",
                                "## Benchmark Group List", "## Version Info", "#### Primary Build (this run)",
                                "#### Comparison Build (the baseline)"}) {
        const size_t found = md.find(heading, at);
        ASSERT_NE(found, std::string::npos) << heading << " (in order) in\n" << md;
        at = found;
    }
    EXPECT_NE(md.find("| `g: a / b` | 1.021 | 1.025 | 0.996 (5%) | 1.020 | :no_entry: over the limit (1.021 > 1.020); "
                      "the stored baseline (1.025) is itself over the limit |"),
              std::string::npos)
        << md;
    EXPECT_NE(md.find("| `" + hostile + "` | 1.500 (5%) :x:"), std::string::npos) << md;
    EXPECT_NE(md.find("FAILED: 1 value over an absolute limit (g: a / b); 1 regression, 1 improvement"), std::string::npos) << md;
}

TEST(MarkdownReport, MissingBenchmarksAreNamedInTheVerdict) {
    const RunResults base = run_of({{"g/a", 100}, {"g/b", 100}, {"g/c", 100}});
    const RunResults cur = run_of({{"g/c", 100}});
    const Report report{{"abc", "", "today", nullptr, ""}, {{cur, base, "base.json", judge(cur, base, Tolerances{}), ""}}, {}};
    const std::string md = render_markdown(report);
    EXPECT_NE(md.find("FAILED: 2 benchmarks missing from the current run (g/a, g/b); 0 regressions, 0 improvements"),
              std::string::npos)
        << md;
    EXPECT_NE(render_html(report).find("missing from this run"), std::string::npos);
    // The ids come from results files: what would end the line or make markup is escaped there too.
    // One baseline id missing from the current run (g/c), rendered.
    const auto missing_md = [&](const std::string& id) {
        const RunResults named = run_of({{id, 100}, {"g/c", 100}});
        return render_markdown({{"abc", "", "today", nullptr, ""}, {{cur, named, "base.json", judge(cur, named, Tolerances{}), ""}}, {}});
    };
    const std::string hostile_md = missing_md("g/<b>x|y\n## z");
    EXPECT_NE(hostile_md.find("missing from the current run (g/&lt;b&gt;x\\|y ## z)"), std::string::npos) << hostile_md;
    EXPECT_EQ(hostile_md.find("\n## z"), std::string::npos) << hostile_md;
    // The verdict line is bold: an id's `*` would end the bold, a backtick open a code span.
    const std::string marked_md = missing_md("g/**x`y\\");
    EXPECT_NE(marked_md.find("missing from the current run (g/\\*\\*x\\`y\\\\)"), std::string::npos) << marked_md;
    // An underscore next to a space or punctuation would make emphasis too; one inside a word (snake_case) cannot.
    const std::string underscored_md = missing_md("g/_x_ snake_case");
    EXPECT_NE(underscored_md.find("missing from the current run (g/\\_x\\_ snake_case)"), std::string::npos) << underscored_md;
}

TEST(FlameGraph, RootAtTheBottomWidthsProportionalLabelsTruncated) {
    const std::string svg = flame_graph_svg({{"main;foo;bar;jit", 300}, {"[unknown];jit", 100}}, {1002, 16, "", "f"});
    EXPECT_EQ(check_markup(svg), "") << svg;
    // 5 rows (all, main, foo, bar, jit): "all" spans the whole width at the bottom (y = 4 * 16), 2.5 px a sample.
    EXPECT_NE(svg.find("<title>all (400 samples, 100.00%)</title><rect x='1' y='64' width='1000'"), std::string::npos) << svg;
    EXPECT_NE(svg.find("<title>main (300 samples, 75.00%)</title><rect x='251' y='48' width='750'"), std::string::npos) << svg;
    EXPECT_NE(svg.find("<title>[unknown] (100 samples, 25.00%)</title><rect x='1' y='48' width='250'"), std::string::npos) << svg;
    EXPECT_NE(svg.find("<title>jit (300 samples, 75.00%)</title><rect x='251' y='0'"), std::string::npos) << svg;
    EXPECT_EQ(flame_graph_svg({}, {}), "");
    EXPECT_EQ(truncate_label("abcdefgh", 5), "abc..");
    EXPECT_EQ(truncate_label("abcdefgh", 2), "");
    EXPECT_EQ(truncate_label("ab\xc3\xa9\xc3\xa9", 5), "ab..");  // not inside the two-byte é
}
