#!/usr/bin/env python3
"""`traceconv batch --shard I/N` run by a real scheduler, and `--merge-summaries`.

Three shards under GNU parallel (installed by scripts/setup.sh test; its absence fails this
test) over a mixed input: a tar.gz (spooled members) holding traces, a non-trace, a corrupt
trace, a tar and a zip inside it, and a directory holding an uncompressed tar with an archive
inside (members in place), and an INPUT that does not exist (listed by every shard). The
union of the shards' outputs (bytes) must be one unsharded run's, and their summaries merged
by --merge-summaries must be its summary, byte for byte but totals.seconds (a timing, the
only field excluded). Then hostile and mismatched summaries (one line, exit 1, nothing
written), and a merge of 120,000 members (17 MB) against a model of the merge written
here (sorted by index, index dropped, totals summed) in bounded memory."""
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from tclib import Ctx, is_sanitized  # noqa: E402

ctx = Ctx()
W = ctx.work
FORMATS = "json,folded"


def read(path):
    with open(path, "rb") as f:
        return f.read()


def tar_bytes(members, mode="w"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 1700000000
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def zip_bytes(members):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0)), data)
    return buf.getvalue()


def make_inputs():
    """The mixed input: (list of INPUT operands)."""
    traces = [(n, read(os.path.join(ctx.corpus, n))) for n in sorted(os.listdir(ctx.corpus))
              if n.endswith(".trace")][:6]
    jsons = [(n, read(os.path.join(ctx.source, "tests", "json", n)))
             for n in sorted(os.listdir(os.path.join(ctx.source, "tests", "json")))[:4]]
    inner = traces[:3] + jsons[:2]
    outer = ([("app/" + n, d) for n, d in traces] + [("app/js/" + n, d) for n, d in jsons] +
             [("app/notes.txt", b"not a trace\n"), ("app/bad.trace", b"SLOW\x03\x00\x10\x00" + b"x" * 64),
              ("app/again/" + traces[0][0], traces[0][1]),  # the same stem elsewhere
              ("app/inner.tar", tar_bytes([("in/" + n, d) for n, d in inner])),
              ("app/inner.zip", zip_bytes([("z/" + n, d) for n, d in inner]))])
    arc = os.path.join(W, "fleet.tar.gz")
    with open(arc, "wb") as f:
        f.write(tar_bytes(outer, "w:gz"))
    tree = os.path.join(W, "tree")
    os.makedirs(os.path.join(tree, "day1"))
    with open(os.path.join(tree, "day1", "plain.tar"), "wb") as f:  # uncompressed: members in place
        f.write(tar_bytes([("p/" + n, d) for n, d in traces[2:5]] +
                          [("p/nested.tar.gz", tar_bytes([("q/" + n, d) for n, d in inner], "w:gz"))]))
    for n, d in traces[:2] + jsons[2:]:
        with open(os.path.join(tree, "day1", n), "wb") as f:
            f.write(d)
    return [arc, tree, os.path.join(W, "no-such-input.zip")]


def files_under(d, skip=()):
    out = {}
    for root, _, names in os.walk(d):
        for n in names:
            p = os.path.join(root, n)
            rel = os.path.relpath(p, d)
            if rel not in skip:
                out[rel] = read(p)
    return out


def without_seconds(text):
    """The summary's text with totals.seconds blanked: the one field that is a timing."""
    return re.sub(rb'("totals":\{[^}]*"seconds":)[0-9.]+', rb"\1_", text)


def test_parallel_shards():
    """N shards under GNU parallel into one OUTDIR == one unsharded run: outputs and summary."""
    parallel = shutil.which("parallel")
    version = subprocess.run([parallel, "--version"], capture_output=True).stdout if parallel else b""
    if not ctx.check(b"GNU parallel" in version, "GNU parallel is not installed (scripts/setup.sh test installs "
                     "the Debian package 'parallel'): the shards are not run by it"):
        return
    inputs = make_inputs()
    whole = os.path.join(W, "whole")
    r = ctx.run(["batch", "-q", "-j", "1", "-o", FORMATS, "-O", whole] + inputs)
    ctx.eq(r.returncode, 1, "the unsharded run: exit 1 (a corrupt trace, a missing input)")
    out = os.path.join(W, "sharded")
    n = 3
    cmd = [parallel, "--will-cite", "-j", str(n), ctx.traceconv, "batch", "-q", "-j", "1", "-o", FORMATS, "-O", out,
           "--summary", os.path.join(out, "shard-{}.json"), "--shard", "{}/%d" % n] + inputs + [":::"] + \
          [str(i) for i in range(n)]
    r = subprocess.run(cmd, capture_output=True)
    ctx.eq(r.returncode, n, "parallel: every shard exits 1 (the missing input is each one's failure)")
    shards = [os.path.join(out, f"shard-{i}.json") for i in range(n)]
    summaries = {os.path.basename(s) for s in shards}
    ctx.check(files_under(out, summaries) == files_under(whole, {"traceconv-batch.json"}),
              "the shards' outputs together differ from the unsharded run's")
    counts = [len(json.loads(read(s))["members"]) for s in shards]
    ctx.check(all(c > 3 for c in counts), f"every shard converts a part of the members: {counts}")
    merged = os.path.join(W, "merged.json")
    r = ctx.run(["batch", "--merge-summaries", "--summary", merged] + shards[::-1], check_rc=0)
    want = read(os.path.join(whole, "traceconv-batch.json"))
    ctx.check(without_seconds(read(merged)) == without_seconds(want),
              "the merged summary differs from the unsharded run's (totals.seconds aside)")
    slowest = max(json.loads(read(s))["totals"]["seconds"] for s in shards)
    ctx.eq(json.loads(read(merged))["totals"]["seconds"], round(slowest, 6), "merged seconds: the slowest shard's")
    r = ctx.run(["batch", "--merge-summaries"] + shards, check_rc=0)
    ctx.check(r.stdout == read(merged), "on stdout: the same summary")
    return shards


# ---- hostile and mismatched summaries ----

def entry(index, member, status="ok", size=10, **extra):
    e = {"index": index, "source": "a.zip", "member": member, "size": size, "status": status}
    e.update(extra)
    return e


def summary_text(members, shard=0, shards=2, generator="traceconv 0.4.0", formats=("json",), seconds=1.5,
                 totals=None):
    t = {"members": len(members), "ok": sum(m["status"] == "ok" for m in members),
         "failed": sum(m["status"] == "failed" for m in members),
         "skipped": sum(m["status"] == "skipped" for m in members), "existing": 0,
         "bytes_in": sum(m["size"] for m in members), "bytes_out": 0, "seconds": seconds}
    t.update(totals or {})
    head = {"generator": generator, "formats": list(formats)}
    if shards is not None:
        head.update(shard=shard, shards=shards)
    body = ",\n".join(json.dumps(m, separators=(",", ":")) for m in members)
    return (json.dumps(head, separators=(",", ":"))[:-1] + ',\n"members":[\n' + body + ("\n" if members else "") +
            '],\n"totals":' + json.dumps(t, separators=(",", ":")) + "}\n").encode()


def write(name, data):
    p = os.path.join(W, "hostile", name)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data)
    return p


def refused(what, paths, words, both):
    """The merge fails: exit 1, one line on stderr naming what was wrong, nothing written."""
    dest = os.path.join(W, "hostile", "out.json")
    if os.path.exists(dest):
        os.unlink(dest)
    for args in (["--summary", dest], []) if both else ([],):
        r = ctx.run(["batch", "--merge-summaries"] + args + paths)
        err = r.stderr.decode(errors="replace")
        ctx.eq(r.returncode, 1, f"{what}: exit status")
        ctx.eq(len(err.splitlines()), 1, f"{what}: lines on stderr ({err!r})")
        ctx.check(all(w in err for w in words), f"{what}: the message {err!r} lacks {words}")
        ctx.eq(r.stdout, b"", f"{what}: stdout")
        ctx.check(not os.path.exists(dest), f"{what}: {dest} written")


def test_hostile():
    good0 = write("s0.json", summary_text([entry(0, "a"), entry(3, "d")], 0))
    good1 = write("s1.json", summary_text([entry(1, "b"), entry(2, "c", "failed", error="x")], 1))
    r = ctx.run(["batch", "--merge-summaries", good1, good0], check_rc=0)
    merged = json.loads(r.stdout)
    ctx.eq([m["member"] for m in merged["members"]], ["a", "b", "c", "d"], "members in index order")
    ctx.check(all("index" not in m for m in merged["members"]), "index dropped")
    ctx.eq(merged["totals"], {"members": 4, "ok": 3, "failed": 1, "skipped": 0, "existing": 0, "bytes_in": 40,
                              "bytes_out": 0, "seconds": 1.5}, "totals")
    ctx.check("shard" not in merged and "shards" not in merged, "no shard fields in the merged summary")

    text = read(good0)
    cases = [
        ("not JSON", [write("g.json", b"\x00\x01garbage"), good1], ["g.json", "byte"]),
        ("empty", [write("e.json", b""), good1], ["e.json"]),
        ("cut short", [write("c.json", text[:len(text) // 2]), good1], ["c.json", "byte"]),
        ("an array", [write("a.json", b"[1,2]"), good1], ["a.json"]),
        ("trailing garbage", [write("t.json", text + b"{}"), good1], ["t.json", "after"]),
        ("no totals", [write("nt.json", text.replace(b',\n"totals"', b',"x":0,"y"')), good1], ["nt.json"]),
        ("members not a list", [write("ml.json", summary_text([], 0).replace(b'"members":[\n]',
                                                                            b'"members":{}')), good1], ["ml.json"]),
        ("a member without index", [write("ni.json", summary_text([{"source": "s", "member": "m", "size": 1,
                                                                     "status": "ok"}], 0)), good1], ["index"]),
        ("members out of order", [write("oo.json", summary_text([entry(3, "d"), entry(0, "a")], 0)), good1],
         ["order"]),
        ("a bad status", [write("bs.json", summary_text([entry(0, "a", "weird")], 0)), good1], ["bs.json"]),
        ("totals that do not count the members", [write("tc.json", summary_text([entry(0, "a")], 0,
                                                                                totals={"members": 5})), good1],
         ["totals.members"]),
        ("a 17 MiB value", [write("h.json", b'{"generator":"' + b"x" * (17 << 20) + b'"}'), good1], ["longer"]),
        ("nested 100 deep", [write("d.json", summary_text([entry(0, "a", figures=json.loads("[" * 100 + "]" * 100))],
                                                          0)), good1], ["nested"]),
        ("another version", [write("v.json", summary_text([entry(0, "a")], 0, generator="traceconv 9.9")), good1],
         ["version"]),
        ("other formats", [write("f.json", summary_text([entry(0, "a")], 0, formats=("pprof",))), good1],
         ["formats"]),
        ("another N", [good0, write("n.json", summary_text([entry(1, "b")], 1, shards=3))], ["n.json"]),
        ("a shard missing", [good0], ["1 summaries for 2 shards"]),
        ("a shard twice", [good0, good0], ["twice"]),
        ("an unsharded summary among shards", [good0, write("u.json", summary_text([entry(0, "a")], shards=None))],
         ["u.json"]),
        ("one member in two shards", [good0, write("dup.json", summary_text([entry(3, "zz")], 1))],
         ["different members"]),
        ("a directory", [os.path.join(W, "hostile"), good1], ["not a regular file"]),
        ("no such file", [os.path.join(W, "nope.json"), good1], ["nope.json"]),
    ]
    for k, (what, paths, words) in enumerate(cases):
        refused(what, paths, words, both=k % 4 == 0)  # into --summary FILE too, for a part of them
    # an input no shard could open: the same entry in each, kept once and counted once
    missing = {"index": 0, "source": "gone.zip", "member": "", "size": 0, "status": "failed",
               "error": "cannot open: No such file or directory"}
    a = write("m0.json", summary_text([missing, entry(1, "b")], 0))
    b = write("m1.json", summary_text([missing, entry(2, "c")], 1))
    merged = json.loads(ctx.run(["batch", "--merge-summaries", a, b], check_rc=0).stdout)
    ctx.eq([m["member"] for m in merged["members"]], ["", "b", "c"], "the missing input listed once")
    ctx.eq((merged["totals"]["members"], merged["totals"]["failed"]), (3, 1), "and counted once")
    # --summary replaces only a summary
    other = write("precious.txt", b"keep me\n")
    r = ctx.run(["batch", "--merge-summaries", "--summary", other, good0, good1], check_rc=1)
    ctx.eq(read(other), b"keep me\n", "--summary over a file that is not a summary")


def test_damaged():
    """Issue 38: a summary cut anywhere, or with a value of the wrong kind where the merge
    looks (missing keys, wrong types, lists for objects, huge, negative and fractional
    numbers), is one line naming the file, exit 1, nothing written; never a signal. `{`
    alone wrote through a NULL pointer (SIGSEGV, exit 139)."""
    good1 = write("s1.json", summary_text([entry(1, "b"), entry(2, "c", "failed", error="x")], 1))
    text = summary_text([entry(0, "a", outputs=[{"format": "json", "name": "a.json", "size": 7}]), entry(3, "d")], 0,
                        totals={"bytes_out": 7})
    ok = ctx.run(["batch", "--merge-summaries", write("s0.json", text), good1])
    ctx.eq(ok.returncode, 0, f"the summaries these are damaged from merge ({ok.stderr!r})")
    cases = [("only {", b"{"), ("{ and spaces", b"{ \n\t"), ("a key and nothing", b'{"generator"'),
             ("{}", b"{}"), ("a comma first", b"{,}"), ("a colon first", b'{:"x"}'), ("a list", b"[]"),
             ("members cut in an entry", b'{"members":[{"source":'), ("members cut after a comma", b'{"members":[1,')]
    # every prefix of a summary: cut anywhere
    cases += [(f"cut at byte {n}", text[:n]) for n in range(0, len(text) - 1, 7)]
    member = {"index": 0, "source": "a.zip", "member": "a", "size": 10, "status": "ok"}
    odd = {"a list for the entry": [], "a number for the entry": 5, "null for the entry": None,
           "status a number": dict(member, status=1), "member a list": dict(member, member=[]),
           "source missing": {k: v for k, v in member.items() if k != "source"},
           "index negative": dict(member, index=-1), "index huge": dict(member, index=1e19),
           "index fractional": dict(member, index=0.5)}
    # what the totals are counted from (test_totals)
    odd.update({"size missing": {k: v for k, v in member.items() if k != "size"},
                "size negative": dict(member, size=-1), "size fractional": dict(member, size=1.5),
                "size huge": dict(member, size=1e300), "size a string": dict(member, size="10"),
                "outputs an object": dict(member, outputs={"size": 1}), "an output a number": dict(member, outputs=[3]),
                "an output without size": dict(member, outputs=[{}]), "existing a string": dict(member, existing="yes")})
    # a key twice: cJSON reads the first, Python and jq the last (status ok here, failed there)
    odd.update({"status twice": '{"index":0,"source":"a.zip","member":"a","size":10,"status":"ok","status":"failed"}',
                "size twice": '{"index":0,"source":"a.zip","member":"a","size":10,"status":"ok","size":99}',
                "an output's size twice": '{"index":0,"source":"a.zip","member":"a","size":10,"status":"ok",'
                                          '"outputs":[{"format":"json","size":0,"size":5}]}'})
    for what, e in odd.items():
        body = e if isinstance(e, str) else json.dumps(e, separators=(",", ":"))
        cases.append((what, b'{"generator":"traceconv 0.4.0","formats":["json"],"shard":0,"shards":2,\n"members":[\n' +
                      body.encode() + b'\n],\n"totals":{"members":1,"ok":1,"failed":0,"skipped":0,"existing":0,'
                      b'"bytes_in":10,"bytes_out":0,"seconds":1}}\n'))
    head = json.loads(text[:text.index(b',\n"members"')].decode() + "}")
    for key, values in {"generator": [None, 1, [], {}], "formats": [None, "json", [], [1], {}],
                        "shard": [-1, 0.5, 1e19, "0", None], "shards": [1, -2, 2.5, 1e19, []],
                        "interrupted": ["yes", 1], "options": [1, []]}.items():
        for v in values:
            h = dict(head, **{key: v})
            cases.append((f"{key} {json.dumps(v)}", json.dumps(h, separators=(",", ":"))[:-1].encode() +
                          text[text.index(b',\n"members"'):]))
    totals = json.loads(text[text.index(b'"totals":') + 9:-2])
    for key in list(totals):
        for v in (None, -1, 0.5, 1e300, "1", [], {}):
            if key == "seconds" and v in (0.5, 1e300):  # durations, not counts
                continue
            t = dict(totals, **{key: v})
            cases.append((f"totals.{key} {json.dumps(v)}", text[:text.index(b'"totals":') + 9] +
                          json.dumps(t, separators=(",", ":")).encode() + b"}\n"))
        t = {k: v for k, v in totals.items() if k != key}
        cases.append((f"totals.{key} missing", text[:text.index(b'"totals":') + 9] +
                      json.dumps(t, separators=(",", ":")).encode() + b"}\n"))
    cases += [("totals a list", text[:text.index(b'"totals":') + 9] + b"[1,2]}\n"),
              ("members an object", text.replace(b'"members":[', b'"members":{', 1))]
    for k, (what, data) in enumerate(cases):
        refused(what, [write(f"dmg{k}.json", data), good1], [f"dmg{k}.json"], both=k % 5 == 0)


def test_totals():
    """Issue 38: every total of a shard's summary is what its members add up to, and a member
    is one shard's. A summary whose ok/failed/skipped/existing/bytes counts do not count its
    members was accepted (only totals.members was checked), and a member listed by two shards
    made the merged totals wrap to 2^64-1 with exit 0: each is one line, exit 1 now."""
    out = {"format": "json", "name": "a.json", "size": 7}
    members0 = [entry(0, "a", outputs=[out]), entry(3, "d", "skipped", reason="not a trace"),
                entry(4, "e", existing=True, outputs=[dict(out, size=100)])]
    right = {"ok": 2, "skipped": 1, "existing": 1, "bytes_out": 7}
    good0 = write("t0.json", summary_text(members0, 0, totals=right))
    good1 = write("t1.json", summary_text([entry(1, "b"), entry(2, "c", "failed", error="x")], 1))
    merged = json.loads(ctx.run(["batch", "--merge-summaries", good0, good1], check_rc=0).stdout)
    ctx.eq(merged["totals"], {"members": 5, "ok": 3, "failed": 1, "skipped": 1, "existing": 1, "bytes_in": 50,
                              "bytes_out": 7, "seconds": 1.5}, "totals with kept outputs (existing: not bytes_out)")
    wrong = {"ok": 1, "failed": 1, "skipped": 0, "existing": 0, "bytes_in": 31, "bytes_out": 107}
    for key, v in wrong.items():
        path = write(f"w-{key}.json", summary_text(members0, 0, totals=dict(right, **{key: v})))
        refused(f"totals.{key} that does not count the members", [path, good1], [f"w-{key}.json", f"totals.{key}"],
                both=key == "ok")
    # the same member in two shards: whatever its totals, refused, not counted twice or uncounted
    for k, status in enumerate(("ok", "failed", "skipped")):
        e = entry(5, "dup", status)
        a = write(f"d0-{k}.json", summary_text([entry(0, "a"), e], 0))
        b = write(f"d1-{k}.json", summary_text([entry(1, "b"), e], 1))
        refused(f"a member ({status}) listed by two shards", [a, b], ["index 5", "dup"], both=k == 0)
    # ... and with totals that do not count it in the second (the wrap to 2^64-1 of issue 38)
    a = write("d0.json", summary_text([entry(0, "a"), entry(2, "c")], 0))
    b = write("d1.json", summary_text([entry(1, "b"), entry(2, "c")], 1, totals={"ok": 1, "bytes_in": 10}))
    refused("a member listed twice, uncounted by its second shard", [a, b], ["d1.json"], both=True)
    # both shards list it, neither counts it but in totals.members: the merge said ok 2^64-1, bytes_in 2^64-10
    wrap = {"ok": 0, "bytes_in": 0}
    a = write("u0.json", summary_text([entry(2, "c")], 0, totals=wrap))
    b = write("u1.json", summary_text([entry(2, "c")], 1, totals=wrap))
    refused("a member listed twice, counted by neither shard", [a, b], ["u0.json", "totals.ok"], both=True)
    # sums that overflow: counts up to 2^53 each, a sum past 2^64
    huge = [entry(i, f"m{i}", size=2**53) for i in range(0, 4096, 2)]
    c = write("o0.json", summary_text(huge, 0))
    refused("bytes_in past 2^64", [c, good1], ["o0.json", "overflow"], both=True)


def test_output_is_input():
    """Issue 38: --summary FILE may not be one of the summaries merged, by the file (st_dev,
    st_ino), not by its name: the same path, ./path, a symbolic link to it and a hard link to
    it are refused, one line, exit 1, the summary unchanged. `--summary s0.json s0.json
    s1.json` replaced s0.json."""
    d = os.path.join(W, "same")
    os.makedirs(d, exist_ok=True)
    s0, s1 = os.path.join(d, "s0.json"), os.path.join(d, "s1.json")
    link, hard = os.path.join(d, "link.json"), os.path.join(d, "hard.json")
    before = summary_text([entry(0, "a"), entry(3, "d")], 0), summary_text([entry(1, "b")], 1)

    def fresh():  # each case starts from the two summaries and the links (a failure may have replaced one)
        for p in (s0, s1, link, hard):
            if os.path.lexists(p):
                os.unlink(p)
        for p, data in zip((s0, s1), before):
            with open(p, "wb") as f:
                f.write(data)
        os.symlink("s0.json", link)
        os.link(s0, hard)

    for what, dest, inputs in [("the same name", "s0.json", ["s0.json", "s1.json"]),
                               ("./ before it", "./s1.json", ["s0.json", "s1.json"]),
                               ("a symbolic link to it", "link.json", ["s0.json", "s1.json"]),
                               ("a symbolic link to it among the inputs", "s0.json", ["link.json", "s1.json"]),
                               ("a hard link to it", "hard.json", ["s0.json", "s1.json"]),
                               ("its absolute path", s1, ["s0.json", "./s1.json"])]:
        fresh()
        r = subprocess.run([ctx.traceconv, "batch", "--merge-summaries", "--summary", dest] + inputs, cwd=d,
                           capture_output=True)
        err = r.stderr.decode(errors="replace")
        ctx.eq(r.returncode, 1, f"--summary {what}: exit status ({err!r})")
        ctx.eq(len(err.splitlines()), 1, f"--summary {what}: lines on stderr ({err!r})")
        ctx.check(dest in err and "one of the summaries" in err, f"--summary {what}: the message {err!r}")
        ctx.eq((read(s0), read(s1)), before, f"--summary {what}: a summary merged was changed")
        ctx.check(os.path.islink(link) and os.stat(hard).st_ino == os.stat(s0).st_ino,
                  f"--summary {what}: a link was replaced")
    fresh()
    r = subprocess.run([ctx.traceconv, "batch", "--merge-summaries", "--summary", "merged.json", "s0.json", "s1.json"],
                       cwd=d, capture_output=True)
    ctx.eq(r.returncode, 0, f"--summary another file in the same folder ({r.stderr!r})")


def big_entry(i, pad):
    return {"index": i, "source": "a.zip", "member": f"dir/m{i:06d}.trace", "size": i,
            "status": "ok" if i % 7 else "skipped", "note": pad}


def write_big_shard(path, k, shards, n, pad):
    """A shard's summary, written line by line (this process stays small: the child's peak RSS
    is measured, and a fork starts from the parent's)."""
    ok = skipped = size = count = 0
    with open(path, "w") as f:
        f.write(f'{{"generator":"traceconv 0.4.0","formats":["json"],"shard":{k},"shards":{shards},\n"members":[\n')
        for i in range(n):
            if (i * 2654435761) % 2**32 % shards != k:
                continue
            e = big_entry(i, pad)
            f.write((",\n" if count else "") + json.dumps(e, separators=(",", ":")))
            count += 1
            ok += e["status"] == "ok"
            skipped += e["status"] == "skipped"
            size += i
        f.write(f'\n],\n"totals":{{"members":{count},"ok":{ok},"failed":0,"skipped":{skipped},"existing":0,'
                f'"bytes_in":{size},"bytes_out":0,"seconds":{k + 0.25}}}}}\n')


def peak_rss(argv):
    """(exit status, stderr, peak RSS in KiB) of argv, started by a fresh interpreter without
    site (~8 MB): a child's peak RSS counts its parent's at the fork, and this test's own
    process is larger."""
    code = ("import os, sys\npid = os.fork()\nif pid == 0:\n    os.execv(sys.argv[1], sys.argv[1:])\n"
            "_, st, ru = os.wait4(pid, 0)\nprint(os.waitstatus_to_exitcode(st), ru.ru_maxrss)")
    r = subprocess.run([sys.executable, "-S", "-c", code] + argv, capture_output=True)
    rc, kib = r.stdout.split()
    return int(rc), r.stderr.decode(errors="replace"), int(kib)


def test_large_merge():
    """120,000 members in 3 shards (17 MB): the model's order and totals, in bounded memory."""
    n, shards, pad = 120000, 3, "p" * 40
    os.makedirs(os.path.join(W, "big"), exist_ok=True)
    paths = [os.path.join(W, "big", f"big{k}.json") for k in range(shards)]
    for k, p in enumerate(paths):
        write_big_shard(p, k, shards, n, pad)
    out = os.path.join(W, "big-merged.json")
    rc, err, rss_kib = peak_rss([ctx.traceconv, "batch", "--merge-summaries", "--summary", out] + paths)
    ctx.eq(rc, 0, f"merge of {n} members: exit status ({err.strip()})")
    got = json.loads(read(out))
    ctx.eq(len(got["members"]), n, "merged members")
    wrong = [i for i, m in enumerate(got["members"]) if m != {k: v for k, v in big_entry(i, pad).items()
                                                            if k != "index"}]
    ctx.check(not wrong, f"the merged members differ from the model's (by index, index dropped) from {wrong[:1]}")
    ctx.eq(got["totals"]["members"], n, "totals.members")
    ctx.eq(got["totals"]["bytes_in"], sum(range(n)), "totals.bytes_in")
    ctx.eq(got["totals"]["seconds"], shards - 1 + 0.25, "totals.seconds: the slowest shard's")
    size_mb = sum(os.path.getsize(p) for p in paths) / 1e6
    if not is_sanitized(ctx.traceconv):
        ctx.check(rss_kib < 16 * 1024, f"merging {size_mb:.0f} MB of summaries took {rss_kib / 1024:.1f} MB RSS "
                  "(bounded: one entry at a time)")


test_parallel_shards()
test_hostile()
test_damaged()
test_totals()
test_output_is_input()
test_large_merge()
ctx.done()
