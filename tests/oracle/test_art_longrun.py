#!/usr/bin/env python3
"""ART's long-running-method dumps (ART.md §6, §11; readers art-longrun and pftrace) against an
independent decoder (tests/checkers/artlr_inspect.py, written from the spec): every file of
corpus/art-longrun/ and random dumps written here (not by tracegen; the seed is printed,
TC_LONGRUN_SEED replays it) through every writer that shows slices or stacks:

  * json: per thread, every begin (name) and end at its absolute ns; the figures (records,
    threads, ignored-exit, open-at-end) and the trace start;
  * folded: every stack's self time (integer µs, as the model's ns rounded);
  * pprof: `go tool pprof -raw`: every (thread, stack) sample's wall ns, exactly;
  * perfetto: protoc with the upstream schema (test_perfetto's decoder): per thread, every
    slice begin and end at the JSON's time, which is checked against the model;
  * report CSV: per thread and method, calls, inclusive and exclusive wall µs.

Also: the base64 forms (plain, inside an ANR report) and the Perfetto form under two different
placeholder field numbers convert as the raw dump does; a Perfetto trace carrying the packet
reaches flame graphs, reports and `traceconv diff`; traceconv's own .pftrace is not claimed
(converting to an existing one with -f replaces it); hostile inputs (truncated chunk, a size
past the end, an overlong LEB128, bad base64, a Perfetto trace with a cut packet) fail with
one line naming the offset, exit 1, no output."""
import csv
import json
import os
import random
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_perfetto  # noqa: E402  (protoc decoder of our Perfetto output)
import test_pprof  # noqa: E402  (go tool pprof)

CORPUS_SKIP = (".scn", ".py", ".json", ".md")


def model(ctx, path):
    r = ctx.oracle(["python3", ctx.checker("artlr_inspect.py"), path])
    if not ctx.check(r is not None and r.returncode == 0,
                     f"{path}: the independent decoder fails: {r.stderr.decode(errors='replace') if r else ''}"):
        return None
    return json.loads(r.stdout)


def json_events(path):
    with open(path, "rb") as f:
        doc = json.load(f)
    start = int(doc["otherData"]["start_time_ns"])
    out = {}
    for e in doc["traceEvents"]:
        if e.get("ph") == "B":
            out.setdefault(e["tid"], []).append(["B", start + round(float(e["ts"]) * 1000), e["name"]])
        elif e.get("ph") == "E":
            out.setdefault(e["tid"], []).append(["E", start + round(float(e["ts"]) * 1000)])
    return doc, out


def check_json(ctx, label, path, m):
    js, figs = ctx.convert(path, "json", out=os.path.join(ctx.work, label + ".json"))
    if not js:
        return None
    ctx.eq(figs.get("records", 0), m["records"], f"{label}: records")
    ctx.eq(figs.get("threads", 0), len(m["threads"]), f"{label}: threads")
    ctx.eq(figs.get("ignored-exit", 0), m["ignored_exits"], f"{label}: ignored-exit (exits with nothing open)")
    ctx.eq(figs.get("open-at-end", 0), m["open_at_end"], f"{label}: open-at-end")
    doc, got = json_events(js)
    ctx.eq(int(doc["otherData"]["start_time_ns"]), m["start_ns"], f"{label}: trace start")
    # a thread whose records are all unmatched exits has records but no slice to show
    want = {t["tid"]: [list(e) for e in t["timeline"]] for t in m["threads"] if t["timeline"]}
    ctx.eq(sorted(got), sorted(want), f"{label}: threads with slices")
    for tid in sorted(want):
        if not ctx.eq(got.get(tid) == want[tid], True, f"{label}: thread {tid}: json begins/ends vs model"):
            g, w = got.get(tid, []), want[tid]
            k = next((i for i, (a, b) in enumerate(zip(g, w)) if a != b), min(len(g), len(w)))
            print(f"   event {k}: json {g[k] if k < len(g) else None}, model {w[k] if k < len(w) else None}")
    names = {t["tid"]: t["name"] for t in m["threads"] if t["timeline"]}
    meta = {e["tid"]: e["args"]["name"] for e in doc["traceEvents"]
            if e.get("ph") == "M" and e.get("name") == "thread_name"}
    ctx.eq({t: meta.get(t) for t in names}, names, f"{label}: thread names")
    if m["pid"] is not None:
        procs = {e["pid"]: e["args"]["name"] for e in doc["traceEvents"]
                 if e.get("ph") == "M" and e.get("name") == "process_name"}
        ctx.eq(procs.get(m["pid"]), m["process_names"][str(m["pid"])], f"{label}: process {m['pid']} name")
    return js


def check_folded(ctx, label, path, m):
    fo, _ = ctx.convert(path, "folded", out=os.path.join(ctx.work, label + ".folded"))
    if not fo:
        return
    got = tclib.read_folded(fo)
    want = {k: v / 1000 for k, v in m["folded_ns"].items()}
    ok = sorted(got) == sorted(k for k, v in want.items() if round(v)) and \
        all(abs(got[k] - want[k]) < 1 for k in got)
    if not ctx.check(ok, f"{label}: folded stacks vs the model's self times"):
        for k in sorted(set(got) | set(want)):
            if k not in got or k not in want or abs(got[k] - want[k]) >= 1:
                print(f"   {k}: folded {got.get(k)}, model {want.get(k)}")


def check_pprof(ctx, env, label, path, m):
    out, _ = ctx.convert(path, "pprof", out=os.path.join(ctx.work, label + ".pb.gz"))
    if not out:
        return
    raw = test_pprof.pprof(ctx, env, "-raw", out)
    if raw is None:
        return
    types, samples, locs = tclib.pprof_raw(raw)
    ctx.eq(types[:1], ["wall"], f"{label}: pprof sample types")
    got = {}
    for wall, _cpu, ids, labels in samples:
        key = f"{labels.get('thread')}-{labels.get('tid')};" + ";".join(locs[i] for i in reversed(ids))
        got[key] = got.get(key, 0) + wall
    got = {k: v for k, v in got.items() if v}
    if not ctx.eq(got == m["folded_ns"], True, f"{label}: pprof (go tool pprof -raw) samples vs the model's self ns"):
        for k in sorted(set(got) | set(m["folded_ns"])):
            if got.get(k) != m["folded_ns"].get(k):
                print(f"   {k}: pprof {got.get(k)}, model {m['folded_ns'].get(k)}")


def check_perfetto(ctx, label, path, m, js):
    out, _ = ctx.convert(path, "perfetto", out=os.path.join(ctx.work, label + ".out.pftrace"))
    if not out:
        return
    packets = test_perfetto.decode(ctx, out)
    if packets is None:
        return
    d = test_perfetto.check_packets(ctx, label, packets, False)
    want = {t["tid"]: [(e[0], e[1]) for e in t["timeline"]] for t in m["threads"] if t["timeline"]}
    ctx.eq(dict(sorted(d.timeline.items())), dict(sorted(want.items())),
           f"{label}: perfetto slices (protoc) vs the model, per thread, begin and end ns")


def check_report(ctx, label, path, m):
    out, _ = ctx.convert(path, "report-csv", out=os.path.join(ctx.work, label + ".csv"))
    if not out:
        return
    got = {}
    with open(out, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            if row["thread"] != "all":
                got[(int(row["tid"]), row["method"])] = (int(row["calls"]), int(row["incl_wall_us"]),
                                                         int(row["excl_wall_us"]))
    want = {(tid, full.replace(": ", " ", 1)): (calls, incl, excl) for tid, full, calls, incl, excl in m["profile"]}
    ok = sorted(got) == sorted(want) and all(
        got[k][0] == want[k][0] and abs(got[k][1] - want[k][1] / 1000) < 1 and abs(got[k][2] - want[k][2] / 1000) < 1
        for k in got)
    if not ctx.check(ok, f"{label}: report CSV (calls, inclusive, exclusive) vs the model"):
        for k in sorted(set(got) | set(want), key=str):
            print(f"   {k}: report {got.get(k)}, model {want.get(k)}")


def check_input(ctx, env, label, path):
    m = model(ctx, path)
    if m is None:
        return None
    js = check_json(ctx, label, path, m)
    check_folded(ctx, label, path, m)
    check_pprof(ctx, env, label, path, m)
    if js:
        check_perfetto(ctx, label, path, m, js)
    check_report(ctx, label, path, m)
    return m


# ---- random dumps, written here from the spec ----

def sleb(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            out.append(b)
            return bytes(out)
        out.append(b | 0x80)


def random_dump(rnd, slow, summary):
    n_methods = rnd.randint(1, 12)
    ptrs = [0x70000000 + rnd.randrange(1 << 20) * 8 for _ in range(n_methods)]
    ptrs = sorted(set(ptrs))
    base = rnd.randrange(1, 1 << 45)
    chunks, threads = [], {}
    for tid in rnd.sample(range(1, 40000), rnd.randint(1, 4)):  # distinct: one timeline each
        threads[tid] = rnd.choice(["main", "worker", "pool-1-thread-2", "binder:1_3", "RenderThread"])
        t, depth, recs = base + rnd.randrange(10 ** 9), 0, []
        for _ in range(rnd.randint(1, 60)):
            t += rnd.randint(0, 5 * 10 ** 8)  # any ns, not whole µs
            if depth and rnd.random() < 0.5 or rnd.random() < 0.08:  # exits, some unmatched
                recs.append((t, True, None))
                depth = max(0, depth - 1)
            else:
                recs.append((t, False, rnd.choice(ptrs)))
                depth += 1
        while recs:
            k = rnd.randint(1, len(recs))
            part, recs = recs[:k], recs[k:]
            pay, pt, pm = bytearray(), 0, 0
            for ts, is_exit, ptr in part:
                enc = ts << 1 | is_exit
                pay += sleb(enc - pt)
                pt = enc
                if not is_exit:
                    pay += sleb(ptr - pm)
                    pm = ptr
            chunks.append(struct.pack("<BI", 2, tid) + len(part).to_bytes(3, "little") +
                          struct.pack("<I", len(pay)) + pay)
    chunks.sort(key=first_ts)  # threads' chunks interleaved by time; stable: a thread's own keep their order
    body = b"".join(chunks)
    for tid, name in threads.items():
        nb = name.encode()
        body += struct.pack("<BIH", 0, tid, len(nb)) + nb
    for i, p in enumerate(ptrs):
        if rnd.random() < 0.9:  # some methods never described: unknown.0x...
            line = (f"Lcom/r{i}/C{i};" if slow else f"com.r{i}.C{i}") + f"\tm{i}\t(I)V\tC{i}.java\n"
            lb = line.encode()
            body += struct.pack("<BQH", 1, p, len(lb)) + lb
    if not slow:
        return body
    start = base - rnd.choice([0, 10 ** 6, -(10 ** 12)])  # before the records, or (rarely) after
    head = b"SLOW" + struct.pack("<HQ", 0xF6, max(start, 1)) + b"\0" * 18
    if summary:
        head += struct.pack("<BQQ", 3, base, base + 10 ** 9)
    return head + body


def first_ts(chunk):
    v = shift = 0
    for b in chunk[12:]:
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            if b & 0x40:
                v -= 1 << shift
            break
    return v >> 1


def pb_field(num, data):
    def varint(v):
        out = bytearray()
        while True:
            b = v & 0x7F
            v >>= 7
            out.append(b | (0x80 if v else 0))
            if not v:
                return bytes(out)
    return varint(num << 3 | 2) + varint(len(data)) + data, varint


def pftrace_of(dumps, field, payload_field, name_field, pid, name):
    out = b""
    for d in dumps:
        inner = pb_field(payload_field, d)[0] + pb_field(name_field, name.encode())[0]
        _, varint = pb_field(1, b"")
        pkt = varint(79 << 3) + varint(pid) + pb_field(field, inner)[0]
        out += pb_field(1, pkt)[0]
    return out


def check_random(ctx, env):
    seed = int(os.environ.get("TC_LONGRUN_SEED") or random.SystemRandom().randrange(1 << 32))
    print(f"random dumps: seed {seed} (replay with TC_LONGRUN_SEED={seed})")
    rnd = random.Random(seed)
    for i in range(12):
        slow = i % 3 != 0
        data = random_dump(rnd, slow, i % 3 == 2)
        if i % 4 == 3 and slow:
            data = pftrace_of([data], rnd.choice([1001, 77, 4000]), 1, 2, rnd.randint(2, 30000), "com.random")
            ext = "pftrace"
        else:
            ext = "trace"
        path = os.path.join(ctx.work, f"random-{i}.{ext}")
        with open(path, "wb") as f:
            f.write(data)
        label = f"random-{i}"
        before = ctx.failures
        check_input(ctx, env, label, path)
        if ctx.failures != before:
            print(f"   ({label}: seed {seed}, file kept as {path})")


# ---- the forms agree; the pftrace input reaches every analysis; hostile inputs ----

def folded_of(ctx, path):
    """The folded lines, sorted: threads come in the order the input shows them first."""
    r = ctx.run(["-o", "folded", path, "-"])
    return sorted(r.stdout.splitlines()) if r.returncode == 0 else None


def check_forms(ctx, corpus):
    raw = folded_of(ctx, os.path.join(corpus, "startup.trace"))
    ctx.check(raw, "startup.trace converts")
    for f in ("startup.slow.trace", "startup.summary.trace", "startup.b64.txt", "startup.anr.txt",
              "startup.pftrace", "startup.far.pftrace"):
        ctx.eq(folded_of(ctx, os.path.join(corpus, f)), raw, f"{f}: folded stacks as the raw dump's")
    probe = ctx.run(["--probe", os.path.join(corpus, "startup.anr.txt")]).stdout.decode()
    ctx.check(any(ln.split()[:1] == ["art-longrun"] and int(ln.split()[1]) > 0 for ln in probe.splitlines()),
              f"an ANR report with the base64 dump is probed as art-longrun: {probe}")


def check_pftrace_everywhere(ctx, corpus):
    src = os.path.join(corpus, "startup.pftrace")
    for fmt, ext in (("flamegraph", "svg"), ("report", "txt"), ("report-html", "report.html"),
                     ("speedscope", "speedscope.json"), ("systrace", "html"), ("dot", "dot")):
        out = os.path.join(ctx.work, f"everywhere.{ext}")
        ctx.run(["-f", "-o", fmt, src, out], check_rc=0)
        ctx.check(os.path.exists(out) and os.path.getsize(out) > 0, f"pftrace input -> {fmt}")
    svg_path = os.path.join(ctx.work, "everywhere.svg")
    svg = open(svg_path, encoding="utf-8").read() if os.path.exists(svg_path) else ""
    ctx.check("com.example.shop.di.DaggerAppComponent.inject" in svg, "flame graph names the dump's methods")
    r = ctx.run(["diff", src, os.path.join(corpus, "startup.trace"), "-"], check_rc=0)
    ctx.check(b"DaggerAppComponent" in r.stdout, f"traceconv diff of a pftrace and a raw dump: {r.stdout[:300]!r}")


def check_own_pftrace(ctx):
    src = os.path.join(ctx.source, "corpus", "app-startup.trace")
    out = os.path.join(ctx.work, "own.pftrace")
    ctx.run(["-o", "perfetto", src, out], check_rc=0)
    probe = ctx.run(["--probe", out]).stdout.decode()
    ctx.check(all(ln.split()[1] == "0" for ln in probe.splitlines() if ln.split()),
              f"traceconv's own .pftrace is claimed by no reader: {probe}")
    r = ctx.run(["-f", "-o", "perfetto", src, out], check_rc=0)
    ctx.check(b"app-startup.trace -> " in r.stderr and b"1 input" not in r.stderr,
              f"converting again replaces the existing .pftrace: {r.stderr!r}")
    ctx.eq(len([f for f in os.listdir(ctx.work) if f.startswith("own.")]), 1, "no second output beside it")


def hostile(ctx, corpus):
    def blob(f):
        return open(os.path.join(corpus, f), "rb").read()
    raw, slow = blob("startup.trace"), blob("startup.slow.trace")
    chunk_size = struct.unpack_from("<I", raw, 8)[0]
    # a headerless dump is recognized by decoding its start (a damaged start is not a dump at
    # all); the SLOW form by its magic, so its damage past the header is said
    cases = {
        "truncated-chunk": raw[:12 + chunk_size // 2],
        "bad-type": raw[:12 + chunk_size] + b"\x07" + raw[12 + chunk_size + 1:],
        "size-past-end.trace": slow[:40] + struct.pack("<I", 0x7FFFFFF0) + slow[44:],
        "overlong-leb.trace": slow[:40] + struct.pack("<I", 12) + b"\x80" * 11 + b"\x00" + slow[44 + chunk_size:],
        "bad-base64.txt": blob("startup.b64.txt")[:40] + b"*" + blob("startup.b64.txt")[41:],
        "cut-base64.txt": blob("startup.b64.txt")[:200],
        "cut-packet.pftrace": blob("startup.pftrace")[:-30],
        "slow-bad-summary.trace": blob("startup.summary.trace")[:40],
    }
    for name, data in cases.items():
        path = os.path.join(ctx.work, "hostile-" + name)
        with open(path, "wb") as f:
            f.write(data)
        out = os.path.join(ctx.work, "hostile-" + name + ".json")
        r = ctx.run(["-o", "json", path, out])
        err = r.stderr.decode(errors="replace").strip()
        ctx.eq(r.returncode, 1, f"{name}: exit status ({err})")
        ctx.check(len(err.splitlines()) == 1 and "offset" in err, f"{name}: one line with the offset: {err!r}")
        ctx.check(not os.path.exists(out), f"{name}: no output")


def main():
    ctx = tclib.Ctx()
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    corpus = os.path.join(ctx.corpus, "art-longrun")
    files = sorted(f for f in os.listdir(corpus) if not f.endswith(CORPUS_SKIP))
    ctx.check(len(files) >= 6, f"corpus/art-longrun has its samples: {files}")
    facts = json.load(open(os.path.join(corpus, "facts.json"), encoding="utf-8"))
    for f in files:
        m = check_input(ctx, env, f, os.path.join(corpus, f))
        if m and f in facts:  # the committed facts are the decoder's on the committed bytes
            ctx.eq((m["records"], m["ignored_exits"], m["open_at_end"]),
                   (facts[f]["records"], facts[f]["ignored_exits"], facts[f]["open_at_end"]), f"{f}: facts.json")
    check_random(ctx, env)
    check_forms(ctx, corpus)
    check_pftrace_everywhere(ctx, corpus)
    check_own_pftrace(ctx)
    hostile(ctx, corpus)
    ctx.done()


if __name__ == "__main__":
    main()
