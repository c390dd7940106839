#include "audit/audit_render.hpp"

#include "report/file.hpp"
#include "report/html.hpp"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>

namespace benchfp::harness {

namespace {

constexpr size_t shown_chains = 5, shown_culprits = 10;

std::string cell_code(const std::string& text) { return report::markdown_code_span(text, report::MarkdownPlace::table_cell); }

void tally_row(std::ostringstream& md, const std::string& label, const AuditTally& t) {
    md << "| " << report::markdown_text(label) << " | " << tally_cells(t) << " |\n";
}

const char* tally_header =
    " | JIT samples | full | skipped-caller | broken | prologue | unwind rate | reaches main/thread start |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- |\n";

nlohmann::json tally_json(const AuditTally& t) {
    const double rate = t.tally.unwind_rate();
    return {{"jit_samples", t.tally.jit()}, {"full", t.tally.full}, {"skipped_caller", t.tally.skipped_caller},
            {"broken", t.tally.broken},     {"prologue", t.tally.prologue},
            {"unwind_rate", std::isnan(rate) ? nlohmann::json(nullptr) : nlohmann::json(rate)},
            {"reached_start", t.reached_start}};
}

}  // namespace

std::string most_common(const std::map<std::string, uint64_t>& kinds) {
    std::string best;
    uint64_t n = 0;
    for (const auto& [k, v] : kinds)
        if (v > n) best = k, n = v;
    return best + (kinds.size() > 1 ? " (+" + std::to_string(kinds.size() - 1) + " other kinds)" : "");
}

std::string tally_cells(const AuditTally& t) {
    std::ostringstream cells;
    cells << t.tally.jit() << " | " << t.tally.full << " | " << t.tally.skipped_caller << " | " << t.tally.broken << " | "
          << t.tally.prologue << " | " << percent(t.tally.full, t.tally.judged()) << " | "
          << percent(t.reached_start, t.tally.jit());
    return cells.str();
}

std::string percent(uint64_t part, uint64_t whole) {
    if (!whole) return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
    return buf;
}

std::string comma_list(const std::vector<std::string>& items) {
    std::string out;
    for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
    return out;
}

std::string render_audit_markdown(const AuditReport& r) {
    std::ostringstream md;
    // The command, thread and region names and the symbols are the process's: text, never markup.
    md << "# benchfp audit of pid " << r.pid << (r.command.empty() ? "" : " (" + report::markdown_text(r.command) + ")")
       << "\n\n";
    md << "Sampled " << r.mode << " for " << r.seconds << " s on " << r.event << " (" << r.events
       << " perf events): " << r.samples << " samples of the process, " << r.jit_samples << " in JIT code";
    if (r.lost) md << ", " << r.lost << " lost";
    md << ".\n";
    if (!r.event_note.empty()) md << "\n" << r.event_note << "\n";
    md << "\nVerdict: "
       << (r.expect.empty() ? std::string("`full` when the chain reaches main or the thread's start")
                            : "the callers " + report::markdown_text(comma_list(r.expect)) + " above the JIT frame (innermost first)")
       << ".\n";
    for (const std::string& note : r.notes) md << "\n**Note:** " << note << "\n";
    if (!r.jit_samples) {
        md << "\nNo JIT code was seen: no sample landed in an anonymous executable mapping or a perf-map entry.\n";
        return md.str();
    }
    md << "\n## Per JIT region\n\n| region" << tally_header;
    for (const auto& [name, t] : r.regions) {
        const auto& [begin, size] = r.region_extent.at(name);
        tally_row(md, name + " (" + hex(begin) + ", " + std::to_string(size) + " B)", t);
    }
    md << "\n## Per thread\n\n| thread" << tally_header;
    for (const auto& [tid, t] : r.threads) {
        const auto name = r.thread_names.find(tid);
        tally_row(md, std::to_string(tid) + " " + (name == r.thread_names.end() ? "" : name->second), t);
    }
    if (!r.broken_chains.empty()) {
        md << "\n## Most frequent broken chains\n\n| samples | chain (innermost first) |\n| --- | --- |\n";
        for (size_t i = 0; i < std::min(shown_chains, r.broken_chains.size()); ++i)
            md << "| " << r.broken_chains[i].second << " | " << cell_code(r.broken_chains[i].first) << " |\n";
        md << "\n## Culprits: where the chain broke\n\n"
           << "| region | offset | broken samples | instruction | rbp last written by | rbp held | example rbp |\n"
           << "| --- | --- | --- | --- | --- | --- | --- |\n";
        for (size_t i = 0; i < std::min(shown_culprits, r.culprits.size()); ++i) {
            const Culprit& c = r.culprits[i];
            md << "| " << report::markdown_text(c.region) << " | +" << hex(c.offset) << " | " << c.count << " | "
               << cell_code(c.instruction) << " | " << cell_code(c.rbp_written_by) << " | "
               << report::markdown_text(most_common(c.rbp)) << " | " << hex(c.example_rbp) << " |\n";
        }
        if (r.culprits.size() > shown_culprits)
            md << "\n(" << r.culprits.size() - shown_culprits << " more offsets in report.json)\n";
    }
    return md.str();
}

nlohmann::json render_audit_json(const AuditReport& r) {
    nlohmann::json regions = nlohmann::json::object(), threads = nlohmann::json::array(), culprits = nlohmann::json::array();
    for (const auto& [name, t] : r.regions) {
        regions[name] = tally_json(t);
        regions[name]["begin"] = hex(r.region_extent.at(name).first);
        regions[name]["size"] = r.region_extent.at(name).second;
    }
    for (const auto& [tid, t] : r.threads) {
        nlohmann::json j = tally_json(t);
        j["tid"] = tid;
        j["name"] = r.thread_names.count(tid) ? r.thread_names.at(tid) : "";
        threads.push_back(j);
    }
    for (const Culprit& c : r.culprits)
        culprits.push_back({{"region", c.region}, {"offset", c.offset}, {"count", c.count},
                            {"instruction", c.instruction}, {"rbp_written_by", c.rbp_written_by}, {"rbp", c.rbp}, {"example_rbp", hex(c.example_rbp)}});
    nlohmann::json chains = nlohmann::json::array();
    for (const auto& [chain, n] : r.broken_chains) chains.push_back({{"chain", chain}, {"samples", n}});
    return {{"pid", r.pid},         {"command", r.command},   {"mode", r.mode},     {"event", r.event},
            {"seconds", r.seconds}, {"events", r.events},     {"samples", r.samples},
            {"jit_samples", r.jit_samples}, {"lost", r.lost}, {"expect", r.expect}, {"notes", r.notes},
            {"regions", regions},   {"threads", threads},     {"broken_chains", chains}, {"culprits", culprits}};
}

std::string render_audit_html(const AuditReport& r) {
    return "<!DOCTYPE html><html><head><meta charset='utf-8'><title>benchfp audit</title>"
           "<style>body{font-family:sans-serif;max-width:1200px;margin:2em auto}pre{white-space:pre-wrap}</style>"
           "</head><body><h1>benchfp audit of pid " +
           std::to_string(r.pid) + "</h1><pre>" + report::escape_html(render_audit_markdown(r)) +
           "</pre></body></html>\n";
}

const std::vector<std::string>& audit_report_files() {
    static const std::vector<std::string> names = {"report.md", "report.json", "report.html"};
    return names;
}

std::vector<report::NamedText> audit_report_texts(const AuditReport& r) {
    const std::vector<std::string>& names = audit_report_files();
    return {{names[0], render_audit_markdown(r)}, {names[1], render_audit_json(r).dump(2) + "\n"},
            {names[2], render_audit_html(r)}};
}

void write_audit_report(const AuditReport& r, const std::string& dir) { report::write_file_set(dir, audit_report_texts(r)); }

}  // namespace benchfp::harness
