#!/usr/bin/env python3
"""Do two traceconv builds write the same bytes? For a refactoring that must not change any
output: every input of the given corpus directories (default: the project's corpus, its rhea/
and systrace/ inputs and the fuzz regressions), through every writer and a set of option
combinations of each, with traceconv A and traceconv B; prints each difference (input, format,
options) and exits 1 if there is one. Exit statuses and stderr are compared too; the version string
outputs carry is not (each build's own is replaced before comparing).

    scripts/same-outputs.py OLD/traceconv build/traceconv [DIR...] [-j N]

Written for issue 23 (one description per format), whose every step must leave the outputs
byte-identical; run it before each merge of a refactoring."""
import argparse
import concurrent.futures as cf
import gzip
import hashlib
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Options per format: each list is one run (besides the run with none). A format's options
# are given only to it, so an unused-option warning does not mask the output.
RUNS = {
    "json": [[]],
    "perfetto": [[]],
    "ir": [[]],
    "folded": [[], ["--weight", "cpu"], ["--no-thread"], ["--max-depth", "3"]],
    "pprof": [[], ["--merge-threads"]],
    "systrace": [[], ["--text"]],
    "flamegraph": [[], ["--weight", "cpu", "--inverted", "--colors", "hot", "--hash", "--title", "T<&>",
                        "--width", "800", "--minwidth", "1%", "--merge-threads"]],
    "report": [[], ["--csv", "--sort", "calls"], ["--html", "--weight", "cpu"], ["--sort", "name"],
               ["--sort", "excl", "--csv"]],
    "dot": [[], ["--threshold", "0.5", "--weight", "cpu"]],
    "speedscope": [[], ["--weight", "cpu"]],
}
DIFF_RUNS = [["-o", "text"], ["-o", "csv"], ["-o", "flamegraph"], ["-o", "text", "--weight", "cpu"],
             ["-o", "flamegraph", "--negate"]]


def inputs(dirs):
    skip = (".facts.json", ".scn", ".md", ".sh", ".py", ".txt.expected", "mapping.txt")
    for d in dirs:
        for root, _, files in os.walk(d):
            for f in sorted(files):
                p = os.path.join(root, f)
                if not f.endswith(skip) and os.path.getsize(p) < 50_000_000:
                    yield p


VERSIONS = {}


def version_of(exe):
    """The version string outputs carry: a new version alone is not a difference."""
    if exe not in VERSIONS:
        VERSIONS[exe] = subprocess.run([exe, "--version"], capture_output=True, text=True).stdout.split()[-1].encode()
    return VERSIONS[exe]


def normalized(exe, data):
    if data[:2] == b"\x1f\x8b":  # pprof: the version is inside the gzip stream
        data = gzip.decompress(data)
    v = version_of(exe)
    for form in (b"traceconv ", b"traceconv-ir ", b"traceconv@"):
        data = data.replace(form + v, form + b"VERSION")
    return data


def run(exe, args, work):
    out = os.path.join(work, "out")
    if os.path.exists(out):
        os.remove(out)
    cmd = [exe, "diff", "-q", "-f"] + args[1:] if args[0] == "diff" else [exe, "-q", "-f"] + args
    r = subprocess.run(cmd + [out], capture_output=True, timeout=300)
    data = normalized(exe, open(out, "rb").read()) if os.path.exists(out) else None
    err = r.stderr.replace(exe.encode(), b"EXE").replace(out.encode(), b"OUT")
    return r.returncode, hashlib.sha256(data).hexdigest() if data is not None else None, err


def job(a, b, args):
    with tempfile.TemporaryDirectory(prefix="same-outputs-") as wa, \
            tempfile.TemporaryDirectory(prefix="same-outputs-") as wb:
        ra, rb = run(a, args, wa), run(b, args, wb)
    return args, ra, rb


def main():
    p = argparse.ArgumentParser()
    p.add_argument("a")
    p.add_argument("b")
    p.add_argument("dirs", nargs="*")
    p.add_argument("-j", type=int, default=os.cpu_count() or 2)
    o = p.parse_args()
    dirs = o.dirs or [os.path.join(ROOT, "corpus"), os.path.join(ROOT, "tests", "fuzz", "regressions")]
    files = list(inputs(dirs))
    jobs = []
    for f in files:
        for fmt, runs in RUNS.items():
            for extra in runs:
                jobs.append(["-o", fmt] + extra + [f])
    arts = [f for f in files if f.endswith(".trace")]
    for base, new in zip(arts, arts[1:] + arts[:1]):
        for extra in DIFF_RUNS:
            jobs.append(["diff"] + extra + [base, new])
    bad = 0
    with cf.ThreadPoolExecutor(o.j) as pool:
        for args, ra, rb in pool.map(lambda j: job(o.a, o.b, j), jobs):
            if ra != rb:
                bad += 1
                print(f"DIFFERS: {' '.join(args)}\n  A: rc {ra[0]} out {ra[1]} {ra[2][:300]!r}\n"
                      f"  B: rc {rb[0]} out {rb[1]} {rb[2][:300]!r}")
    print(f"{len(jobs)} conversions of {len(files)} inputs compared: {bad} differ")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
