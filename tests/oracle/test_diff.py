#!/usr/bin/env python3
"""traceconv diff: the per-method change from BASE to NEW (text, csv, flamegraph).

1. A trace diffed with itself shows zero everywhere: every method on both sides,
   every change 0 (text, csv) and every tooltip "; 0.00%" in the flame graph, for
   every project corpus trace (art, rhea, systrace), tests/json and tests/ir input,
   and every trace of TC_EXTRA_CORPUS when it is set.
2. A generated pair (two scenarios written here, run through tracegen) whose only
   change is known: one method made slower by D µs per call (3 calls). The model is
   the scenario: that method ranks first with inclusive and exclusive change 3*D
   exactly; its callers' inclusive change is 3*D and their exclusive change 0; every
   other method unchanged; a method only in BASE is "gone" and one only in NEW "new"
   ("-" on the missing side, empty CSV cells); overloads with signatures on both
   sides are separate rows.
3. Different input formats: an ART trace against its own JSON and systrace
   conversions diffs to zero with every method matched (names by the key rule).
4. CSV (parsed with Python's csv module) carries the text's numbers, row for row.
5. The differential SVG: the multiset of (name, count, percentage; delta) and the
   geometry of its frames equal those of the SVG that flamegraph.pl (Debian's, as
   test_flamegraph.py uses) draws from the 3-column lines that difffolded.pl makes
   of our two folded outputs (`-o folded --no-thread`; difffolded.pl is not packaged,
   so its documented behaviour, FLAMEGRAPH-SVG.md §7, is modelled here: counts summed
   per stack, one line per stack of either file, missing counts 0); the red/blue/white
   fills too (deterministic there), with and without --negate; xmllint accepts it.
6. Hostile names stay text (one <script>, no markup), the table escapes control bytes.
7. Errors name the input that failed (BASE: / NEW:), output rules (never overwrite an
   input, -f), options (--weight cpu on a wall-only input, unused options).
"""
import collections
import csv
import io
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_flamegraph as tf  # noqa: E402  (SVG parsing, flamegraph.pl, the hostile input)


# ---- parsing the text table ------------------------------------------------------------------


def cell(s):
    """'-' -> None, '+12' -> 12, '0' -> 0; percentages stay text."""
    if s == "-":
        return None
    return int(s)


def parse_text(data):
    """{'methods': (both, new, gone), 'clocks': [...], 'rows': [dict]} from the text output."""
    lines = data.decode("utf-8").split("\n")
    out = {"rows": [], "clocks": []}
    head = None
    for i, line in enumerate(lines):
        if line.startswith("methods     "):
            w = line.split()
            out["methods"] = (int(w[1]), int(w[4].rstrip(",")), int(w[9]))
        if line.endswith("  method") and "BASE" in line:
            head = i
            break
    if head is None:
        return out
    groups = lines[head - 1]
    if "inclusive wall" in groups:
        out["clocks"].append("wall")
    if "inclusive thread CPU" in groups:
        out["clocks"].append("cpu")
    nblocks = 2 * len(out["clocks"])
    ncols = 3 + 4 * nblocks
    for line in lines[head + 1:]:
        if not line:
            continue
        parts = line.split(None, ncols)
        row = {"name": parts[ncols], "calls": tuple(cell(x) for x in parts[0:3])}
        k = 3
        for clock in out["clocks"]:
            for what in ("incl", "excl"):
                b, n, d = (cell(x) for x in parts[k:k + 3])
                row[f"{what}_{clock}"] = (b, n, d, parts[k + 3])
                k += 4
        out["rows"].append(row)
    return out


def diff(ctx, base, new, fmt="text", extra=(), out=None, rc=0):
    args = ["diff", "-q", "-o", fmt, *extra, base, new]
    if out:
        args += ["-f", out]
    r = ctx.run(args)
    ctx.eq(r.returncode, rc, f"diff -o {fmt} {' '.join(extra)} {os.path.basename(base)} {os.path.basename(new)} "
                             f"exit ({r.stderr.decode(errors='replace')[-300:]})")
    return r


def time_keys(t):
    return [f"{w}_{c}" for c in t["clocks"] for w in ("incl", "excl")]


# ---- 1. self-diff -------------------------------------------------------------------------------


def check_self_text(ctx, label, t, data=b""):
    ctx.check(t["rows"] or b"No method calls in either input." in data, f"{label}: no row in the self-diff")
    ctx.eq(t.get("methods", (None,))[1:], (0, 0), f"{label}: methods only on one side")
    for r in t["rows"]:
        ctx.check(r["calls"][0] is not None and r["calls"][0] == r["calls"][1] and r["calls"][2] == 0,
                  f"{label}: {r['name']}: calls {r['calls']}")
        for k in time_keys(t):
            b, n, d, pct = r[k]
            if not ctx.check(b is not None and b == n and d == 0 and pct == "0.0%",
                             f"{label}: {r['name']}: {k} {r[k]} is not an unchanged figure"):
                break


def check_self_csv(ctx, label, data, t):
    rows = list(csv.DictReader(io.StringIO(data.decode("utf-8"))))
    ctx.eq(len(rows), len(t["rows"]), f"{label}: CSV rows")
    for row in rows:
        ctx.eq(row["status"], "both", f"{label}: {row['method']}: status")
        for k, v in row.items():
            if k.endswith("_delta") and v != "":
                ctx.eq(v, "0", f"{label}: {row['method']}: {k}")


def difffolded(a, b):
    """difffolded.pl a b: counts summed per stack; a line per stack of either file, 0 when absent."""
    def read(path):
        out = collections.OrderedDict()
        with open(path, "rb") as f:
            for line in f:
                stack, _, count = line.rstrip(b"\n").rpartition(b" ")
                out[stack] = out.get(stack, 0) + int(count)
        return out
    x, y = read(a), read(b)
    keys = list(x) + [k for k in y if k not in x]
    return b"".join(b"%s %d %d\n" % (k, x.get(k, 0), y.get(k, 0)) for k in keys)


def flame_oracle(ctx, label, base, new, svg, negate=False, folded_extra=()):
    """Our differential SVG against flamegraph.pl on difffolded's lines of our folded outputs."""
    fa = os.path.join(ctx.work, "oracle-a.folded")
    fb = os.path.join(ctx.work, "oracle-b.folded")
    for src, dst in ((base, fa), (new, fb)):
        r = ctx.run(["-q", "-f", "-o", "folded", "--no-thread", *folded_extra, src, dst])
        if not ctx.eq(r.returncode, 0, f"{label}: folded of {src}: {r.stderr[-200:]!r}"):
            return
    lines = os.path.join(ctx.work, "oracle.diff")
    with open(lines, "wb") as f:
        f.write(difffolded(fa, fb))
    _, ours = tf.our_frames(ctx, label, svg)
    count = tf.count_name(ctx, new)  # two count profiles: their event's counts ("cycles:HG")
    r = ctx.oracle(["perl", tf.FLAMEGRAPH, "--countname=" + (count or "us"), *(["--negate"] if negate else []), lines])
    if ours is None or r is None:
        return
    if r.returncode == 2 and b"No stack counts" in r.stderr:
        ctx.eq(ours, [], f"{label}: frames of a graph without counts")
        return
    theirs = tf.debian_frames(r.stdout)
    tf.compare(ctx, label, ours, theirs)
    fills = collections.Counter((tf.as_debian(f["name"]), f["x"], f["fill"]) for f in ours)
    deb = collections.Counter((tf.as_debian(d["name"]), d["x"], d["fill"]) for d in tf.debian_fill_frames(r.stdout))
    ctx.eq(fills, deb, f"{label}: red/blue/white fills")
    return ours


def check_self(ctx, label, src, n):
    r = ctx.run(["diff", "-q", src, src])
    if r.returncode != 0:  # an input no conversion reads: the diff must say why, naming BASE
        folded = ctx.run(["-q", "-f", "-o", "folded", src, os.path.join(ctx.work, "broken.folded")])
        ctx.check(folded.returncode != 0, f"{label}: diff fails ({r.stderr[-200:]!r}) but folded converts")
        ctx.check(r.stderr.startswith(b"traceconv: BASE: "), f"{label}: the error names BASE: {r.stderr[-200:]!r}")
        return False
    t = parse_text(r.stdout)
    check_self_text(ctx, label, t, r.stdout)
    rc = ctx.run(["diff", "-q", "-o", "csv", src, src])
    if ctx.eq(rc.returncode, 0, f"{label}: csv exit"):
        check_self_csv(ctx, label, rc.stdout, t)
    svg = os.path.join(ctx.work, f"self-{n:03d}.svg")
    rs = diff(ctx, src, src, "flamegraph", out=svg)
    if rs.returncode == 0:
        frames = flame_oracle(ctx, f"{label} (svg)", src, src, svg)
        for f in frames or []:
            if not f["pct"].endswith("; 0.00") and f["name"] != "all":
                ctx.fail(f"{label}: frame {f['name']} has a change in a self-diff: {f['pct']}")
                break
    return True


# ---- 2. a generated pair with a known change -------------------------------------------------

SCENARIO = """version 3
clock dual
vm art
pid 100
method main  com.ex.App main "()V" App.java
method work  com.ex.App work "()V" App.java
method slow  com.ex.Db query "(I)V" Db.java
method leaf  com.ex.Util leaf "()V" Util.java
method onlyb com.ex.Old legacy "()V" Old.java
method onlyn com.ex.New fresh "()V" New.java
method ovl1  com.ex.Ov run "(I)V" Ov.java
method ovl2  com.ex.Ov run "(J)V" Ov.java
method rec   com.ex.Tree walk "()V" Tree.java
thread 100 main {
  call main {
    repeat 3 {
      call work {
        call slow %(slow)d
        call leaf 40
        gap 10
      }
    }
    call ovl1 30
    call ovl2 50
    call %(only)s 25
    nest 3 rec self=10
    gap 5
  }
}
"""
SLOW, DELTA = 200, 1234  # µs per call of com.ex.Db.query in BASE, and what NEW adds to each of its 3 calls


def generate(ctx, name, slow, only):
    scn = os.path.join(ctx.work, name + ".scn")
    out = os.path.join(ctx.work, name + ".trace")
    with open(scn, "w", encoding="utf-8") as f:
        f.write(SCENARIO % {"slow": slow, "only": only})
    r = subprocess.run([ctx.tracegen, scn, out], capture_output=True)
    ctx.eq(r.returncode, 0, f"tracegen {name}: {r.stderr.decode(errors='replace')}")
    return out


def check_known_change(ctx, base, new):
    r = diff(ctx, base, new)
    t = parse_text(r.stdout)
    rows = {x["name"]: x for x in t["rows"]}
    change = 3 * DELTA
    ctx.eq(t.get("methods"), (7, 1, 1), "pair: methods in both, new, gone")
    ctx.check(t["rows"] and t["rows"][0]["name"] == "com.ex.Db.query",
              f"pair: the slowed method ranks first: {[x['name'] for x in t['rows'][:3]]}")
    q = rows.get("com.ex.Db.query")
    if ctx.check(q is not None, "pair: com.ex.Db.query has a row"):
        ctx.eq(q["incl_wall"], (3 * SLOW, 3 * (SLOW + DELTA), change, "%+.1f%%" % (100.0 * change / (3 * SLOW))),
               "pair: com.ex.Db.query inclusive wall")
        ctx.eq(q["excl_wall"][2], change, "pair: com.ex.Db.query exclusive change")
        ctx.eq(q["calls"], (3, 3, 0), "pair: com.ex.Db.query calls")
    for caller in ("com.ex.App.work", "com.ex.App.main"):
        c = rows.get(caller)
        if ctx.check(c is not None, f"pair: {caller} has a row"):
            ctx.eq(c["incl_wall"][2], change, f"pair: {caller}: inclusive change (its callee's)")
            ctx.eq(c["excl_wall"][2], 0, f"pair: {caller}: exclusive change")
    ctx.eq(sorted(x["name"] for x in t["rows"][1:3]), ["com.ex.App.main", "com.ex.App.work"],
           "pair: the callers come next")
    for name in ("com.ex.Util.leaf", "com.ex.Tree.walk", "com.ex.Ov.run: (I)V", "com.ex.Ov.run: (J)V"):
        c = rows.get(name)
        if ctx.check(c is not None, f"pair: {name} has a row (overloads apart)"):
            ctx.eq((c["incl_wall"][2], c["excl_wall"][2], c["calls"][2]), (0, 0, 0), f"pair: {name} unchanged")
    ctx.eq(rows.get("com.ex.Tree.walk", {}).get("calls"), (3, 3, 0), "pair: recursion: 3 calls, normal + recursive")
    ctx.eq(rows.get("com.ex.Tree.walk", {}).get("incl_wall", (None,))[0], 30, "pair: recursion counted once")
    gone, new_ = rows.get("com.ex.Old.legacy"), rows.get("com.ex.New.fresh")
    if ctx.check(gone and new_, "pair: the one-sided methods have rows"):
        ctx.eq(gone["incl_wall"], (25, None, -25, "gone"), "pair: gone method")
        ctx.eq(gone["calls"], (1, None, -1), "pair: gone method's calls")
        ctx.eq(new_["incl_wall"], (None, 25, 25, "new"), "pair: new method")
    check_csv_matches(ctx, "pair", base, new, t)
    # --sort excl puts the callers (no exclusive change) after every changed method
    t2 = parse_text(diff(ctx, base, new, extra=("--sort", "excl")).stdout)
    ctx.eq([x["name"] for x in t2["rows"][:3]], ["com.ex.Db.query", "com.ex.New.fresh", "com.ex.Old.legacy"],
           "pair: --sort excl order")
    t3 = parse_text(diff(ctx, base, new, extra=("--sort", "name")).stdout)
    ctx.eq([x["name"] for x in t3["rows"]], sorted(x["name"] for x in t3["rows"]), "pair: --sort name")
    # the reverse direction: everything negated, new and gone swapped
    back = {x["name"]: x for x in parse_text(diff(ctx, new, base).stdout)["rows"]}
    ctx.eq(back.get("com.ex.Db.query", {}).get("incl_wall", (0, 0, 0))[2], -change, "pair reversed: the change")
    ctx.eq(back.get("com.ex.Old.legacy", {}).get("incl_wall", (0, 0, 0, 0))[3], "new", "pair reversed: new")
    for negate in (False, True):
        svg = os.path.join(ctx.work, f"pair{int(negate)}.svg")
        if diff(ctx, base, new, "flamegraph", ("--negate",) if negate else (), out=svg).returncode == 0:
            frames = flame_oracle(ctx, f"pair svg negate={negate}", base, new, svg, negate=negate)
            q = [f for f in frames or [] if f["name"] == "com.ex.Db.query"]
            ctx.check(q and all(f["fill"].startswith("rgb(0,0,255)" if negate else "rgb(255,0,0)") for f in q),
                      f"pair svg negate={negate}: the slowed frame is pure {'blue' if negate else 'red'}: "
                      f"{[f['fill'] for f in q]}")
    # the weight cpu flame graph against folded --weight cpu
    svg = os.path.join(ctx.work, "pair-cpu.svg")
    if diff(ctx, base, new, "flamegraph", ("--weight", "cpu"), out=svg).returncode == 0:
        flame_oracle(ctx, "pair svg weight cpu", base, new, svg, folded_extra=("--weight", "cpu"))


def check_csv_matches(ctx, label, base, new, t):
    r = diff(ctx, base, new, "csv")
    text = r.stdout.decode("utf-8")
    ctx.eq(text.split("\n", 1)[0],
           "method,status,calls_base,calls_new,calls_delta,incl_wall_us_base,incl_wall_us_new,incl_wall_us_delta,"
           "excl_wall_us_base,excl_wall_us_new,excl_wall_us_delta,incl_cpu_us_base,incl_cpu_us_new,incl_cpu_us_delta,"
           "excl_cpu_us_base,excl_cpu_us_new,excl_cpu_us_delta", f"{label}: CSV header")
    rows = list(csv.DictReader(io.StringIO(text)))
    ctx.eq([x["method"] for x in rows], [x["name"] for x in t["rows"]], f"{label}: CSV rows in the text's order")

    def num(v):
        return None if v == "" else int(v)
    for c, r_ in zip(rows, t["rows"]):
        ctx.eq((num(c["calls_base"]), num(c["calls_new"]), num(c["calls_delta"])), r_["calls"],
               f"{label}: {c['method']} calls")
        for k in time_keys(t):
            what, clock = k.split("_")
            got = tuple(num(c[f"{what}_{clock}_us_{s}"]) for s in ("base", "new", "delta"))
            ctx.eq(got, r_[k][:3], f"{label}: {c['method']} {k}")
        status = "new" if r_["calls"][0] is None else "gone" if r_["calls"][1] is None else "both"
        ctx.eq(c["status"], status, f"{label}: {c['method']} status")


# ---- 3. different input formats -----------------------------------------------------------------


def check_cross_format(ctx, src):
    name = os.path.basename(src)
    for fmt, ext in (("json", "json"), ("systrace", "html")):
        conv = os.path.join(ctx.work, f"{name}.{ext}")
        r = ctx.run(["-q", "-f", "-o", fmt, src, conv])
        if not ctx.eq(r.returncode, 0, f"{name} -> {fmt}"):
            continue
        t = parse_text(diff(ctx, src, conv).stdout)
        label = f"{name} vs its {fmt} conversion"
        ctx.eq(t.get("methods", (0, None, None))[1:], (0, 0), f"{label}: every method matched")
        for row in t["rows"]:
            for k in ("incl_wall", "excl_wall"):
                if k in row and not ctx.check(row[k][2] == 0 and row["calls"][2] == 0,
                                              f"{label}: {row['name']}: {k} {row[k]}, calls {row['calls']}"):
                    break


# ---- 6. hostile names ---------------------------------------------------------------------------


def check_hostile(ctx):
    src = os.path.join(ctx.work, "hostile.systrace")
    tf.hostile_trace(src)
    r = diff(ctx, src, src)
    ctx.check(all(b >= 0x20 or b == 0x0a for b in r.stdout), "hostile: control bytes in the table")
    t = parse_text(r.stdout)
    names = {x["name"] for x in t["rows"]}
    for want in ("</script><script>window.pwned=1</script>", "ctl\\x01\\x02\\x1F\\x7Fend", "]]><x>"):
        ctx.check(want in names, f"hostile: {want!r} is not a row name ({sorted(n[:20] for n in names)[:8]})")
    check_self_text(ctx, "hostile", t)
    rc = diff(ctx, src, src, "csv")
    check_self_csv(ctx, "hostile", rc.stdout, t)
    svg = os.path.join(ctx.work, "hostile.svg")
    if diff(ctx, src, src, "flamegraph", ("--minwidth", "0"), out=svg).returncode == 0:
        root, frames = tf.our_frames(ctx, "hostile svg", svg)
        with open(svg, "rb") as f:
            data = f.read()
        ctx.eq(data.count(b"<script"), 1, "hostile svg: '<script' occurs once")
        for markup in (b"<img", b"<x>", b"</script><script>"):
            ctx.check(markup not in data, f"hostile svg: {markup!r} occurs unescaped")


# ---- 7. errors and output rules ----------------------------------------------------------------


def check_two_builds(ctx):
    """Two release builds of one app: the same scenario obfuscated with two map seeds (two
    mappings). Each input deobfuscated by its own mapping diffs to zero with every method
    on both sides; one mapping for both leaves the other build's names unmatched."""
    scn = os.path.join(ctx.source, "corpus", "app-startup.scn")
    builds = []
    for k, seed in ((0, "1"), (1, "7")):
        trace, mapping = os.path.join(ctx.work, f"build{k}.trace"), os.path.join(ctx.work, f"build{k}.map.txt")
        r = subprocess.run([ctx.tracegen, scn, trace, "--obfuscate", mapping, "--map-seed", seed], capture_output=True)
        if not ctx.eq(r.returncode, 0, f"tracegen --obfuscate build{k}: {r.stderr.decode(errors='replace')}"):
            return
        builds.append((trace, mapping))
    (t0, m0), (t1, m1) = builds
    r = diff(ctx, t0, t1, extra=("--base-deobfuscate", m0, "--new-deobfuscate", m1))
    t = parse_text(r.stdout)
    check_self_text(ctx, "two builds, each with its mapping", t, r.stdout)
    ctx.check(not any(re.search(r"\b[a-z]{1,2}\.[a-z]{1,2}\(", row["name"]) for row in t["rows"]),
              "two builds: no obfuscated name left")
    t = parse_text(diff(ctx, t0, t1, extra=("--deobfuscate", m0)).stdout)
    ctx.check(t.get("methods", (0, 0, 0))[1] > 0, f"two builds, BASE's mapping for both: NEW's names unmatched {t.get('methods')}")
    r = ctx.run(["-o", "json", "--base-deobfuscate", m0, t0])
    ctx.eq(r.returncode, 2, "--base-deobfuscate outside diff: a usage error")


def check_errors(ctx, base, new):
    w = ctx.work
    r = diff(ctx, base, os.path.join(w, "missing.trace"), rc=1)
    ctx.check(r.stderr.startswith(b"traceconv: NEW: ") and b"missing.trace" in r.stderr and r.stderr.count(b"\n") == 1,
              f"a missing NEW: one line naming NEW: {r.stderr!r}")
    bad = os.path.join(w, "bad.trace")
    with open(base, "rb") as f:
        head = f.read(40)
    with open(bad, "wb") as f:
        f.write(head)
    r = diff(ctx, bad, new, rc=1)
    ctx.check(r.stderr.startswith(b"traceconv: BASE: ") and b"bad.trace" in r.stderr,
              f"a damaged BASE: the error names BASE: {r.stderr!r}")
    r = diff(ctx, base, new, out=new, rc=2)
    ctx.check(b"overwrite the input" in r.stderr, f"OUTPUT = NEW is refused: {r.stderr!r}")
    out = os.path.join(w, "table.txt")
    diff(ctx, base, new, out=out)
    with open(out, "rb") as f:
        ctx.check(f.read().startswith(b"# traceconv "), "diff OUTPUT written")
    r = ctx.run(["diff", "-q", base, new, out])
    ctx.eq(r.returncode, 0, f"its own earlier OUTPUT without -f: made again (issue 36, item 7): {r.stderr!r}")
    with open(out, "ab") as f:  # changed since: not its own output as written
        f.write(b"my note\n")
    r = ctx.run(["diff", "-q", base, new, out])
    ctx.eq(r.returncode, 2, f"a changed OUTPUT without -f: {r.stderr!r}")
    diff(ctx, base, new, out=out)  # -f replaces it
    wall = os.path.join(ctx.corpus, "v2-wall.trace")
    r = diff(ctx, wall, wall, extra=("--weight", "cpu"), rc=1)
    ctx.check(b"BASE: " in r.stderr and b"no thread-CPU clock" in r.stderr, f"--weight cpu on wall only: {r.stderr!r}")
    r = ctx.run(["diff", base, new, "--text"])
    ctx.check(r.returncode == 0 and b"option --text is not used by the diff" in r.stderr,
              f"--text is an unused option: {r.stderr!r}")
    r = ctx.run(["diff", "--strict", base, new, "--text"])
    ctx.eq(r.returncode, 1, f"--strict with an unused option: {r.stderr!r}")
    r = ctx.run(["diff", "-o", "json", base, new])
    ctx.eq(r.returncode, 2, "diff -o json: a usage error")
    r = ctx.run(["diff", base])
    ctx.eq(r.returncode, 2, "diff with one input: a usage error")
    r = ctx.run(["-o", "json", "--negate", base, os.path.join(w, "neg.json")])
    ctx.check(b"negate" in r.stderr and b"not used" in r.stderr, f"--negate outside diff warns: {r.stderr!r}")
    # the flame graph's default OUTPUT: beside NEW, NEW's stem + .diff.svg
    stem = os.path.splitext(new)[0]
    if os.path.exists(stem + ".diff.svg"):
        os.unlink(stem + ".diff.svg")
    r = ctx.run(["diff", "-q", "-o", "flamegraph", base, new])
    ctx.check(r.returncode == 0 and os.path.exists(stem + ".diff.svg"), f"default flame graph output: {r.stderr!r}")


def main():
    ctx = tclib.Ctx()
    if not ctx.check(os.path.exists(tf.FLAMEGRAPH), f"oracle {tf.FLAMEGRAPH} is missing (make test installs it)"):
        ctx.done()
    inputs, shared = tf.corpus_inputs(ctx, "diffed")
    compared = 0
    for n, src in enumerate(inputs + shared):
        compared += check_self(ctx, os.path.relpath(src, os.path.dirname(ctx.source)), src, n)
    ctx.check(compared >= len(inputs) - 2, f"self-diffed {compared} inputs of {len(inputs) + len(shared)}")
    print(f"{compared} inputs diffed with themselves")
    base = generate(ctx, "pair-base", SLOW, "onlyb")
    new = generate(ctx, "pair-new", SLOW + DELTA, "onlyn")
    check_known_change(ctx, base, new)
    for name in ("app-startup.trace", "recursion-mutual.trace", "v3-dual.trace"):
        check_cross_format(ctx, os.path.join(ctx.corpus, name))
    check_cross_format(ctx, base)
    # two different traces: many methods on one side only
    a, b = os.path.join(ctx.corpus, "app-startup.trace"), os.path.join(ctx.corpus, "v3-dual.trace")
    t = parse_text(diff(ctx, a, b).stdout)
    ctx.check(t.get("methods", (0, 0, 0))[2] > 0, "app-startup vs v3-dual: methods gone")
    check_csv_matches(ctx, "app-startup vs v3-dual", a, b, t)
    svg = os.path.join(ctx.work, "two.svg")
    if diff(ctx, a, b, "flamegraph", out=svg).returncode == 0:
        flame_oracle(ctx, "app-startup vs v3-dual svg", a, b, svg)
    check_hostile(ctx)
    check_two_builds(ctx)
    check_errors(ctx, base, new)
    ctx.done()


if __name__ == "__main__":
    main()
