#!/usr/bin/env python3
"""Names with NUL bytes (issue 9): every writer converts them, and the outputs
pass the oracles the other tests use.

The core compares names by length and stores each NUL byte as U+FFFD, so
"a\\0b" and "a\\0c" are two names, shown as "a\\ufffdb" and "a\\ufffdc" by every
writer; before, pass 2 interned them again, the method table grew after the
writers had sized their arrays, and json/folded/pprof/perfetto read (and
perfetto wrote) past them.

Inputs: an atrace text built here (B|42|a\\0b, B|42|a\\0c), a Rhea text built
here, an ART trace whose method, class and thread names carry a NUL, and the
project's Rhea dump (corpus/rhea) with one byte of a name turned into NUL. Expected names
and counts come from how each input is built.
Oracles: Python json + check_chrome_json.py, check_folded.py, go tool pprof +
protoc (profile.proto), protoc (perfetto_trace.proto), check_systrace_html.py,
and the ir reader reading the ir output back.
"""
import gzip
import json
import os
import struct
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

FFFD = "\ufffd"
SHORT = "short"  # key of a want dict: the names flame graphs show, when they differ from the timeline's
WRITERS = ("json", "folded", "pprof", "perfetto", "systrace", "ir")
SYSTRACE_HDR = (b"# tracer: nop\n#\n"
                b"#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
                b"#              | |        |      |   ||||       |         |\n")


def st_line(ts_us, payload):
    return b"  app-42  (   42) [000] ...1 %6d.%06d: tracing_mark_write: %s\n" % (
        100 + ts_us // 1000000, ts_us % 1000000, payload)


def build_systrace(path):
    """3 slices a\\0b, 2 slices a\\0c (nested in nothing), then a\\0b with a NUL-only counter name."""
    lines = [SYSTRACE_HDR]
    t = 0
    for name, n in ((b"a\0b", 3), (b"a\0c", 2)):
        for _ in range(n):
            lines += [st_line(t, b"B|42|" + name), st_line(t + 5, b"E|42")]
            t += 10
    lines.append(st_line(t, b"C|42|\0|7"))
    with open(path, "wb") as f:
        f.write(b"".join(lines))
    return {"a" + FFFD + "b": 3, "a" + FFFD + "c": 2}


def build_rhea(path):
    """Rhea 1.x text: method markers whose names carry a NUL, entered and exited by name."""
    out = [b"512|TRACE_START|948220911000000|18557|2147483647|2|18316\n"]
    t = 0
    for _ in range(4):
        out.append(b"948220.%06d 18557: B|18557|B:Cls\0x:run\n" % (912000 + t))
        out.append(b"948220.%06d 18557: B|18557|E:Cls\0x:run\n" % (912000 + t + 50))
        t += 100
    out.append(b"513|TRACE_END|948220918000000|18557|2147483647|2|18316\n")
    with open(path, "wb") as f:
        f.write(b"".join(out))
    return {"Cls" + FFFD + "x:run": 4}


def build_art(path):
    key = ("*version\n3\nclock=dual\nvm=art\npid=42\n*threads\n42\tma\0in\n*methods\n"
           "0x4\tcom.ex\0A\tr\0n\t()V\tA.java\t1\n*end\n").encode()
    hdr = b"SLOW" + struct.pack("<HHQH", 3, 32, 1_700_000_000_000_000, 14)
    hdr += b"\0" * (32 - len(hdr))
    recs = b"".join(struct.pack("<HIII", 42, 4 | act, w, w) for act, w in ((0, 10), (1, 20), (0, 30), (1, 45)))
    with open(path, "wb") as f:
        f.write(key + hdr + recs)
    # timelines show the signature; flame graphs and pprof the short form
    return {"com.ex" + FFFD + "A.r" + FFFD + "n: ()V": 2, SHORT: {"com.ex" + FFFD + "A.r" + FFFD + "n"}}


def corrupt_rhea_corpus(ctx, path):
    """The project's Rhea text with the 'i' of 'initDb' (its first B: marker) turned into NUL."""
    with open(os.path.join(ctx.corpus, "rhea", "v1-allthreads.rhea-atrace.txt"), "rb") as f:
        data = f.read()
    i = data.index(b"B:NotesApp:initDb")
    data = data[:i + len("B:NotesApp:")] + b"\0" + data[i + len("B:NotesApp:") + 1:]
    with open(path, "wb") as f:
        f.write(data)
    return {}


# ---- oracles ------------------------------------------------------------------------------

def json_slices(path):
    """name -> number of B (or X) events."""
    with open(path, "rb") as f:
        doc = json.load(f)
    out = {}
    for e in doc["traceEvents"] if isinstance(doc, dict) else doc:
        if e.get("ph") in ("B", "X"):
            out[e.get("name")] = out.get(e.get("name"), 0) + 1
    return out


def check_json(ctx, label, path, want):
    try:
        got = json_slices(path)
    except ValueError as e:
        ctx.fail(f"{label}: json output does not load: {e}")
        return
    r = ctx.oracle(["python3", ctx.checker("check_chrome_json.py"), path])
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: check_chrome_json.py ({r.stdout.decode(errors='replace')[-400:]})")
    for name, n in want.items():
        if name == SHORT:
            continue
        ctx.eq(got.get(name), n, f"{label}: json slices named {name!r}")
    ctx.check(not any("\0" in k for k in got if k), f"{label}: a NUL reached the JSON names")


def short_names(want):
    return want.get(SHORT) or {k for k in want if k != SHORT}


def check_folded(ctx, label, path, want):
    r = ctx.oracle(["python3", ctx.checker("check_folded.py"), path])
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: check_folded.py ({r.stdout.decode(errors='replace')[-400:]})")
    with open(path, "rb") as f:
        text = f.read()
    ctx.check(b"\0" not in text, f"{label}: a NUL in the folded output")
    frames = {fr for line in text.decode("utf-8").splitlines() for fr in line.rsplit(" ", 1)[0].split(";")}
    for name in short_names(want):
        ctx.check(name in frames, f"{label}: folded frame {name!r} (frames: {sorted(frames)[:8]})")


def check_pprof(ctx, env, label, path, want):
    r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-raw", path], env=env)
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: go tool pprof -raw ({r.stderr.decode(errors='replace')[-300:]})")
        raw = r.stdout.decode("utf-8", errors="replace")
        for name in short_names(want):
            ctx.check(name in raw, f"{label}: pprof names {name!r}")
    with open(path, "rb") as f:
        body = gzip.decompress(f.read())
    r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("profile.proto"),
                    "--decode=perftools.profiles.Profile", "profile.proto"], input=body)
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: protoc decodes the profile ({r.stderr.decode(errors='replace')[-300:]})")


def check_perfetto(ctx, label, path, want):
    with open(path, "rb") as f:
        r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                        "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], stdin=f)
    if r is None:
        return
    ctx.eq(r.returncode, 0, f"{label}: protoc decodes the trace ({r.stderr.decode(errors='replace')[-300:]})")
    text = r.stdout.decode("utf-8", errors="replace")
    for name in (k for k in want if k != SHORT):  # protoc prints non-ASCII bytes as octal escapes
        esc = "".join(c if ord(c) < 128 else "".join("\\%03o" % b for b in c.encode()) for c in name)
        ctx.check(esc in text, f"{label}: perfetto names {name!r}")


def check_systrace(ctx, label, path, want):
    r = ctx.oracle(["python3", ctx.checker("check_systrace_html.py"), path])
    if r is None:
        return
    errs = [l for l in r.stdout.decode(errors="replace").splitlines() if l.startswith("ERROR:")]
    ctx.check(not errs and r.returncode in (0, 1), f"{label}: check_systrace_html.py: {errs[:5]} exit {r.returncode}")
    with open(path, "rb") as f:
        text = f.read()
    ctx.check(b"\0" not in text, f"{label}: a NUL in the systrace output")
    for name in (k for k in want if k != SHORT):
        ctx.check(("|" + name).encode() in text, f"{label}: systrace names {name!r}")


def check_ir(ctx, label, path, want):
    back = path + ".json"
    r = ctx.run(["-q", "-f", "-i", "ir", "-o", "json", path, back])
    if not ctx.check(r.returncode == 0, f"{label}: the ir output reads back: {r.stderr.decode(errors='replace')}"):
        return
    check_json(ctx, label + " (ir read back)", back, want)


def main():
    ctx = tclib.Ctx()
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    inputs = []
    for name, build in (("nul.systrace", build_systrace), ("nul.rhea-atrace.txt", build_rhea),
                        ("nul.trace", build_art)):
        path = os.path.join(ctx.work, name)
        inputs.append((name, path, build(path)))
    path = os.path.join(ctx.work, "rhea-corpus-nul.rhea-atrace.txt")
    inputs.append(("rhea corpus with a NUL", path, corrupt_rhea_corpus(ctx, path)))

    for label, src, want in inputs:
        for fmt in WRITERS:
            ext = {"pprof": "pb.gz", "perfetto": "pftrace", "systrace": "html", "ir": "ir.txt"}.get(fmt, fmt)
            out = os.path.join(ctx.work, f"{os.path.basename(src)}.{ext}")
            r = ctx.run(["-f", "-o", fmt, src, out])
            err = r.stderr.decode(errors="replace")
            ctx.check("Sanitizer" not in err and "runtime error" not in err, f"{label} -> {fmt}: {err[-1500:]}")
            if not ctx.check(r.returncode == 0, f"{label} -> {fmt}: exit {r.returncode}: {err[-600:]}"):
                continue
            tag = f"{label} -> {fmt}"
            if fmt == "json":
                check_json(ctx, tag, out, want)
            elif fmt == "folded":
                check_folded(ctx, tag, out, want)
            elif fmt == "pprof":
                check_pprof(ctx, env, tag, out, want)
            elif fmt == "perfetto":
                check_perfetto(ctx, tag, out, want)
            elif fmt == "systrace":
                check_systrace(ctx, tag, out, want)
            else:
                check_ir(ctx, tag, out, want)
        # distinct names stay distinct: the two systrace names are two methods
        if label == "nul.systrace":
            r = ctx.run(["-f", "-o", "json", src, os.path.join(ctx.work, "count.json")])
            figs = tclib.parse_figures(r.stderr.decode(errors="replace"))
            ctx.eq(figs.get("methods"), 3, f"{label}: methods (a\\0b, a\\0c and the counter)")
    ctx.done()


if __name__ == "__main__":
    main()
