#!/usr/bin/env python3
"""A strict checker of Prometheus' text exposition format (version 0.0.4), a test double for promtool.

Usage: python3 Tests/Lab/promtext_check.py [--conventions] FILE   (or - for stdin)

Exit 0 and one summary line (`ok: N families, M samples`) when FILE parses; exit 1 and one line per problem
(`line N: ...`) otherwise. Python 3 standard library only.

The rules are those of https://prometheus.io/docs/instrumenting/exposition_formats/ ("Text format details"):
UTF-8, lines ending in a line feed (the last one too), empty lines ignored; `# HELP name docstring` (`\\` and
`\n` the only escapes) and `# TYPE name counter|gauge|histogram|summary|untyped`, at most one of each per name,
the TYPE before the name's first sample; other `#` lines are comments; a sample is
`name[{label="value",...}] value [timestamp]` with names `[a-zA-Z_:][a-zA-Z0-9_:]*`, label names
`[a-zA-Z_][a-zA-Z0-9_]*` (not `__`-prefixed, not repeated), label values with `\\`, `\"` and `\n` escapes, a
Go float value (`NaN`, `+Inf`, `-Inf` included) and an optional integer timestamp in milliseconds; a family's
lines are not interleaved with another's, and no series appears twice.

`--conventions` adds the naming rules of https://prometheus.io/docs/practices/naming/ that promtool's
`check metrics` lints: every family has HELP and TYPE, counters end in `_total`, and nothing else does.
"""

import re
import sys

METRIC_NAME = re.compile(r"[a-zA-Z_:][a-zA-Z0-9_:]*")
LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
FLOAT = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[+-]?Inf|NaN")
TIMESTAMP = re.compile(r"-?[0-9]+")
TYPES = {"counter", "gauge", "histogram", "summary", "untyped"}
SUFFIXES = {"histogram": ("_bucket", "_sum", "_count"), "summary": ("_sum", "_count")}


class Problem(Exception):
    pass


def family_of(name, types):
    """The family a sample name belongs to (histogram and summary samples carry suffixes)."""
    for kind, suffixes in SUFFIXES.items():
        for suffix in suffixes:
            base = name[: -len(suffix)]
            if name.endswith(suffix) and types.get(base) == kind:
                return base
    return name


def parse_labels(text, i):
    """Parses `{...}` starting at text[i] == '{'. Returns (labels, index after '}')."""
    labels = {}
    i += 1
    while True:
        if i < len(text) and text[i] == "}":
            return labels, i + 1
        m = LABEL_NAME.match(text, i)
        if not m:
            raise Problem("bad label name")
        name = m.group(0)
        if name.startswith("__"):
            raise Problem(f"reserved label name {name}")
        if name in labels:
            raise Problem(f"label {name} repeated")
        i = m.end()
        if text[i : i + 2] != '="':
            raise Problem(f"label {name}: expected =\"")
        i += 2
        value = []
        while True:
            if i >= len(text):
                raise Problem(f"label {name}: unterminated value")
            c = text[i]
            if c == "\\":
                nxt = text[i + 1 : i + 2]
                if nxt not in ("\\", '"', "n"):
                    raise Problem(f"label {name}: bad escape")
                value.append("\n" if nxt == "n" else nxt)
                i += 2
            elif c == '"':
                i += 1
                break
            else:
                value.append(c)
                i += 1
        labels[name] = "".join(value)
        if i < len(text) and text[i] == ",":
            i += 1
        elif i < len(text) and text[i] == "}":
            pass
        else:
            raise Problem(f"label {name}: expected , or }}")


def check(data, conventions=False):
    """Returns (families, samples) or raises Problem with a `line N: ...` message."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise Problem("line 0: not UTF-8")
    if text and not text.endswith("\n"):
        raise Problem("line 0: the last line does not end with a line feed")
    helps, types, seen_series, done_families = {}, {}, set(), set()
    sampled, current, samples = set(), None, 0

    def enter(family, n):
        nonlocal current
        if family != current:
            if family in done_families:
                raise Problem(f"line {n}: {family}'s lines are not together")
            if current is not None:
                done_families.add(current)
            current = family

    for n, raw in enumerate(text.split("\n")[:-1] if text else [], start=1):
        line = raw.strip(" \t")
        if not line:
            continue
        try:
            if line.startswith("#"):
                tokens = line[1:].lstrip(" \t").split(None, 2)
                if not tokens or tokens[0] not in ("HELP", "TYPE"):
                    continue
                if len(tokens) < 2 or not METRIC_NAME.fullmatch(tokens[1]):
                    raise Problem(f"{tokens[0]} without a valid metric name")
                name = tokens[1]
                enter(name, n)
                if tokens[0] == "HELP":
                    doc = tokens[2] if len(tokens) > 2 else ""
                    if re.search(r"\\(?:[^\\n]|$)", re.sub(r"\\[\\n]", "", doc)):
                        raise Problem(f"HELP {name}: bad escape")
                    if name in helps:
                        raise Problem(f"second HELP for {name}")
                    helps[name] = doc
                else:
                    kind = tokens[2].strip(" \t") if len(tokens) > 2 else ""
                    if kind not in TYPES:
                        raise Problem(f"TYPE {name}: unknown type {kind!r}")
                    if name in types:
                        raise Problem(f"second TYPE for {name}")
                    if name in sampled:
                        raise Problem(f"TYPE {name} after its samples")
                    types[name] = kind
                continue
            m = METRIC_NAME.match(line)
            if not m:
                raise Problem("bad metric name")
            name, i = m.group(0), m.end()
            labels = {}
            if i < len(line) and line[i] == "{":
                labels, i = parse_labels(line, i)
            rest = line[i:]
            if not rest or rest[0] not in " \t":
                raise Problem(f"{name}: expected a space before the value")
            parts = rest.split()
            if len(parts) not in (1, 2):
                raise Problem(f"{name}: expected a value and an optional timestamp")
            if not FLOAT.fullmatch(parts[0]):
                raise Problem(f"{name}: value {parts[0]!r} is not a float")
            if len(parts) == 2 and not TIMESTAMP.fullmatch(parts[1]):
                raise Problem(f"{name}: timestamp {parts[1]!r} is not an integer")
            family = family_of(name, types)
            enter(family, n)
            sampled.add(family)
            series = (name, tuple(sorted(labels.items())))
            if series in seen_series:
                raise Problem(f"{name}: series {dict(series[1])} appears twice")
            seen_series.add(series)
            samples += 1
        except Problem as problem:
            raise Problem(f"line {n}: {problem}")
    families = set(helps) | set(types) | sampled
    if conventions:
        for family in sorted(families):
            if family not in helps:
                raise Problem(f"line 0: {family} has no HELP")
            if family not in types:
                raise Problem(f"line 0: {family} has no TYPE")
            if types[family] == "counter" and not family.endswith("_total"):
                raise Problem(f"line 0: counter {family} does not end in _total")
            if types[family] != "counter" and family.endswith("_total"):
                raise Problem(f"line 0: {types[family]} {family} ends in _total")
    return len(families), samples


def main(argv):
    args = argv[1:]
    conventions = "--conventions" in args
    args = [a for a in args if a != "--conventions"]
    if len(args) != 1:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    data = sys.stdin.buffer.read() if args[0] == "-" else open(args[0], "rb").read()
    try:
        families, samples = check(data, conventions)
    except Problem as problem:
        print(problem)
        return 1
    print(f"ok: {families} families, {samples} samples")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
