#!/usr/bin/python3
"""Carries the stepped kernel instruction counts of one machine's baseline into
another's:

    scripts/carry_stepped_counts.py FROM TO
    e.g. FROM = results/baselines/amd-epyc-family-25-model-17-avx512-2cores/gate.json
         TO   = results/baselines/amd-epyc-family-26-model-2-avx512-2cores/gate.json

A stepped count (`kernel/...: stepped instructions per call, nops apart`, `...:
stepped stack accesses per call`) is what the code of a kernel executes on a
problem at an ISA: it does not depend on the CPU that runs it (README, "The
gate holds these counts"). So a commit that changes a kernel's counts on
purpose records them on the machine at hand (ci/gate.sh --update-baseline) and
carries them here into the baselines of machines it cannot run on, which would
otherwise judge the new counts against the old: a regression where the code
grew, a blind spot where it shrank.

Only stepped kernel counts move, and only those at ISAs the TO machine has
(its fingerprint's isa and below); its times, ratios and the hook's callgrind
counts stay its own. TO's commit field says where the counts came from. The
file is written whole or not at all (a temporary file beside it, flushed,
closed, renamed). Exit 2, naming the problem, on a file that is not a baseline
of the same schema, or one that cannot be written."""
import os
import pathlib
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
import json  # noqa: E402
import strict_json  # noqa: E402  (found through the lines above)

STEPPED = re.compile(r"kernel/[a-z0-9_]+/[a-z0-9_]+/([a-z0-9]+)/[^:]+: stepped "
                     r"(instructions per call, nops apart|stack accesses per call)")
ISA_ORDER = ["sse41", "avx2", "avx512"]
CARRIED = ", stepped kernel counts "  # what this script appends to TO's commit
USAGE = "usage: scripts/carry_stepped_counts.py FROM TO (two baseline files: TO takes FROM's stepped kernel counts)"


def fail(message):
    print(f"carry_stepped_counts.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_baseline(path):
    try:
        doc = strict_json.load(path)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    if not isinstance(doc, dict) or not isinstance(doc.get("instructions"), dict) or \
            not isinstance(doc.get("fingerprint"), dict) or not isinstance(doc.get("commit"), str):
        fail(f"{path}: not a baseline (an object with fingerprint, commit and instructions)")
    if doc["fingerprint"].get("isa") not in ISA_ORDER:
        fail(f"{path}: fingerprint.isa is {doc['fingerprint'].get('isa')!r}, not one of {', '.join(ISA_ORDER)}")
    return doc


def write_whole(path, text):
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, temporary = tempfile.mkstemp(prefix=".carry.", dir=directory)
        try:
            with os.fdopen(fd, "w") as out:
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.rename(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except OSError as e:
        fail(f"{path}: not written: {e}")


def main():
    if sys.argv[1:] in (["--help"], ["-h"]):
        print(USAGE)
        sys.exit(0)
    if len(sys.argv) != 3:
        fail(USAGE)
    source_path, target_path = sys.argv[1], sys.argv[2]
    source, target = read_baseline(source_path), read_baseline(target_path)
    if source.get("schema") != target.get("schema"):
        fail(f"the schemas differ: {source.get('schema')!r} in {source_path}, {target.get('schema')!r} in {target_path}")
    highest = ISA_ORDER.index(target["fingerprint"]["isa"])
    changed = added = unchanged = 0
    for name, count in sorted(source["instructions"].items()):
        match = STEPPED.fullmatch(name)
        if not match or match.group(1) not in ISA_ORDER or ISA_ORDER.index(match.group(1)) > highest:
            continue
        old = target["instructions"].get(name)
        if old is None:
            added += 1
        elif old != count:
            changed += 1
        else:
            unchanged += 1
        target["instructions"][name] = count
    own_commit = target["commit"].split(CARRIED)[0]
    target["commit"] = f"{own_commit}{CARRIED}{source['commit']} (carried from {source['fingerprint'].get('cpu', '?')})"
    write_whole(target_path, json.dumps(target, indent=2, sort_keys=True) + "\n")
    print(f"{target_path}: {changed} stepped counts changed, {added} added, {unchanged} the same "
          f"(from {source_path}, commit {source['commit']})")


if __name__ == "__main__":
    main()
