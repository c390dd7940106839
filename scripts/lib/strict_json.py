"""Reads a JSON file strictly, for the scripts that read what benchfp writes
(benchfp's own reader, lib/report/json_input.cpp, refuses the same text):

- a regular file only: opening a FIFO with no writer would block the script
  (and the gate that runs it), a device may never end;
- JSON numbers only: Python's json also reads NaN, Infinity and -Infinity,
  which no JSON writer emits, and reads 1e400 as inf: a number field holding
  one is a corrupt file;
- no key twice in one object: Python's json keeps the last, so a report
  whose "machines" is given twice would lose the first's rows unseen;
- nesting Python can hold: deeper input is an error, not a traceback.

Each problem raises ValueError (or OSError from the file system) with the reason."""
import json
import math
import os
import stat


def _one_value_per_key(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise ValueError(f"the key {key!r} is given twice in one object")
        seen.add(key)
    return dict(pairs)


def _not_json(constant):
    raise ValueError(f"{constant} is not a JSON number")


def _finite(text):
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"{text} is out of a double's range")
    return value


def load(path):
    if not stat.S_ISREG(os.stat(path).st_mode):  # os.stat follows links, as open() would
        raise ValueError("not a regular file")
    with open(path, encoding="utf-8") as f:
        text = f.read()
    try:
        return json.loads(text, object_pairs_hook=_one_value_per_key, parse_constant=_not_json, parse_float=_finite)
    except RecursionError:
        raise ValueError("nested deeper than this reader holds") from None
