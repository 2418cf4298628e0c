#!/usr/bin/env python3
"""make bench's parse floor (bench/floor.c, issue 26 goal 5) scans what the generator wrote:
for every ART v1-v3 trace of the project corpus, its record count equals the facts file's
(tracegen's model of the scenario, not a reader of ours), and where every exit closes the
frame on top (no exit without enter, no mismatched exit, no action 3) the threads' depths it
ends with add up to the frames the facts say are open at the end. A file that is not an ART
v1-v3 trace is one line on stderr and exit 1. The program is found beside traceconv."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def floor_run(exe, path):
    r = subprocess.run([exe, path], capture_output=True, text=True)
    return r.returncode, r.stdout.split(), r.stderr


def main():
    ctx = tclib.Ctx()
    exe = os.path.join(os.path.dirname(os.path.abspath(ctx.traceconv)), "parse_floor")
    if not ctx.check(os.path.exists(exe), f"{exe}: not built"):
        ctx.done()
    cases = 0
    for name, trace, facts_path in ctx.project_cases():
        if not facts_path:
            continue
        with open(facts_path, encoding="utf-8") as f:
            facts = json.load(f)
        if facts.get("version") not in (1, 2, 3):
            continue
        cases += 1
        rc, out, err = floor_run(exe, trace)
        if not ctx.eq(rc, 0, f"corpus/{name}: parse_floor exit status ({err.strip()})") or len(out) != 4:
            continue
        secs, records, depth_sum = float(out[0]), int(out[1]), int(out[2])
        ctx.check(secs >= 0, f"corpus/{name}: scan time {secs}")
        ctx.eq(records, facts["records"], f"corpus/{name}: records scanned vs facts 'records'")
        if not (facts.get("exit_without_enter") or facts.get("mismatched_exits") or facts.get("invalid_actions")):
            ctx.eq(depth_sum, facts["open_at_end"], f"corpus/{name}: depths at the end vs facts 'open_at_end'")
    ctx.check(cases >= 10, f"only {cases} ART v1-v3 corpus traces with facts")
    # not an ART v1-v3 trace: a clear line, exit 1, nothing on stdout
    junk = os.path.join(ctx.work, "junk.trace")
    with open(junk, "wb") as f:
        f.write(b"*version\n3\n*end\nnot a header at all")
    rc, out, err = floor_run(exe, junk)
    ctx.eq(rc, 1, "junk: exit status")
    ctx.eq(out, [], "junk: stdout")
    ctx.check(err.startswith("parse_floor: ") and err.count("\n") == 1, f"junk: one line on stderr, got {err!r}")
    ctx.done()


if __name__ == "__main__":
    main()
