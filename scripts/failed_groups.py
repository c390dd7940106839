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
repeat, so they print nothing. Exit 2 on an unreadable report (not a
judgement: machines a list of objects, each with a list of rows), or one whose
failed row names no group of either shape, kernel/FAMILY/ALG/ISA/PROBLEM or
alloc/WORKLOAD: what it would print could not be re-run."""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
import strict_json  # noqa: E402  (found through the lines above)

MEASURED_FAILURES = {"regression", "over limit"}
# A group's parts as the judge writes them (families, algorithms, ISAs and
# workloads: lower-case words; problems: m1024n64k1024@2t, 8x64x56x56, ...).
KERNEL_GROUP = re.compile(r"kernel/([a-z0-9_]+)/[a-z0-9_]+/([a-z0-9_]+)/[A-Za-z0-9_.@]+")
ALLOC_GROUP = re.compile(r"alloc/([a-z0-9_]+)")


def row_enums():
    """The kinds and verdicts a judgement's row may hold, from its schema: a
    verdict this script does not know ("Regression") is a corrupt report, not
    a row to pass over."""
    schema = strict_json.load(pathlib.Path(__file__).resolve().parent.parent / "results" / "schemas" /
                              "judgement.schema.json")
    row = schema["$defs"]["row"]["properties"]
    return {key: set(row[key]["enum"]) for key in ("kind", "verdict")}


def to_rerun(row):
    """A measured failure, or a time the machine's move excused: the rows
    confirm() judges again (judge.hpp, judged_again_by_a_rerun; the test
    Judge.FailedGroupsReRunsWhatConfirmJudgesAgain holds the two together)."""
    kind, verdict = row.get("kind"), row.get("verdict")
    return (kind in ("time", "ratio") and verdict in MEASURED_FAILURES) or (kind == "time" and verdict == "unresolved")


def main(path):
    try:
        enums = row_enums()
        report = strict_json.load(path)
        if not isinstance(report, dict) or not isinstance(report.get("machines"), list):
            raise ValueError("no list of machines")
        if not all(isinstance(m, dict) and isinstance(m.get("rows"), list) for m in report["machines"]):
            raise ValueError("a machine is not an object with a list of rows")
        rows = [r for m in report["machines"] for r in m["rows"]]
        if not all(isinstance(r, dict) for r in rows):
            raise ValueError("a row is not a JSON object")
        for r in rows:  # compared with strings below: another type would raise there
            for key in ("kind", "verdict"):
                if not isinstance(r.get(key, ""), str):
                    raise ValueError(f"row {r.get('id', '?')!r}: its {key} is not a string")
                if key in r and r[key] not in enums[key]:
                    raise ValueError(f"row {r.get('id', '?')!r}: its {key} {r[key]!r} is none of the schema's"
                                     f" ({', '.join(sorted(enums[key]))})")
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as e:
        print(f"failed_groups.py: {path}: cannot read the judgement: {e}", file=sys.stderr)
        return 2
    kernels, workloads = set(), set()
    for row in rows:
        if not to_rerun(row):
            continue
        group = row.get("group")
        kernel = KERNEL_GROUP.fullmatch(group) if isinstance(group, str) else None
        alloc = ALLOC_GROUP.fullmatch(group) if isinstance(group, str) else None
        if kernel:
            kernels.add((kernel[1], kernel[2]))
        elif alloc:
            workloads.add(alloc[1])
        else:
            print(f"failed_groups.py: {path}: a failed row names no group: {row.get('id', row)} (group {group!r}: not"
                  " kernel/FAMILY/ALG/ISA/PROBLEM or alloc/WORKLOAD)", file=sys.stderr)
            return 2
    for family, isa in sorted(kernels):
        print("kernel", family, isa)
    if workloads:
        print("alloc", "|".join(sorted(workloads)))
    return 0


if __name__ == "__main__":
    usage = "usage: scripts/failed_groups.py REPORT_JSON"
    if sys.argv[1:] in (["-h"], ["--help"]):
        print(usage + "\n\n" + __doc__)
        sys.exit(0)
    if len(sys.argv) != 2:
        print(usage, file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
