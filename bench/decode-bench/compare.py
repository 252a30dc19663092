#!/usr/bin/env python3
"""Side by side: the DECODE-BENCH-JSON lines of two decode benchmark runs (bench/decode --compare).

usage: compare.py BEFORE_OUTPUT AFTER_OUTPUT   (each the full output of one vaultsync-decode-bench run)
"""
import json
import sys

MARK = "DECODE-BENCH-JSON "


def load(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith(MARK):
                return json.loads(line[len(MARK):])
    sys.exit(f"compare.py: no {MARK.strip()} line in {path}")


def ratio(after, before):
    return f"{after / before:.2f}x" if before else "-"


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__.strip())
    before, after = load(argv[1]), load(argv[2])
    old = {(r["case"], r["mode"]): r for r in before["results"]}
    print(f"before = {before['label']}, after = {after['label']}; CPU per event and allocations: lower is better")
    head = (f"{'case':<10} {'mode':<14} {'CPU µs/event':>23} {'':>6} {'events/s':>21} {'MB/s':>15} "
            f"{'allocs/answer':>19}")
    print(head)
    print(f"{'':<10} {'':<14} {'before':>11} {'after':>11} {'ratio':>6} {'before':>10} {'after':>10} "
          f"{'before':>7} {'after':>7} {'before':>9} {'after':>9}")
    for r in after["results"]:
        b = old.get((r["case"], r["mode"]))
        if b is None:
            continue
        print(f"{r['case']:<10} {r['mode']:<14} {b['cpu_us_per_event']:>11.2f} {r['cpu_us_per_event']:>11.2f} "
              f"{ratio(r['cpu_us_per_event'], b['cpu_us_per_event']):>6} {b['events_per_s']:>10.0f} "
              f"{r['events_per_s']:>10.0f} {b['mb_per_s']:>7.1f} {r['mb_per_s']:>7.1f} "
              f"{b['allocs_per_answer']:>9.1f} {r['allocs_per_answer']:>9.1f}")
    for label, run in (("before", before), ("after", after)):
        extra = run.get("allocs_per_extra_name")
        if extra is not None:
            print(f"allocations per additional skipped file name, {label}: {extra:.4f}")


if __name__ == "__main__":
    main(sys.argv)
