#!/usr/bin/python3
"""Validates benchfp's JSON outputs against results/schemas/*.schema.json.

Usage: validate_json.py SCHEMA FILE...   (SCHEMA: kernel-results, judgement, alloc-profile, kernel-list, baseline)
Exit 0 when every file matches, 1 when one does not (each error printed with its path in the
document), 2 on bad input (unknown schema, unreadable file, not JSON: scripts/lib/strict_json.py).
Debian's python3-jsonschema (4.10); the schemas refer to each other by their $id.
"""
import pathlib
import sys

import jsonschema

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "lib"))
sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
import strict_json  # noqa: E402  (found through the lines above)

SCHEMAS = pathlib.Path(__file__).resolve().parent.parent / "results" / "schemas"


def load(path):
    try:
        return strict_json.load(path)
    except (OSError, ValueError) as e:
        print(f"validate_json: {path}: {e}", file=sys.stderr)
        sys.exit(2)


def validator_for(name):
    store = {}
    for path in SCHEMAS.glob("*.schema.json"):
        schema = load(path)
        store[schema["$id"]] = schema
    path = SCHEMAS / f"{name}.schema.json"
    if not path.is_file():
        known = ", ".join(sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json")))
        print(f"validate_json: unknown schema '{name}' (known: {known})", file=sys.stderr)
        sys.exit(2)
    schema = load(path)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    try:  # jsonschema 4.18 and later resolve references through a registry
        import referencing
        import referencing.jsonschema
        registry = referencing.Registry().with_resources(
            (uri, referencing.Resource.from_contents(doc, default_specification=referencing.jsonschema.DRAFT202012))
            for uri, doc in store.items())
        return cls(schema, registry=registry)
    except (ImportError, TypeError):  # Debian 12's 4.10 (TypeError: referencing beside a jsonschema older than 4.18)
        return cls(schema, resolver=jsonschema.RefResolver.from_schema(schema, store=store))


def errors_of(validator, document):
    """The document's schema errors, in document order, each as (where, message):
    where is its path in the document, "(document)" for the whole. ValueError
    for JSON nested deeper than the validator holds."""
    try:
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.absolute_path))
    except RecursionError:
        raise ValueError("nested deeper than the validator holds") from None
    return [("/".join(str(p) for p in e.absolute_path) or "(document)", e.message) for e in errors]


def main(argv):
    if argv[1:] in (["-h"], ["--help"]):
        print(__doc__)
        return 0
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    validator = validator_for(argv[1])
    status = 0
    for path in argv[2:]:
        document = load(path)
        try:
            errors = errors_of(validator, document)
        except ValueError as e:
            print(f"validate_json: {path}: {e}", file=sys.stderr)
            return 2
        for where, message in errors[:20]:
            print(f"{path}: {where}: {message[:300]}")
        if errors:
            print(f"{path}: does not match {argv[1]}.schema.json ({len(errors)} errors)")
            status = 1
        else:
            print(f"{path}: matches {argv[1]}.schema.json")
    return status


if __name__ == "__main__":
    sys.exit(main(sys.argv))
