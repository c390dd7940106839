#!/usr/bin/python3
"""What ci/gate.sh re-runs before a failure may fail the gate: the measured rows
(times and in-run ratios) a judgement failed, and the times the machine's move
excused (unresolved time rows: lib/report/judge/judge.cpp's within_machine_move
makes the only ones, and confirm() judges them by their re-run), by what
produced them. Reads the
judge's report.json (results/schemas/judgement.schema.json: each row names its group) and prints one line
per thing to re-run:

    kernel FAMILY ISA     the perf batch cases/FAMILY/perf at ISA
    alloc W1|W2|...       the allocator workloads (a Google Benchmark filter)

Failed cases, missing rows and instruction counts are not measurements to
repeat, so they print nothing. Exit 2 on an unreadable report, or one whose
failed row names no group."""
import json
import sys

MEASURED_FAILURES = {"regression", "over limit"}


def to_rerun(row):
    """A measured failure, or a time the machine's move excused: the rows
    confirm() judges again (judge.hpp, judged_again_by_a_rerun; the test
    Judge.FailedGroupsReRunsWhatConfirmJudgesAgain holds the two together)."""
    kind, verdict = row.get("kind"), row.get("verdict")
    return (kind in ("time", "ratio") and verdict in MEASURED_FAILURES) or (kind == "time" and verdict == "unresolved")


def main(path):
    try:
        with open(path, encoding="utf-8") as f:
            report = json.load(f)
        rows = [r for m in report["machines"] for r in m["rows"]]
        if not all(isinstance(r, dict) for r in rows):
            raise ValueError("a row is not a JSON object")
        for r in rows:  # compared with strings below: another type would raise there
            for key in ("kind", "verdict"):
                if not isinstance(r.get(key, ""), str):
                    raise ValueError(f"row {r.get('id', '?')!r}: its {key} is not a string")
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"failed_groups.py: {path}: cannot read the judgement: {e}", file=sys.stderr)
        return 2
    kernels, workloads = set(), set()
    for row in rows:
        if not to_rerun(row):
            continue
        group = row.get("group")
        if not isinstance(group, str):
            print(f"failed_groups.py: {path}: a failed row names no group: {row.get('id', row)}", file=sys.stderr)
            return 2
        parts = group.split("/")
        if parts[0] == "kernel" and len(parts) >= 4:
            kernels.add((parts[1], parts[3]))
        elif parts[0] == "alloc" and len(parts) >= 2:
            workloads.add(parts[1])
    for family, isa in sorted(kernels):
        print("kernel", family, isa)
    if workloads:
        print("alloc", "|".join(sorted(workloads)))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: scripts/failed_groups.py REPORT_JSON", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
