#pragma once
// What a frame policy costs one kernel call, counted exactly. Step mode
// (harness/stepper.hpp) counts every JIT instruction of a call, its nops and
// the instructions that touch the stack; the same kernel, problem and threads
// stepped under clobber and under frame or preserve differ by just what the
// policy adds: the link (push rbp, mov rbp, rsp, pop rbp) and the spills of a
// GPR pool without rbp. Timing resolves a frame cost to the machine's noise
// (perf mode's A/A control); this resolves it to one instruction, but only what
// it counts: not a slower address form, nor what a spill costs in time.
//
// Nops are kept apart: loop heads are aligned, and a prologue of another length
// pads them otherwise, so the nops executed where a loop is entered differ by
// policy as placement does (conv's 7-wide padded columns: 227 more under frame,
// beside 1 more instruction).
//
// Both readers of step records use this: benchfp kernel, which prints a line
// per group after a run, and the judge, which puts the table in the report.
#include "report/json_input.hpp"

#include <map>
#include <string>
#include <vector>

namespace benchfp::report {

// One call, stepped whole: instructions counts the nops too, as the record does.
struct SteppedCounts {
    long instructions = 0, nops = 0, stack_accesses = 0;
    long besides_nops() const { return instructions - nops; }
    bool operator==(const SteppedCounts&) const = default;
};

// By group, "kernel/<kernel>/<alg>/<isa>/<problem>" (then "@<N>t" above one
// thread, as the judge names perf groups), then frame policy.
using SteppedCosts = std::map<std::string, std::map<std::string, SteppedCounts>>;

// Adds a case record (spec, and "step" in a step-mode record) of a results
// file or of a run, if its call was stepped whole: no budget spent and every
// call on a stepped thread. Other modes, skipped cases and records written
// before the counts are passed over. Throws InputError naming the field on a
// bad count (a whole call has its ret: no count is 0), and on a policy of a
// group given twice with other counts.
void add_stepped(SteppedCosts& costs, const In& record);

// The groups that hold clobber and another policy.
std::vector<std::string> compared_groups(const SteppedCosts& costs);
// "5991 instructions and 267 nops, 1183 on the stack"
std::string counts_text(const SteppedCounts& c);
// A policy's difference from clobber: "+1 (+0.02%) and nops +227, stack +34".
std::string difference_text(const SteppedCounts& policy, const SteppedCounts& clobber);
// A line per compared group: "<group>: clobber <counts_text>; frame <difference_text>; preserve ...".
std::vector<std::string> stepped_cost_lines(const SteppedCosts& costs);

// Every stepped call's counts as instruction counts by id, two per group and
// policy: "<group>/<policy>: stepped instructions per call, nops apart" and
// "<group>/<policy>: stepped stack accesses per call". A call of the same code
// on the same problem executes the same instructions in every run, so the
// judge holds these to the machine's baseline as it holds callgrind's counts
// (results/tolerances.json "instructions"): a policy that comes to execute more
// (a spill in a loop, a longer prologue) fails the gate in the first run, where
// time would need the noise to allow it.
std::map<std::string, double> stepped_instruction_counts(const SteppedCosts& costs);
// Whether id is one of those.
bool is_stepped_count(const std::string& id);
// The unit of such a count's row ("instructions per call, nops apart" or
// "stack accesses per call"), or "" for any other id: the report's unit of an
// instruction row, "instructions per operation", says callgrind's.
std::string stepped_count_unit(const std::string& id);

}  // namespace benchfp::report
