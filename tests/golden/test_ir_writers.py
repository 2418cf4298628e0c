"""A hand-made system trace (tests/ir/system.ir.txt, read with -i ir) through
every writer: two processes, named slices, bare ends (one with nothing open),
an instant, two counter values, an async slice, a frame open at the end.
Every expectation below is worked out by hand from that file:
  main-100:   doFrame [1000, 9000] > measure [2000, 5000], layout [5000, 8000]
  worker-101: measure [10000, end] with end = the last time, 12000
  binder-200: binder transaction [3000, 6000] (pid 200); its second E ends nothing
so per-thread top-level ns: 100 -> 8000, 101 -> 2000, 200 -> 3000."""
import gzip
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

IR = os.path.join(os.path.dirname(__file__), "..", "ir", "system.ir.txt")


def check_json(ctx):
    out, figs = ctx.convert(IR, "json", os.path.join(ctx.work, "system.json"))
    if not out:
        return
    r = ctx.oracle(["python3", ctx.checker("check_chrome_json.py"), out])
    ctx.check(r is not None and r.returncode == 0, f"check_chrome_json: {r and r.stdout.decode()[-800:]}")
    doc = json.load(open(out))
    ev = doc["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    ctx.eq(procs, {100: "app", 200: "system_server"}, "process_name per process")
    pid_of = {e["tid"]: e["pid"] for e in ev if e.get("ph") == "B"}
    ctx.eq(pid_of, {100: 100, 101: 100, 200: 200}, "each thread under its process")
    ctx.eq(tclib.json_thread_totals(out), {(100, 100): (3, 8000), (100, 101): (1, 2000), (200, 200): (1, 3000)},
           "slices and top-level ns per thread")
    by_ph = {}
    for e in ev:
        by_ph[e["ph"]] = by_ph.get(e["ph"], 0) + 1
    ctx.eq((by_ph.get("i"), by_ph.get("C"), by_ph.get("b"), by_ph.get("e")), (1, 2, 1, 1), "i, C, b, e events")
    counters = [e["args"]["value"] for e in ev if e["ph"] == "C"]
    ctx.eq(counters, [1024, 4096.5], "counter values")
    async_ids = {e["ph"]: e.get("id2") for e in ev if e["ph"] in "be"}
    ctx.eq(async_ids, {"b": {"local": "0x7"}, "e": {"local": "0x7"}},
           "async begin and end share the cookie, scoped to the process (id2.local)")
    ctx.eq((figs.get("ignored-exit"), figs.get("open-at-end")), (1, 1), "an end without begin, a frame open at end")


def check_folded(ctx):
    out, _ = ctx.convert(IR, "folded", os.path.join(ctx.work, "system.folded"))
    if not out:
        return
    want = {"main-100;Choreographer#doFrame": 2, "main-100;Choreographer#doFrame;measure": 3,
            "main-100;Choreographer#doFrame;layout": 3, "worker-101;measure": 2,
            "binder:200_1-200;binder transaction": 3}
    ctx.eq(tclib.read_folded(out), want, "folded stacks (µs)")
    r = ctx.oracle(["perl", "/usr/share/perl5/Devel/NYTProf/flamegraph.pl", "--countname=us", out])
    ctx.check(r is not None and r.returncode == 0 and b"Ignored" not in r.stderr, "flamegraph.pl reads it")


def check_pprof(ctx):
    out, _ = ctx.convert(IR, "pprof", os.path.join(ctx.work, "system.pb.gz"))
    if not out:
        return
    home = os.path.join(ctx.work, "home")
    os.makedirs(home, exist_ok=True)
    r = ctx.oracle(["go", "tool", "pprof", "-raw", out], env=dict(os.environ, HOME=home))
    ctx.check(r is not None and r.returncode == 0, f"go tool pprof -raw: {r and r.stderr.decode()[-500:]}")
    types, samples, _ = tclib.pprof_raw(r.stdout.decode() if r else "")
    ctx.eq(types, ["wall"], "wall only: the input has no CPU clock")
    ctx.eq(sum(s[0] for s in samples), 13000, "pprof wall total (ns)")
    with gzip.open(out) as f:
        f.read()


def check_perfetto(ctx):
    out, figs = ctx.convert(IR, "perfetto", os.path.join(ctx.work, "system.pftrace"))
    if not out:
        return
    with open(out, "rb") as f:
        r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                        "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], stdin=f)
    ctx.check(r is not None and r.returncode == 0, "protoc decodes the Perfetto output")
    text = r.stdout.decode() if r else ""
    ctx.check("pid: 200" in text and "process_name: \"system_server\"" in text, "second process described")
    ctx.eq(figs.get("writer-dropped-frames", 0), 0, "instant, counters and async are all written")
    ctx.check("TYPE_COUNTER" in text and "double_counter_value: 4096.5" in text, "counter values written")
    ctx.check("TYPE_INSTANT" in text and "name: \"load image\"" in text, "instant and async track written")


def check_roundtrip(ctx):
    a = ctx.run(["-i", "ir", "-o", "ir", IR, "-"], check_rc=0).stdout
    path = os.path.join(ctx.work, "again.ir.txt")
    with open(path, "wb") as f:
        f.write(a)
    b = ctx.run(["-o", "ir", path, "-"], check_rc=0).stdout

    def events(text):  # synthetic closes become plain events the second time
        return [l.rstrip(" SF") for l in text.decode().splitlines() if l[:2] in ("B ", "E ", "I ", "C ", "S ", "F ")]
    ctx.eq(events(b), events(a), "ir -> ir -> ir keeps every event")


def check_samples(ctx):
    """tests/ir/samples.ir.txt: main>work sampled twice (5 µs each), main>io once (3 µs),
    main alone once (1 µs): self time work 10, io 3, main 1; 14 µs in all."""
    ir = os.path.join(os.path.dirname(__file__), "..", "ir", "samples.ir.txt")
    out, figs = ctx.convert(ir, "folded", os.path.join(ctx.work, "samples.folded"))
    if out:
        ctx.eq(tclib.read_folded(out), {"main-5;main": 1, "main-5;main;work": 10, "main-5;main;io": 3},
               "sampled stacks in folded")
        ctx.eq(figs.get("samples"), 4, "samples counted")
    out, _ = ctx.convert(ir, "pprof", os.path.join(ctx.work, "samples.pb.gz"))
    if out:
        home = os.path.join(ctx.work, "home")
        os.makedirs(home, exist_ok=True)
        r = ctx.oracle(["go", "tool", "pprof", "-raw", out], env=dict(os.environ, HOME=home))
        _, samples, _ = tclib.pprof_raw(r.stdout.decode() if r else "")
        ctx.eq(sorted(s[0] for s in samples), [1000, 3000, 10000], "sampled self time per stack in pprof (ns)")
    out, figs = ctx.convert(ir, "json", os.path.join(ctx.work, "samples.json"))
    ctx.eq(figs.get("writer-dropped-frames"), 4, "json says the samples are not on its timeline")


def main():
    ctx = tclib.Ctx()
    check_samples(ctx)
    check_json(ctx)
    check_folded(ctx)
    check_pprof(ctx)
    check_perfetto(ctx)
    check_roundtrip(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
