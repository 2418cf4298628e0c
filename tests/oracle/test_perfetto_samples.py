#!/usr/bin/env python3
"""Sampled stacks reach the perfetto output (issue 35, item 5): every sample of the IR (perf's
stackFrames + samples, DevTools' Profile/ProfileChunk, a .cpuprofile, btrace 3.x sampling) is a
PerfSample packet at its time on its thread, whose callstack, resolved as trace processor
resolves it (InternedData callstacks -> frames -> function_names, the first frame the root:
StackProfileSequenceState::FindOrInsertCallstackFromFrames), is the sample's stack. The output
is decoded by protoc with the upstream schema; the expectation is the -o ir dump of the same
input (its stack table and P events), read here. Before issue 35 the writer counted samples
as not shown and wrote none: every comparison fails."""
import collections
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import tclib  # noqa: E402
from test_perfetto import decode  # noqa: E402


def ir_samples(ctx, src):
    """Counter of (tid, ts, stack names root first) from the -o ir dump."""
    out = os.path.join(ctx.work, os.path.basename(src) + ".ir.txt")
    ctx.run(["-q", "-f", "-o", "ir", src, out], check_rc=0)
    text = open(out, encoding="utf-8").read()
    start = int(re.search(r"^trace .* start_ns=(-?\d+)", text, re.M).group(1))
    names = {int(m.group(1)): m.group(2) for m in re.finditer(r'^method (\d+) .* name=(".*")$', text, re.M)}
    names = {k: eval(v) for k, v in names.items()}  # JSON strings
    stacks = {}
    for m in re.finditer(r"^stack (\d+) parent=(-|\d+) m=(\d+)$", text, re.M):
        stacks[int(m.group(1))] = (None if m.group(2) == "-" else int(m.group(2)), int(m.group(3)))
    tids = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^thread (\d+) tid=(\d+) ", text, re.M)}

    def path(s):
        out = []
        while s is not None:
            parent, meth = stacks[s]
            out.append(names[meth])
            s = parent
        return tuple(reversed(out))
    got = collections.Counter()
    for m in re.finditer(r"^P t=(\d+) m=\S+ d=\d+ ts=(-?\d+) .* id=(\d+) ", text, re.M):
        got[(tids[int(m.group(1))], start + int(m.group(2)), path(int(m.group(3))))] += 1
    return got


def perfetto_samples(ctx, src):
    out = os.path.join(ctx.work, os.path.basename(src) + ".pftrace")
    ctx.run(["-q", "-f", "-o", "perfetto", src, out], check_rc=0)
    packets = decode(ctx, out) or []
    fnames, frames, stacks = {}, {}, {}
    got = collections.Counter()
    for p in packets:  # interned data first: a packet's own definitions serve its sample
        for d in p.get("interned_data", []):
            for f in d.get("function_names", []):
                fnames[f["iid"][0]] = f["str"][0]
            for f in d.get("frames", []):
                frames[f["iid"][0]] = f["function_name_id"][0]
            for c in d.get("callstacks", []):
                stacks[c["iid"][0]] = c.get("frame_ids", [])
        for s in p.get("perf_sample", []):
            path = tuple(fnames[frames[f]] for f in stacks[s["callstack_iid"][0]])
            got[(s["tid"][0], p["timestamp"][0], path)] += 1
    return got


def main():
    ctx = tclib.Ctx()
    inputs = [os.path.join(ctx.source, "tests", "json", f) for f in sorted(os.listdir(os.path.join(ctx.source, "tests", "json")))]
    inputs += [p for p in ctx.corpus_files("rhea") if "sampling" in os.path.basename(p) and "mapping" not in p]
    compared = 0
    for src in inputs:
        want = ir_samples(ctx, src)
        if not want:
            continue
        got = perfetto_samples(ctx, src)
        ctx.eq(sum(got.values()), sum(want.values()), f"{os.path.basename(src)}: PerfSample packets")
        ctx.check(got == want, f"{os.path.basename(src)}: each sample's thread, time and stack (root first) "
                               f"as trace processor resolves them: {sorted((got - want).items())[:3]} / "
                               f"{sorted((want - got).items())[:3]}")
        compared += 1
    ctx.check(compared >= 4, f"inputs with sampled stacks compared: {compared}")
    ctx.done()


if __name__ == "__main__":
    main()
