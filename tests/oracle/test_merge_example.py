#!/usr/bin/env python3
"""`traceconv merge`'s first day (issue 36, item 8): doc/merge.md's example on corpus/merge/.

- corpus/merge/ is what its generator writes (gen.py with this build's tracegen: the same
  bytes), so the example's files and their facts are the model's;
- `traceconv merge app.trace app.atrace.txt`, without -o, writes app.merged.pftrace (merge's
  default is Perfetto); protoc with the upstream schema reads it, and every slice of both
  inputs is where facts.json says (thread, begin, end, the slice that holds it); the same with
  -o json (Python's json);
- a pair that shares no process (the app's method trace and another run's capture) is an
  error: exit 1, one line that says why and names --offset, and no output; with --offset it is
  merged (each method-trace thread on a track of its own);
- doc/merge.md shows the example with these files.
The model's expectations never come from traceconv."""
import filecmp
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_merge  # noqa: E402  (its perfetto and json slice readers)

ctx = tclib.Ctx()
MERGE = os.path.join(ctx.corpus, "merge")
FACTS = json.load(open(os.path.join(MERGE, "facts.json")))


def s(b):
    return b.decode(errors="replace")


def check_generated():
    if not ctx.check(bool(ctx.tracegen), "tracegen is built"):
        return
    out = os.path.join(ctx.work, "regen")
    r = subprocess.run([sys.executable, os.path.join(MERGE, "gen.py"), ctx.tracegen, out], capture_output=True)
    ctx.eq(r.returncode, 0, f"gen.py: {s(r.stderr)}")
    for name in ("app.scn", "app.trace", "app.facts.json", "app.atrace.txt", "facts.json"):
        ctx.check(filecmp.cmp(os.path.join(out, name), os.path.join(MERGE, name), shallow=False),
                  f"corpus/merge/{name} is what gen.py writes")


def expect(what, slices, to_unit):
    want = {(f["tid"], f["name"]): (to_unit(f["begin_ns"]), to_unit(f["end_ns"]), f["parent"]) for f in FACTS["slices"]}
    got = {(sl[0], sl[1]): (sl[2], sl[3], sl[5]) for sl in slices or []}
    ctx.eq(len(slices or []), len(want), f"{what}: the slices of both inputs")
    for key, value in sorted(want.items()):
        ctx.eq(got.get(key), value, f"{what}: {key[1]} on thread {key[0]} (begin, end, parent)")


def check_example():
    d = os.path.join(ctx.work, "example")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for name in ("app.trace", "app.atrace.txt"):
        shutil.copyfile(os.path.join(MERGE, name), os.path.join(d, name))
    r = subprocess.run([ctx.traceconv, "merge", "app.trace", "app.atrace.txt"], cwd=d, capture_output=True)
    ctx.eq(r.returncode, 0, f"merge without -o: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(d)), ["app.atrace.txt", "app.merged.pftrace", "app.trace"], "merge: Perfetto by default")
    pf = os.path.join(d, "app.merged.pftrace")
    if os.path.exists(pf):
        expect("perfetto", test_merge.perfetto_slices(ctx, pf), lambda ns: ns)
    js = os.path.join(d, "app.merged.json")
    r = subprocess.run([ctx.traceconv, "merge", "-o", "json", "app.trace", "app.atrace.txt"], cwd=d, capture_output=True)
    ctx.eq(r.returncode, 0, f"merge -o json: exit status ({s(r.stderr).strip()})")
    if os.path.exists(js):
        expect("json", test_merge.json_slices(js), lambda ns: (ns - FACTS["start_ns"]) // 1000)


def check_no_shared_process():
    other = os.path.join(ctx.corpus, "systrace", "capture.txt")  # another app's run
    out = os.path.join(ctx.work, "stranger.pftrace")
    r = ctx.run(["merge", "-o", "perfetto", os.path.join(MERGE, "app.trace"), other, out])
    err = s(r.stderr).strip()
    ctx.eq(r.returncode, 1, f"a pair that shares no process: exit 1 ({err})")
    ctx.check(len(err.splitlines()) == 1 and "share no process" in err and "--offset" in err,
              f"one line that says why and names --offset: {err!r}")
    ctx.check(not os.path.exists(out), "a pair that shares no process: no output")
    # the capture is at 20417 s of its clock, the method trace at 8 s of its own: an offset of
    # 20409 s puts them side by side
    r = ctx.run(["merge", "--offset", "20409s", os.path.join(MERGE, "app.trace"), other, out])
    ctx.eq(r.returncode, 0, f"the same pair with --offset: merged ({s(r.stderr).strip()})")
    ctx.check("merge-unmatched-thread" in s(r.stderr), f"...its threads on tracks of their own: {s(r.stderr)!r}")
    os.remove(out)
    # --offset 0 leaves them 20409 s apart: nothing would nest, refused unless -f
    r = ctx.run(["merge", "--offset", "0", os.path.join(MERGE, "app.trace"), other, out])
    err = s(r.stderr).strip()
    ctx.eq(r.returncode, 1, f"the pair 20409 s apart: exit 1 ({err})")
    ctx.check(len(err.splitlines()) == 1 and "do not overlap" in err and "(8s to 8.182s" in err
              and "(20417s to 20417.69808s)" in err and "--force" in err, f"one line with both spans: {err!r}")
    ctx.check(not os.path.exists(out), "the pair 20409 s apart: no output")
    r = ctx.run(["merge", "-f", "--offset", "0", os.path.join(MERGE, "app.trace"), other, out])
    ctx.eq(r.returncode, 0, f"the pair 20409 s apart with -f: merged ({s(r.stderr).strip()})")
    ctx.check("merge-disjoint" in s(r.stderr), f"...with the warning: {s(r.stderr)!r}")


def check_readme():
    page = open(os.path.join(ctx.source, "doc", "merge.md"), encoding="utf-8").read()
    ctx.check("traceconv merge corpus/merge/app.trace corpus/merge/app.atrace.txt" in page,
              "doc/merge.md's example uses corpus/merge")


check_generated()
check_example()
check_no_shared_process()
check_readme()
sys.exit(ctx.done())
