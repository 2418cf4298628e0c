#!/usr/bin/env python3
"""pprof writer, checked by `go tool pprof` and protoc with the upstream profile.proto
(third_party/pprof).

For every valid input (a small trace built here, the project corpus, and the ART
traces of TC_EXTRA_CORPUS when it is set):
  * the file starts with the gzip magic and `go tool pprof -raw` accepts it;
  * per-thread wall and cpu sums of pprof's samples equal the summed
    top-level slice durations of the JSON output of the same input, and the
    `-top` totals equal those sums;
  * `-tags` lists every thread that has events;
  * protoc decodes it with the upstream profile.proto;
  * folded and pprof agree stack by stack (self µs, within rounding).
The small trace also checks `-traces` against the call paths of its scenario
and `--merge-threads`.
"""
import gzip
import json
import os
import re
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

INVALID = {"perflib-header.trace", "studio-perflib-basic-special_char.trace"}

# ---- a tiny ART trace of a known scenario -------------------------------------

KEY = ("*version\n3\nclock=dual\nvm=art\npid=42\n*threads\n42\tmain\n7\tworker\n*methods\n"
       "0x4\tcom.example.A\tmain\t()V\tA.java\n"
       "0x8\tcom.example.B\trun\t(I)V\tB.java\n"
       "0xc\tcom.example.C\twork\t()V\tC.java\n*end\n")
A, B, C = 0x4, 0x8, 0xC
# (tid, method, action, wall µs); thread CPU time = wall // 2 for main, wall for worker
SCENARIO = [
    (42, A, 0, 0), (7, B, 0, 5), (42, B, 0, 10), (7, C, 0, 15), (42, B, 1, 30), (42, C, 0, 40),
    (7, C, 1, 45), (42, B, 0, 50), (7, B, 1, 55), (42, B, 1, 60), (42, C, 1, 70), (42, A, 1, 100),
]
# (thread, path leaf first) -> self wall µs
EXPECTED_PATHS = {
    ("main", ("com.example.A.main",)): 50,
    ("main", ("com.example.B.run", "com.example.A.main")): 20,
    ("main", ("com.example.C.work", "com.example.A.main")): 20,
    ("main", ("com.example.B.run", "com.example.C.work", "com.example.A.main")): 10,
    ("worker", ("com.example.B.run",)): 20,
    ("worker", ("com.example.C.work", "com.example.B.run")): 30,
}


def write_small_trace(path):
    start_us = 1_700_000_000_000_000
    hdr = b"SLOW" + struct.pack("<HHQH", 3, 32, start_us, 14)
    hdr += b"\0" * (32 - len(hdr))
    recs = b"".join(struct.pack("<HIII", tid, m | act, wall // 2 if tid == 42 else wall, wall)
                    for tid, m, act, wall in SCENARIO)
    with open(path, "wb") as f:
        f.write(KEY.encode() + hdr + recs)


# ---- go tool pprof ----------------------------------------------------------------

def pprof(ctx, env, *args):
    r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", *args], env=env)
    if r is None:
        return None
    if r.returncode != 0:
        ctx.fail(f"go tool pprof {' '.join(args)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        return None
    return r.stdout.decode(errors="replace")


TOTAL_RE = re.compile(r"of (-?[\d.e+]+)ns total")


def top_total(ctx, env, path, index):
    out = pprof(ctx, env, "-top", f"-sample_index={index}", "-unit=ns", path)
    if out is None:
        return None
    m = TOTAL_RE.search(out)
    if not m:
        return 0 if "Total samples = 0" in out or "0 of 0" in out else None
    return round(float(m.group(1)))


# ---- independent figures from the JSON output ----------------------------------

def json_threads(path):
    """tid -> (name, wall ns, cpu ns) of top-level B/E slices, threads with events only."""
    with open(path, "rb") as f:
        doc = json.load(f)
    names, stacks, out = {}, {}, {}
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if ph not in ("B", "E"):
            continue
        st = stacks.setdefault(e["tid"], [])
        wall, cpu = out.get(e["tid"], (0, 0))
        if ph == "B":
            st.append(e)
        else:
            b = st.pop()
            if not st:
                wall += round(float(e["ts"]) * 1000) - round(float(b["ts"]) * 1000)
                if "tts" in e and "tts" in b:
                    cpu += round(float(e["tts"]) * 1000) - round(float(b["tts"]) * 1000)
        out[e["tid"]] = (wall, cpu)
    return {tid: (names.get(tid, str(tid)), w, c) for tid, (w, c) in out.items()}


def sanitize(name):
    """folded.c's frame-name rules, for matching pprof names to folded frames."""
    s = name.replace(";", ":").replace("\r", " ").replace("\n", " ").replace("\t", " ").strip(" ")
    if not s:
        return "[unknown]"
    m = re.search(r"( +)(\d+)$", s)
    if m and m.start() > 0:
        s = s[: m.start()] + "_" * len(m.group(1)) + m.group(2)
    return s


# ---- per-input checks -----------------------------------------------------------

def check_input(ctx, env, src, name):
    out, _ = ctx.convert(src, "pprof", os.path.join(ctx.work, name + ".pb.gz"))
    js, _ = ctx.convert(src, "json", os.path.join(ctx.work, name + ".json"))
    fo, _ = ctx.convert(src, "folded", os.path.join(ctx.work, name + ".folded"))
    if not out or not js or not fo:
        return None
    with open(out, "rb") as f:
        ctx.eq(f.read(2), b"\x1f\x8b", f"{name}: gzip magic")
    raw = pprof(ctx, env, "-raw", out)
    if raw is None:
        return None
    types, samples, locs = tclib.pprof_raw(raw)
    with open(js, "rb") as f:  # the JSON says when its timeline is thread CPU time (no wall clock)
        cpu_only = "timeline" in json.load(f).get("otherData", {})
    ctx.eq(types, ["cpu"] if cpu_only else ["wall", "cpu"][:max(1, len(types))],
           f"{name}: sample types (a thread-CPU-only input has only cpu)")

    # protoc with the upstream schema decodes the wire format
    with open(out, "rb") as f:
        body = gzip.decompress(f.read())
    r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("profile.proto"),
                    "--decode=perftools.profiles.Profile", "profile.proto"], input=body)
    if r is not None:
        ctx.check(r.returncode == 0, f"{name}: protoc --decode: {r.stderr.decode(errors='replace')}")

    # per-thread totals against the JSON
    want = json_threads(js)
    got = {}
    for wall, cpu, _, labels in samples:
        w, c = got.get(int(labels.get("tid", -1)), (0, 0))
        got[int(labels.get("tid", -1))] = (w + wall, c + (cpu or 0))
    has_cpu = "cpu" in types and not cpu_only  # with cpu only, the first value is checked as the timeline
    for tid, (tname, w, c) in want.items():
        if w == 0 and c == 0:
            continue
        gw, gc = got.get(tid, (0, 0))
        ctx.eq(gw, w, f"{name}: thread {tid} wall ns (pprof vs json)")
        if has_cpu:
            ctx.eq(gc, c, f"{name}: thread {tid} cpu ns (pprof vs json)")
    ctx.eq(top_total(ctx, env, out, types[0] if types else "wall"), sum(w for _, w, _ in want.values()),
           f"{name}: -top {types[0] if types else 'wall'} total")
    if has_cpu:
        ctx.eq(top_total(ctx, env, out, "cpu"), sum(c for _, _, c in want.values()), f"{name}: -top cpu total")

    # -tags lists every thread with events
    tags = pprof(ctx, env, "-tags", out)
    if tags is not None:
        shown = {line.split("): ", 1)[1] for line in tags.splitlines() if "): " in line}
        for tid, (tname, w, c) in want.items():
            if w or c:
                ctx.check(tname in shown, f"{name}: -tags lacks thread {tname!r}")

    # folded and pprof agree stack by stack
    folded = tclib.read_folded(fo)
    stacks, n = {}, {}
    traces = pprof(ctx, env, "-traces", "-unit=ns", out)
    for labels, path, value in parse_traces(traces or ""):
        key = ";".join([sanitize(f"{labels['thread']}-{labels['tid']}")] + [sanitize(f) for f in reversed(path)])
        stacks[key] = stacks.get(key, 0) + round(float(value[:-2]))
        n[key] = n.get(key, 0) + 1
    ctx.eq(sum(n.values()), len(samples), f"{name}: -traces lists every sample")
    bad = [k for k in set(stacks) | set(folded)
           if abs(folded.get(k, 0) * 1000 - stacks.get(k, 0)) > 1000 * n.get(k, 1)]
    ctx.check(not bad, f"{name}: folded and pprof disagree on {len(bad)} stacks, e.g. "
                       f"{bad[:1]} folded {folded.get(bad[0], 0) if bad else 0}us "
                       f"pprof {stacks.get(bad[0], 0) if bad else 0}ns")
    return out


def parse_traces(text):
    """-traces -> [(labels, path leaf first, value string)]. pprof prints
    "%10s   %s" per frame and "%10s:  %s" per label, so names are read by
    column (method and file names may contain spaces)."""
    out = []
    for block in text.split("-----------+-------------------------------------------------------")[1:]:
        labels, path, value = {}, [], None
        for line in block.split("\n"):  # not splitlines(): names may hold \r
            if not line.strip():
                continue
            if value is None and line[10:13] == ":  ":
                labels[line[:10].strip()] = line[13:]
                continue
            if value is None:  # a value wider than 10 columns pushes the name right
                m = re.match(r"^\s*(\S+)   (.*)$", line)
                value, line = m.group(1), " " * 13 + m.group(2)
            path.append(line[13:])
        if value is not None:
            out.append((labels, tuple(path), value))
    return out


def traces_dict(text):
    return {(labels.get("thread"), path): value for labels, path, value in parse_traces(text)}


def check_small(ctx, env):
    src = os.path.join(ctx.work, "small.trace")
    write_small_trace(src)
    out = check_input(ctx, env, src, "small")
    if not out:
        return
    traces = pprof(ctx, env, "-traces", out)
    if traces is not None:
        got = traces_dict(traces)
        want = {k: f"{v}us" for k, v in EXPECTED_PATHS.items()}
        ctx.eq(got, want, "small: -traces call paths")
    cpu = pprof(ctx, env, "-traces", "-sample_index=cpu", out)
    if cpu is not None:
        got = traces_dict(cpu)
        # main's CPU clock runs at half speed, worker's at full speed
        want = {k: f"{v // 2 if k[0] == 'main' else v}us" for k, v in EXPECTED_PATHS.items()}
        ctx.eq(got, want, "small: -traces cpu values")

    merged, _ = ctx.convert(src, "pprof", os.path.join(ctx.work, "small-merged.pb.gz"), extra=["--merge-threads"])
    if merged:
        raw = pprof(ctx, env, "-raw", merged)
        if raw is not None:
            _, samples, locs = tclib.pprof_raw(raw)
            ctx.check(all(not s[3] for s in samples), "merge-threads: samples carry no labels")
            got = {}
            for wall, _, ids, _ in samples:
                p = tuple(locs[i] for i in ids)
                got[p] = got.get(p, 0) + wall
            want = {}
            for (_, p), v in EXPECTED_PATHS.items():
                want[p] = want.get(p, 0) + v * 1000
            ctx.eq(got, want, "merge-threads: paths summed over threads")


def main():
    ctx = tclib.Ctx()
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    check_small(ctx, env)
    art = ctx.extra_corpus("art")
    inputs = []
    if art:
        inputs += [(f[:-len(".trace")], os.path.join(art, f)) for f in sorted(os.listdir(art))
                   if f.endswith(".trace") and f not in INVALID]
    inputs += [(name, path) for name, path, _ in ctx.project_cases()]
    for name, path in inputs:
        check_input(ctx, env, path, name)
    if art:
        for f in sorted(INVALID):
            r = ctx.run(["-f", "-o", "pprof", os.path.join(art, f), os.path.join(ctx.work, f + ".pb.gz")])
            ctx.check(r.returncode != 0, f"{f}: must fail")
    print(f"{len(inputs) + 1} inputs")
    ctx.done()


if __name__ == "__main__":
    main()
