#!/usr/bin/env python3
"""A conversion that fails writes nothing to standard output (issue 38, item 14b).

Every writer variant (`--list-formats --json`), written to '-', of inputs that fail in the
first pass (the reading of the input, before any writer has had an event): an ART trace cut
inside its records under --strict (the key section promises more records than the file
holds), a trace over --max-events, and one deeper than --max-depth under --strict; each read
from a file and from standard input. Each must exit 1 with one line on stderr and leave
standard output empty. Before the fix, -o pprof wrote the 20 bytes of an empty gzip stream
(its header and trailer, from closing the failed output's sink), which `go tool pprof` and
zcat then read as a profile.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.corpus, "app-startup.trace")
    data = open(src, "rb").read()
    cut = os.path.join(ctx.work, "cut.trace")
    with open(cut, "wb") as f:
        f.write(data[:40000])  # inside the records (the key section ends near 0x2000)
    formats = json.loads(subprocess.run([ctx.traceconv, "--list-formats", "--json"], capture_output=True,
                                        check=True).stdout)
    variants = [v["name"] for w in formats["writers"] for v in w["variants"]]
    ctx.check(len(variants) >= 14 and "pprof" in variants, f"the writers' variants: {variants}")
    cases = [("cut inside its records, --strict", cut, ["--strict"]),
             ("over --max-events", src, ["--max-events", "100"]),
             ("deeper than --max-depth, --strict", src, ["--max-depth", "2", "--strict"])]
    wrong = []
    runs = 0
    for what, path, flags in cases:
        for variant in variants:
            for stdin in (False, True):
                argv = [ctx.traceconv, "-o", variant, *flags, "-" if stdin else path, "-"]
                with open(path, "rb") as inp:
                    r = subprocess.run(argv, stdin=inp if stdin else subprocess.DEVNULL, capture_output=True)
                runs += 1
                lines = r.stderr.decode(errors="replace").splitlines()
                if r.returncode != 1 or r.stdout or len(lines) != 1:
                    wrong.append(f"{what}: -o {variant}{' from stdin' if stdin else ''}: exit {r.returncode}, "
                                 f"{len(r.stdout)} bytes on stdout ({r.stdout[:24]!r}), stderr {lines[:3]}")
    ctx.check(not wrong, f"{runs} failed conversions to stdout: exit 1, one line, nothing on stdout; "
              f"{len(wrong)} are not:\n  " + "\n  ".join(wrong))
    ctx.done()


if __name__ == "__main__":
    main()
