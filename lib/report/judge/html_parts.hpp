#pragma once
// The pictures of the HTML report (render_html.cpp lays out the page): the
// lollipop chart of a machine's significant changes and the kernel cases'
// section (unwind rates per kernel x ISA x policy, a flame graph per policy).
// Both return HTML/SVG fragments with every name escaped.
#include "report/judge/cases.hpp"
#include "report/judge/judge.hpp"

#include <string>

namespace benchfp::report {

// Nanosoldier's summary chart: per judged row beyond its tolerance (regression
// or improvement), a stem from 1 to its ratio on a log2 axis, the tolerance as a
// grey band; regressions first. A sentence instead when there is none.
std::string lollipop_chart(const Judgement& judgement);

// "" when the report has no kernel cases.
std::string kernel_cases_html(const CaseSummary& cases);

}  // namespace benchfp::report
