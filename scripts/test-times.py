#!/usr/bin/env python3
"""Where a ctest run's time went: per test its wall time (ctest's) and its CPU time (the
`cpu N s` line tests/lib/tclib.py prints: the test and every program it ran), then the sums
per layer label. Wall times on a shared machine grow with its load; CPU times do not, so
they are what to compare between runs.

    scripts/test-times.py BUILD_DIR [--top N] [--log LastTest.log]   e.g. scripts/test-times.py build-asan

Reads BUILD_DIR/Testing/Temporary/LastTest.log (the last ctest run there) and the labels the
CTestTestfile.cmake files give (not through ctest: any ctest command, even --show-only, starts
a new LastTest.log). C unit tests print no CPU line: their CPU is shown as '-'.
"""
import argparse
import os
import re
import sys

LAYERS = ("unit", "golden", "cli", "oracle", "stress", "browser")


def runs(log_path):
    """{test: (wall s, cpu s or None, passed)} from a LastTest.log."""
    out, name, cpu = {}, None, None
    with open(log_path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.match(r"^\d+/\d+ Test: (\S+)$", line)
            if m:
                name, cpu = m.group(1), None
                continue
            m = re.match(r"^cpu ([\d.]+) s \(this test", line)
            if m and name:
                cpu = float(m.group(1))
                continue
            m = re.match(r"^Test time =\s+([\d.]+) sec", line)
            if m and name:
                out[name] = [float(m.group(1)), cpu, False]
                continue
            if line.startswith("Test Passed.") and name in out:
                out[name][2] = True
    return out


def labels(build):
    """{test: [labels]} from the set_tests_properties(NAME PROPERTIES ... LABELS "a;b" ...) lines."""
    out = {}
    for d, _, files in os.walk(build):
        if "CTestTestfile.cmake" not in files:
            continue
        with open(os.path.join(d, "CTestTestfile.cmake"), encoding="utf-8", errors="replace") as f:
            for m in re.finditer(r'^set_tests_properties\((\S+) PROPERTIES .*?\bLABELS "([^"]*)"', f.read(), re.M):
                out[m.group(1)] = m.group(2).split(";")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--log", help="a saved LastTest.log (default: BUILD_DIR's last run)")
    a = ap.parse_args()
    log = a.log or os.path.join(a.build, "Testing", "Temporary", "LastTest.log")
    if not os.path.exists(log):
        sys.exit(f"{log}: no ctest run there")
    tests, lab = runs(log), labels(a.build)
    layer_of = {t: next((l for l in lab.get(t, []) if l in LAYERS), "-") for t in tests}
    order = sorted(tests, key=lambda t: -(tests[t][1] if tests[t][1] is not None else tests[t][0]))
    print(f"{'test':32} {'layer':8} {'wall s':>8} {'cpu s':>8}")
    for t in order[:a.top]:
        wall, cpu, ok = tests[t]
        print(f"{t:32} {layer_of[t]:8} {wall:8.1f} {'-' if cpu is None else f'{cpu:8.1f}':>8}{'' if ok else '  FAILED'}")
    if len(order) > a.top:
        print(f"... {len(order) - a.top} more")
    print(f"\n{'layer':8} {'tests':>5} {'wall s':>8} {'cpu s':>8}")
    for layer in LAYERS + ("-",):
        ts = [t for t in tests if layer_of[t] == layer]
        if ts:
            print(f"{layer:8} {len(ts):5} {sum(tests[t][0] for t in ts):8.1f} "
                  f"{sum(tests[t][1] or 0 for t in ts):8.1f}")
    print(f"{'all':8} {len(tests):5} {sum(v[0] for v in tests.values()):8.1f} "
          f"{sum(v[1] or 0 for v in tests.values()):8.1f}")


if __name__ == "__main__":
    main()
