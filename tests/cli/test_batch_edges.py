#!/usr/bin/env python3
"""`traceconv batch` at its edges (issue 22), each case one that an earlier traceconv got wrong:

- item 5: batch follows the single conversion's overwrite rules: an original trace in OUTDIR is
  never replaced, an existing file only with -f; a second run into the same OUTDIR overwrites
  nothing without -f, --skip-existing keeps its meaning;
- item 6: output names never collide across extensions (b.trace + b.speedscope.trace with
  json,speedscope; a.ir.trace with ir,report; x.report.trace with systrace,report --html): every
  member's outputs are there, each equal to the single conversion of that member;
- item 7: a member named traceconv-batch.* never loses its output to the summary;
- item 8: every input named or found is in the summary with a status and reason (a file of
  zeros, an empty archive, a missing operand, a FIFO);
- item 9: a member whose output passes `ulimit -f` fails alone ("file size limit exceeded"),
  leaves no temporary file, and the run goes on to write its summary;
- item 10: an archive member inflating past the library's ratio guard is refused with the
  library's own message (as a gzip input is), not spooled in full;
- item 12: batch's memory per member is small and bounded (peak RSS at N and 4N members);
- item 14: errors name the member, never /proc/self/fd/N; a 250-byte output name is written;
- item 15: member names with terminal escape sequences reach stderr escaped;
- item 18: a JSON document with no trace events is skipped, not failed;
- item 20: the progress line moves during a large member, its ETA is a number while a .tar.gz
  is read, and an interrupted run says so.
Outputs are read by Python's json (and compared with the single conversion of the member)."""
import gzip
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

ctx = tclib.Ctx()
W = ctx.work
EXE = os.path.abspath(ctx.traceconv)
APP = open(os.path.join(ctx.source, "corpus", "app-startup.trace"), "rb").read()  # json: 650 KB
SMALL = open(os.path.join(ctx.source, "corpus", "open-at-end.trace"), "rb").read()
TINY = open(os.path.join(ctx.source, "corpus", "v2-header16.trace"), "rb").read()  # json: 1.4 KB
CHROME = b'{"traceEvents":[{"ph":"B","name":"draw","pid":7,"tid":7,"ts":1},{"ph":"E","pid":7,"tid":7,"ts":5}]}\n'
CORRUPT = b"SLOW\x03\x00\x10\x00" + b"garbage" * 8


def s(b):
    return b.decode(errors="replace")


def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)
    return path


def batch(args, cwd=None, limit_fsize=None, env=None):
    return tclib.run_limited([EXE, "batch", *args], cwd=cwd, limit_fsize=limit_fsize, env=env)


def summary(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {"members": [], "totals": {}}


def by_member(s):
    return {e["member"]: e for e in s["members"]}


def single(data, name, fmt, extra=(), cache={}):
    """The single conversion of data, as a file called name: its bytes, or None."""
    key = (data, name, fmt, tuple(extra))
    if key not in cache:
        d = ctx.fresh("single")
        src = put(os.path.join(d, name), data)
        r = subprocess.run([EXE, "-q", "-o", fmt, *extra, src, os.path.join(d, "out." + tclib.WRITER_EXT[fmt])],
                           capture_output=True)
        out = os.path.join(d, "out." + tclib.WRITER_EXT[fmt])
        cache[key] = open(out, "rb").read() if r.returncode == 0 else None
    return cache[key]


def temps_under(d):
    return [os.path.join(r, f) for r, _, fs in os.walk(d) for f in fs if tclib.is_temp_name(f)]


def tar_bytes(members, mode="w"):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode) as t:
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def check_overwrite_rules():
    d = ctx.fresh("overwrite")
    put(os.path.join(d, "a.trace"), APP)
    put(os.path.join(d, "a.json"), CHROME)  # an original trace, written by hand
    r = batch(["-q", "-o", "json", "-O", ".", "a.trace"], cwd=d)
    ctx.eq(r.returncode, 1, f"an original a.json in OUTDIR: the member fails ({s(r.stderr).strip()})")
    ctx.eq(open(os.path.join(d, "a.json"), "rb").read(), CHROME, "an original a.json in OUTDIR is never replaced")
    e = by_member(summary(os.path.join(d, "traceconv-batch.json"))).get("a.trace", {})
    ctx.check(e.get("status") == "failed" and "is a trace" in e.get("error", ""), f"the member says why: {e}")
    r = batch(["-q", "-f", "-o", "json", "-O", ".", "a.trace"], cwd=d)
    ctx.eq(open(os.path.join(d, "a.json"), "rb").read(), CHROME, "an original a.json is not replaced even with -f")
    # a file that is not a trace: only with -f
    put(os.path.join(d, "a.json"), b"my notes\n")
    r = batch(["-q", "-o", "json", "-O", ".", "a.trace"], cwd=d)
    ctx.eq(r.returncode, 1, "an existing a.json without -f: the member fails")
    ctx.eq(open(os.path.join(d, "a.json"), "rb").read(), b"my notes\n", "an existing a.json without -f: kept")
    e = by_member(summary(os.path.join(d, "traceconv-batch.json"))).get("a.trace", {})
    ctx.check("exists; use -f" in e.get("error", ""), f"the member says to use -f: {e}")
    r = batch(["-q", "-f", "-o", "json", "-O", ".", "a.trace"], cwd=d)
    ctx.eq(r.returncode, 0, f"with -f: exit status ({s(r.stderr).strip()})")
    ctx.eq(open(os.path.join(d, "a.json"), "rb").read(), single(APP, "a.trace", "json"), "with -f: a.json is the conversion")
    # a second run into the same OUTDIR: nothing overwritten without -f; --skip-existing keeps what it did
    src = ctx.fresh("rerun-src")
    put(os.path.join(src, "p.trace"), APP)
    put(os.path.join(src, "q.trace"), SMALL)
    out = os.path.join(W, "rerun-out")
    shutil.rmtree(out, ignore_errors=True)
    ctx.eq(batch(["-q", "-o", "json", "-O", out, src]).returncode, 0, "first run")
    outputs = {n: os.path.join(out, "rerun-src", n) for n in ("p.json", "q.json")}
    stamps = {n: os.stat(p).st_mtime_ns for n, p in outputs.items()}
    time.sleep(0.02)

    def totals(r):
        t = summary(os.path.join(out, "traceconv-batch.json"))["totals"]
        return r.returncode, t.get("ok"), t.get("failed"), t.get("existing")

    def stamps_now():
        return {n: os.stat(p).st_mtime_ns for n, p in outputs.items()}
    # a second run without -f (issue 36, item 7): the members are up to date, not failed
    r = batch(["-o", "json", "-O", out, src])
    ctx.eq(totals(r), (0, 2, 0, 2), f"a second run without -f: both up to date ({s(r.stderr).strip()})")
    ctx.check("2 ok (2 up to date), 0 failed" in s(r.stderr), f"the line says so: {s(r.stderr)!r}")
    ctx.eq(stamps_now(), stamps, "a second run without -f: nothing rewritten")
    # other options: not up to date; converted again over their own outputs, without -f
    r = batch(["-q", "-o", "json", "--process-name", "other", "-O", out, src])
    ctx.eq(totals(r), (0, 2, 0, 0), f"other options: converted again without -f ({s(r.stderr).strip()})")
    ctx.check(all(stamps_now()[n] != stamps[n] for n in stamps), "other options: both outputs rewritten")
    ctx.check(b'"other"' in open(outputs["p.json"], "rb").read(), "other options: in the outputs")
    r = batch(["-q", "-o", "json", "--process-name", "other", "-O", out, src])
    ctx.eq(totals(r), (0, 2, 0, 2), "the same options again: up to date")
    # an output changed since (written into in place, the same size): not up to date, made again
    # (the previous summary says the member's outputs are the run's own)
    good = open(outputs["q.json"], "rb").read()
    with open(outputs["q.json"], "r+b") as f:
        f.write(b"{ ")
    r = batch(["-q", "-o", "json", "--process-name", "other", "-O", out, src])
    ctx.eq(totals(r), (0, 2, 0, 1), f"a changed q.json is not up to date ({s(r.stderr).strip()})")
    ctx.eq(open(outputs["q.json"], "rb").read(), good, "a changed q.json is made again")
    ctx.eq(batch(["-q", "-f", "-o", "json", "-O", out, src]).returncode, 0, "with -f: converted again")
    r = batch(["-q", "-o", "json", "-O", out, "--skip-existing", src])
    st = summary(os.path.join(out, "traceconv-batch.json"))
    ctx.eq((r.returncode, st["totals"].get("existing")), (0, 2), "--skip-existing after a good run: both kept")
    os.utime(os.path.join(src, "q.trace"), (1, 1))  # changed: converted again, over its own outputs
    r = batch(["-q", "-o", "json", "-O", out, "--skip-existing", src])
    st = summary(os.path.join(out, "traceconv-batch.json"))
    ctx.eq((r.returncode, st["totals"].get("ok"), st["totals"].get("existing")), (0, 2, 1),
           f"--skip-existing redoes a changed member over its own output ({s(r.stderr).strip()})")


def check_names_never_collide():
    cases = [  # (formats, extra options, {member: content}): contents differ, so a mix-up shows
        (["json", "speedscope"], [], {"b.trace": APP, "b.speedscope.trace": SMALL}),
        (["ir", "report"], [], {"a.trace": APP, "a.ir.trace": SMALL}),
        (["systrace", "report"], ["--html"], {"x.trace": APP, "x.report.trace": SMALL}),
    ]
    for k, (formats, extra, members) in enumerate(cases):
        what = f"{','.join(formats)} {' '.join(extra)} on {' + '.join(members)}"
        arc = put(os.path.join(W, f"collide{k}.tar"), tar_bytes(members))
        out = os.path.join(W, f"collide{k}-out")
        shutil.rmtree(out, ignore_errors=True)
        r = batch(["-q", "-j", "2", "-o", ",".join(formats), *extra, "-O", out, arc])
        ctx.eq(r.returncode, 0, f"{what}: exit status ({s(r.stderr).strip()})")
        st = summary(os.path.join(out, "traceconv-batch.json"))
        written = []
        for name, data in members.items():
            e = by_member(st).get(name, {})
            ctx.eq(e.get("status"), "ok", f"{what}: {name} ok")
            for o in e.get("outputs", []):
                path = os.path.join(out, os.path.dirname(e["output"]), o["name"])
                written.append(path)
                want = single(data, name, o["format"], extra)
                ctx.check(os.path.exists(path) and open(path, "rb").read() == want,
                          f"{what}: {o['name']} is {name}'s {o['format']} conversion")
        ctx.eq(len(set(written)), len(members) * len(formats), f"{what}: one distinct output per member and format")
        files = [f for f in os.listdir(os.path.join(out, f"collide{k}"))]
        ctx.eq(len(files), len(members) * len(formats), f"{what}: the files in OUTDIR: {sorted(files)}")
    # a file and a directory of one name: a.trace -> a.json, a.json/b.trace -> a.json/b.json
    for order in (["a.json/b.trace", "a.trace"], ["a.trace", "a.json/b.trace"]):
        what = " then ".join(order)
        arc = put(os.path.join(W, "dirfile.tar"), tar_bytes({n: SMALL for n in order}))
        out = os.path.join(W, "dirfile-out")
        shutil.rmtree(out, ignore_errors=True)
        r = batch(["-q", "-j", "2", "-o", "json", "-O", out, arc])
        st = by_member(summary(os.path.join(out, "traceconv-batch.json")))
        if order[0] == "a.trace":  # the directory cannot take a free name: the later member fails, saying so
            e = st.get("a.json/b.trace", {})
            ctx.check(r.returncode == 1 and e.get("status") == "failed" and "output directory" in e.get("error", ""),
                      f"{what}: the later member fails, saying why: {e}")
            ctx.eq(st.get("a.trace", {}).get("status"), "ok", f"{what}: the first is converted")
            continue
        ctx.eq(r.returncode, 0, f"{what}: exit status ({s(r.stderr).strip()})")
        for name in order:
            e = st.get(name, {})
            outs = [os.path.join(out, os.path.dirname(e.get("output", "")), o["name"]) for o in e.get("outputs", [])]
            ctx.check(e.get("status") == "ok" and len(outs) == 1 and os.path.isfile(outs[0]) and
                      tclib.json_slice_names(outs[0]) == json_slices_of(SMALL), f"{what}: {name} converted into a file of its own: {e}")


def check_summary_name():
    d = ctx.fresh("summary-name")
    src = put(os.path.join(d, "in", "traceconv-batch.trace"), APP)
    out = os.path.join(d, "out")
    r = batch(["-q", "-o", "json", "-O", out, src])
    ctx.eq(r.returncode, 0, f"a member named traceconv-batch.trace: exit status ({s(r.stderr).strip()})")
    st = summary(os.path.join(out, "traceconv-batch.json"))
    e = by_member(st).get("traceconv-batch.trace", {})
    ctx.eq(e.get("status"), "ok", "the summary is a summary, listing the member")
    names = [o["name"] for o in e.get("outputs", [])]
    ctx.check(len(names) == 1 and names[0] != "traceconv-batch.json", f"the member's output has a name of its own: {names}")
    if names:
        ctx.eq(open(os.path.join(out, names[0]), "rb").read(), single(APP, "traceconv-batch.trace", "json"),
               "the member's output is its conversion")


def check_every_input_listed():
    d = ctx.fresh("listed")
    tree = os.path.join(d, "tree")
    put(os.path.join(tree, "good.trace"), SMALL)
    put(os.path.join(tree, "zeros.bin"), b"\0" * 10240)  # reads as an empty tar
    put(os.path.join(tree, "empty.zip"), b"PK\x05\x06" + b"\0" * 18)
    put(os.path.join(tree, "facts.json"), b'{"device": "pixel", "runs": 3}\n')
    put(os.path.join(tree, "list.json"), b"[1, 2, 3]\n")
    os.mkfifo(os.path.join(tree, "pipe"))
    zeros = put(os.path.join(d, "zeros.dat"), b"\0" * 4096)
    missing = os.path.join(d, "no-such-file.trace")
    out = os.path.join(d, "out")
    r = batch(["-q", "-o", "json", "-O", out, tree, zeros, missing])
    st = summary(os.path.join(out, "traceconv-batch.json"))
    got = {(e["source"], e["member"]): (e["status"], e.get("reason") or e.get("error") or "") for e in st["members"]}
    want = {(tree, "good.trace"): "ok", (tree, "zeros.bin"): "skipped", (tree, "empty.zip"): "skipped",
            (tree, "facts.json"): "skipped", (tree, "list.json"): "skipped", (tree, "pipe"): "skipped",
            (zeros, "zeros.dat"): "skipped", (missing, ""): "failed"}
    ctx.eq(sorted(got), sorted(want), "every input named or found is listed")
    for k, status in want.items():
        st_, why = got.get(k, (None, ""))
        ctx.eq(st_, status, f"{k[1] or k[0]}: status ({why})")
        ctx.check(why != "" or status == "ok", f"{k[1] or k[0]}: a reason")
    for k in ((tree, "zeros.bin"), (zeros, "zeros.dat"), (tree, "empty.zip")):
        ctx.check("empty" in got.get(k, ("", ""))[1], f"{k[1]}: listed as an empty archive: {got.get(k)}")
    for k in ((tree, "facts.json"), (tree, "list.json")):
        ctx.check("no trace events" in got.get(k, ("", ""))[1], f"{k[1]}: skipped as no trace: {got.get(k)}")
    ctx.eq(r.returncode, 1, "the missing operand fails the run; the JSON documents do not")
    r = batch(["-q", "-o", "json", "-O", os.path.join(d, "out2"), os.path.join(tree, "good.trace"),
               os.path.join(tree, "facts.json")])
    ctx.eq(r.returncode, 0, f"a facts.json beside a trace: the run succeeds ({s(r.stderr).strip()})")


def check_file_size_limit():
    d = ctx.fresh("fsize")
    tree = os.path.join(d, "tree")
    put(os.path.join(tree, "big.trace"), APP)
    for i in range(4):
        put(os.path.join(tree, f"small{i}.trace"), TINY)
    out = os.path.join(d, "out")
    r = batch(["-o", "json", "-j", "2", "-O", out, tree], limit_fsize=200 << 10)
    err = s(r.stderr)
    ctx.eq(r.returncode, 1, f"a member past ulimit -f: exit status 1, not a signal ({err.strip()[-300:]})")
    st = summary(os.path.join(out, "traceconv-batch.json"))
    m = by_member(st)
    ctx.check("file size limit exceeded" in m.get("big.trace", {}).get("error", ""),
              f"the member past the limit fails, saying why: {m.get('big.trace')}")
    ctx.eq(sorted(k for k, e in m.items() if e["status"] == "ok"), [f"small{i}.trace" for i in range(4)],
           "the other members are converted")
    ctx.eq(temps_under(out), [], "no temporary file left")
    ctx.check(not os.path.exists(os.path.join(out, "tree", "big.json")), "no output for the member past the limit")
    ctx.check(re.search(r"big\.trace: .*file size limit exceeded", err), f"the failure is said on stderr: {err!r}")


def check_decompression_guard():
    d = ctx.fresh("bomb")
    tmp = ctx.fresh("bomb-tmp")
    chunk, chunks = b"\0" * (1 << 20), 264  # past the guard's 256 MiB floor, at ~1000:1; written as it goes
    arc = os.path.join(d, "bomb.zip")
    with zipfile.ZipFile(arc, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as z:
        with z.open("bomb.trace", "w", force_zip64=True) as m:
            for _ in range(chunks):
                m.write(chunk)
        z.writestr("good.trace", SMALL)
    gz = os.path.join(d, "bomb.trace.gz")
    with gzip.open(gz, "wb", compresslevel=9) as g:
        for _ in range(chunks):
            g.write(chunk)
    ctx.check(os.path.getsize(arc) < 2 << 20, "the zip is small")
    r = subprocess.run([EXE, "-o", "json", gz, os.path.join(d, "x.json")], capture_output=True)
    single_msg = s(r.stderr)
    m = re.search(r"expands more than (\d+):1 \(\d+ bytes from \d+\): refused as a decompression bomb", single_msg)
    ctx.check(r.returncode == 1 and m, f"the gzip input is refused as a bomb: {single_msg!r}")
    out = os.path.join(d, "out")
    r = batch(["-q", "-o", "json", "-O", out, arc], env=dict(os.environ, TMPDIR=tmp))
    st = by_member(summary(os.path.join(out, "traceconv-batch.json")))
    err = st.get("bomb.trace", {}).get("error", "")
    ctx.check(st.get("bomb.trace", {}).get("status") == "failed" and m and
              f"expands more than {m.group(1)}:1" in err and "refused as a decompression bomb" in err,
              f"the zip member is refused with the same words: {st.get('bomb.trace')}")
    ctx.eq(st.get("good.trace", {}).get("status"), "ok", "the other member is converted")
    ctx.eq(os.listdir(tmp), [], "no spool file left")


def peak_rss_polled(argv):
    """(returncode, stderr, the child's peak RSS in KiB) read from its /proc/PID/status (VmHWM) while it
    runs. Not wait4's ru_maxrss: a child that starts from a fork of this (larger) Python process is
    charged this process's size there, which would hide a small child's growth."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    peak = 0
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                m = re.search(r"VmHWM:\s+(\d+) kB", f.read())
            peak = max(peak, int(m.group(1))) if m else peak
        except OSError:
            pass
        time.sleep(0.002)
    return p.returncode, s(p.stderr.read()), peak


def write_many_tar(path, n):
    """A tar of n one-byte members, written header by header (tarfile would keep every member's TarInfo)."""
    with open(path, "wb") as f:
        for i in range(n):
            ti = tarfile.TarInfo(f"d{i // 1000}/member-with-a-longish-name-{i:06}.txt")
            ti.size = 1
            f.write(ti.tobuf(tarfile.GNU_FORMAT) + b"x" + b"\0" * 511)
        f.write(b"\0" * 1024)


def check_memory_per_member():
    if tclib.is_sanitized(ctx.traceconv):
        print("SKIPPED CHECK: sanitized build, peak RSS not compared")
        return
    rss = {}
    for n in (5000, 20000):  # members of one byte: probed, skipped, listed; named (two formats)
        arc = os.path.join(W, f"many{n}.tar")
        write_many_tar(arc, n)
        out = os.path.join(W, f"many{n}-out")
        shutil.rmtree(out, ignore_errors=True)
        rc, err, rss[n] = peak_rss_polled([EXE, "batch", "-q", "-o", "json,folded", "-O", out, arc])
        ctx.eq(rc, 0, f"{n} members: exit status ({err.strip()[-200:]})")
        ctx.eq(summary(os.path.join(out, "traceconv-batch.json"))["totals"].get("members"), n, f"{n} members listed")
        os.remove(arc)
        shutil.rmtree(out)
    per_member = (rss[20000] - rss[5000]) * 1024 / 15000
    print(f"peak RSS: {rss[5000]} KiB for 5000 members, {rss[20000]} KiB for 20000: {per_member:.0f} bytes a member")
    ctx.check(per_member < 300, f"batch holds {per_member:.0f} bytes a member (at most 300)")


def check_names_in_messages():
    d = ctx.fresh("names")
    members = {"\x1b]0;pwned\x07.trace": CORRUPT, "\x1b[2Jclear.trace": CORRUPT, "c1-\u009b31m.trace": CORRUPT,
               "ok.trace": SMALL}
    arc = put(os.path.join(d, "hostile.tar"), tar_bytes(members))
    tree = os.path.join(d, "tree")
    put(os.path.join(tree, "cut.trace.gz"), gzip.compress(APP)[:3000])  # the probe fails: gzip cut short
    put(os.path.join(tree, "n" * 246 + ".trace"), SMALL)  # its output name: 246 + ".json" = 251 bytes
    r = batch(["-o", "json", "-O", os.path.join(d, "out"), arc, tree])
    ctx.eq(r.returncode, 1, "hostile names: the bad members fail")
    ctx.check(tclib.terminal_safe(r.stderr), f"member names reach stderr escaped: {r.stderr!r}")
    ctx.check(b"\\x1b]0;pwned\\x07" in r.stderr, f"the escape is shown, visibly: {r.stderr!r}")
    st = by_member(summary(os.path.join(d, "out", "traceconv-batch.json")))
    e = st.get("cut.trace.gz", {})
    ctx.check(e.get("status") == "failed" and "/proc/self" not in e.get("error", "/proc/self"),
              f"a member's error never names /proc/self/fd: {e}")
    ctx.check(b"/proc/self" not in r.stderr and b"cut.trace.gz: " in r.stderr, f"stderr names the file: {r.stderr!r}")
    long_name = "n" * 246 + ".trace"
    e = st.get(long_name, {})
    ctx.eq(e.get("status"), "ok", f"a member whose output name has 251 bytes is converted ({e.get('error')})")
    p = os.path.join(d, "out", "tree", "n" * 246 + ".json")
    ctx.check(os.path.exists(p) and tclib.json_slice_names(p) == json_slices_of(SMALL), "the 251-byte output is its conversion")


def json_slices_of(data):
    d = ctx.fresh("slices")
    src = put(os.path.join(d, "x.trace"), data)
    subprocess.run([EXE, "-q", "-o", "json", src], capture_output=True)
    return tclib.json_slice_names(os.path.join(d, "x.json"))


def progress_lines(stderr):
    return [l for l in s(stderr).split("\r") if l.startswith("traceconv batch: ") and " files, " in l]


def check_progress():
    if not ctx.tracegen:
        ctx.fail("tracegen is not built")
        return
    d = ctx.fresh("progress")
    big = os.path.join(d, "big.trace")
    subprocess.run([ctx.tracegen, "--bench", "12", big], check=True, capture_output=True)
    out = os.path.join(d, "out")
    r = batch(["-o", "folded", "-j", "1", "--progress", "-O", out, big])
    lines = progress_lines(r.stderr)
    during = [float(m.group(1)) for l in lines for m in [re.search(r" 0/1 files, ([\d.]+) MB", l)] if m]
    ctx.check(any(x > 0 for x in during), f"the progress moves during the member: {lines}")
    # a .tar.gz: while it is read (the "+"), the ETA is a number
    with tarfile.open(os.path.join(d, "four.tar.gz"), "w:gz", compresslevel=1) as t:
        for i in range(4):
            t.add(big, arcname=f"b{i}.trace")
    out = os.path.join(d, "out-gz")
    r = batch(["-o", "folded", "-j", "1", "--progress", "-O", out, os.path.join(d, "four.tar.gz")])
    scanning = [l for l in progress_lines(r.stderr) if "+ files" in l]
    ctx.check(scanning and any(re.search(r"ETA \d+s", l) for l in scanning),
              f"a .tar.gz's ETA while it is read: {scanning}")
    # interrupted: the screen says so
    out = os.path.join(d, "out-int")
    p = subprocess.Popen([EXE, "batch", "-o", "json", "-j", "1", "--progress", "-O", out,
                          os.path.join(d, "four.tar.gz")], stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and not os.path.exists(os.path.join(out, "four")):
        time.sleep(0.01)
    time.sleep(0.3)
    p.send_signal(signal.SIGINT)
    err = p.communicate(timeout=60)[1]
    said = re.findall(r"traceconv batch: [^\r\n]*members: [^\r\n]*", s(err))
    ctx.eq(p.returncode, -signal.SIGINT, "interrupted: dies of the signal")
    ctx.check(said and "interrupted by SIGINT" in said[-1], f"interrupted: the last line says so: {said}")
    ctx.eq(summary(os.path.join(out, "traceconv-batch.json")).get("interrupted"), True, "interrupted: in the summary")


for check in (check_memory_per_member, check_overwrite_rules, check_names_never_collide, check_summary_name,
              check_every_input_listed, check_file_size_limit, check_decompression_guard, check_names_in_messages,
              check_progress):
    try:
        check()
    except Exception as e:  # a broken case is a failure of its own, the others still run
        ctx.fail(f"{check.__name__}: {e!r}")
ctx.done()
