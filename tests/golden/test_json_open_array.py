#!/usr/bin/env python3
"""Chrome JSON whose array ends with the file (doc/formats.md, json): the Trace Event Format
lets its array form end without ']', so that a process that dies while tracing leaves a
readable file; Chrome, catapult, Perfetto and speedscope read such files (speedscope's own
samples simple-partial.json and simple-partial-trailing-comma.json, which traceconv refused).

1. The array without ']', and with a trailing ',' and no ']', converts as the closed array does,
   with no warning: folded stacks equal to the model's (written here from the events, not
   read back from a file).
2. Cut inside its last event, at every byte of that event: the events before it convert as the
   closed array of those events does; one truncated-input warning at the cut event's offset;
   under --strict that is an error (exit 1, one line, no output file).
3. Only the document's own array may end open: an object's "traceEvents" array cut short, or a
   top-level array cut before its first event, is an error line, exit 1, no output file.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

# thread 7 of process 1: a [0, 100) holds b [10, 30) and c [40, 60); thread 8: d [5, 25)
EVENTS = [
    {"pid": 1, "tid": 7, "ph": "B", "name": "a", "ts": 0},
    {"pid": 1, "tid": 8, "ph": "X", "name": "d", "ts": 5, "dur": 20},
    {"pid": 1, "tid": 7, "ph": "B", "name": "b", "ts": 10},
    {"pid": 1, "tid": 7, "ph": "E", "name": "b", "ts": 30},
    {"pid": 1, "tid": 7, "ph": "X", "name": "c", "ts": 40, "dur": 20},
    {"pid": 1, "tid": 7, "ph": "E", "name": "a", "ts": 100},
]
MODEL = {"a": 100 - 20 - 20, "a;b": 20, "a;c": 20, "d": 20}  # self time in µs, per path


def lines(events):
    return [json.dumps(e) for e in events]


def folded(ctx, path, extra=()):
    out = path + ".folded"
    if os.path.exists(out):
        os.remove(out)
    r = subprocess.run([ctx.traceconv, "-o", "folded", *extra, path, out], capture_output=True)
    stacks = {}
    if os.path.exists(out):
        for line in open(out, encoding="utf-8"):
            stack, _, weight = line.rstrip("\n").rpartition(" ")
            stacks[stack.split(";", 1)[1] if ";" in stack else stack] = int(weight)
    return r, stacks, os.path.exists(out)


def write(ctx, name, text):
    path = os.path.join(ctx.work, name)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def main():
    ctx = tclib.Ctx()
    body = ",\n".join(lines(EVENTS))
    for name, text in (("closed.json", "[\n" + body + "\n]\n"), ("open.json", "[\n" + body + "\n"),
                       ("open-comma.json", "[\n" + body + ",\n"), ("open-bare.json", "[" + body)):
        r, stacks, _ = folded(ctx, write(ctx, name, text))
        err = r.stderr.decode(errors="replace")
        ctx.eq(r.returncode, 0, f"{name}: exit ({err.strip()})")
        ctx.eq(stacks, MODEL, f"{name}: the model's stacks")
        ctx.check("warning" not in err, f"{name}: no warning: {err.strip()}")

    head = "[\n" + ",\n".join(lines(EVENTS[:-1])) + ",\n"
    last = lines(EVENTS)[-1]
    _, want, _ = folded(ctx, write(ctx, "before-cut.json", head[:-2] + "\n]\n"))
    for cut in range(1, len(last)):
        path = write(ctx, "cut.json", head + last[:cut])
        r, stacks, _ = folded(ctx, path)
        err = r.stderr.decode(errors="replace")
        ctx.eq(r.returncode, 0, f"cut {cut} bytes into the last event: exit ({err.strip()})")
        ctx.eq(stacks, want, f"cut {cut} bytes into the last event: the events before it, as a closed array")
        ctx.check(f"offset {hex(len(head.encode()))}" in err and "truncated-input" in err,
                  f"cut {cut}: one truncated-input warning at the cut event: {err.strip()}")
        r, _, made = folded(ctx, path, ["--strict"])
        ctx.check(r.returncode == 1 and not made and len(r.stderr.decode().strip().splitlines()) == 1,
                  f"cut {cut}, --strict: exit 1, one line, no output ({r.returncode}: {r.stderr.decode().strip()})")

    for name, text in (("object-cut.json", '{"traceEvents": [\n' + body),
                       ("object-open.json", '{"traceEvents": [\n' + body + "\n]"),
                       ("empty-open.json", "[\n"), ("cut-first.json", "[\n" + lines(EVENTS)[0][:20])):
        r, _, made = folded(ctx, write(ctx, name, text))
        err = r.stderr.decode(errors="replace").strip()
        ctx.check(r.returncode == 1 and not made and len(err.splitlines()) == 1 and name in err,
                  f"{name}: one error line, exit 1, no output ({r.returncode}: {err})")
    ctx.done()


if __name__ == "__main__":
    main()
