#!/usr/bin/env python3
"""Writes the inputs of a FAILED report a reader must read right: a Google
Benchmark run and its stored baseline (60 invariant rows, reported-only peers
with the largest changes, one regression whose name is hostile markup), the
tolerances, and kernel unwind results with folded stacks for the flame graphs.
Usage: make_report_inputs.py DIR"""
import json
import os
import sys

HOSTILE = "BM_Vec<std::pair<int,float>>&/N"

def main(out):
    machine = {"benchfp_cpu": "Test CPU", "benchfp_isa": "avx2", "benchfp_cores": "2"}
    current, base = [], {}
    def add(name, now, before):
        current.append({"name": name, "run_type": "iteration", "real_time": now, "time_unit": "ns",
                        "bytes_per_iteration": 64})
        base[name] = {"min_ns": before, "bytes_per_iteration": 64, "repetitions": 3}
    for g in range(20):
        for v in ("a", "b", "c"):
            add(f"suite/group{g:02d}/{v}", 100 + g, 100 + g)
    for g in range(5):
        add(f"suite/group{g:02d}/peer", 400.0, 100.0)  # reported only: the largest change, never charted
    add(HOSTILE, 180.0, 100.0)  # the one judged regression
    with open(os.path.join(out, "current.json"), "w") as f:
        json.dump({"context": machine, "benchmarks": current}, f)
    with open(os.path.join(out, "baseline.json"), "w") as f:
        json.dump({"schema": "benchfp.baseline/1", "fingerprint": {"cpu": "Test CPU", "isa": "avx2", "cores": 2},
                   "commit": "base<1>", "benchmarks": base}, f)
    with open(os.path.join(out, "tolerances.json"), "w") as f:
        json.dump({"schema": "benchfp.tolerances/1", "time": 0.05, "memory": 0.01, "reported_only": ["peer"]}, f)
    cases = []
    chains = {"clobber": ("broken", 0, {"[unknown];jit_eltwise_exp": 900}),
              "preserve": ("skipped-caller", 0, {"main;foo;jit_eltwise_exp": 900}),
              "frame": ("full", 900, {"__libc_start_main;main;foo;bar;jit_eltwise_exp": 900})}
    for frame, (verdict, full, folded) in chains.items():
        cases.append({"spec": {"mode": "unwind", "isa": "avx2", "kernel": "eltwise", "frame": frame},
                      "state": "PASSED", "detail": "", "repro": f"--mode=unwind --frame={frame}",
                      "unwind": {"tally": {"full": full, "judged": 900}, "expected_verdict": verdict,
                                 "folded": folded}})
    with open(os.path.join(out, "cases.json"), "w") as f:
        json.dump({"benchfp": {"schema": "benchfp.results/1"}, "host": {"cpu": "Test CPU", "isa": "avx2", "cores": 2},
                   "cases": cases}, f)

if __name__ == "__main__":
    main(sys.argv[1])
