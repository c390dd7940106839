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

TO takes FROM's stepped counts at the ISAs TO's machine has (its fingerprint's
isa and below), and loses its own stepped counts there that FROM no longer has
(a step shape dropped: the judge fails a row the run lacks). Its times, ratios
and the hook's callgrind counts stay its own, and its commit field names
FROM's commit. Both files must be baselines (results/schemas/baseline.schema.json,
checked as scripts/validate_json.py does) and FROM must hold stepped counts.
TO is written whole or not at all, through its link if it is one, with its
mode kept (a temporary file beside it, flushed, closed, renamed). Exit 2,
naming the problem, on any of these."""
import os
import pathlib
import re
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
import json  # noqa: E402
import strict_json  # noqa: E402  (found through the lines above)
import validate_json  # noqa: E402

STEPPED = re.compile(r"kernel/[a-z0-9_]+/[a-z0-9_]+/([a-z0-9]+)/[^:]+: stepped "
                     r"(instructions per call, nops apart|stack accesses per call)")
ISA_ORDER = ["sse41", "avx2", "avx512"]
CARRIED = ", stepped kernel counts "  # what this script appends to TO's commit
USAGE = "usage: scripts/carry_stepped_counts.py FROM TO (two baseline files: TO takes FROM's stepped kernel counts)"


def fail(message):
    print(f"carry_stepped_counts.py: {message}", file=sys.stderr)
    sys.exit(2)


def read_baseline(path, validator):
    try:
        doc = strict_json.load(path)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")
    try:
        errors = validate_json.errors_of(validator, doc)
    except ValueError as e:
        fail(f"{path}: {e}")
    if errors:
        where, message = errors[0]
        fail(f"{path}: not a baseline: {where}: {message[:200]}")
    return doc


def own_commit(doc):
    """The commit a baseline was recorded at, without what an earlier carry appended."""
    return doc.get("commit", "?").split(CARRIED)[0]


def stepped_isa(name):
    """The ISA of a stepped count's name, or None for any other count."""
    match = STEPPED.fullmatch(name)
    return match.group(1) if match and match.group(1) in ISA_ORDER else None


def write_whole(path, text):
    """Writes text to path (through a link, to the file it names) whole or not at all, keeping its mode."""
    real = os.path.realpath(path)
    try:
        mode = os.stat(real).st_mode & 0o7777
        fd, temporary = tempfile.mkstemp(prefix=".carry.", dir=os.path.dirname(real))
        try:
            with os.fdopen(fd, "w") as out:
                os.fchmod(out.fileno(), mode)
                out.write(text)
                out.flush()
                os.fsync(out.fileno())
            os.replace(temporary, real)
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
    validator = validate_json.validator_for("baseline")
    source, target = read_baseline(source_path, validator), read_baseline(target_path, validator)
    if os.path.realpath(source_path) == os.path.realpath(target_path):
        fail(f"FROM and TO are the same file ({os.path.realpath(target_path)})")
    carried = {name: count for name, count in source.get("instructions", {}).items() if stepped_isa(name)}
    if not carried:
        fail(f"{source_path} holds no stepped kernel counts: nothing to carry")
    if target["fingerprint"]["isa"] not in ISA_ORDER:
        fail(f"{target_path}: its machine's isa is {target['fingerprint']['isa']!r}, none of {', '.join(ISA_ORDER)}")
    highest = ISA_ORDER.index(target["fingerprint"]["isa"])
    at_target = {name: count for name, count in carried.items() if ISA_ORDER.index(stepped_isa(name)) <= highest}
    counts = target.setdefault("instructions", {})
    removed = [name for name in counts if stepped_isa(name) and ISA_ORDER.index(stepped_isa(name)) <= highest
               and name not in at_target]
    for name in removed:
        del counts[name]
    added = sum(1 for name in at_target if name not in counts)
    changed = sum(1 for name, count in at_target.items() if name in counts and counts[name] != count)
    counts.update(at_target)
    target["commit"] = (f"{own_commit(target)}{CARRIED}{own_commit(source)} "
                        f"(carried from {source['fingerprint']['cpu']})")
    write_whole(target_path, json.dumps(target, indent=2, sort_keys=True) + "\n")
    print(f"{target_path}: {changed} stepped counts changed, {added} added, {len(removed)} removed, "
          f"{len(at_target) - changed - added} the same (from {source_path}, commit {own_commit(source)})")


if __name__ == "__main__":
    main()
