#pragma once
// The judge's whole interface, for callers that use several parts (the gate
// suite uses median, the harness's judge command everything). The parts:
//   judge/model.hpp   runs, baselines, tolerances
//   judge/read.hpp    their readers (schema-checked) and the baseline writer
//   judge/stats.hpp   fixed(), median(), in-run ratios
//   judge/judge.hpp   verdicts
//   judge/render.hpp  Markdown, JSON and HTML reports, a section per machine
#include "report/judge/judge.hpp"
#include "report/judge/model.hpp"
#include "report/judge/read.hpp"
#include "report/judge/render.hpp"
#include "report/judge/stats.hpp"
