#!/usr/bin/env python3
"""Deobfuscation (issue 13; the format spec: docs/formats/DEOBFUSCATION.md in the team's
shared notes) end to end.

The truth is a scenario's own names: tracegen writes, from one scenario, the
plain trace and (--obfuscate) the trace an R8-minified build would record plus
its mapping.txt. Converting the obfuscated trace with --deobfuscate must give,
stack for stack, what the plain trace gives:
  * every corpus scenario: folded text, JSON events (name, phase, timestamp,
    thread) and pprof stacks as `go tool pprof -raw` reads them (the oracle we
    did not write), and the IR's method table (names with descriptors, source
    files);
  * tests/deobf/feed.scn (overloads, nested classes, app types in descriptors)
    in each ART variant: v1, v2, v3, streaming, Dalvik, Android 14 chunked,
    and the legacy key/data pair;
  * the other readers, with inputs made here from the obfuscated names:
    systrace and Chrome JSON (the obfuscated trace converted), a Rhea 2.x
    binary dump with its methodMapping.txt (descriptors), a btrace 3.x sampling
    dump with its sampling-mapping (PrettyMethod Java types);
  * every writer of --list-formats shows source names and no obfuscated one.
Each comparison also checks that the obfuscated conversion differs from the
plain one, so that a --deobfuscate that did nothing would fail."""
import gzip
import html
import json
import os
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

FEED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deobf", "feed.scn")

# ART variants: header lines put before feed.scn's methods and threads
VARIANTS = {
    "v1-dalvik": "version 1\nclock thread-cpu\nvm dalvik\n",
    "v2-wall": "version 2\nclock wall\n",
    "v3-dual": "version 3\nclock dual\nvm art\n",
    "streaming": "version 3\nstreaming yes\nclock dual\n",
    "dalvik-6field": "version 3\nclock dual\nvm dalvik\nids dalvik\nmethod-fields 6\n",
    "android14-chunked": "version 3\nstreaming yes\nclock dual\ntids synthetic\norder chunked 4\n"
                         "summary-threads none\nsummary-methods all\n",
}


# packages that are not the app's: R8 keeps their names (tracegen --obfuscate does likewise)
PLATFORM = ("android.", "java.", "javax.", "dalvik.", "libcore.", "sun.", "com.android.", "org.json.", "org.xml.",
            "org.w3c.", "org.apache.http.")


def tracegen(ctx, scn, out, mapping=None, extra=()):
    args = [ctx.tracegen, scn, out] + (["--obfuscate", mapping] if mapping else []) + list(extra)
    r = subprocess.run(args, capture_output=True)
    return ctx.check(r.returncode == 0, f"tracegen {' '.join(args[1:])}: {r.stderr.decode(errors='replace')}")


def convert(ctx, src, fmt, out, extra=()):
    r = ctx.run(["-f", "-o", fmt, *extra, src, out])
    err = r.stderr.decode(errors="replace")
    if not ctx.check(r.returncode == 0, f"{src} -> {fmt} {' '.join(extra)}: exit {r.returncode}: {err.strip()}"):
        return None
    return err


def read(path):
    with open(path, "rb") as f:
        return f.read()


def json_events(path):
    """(phase, name, ts, tid, dur) of every slice event, in file order."""
    with open(path, "rb") as f:
        doc = json.load(f)
    evs = doc["traceEvents"] if isinstance(doc, dict) else doc
    return [(e["ph"], e.get("name"), e.get("ts"), e.get("tid"), e.get("dur")) for e in evs
            if e.get("ph") in ("B", "E", "X", "i", "I")]


def json_figures(path):
    with open(path, "rb") as f:
        doc = json.load(f)
    return doc.get("otherData", {}).get("figures", {}) if isinstance(doc, dict) else {}


def ir_methods(path):
    """The IR's method lines (name with descriptor, file)."""
    return [l for l in read(path).decode(errors="replace").splitlines() if l.startswith("method ")]


def without_unknown_files(want, got):
    """A method whose source file the scenario did not give ("(null)"): a mapped class's file is
    then what retrace infers (DEOBFUSCATION.md 7.7), which the plain trace cannot tell; the rest
    of the line must still be equal."""
    drop = lambda l: re.sub(r' file="[^"]*"', "", l)  # noqa: E731
    return [drop(w) if ' file="" ' in w else w for w in want], \
        [drop(g) if ' file="" ' in w else g for w, g in zip(want, got)] + got[len(want):]


def pprof_stacks(ctx, path):
    home = os.path.join(ctx.work, "home")
    os.makedirs(home, exist_ok=True)
    r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-raw", path], env=dict(os.environ, HOME=home))
    if r is None or not ctx.check(r.returncode == 0, f"go tool pprof -raw {path}: {r.stderr.decode()[-300:]}"):
        return None
    _, samples, locs = tclib.pprof_raw(r.stdout.decode(errors="replace"))
    return sorted((tuple(locs.get(i, "?") for i in reversed(s[2])), s[0], s[1], tuple(sorted(s[3].items())))
                  for s in samples)


def compare(ctx, label, plain, obf, mapping, fmts=("folded", "json", "pprof", "ir"), reader=(), obfuscated=True):
    """plain converted, obf converted with and without --deobfuscate: equal / different
    (obfuscated False: a scenario of platform classes only, which R8 does not rename)."""
    d = os.path.join(ctx.work, re.sub(r"[^\w.-]", "_", label))
    os.makedirs(d, exist_ok=True)
    figs = None
    for fmt in fmts:
        ext = tclib.WRITER_EXT[fmt]
        p, o, x = (os.path.join(d, f"{k}.{ext}") for k in ("plain", "obf", "deobf"))
        if (convert(ctx, plain, fmt, p, reader) is None or convert(ctx, obf, fmt, o, reader) is None or
                convert(ctx, obf, fmt, x, [*reader, "--deobfuscate", mapping]) is None):
            continue
        if fmt == "folded":
            want, raw, got = (tclib.read_folded(f) for f in (p, o, x))
        elif fmt == "json":
            want, raw, got = (json_events(f) for f in (p, o, x))
            figs = json_figures(x)
        elif fmt == "ir":
            want, raw, got = (ir_methods(f) for f in (p, o, x))
            want, got = without_unknown_files(want, got)
        else:
            want, raw, got = (pprof_stacks(ctx, f) for f in (p, o, x))
            if want is None:
                continue
        ctx.check(want, f"{label}: {fmt}: the plain conversion is not empty")
        ctx.check(got == want, f"{label}: {fmt}: --deobfuscate gives the plain trace's output"
                  + ("" if got == want else f"\n  got  {str(got)[:1500]}\n  want {str(want)[:1500]}"))
        if obfuscated:
            ctx.check(raw != want, f"{label}: {fmt}: the obfuscated trace's output differs from the plain one's")
    return figs


def scn_classes(scn):
    """The classes of a scenario's method lines (tracegen's language: method ALIAS CLASS NAME ...)."""
    out = []
    for line in open(scn, encoding="utf-8"):
        words = line.split()
        if len(words) >= 3 and words[0] == "method":
            out.append(words[2].strip('"'))
    return out


def corpus_scenarios(ctx):
    """Every corpus scenario, obfuscated: folded, json, pprof and the method table."""
    n = obfuscated = 0
    for f in sorted(os.listdir(ctx.corpus)):
        if not f.endswith(".scn") or f == "millions.scn":
            continue
        stem = f[:-4]
        d = os.path.join(ctx.work, "corpus", stem)
        os.makedirs(d, exist_ok=True)
        scn, plain, obf, mp = (os.path.join(ctx.corpus, f), os.path.join(d, "plain.trace"),
                               os.path.join(d, "obf.trace"), os.path.join(d, "mapping.txt"))
        if not (tracegen(ctx, scn, plain) and tracegen(ctx, scn, obf, mp)):
            continue
        app = any(not c.replace("/", ".").startswith(PLATFORM) for c in scn_classes(scn))
        figs = compare(ctx, f"corpus/{stem}", plain, obf, mp, obfuscated=app)
        obfuscated += app
        if figs is not None and app:
            ctx.check(figs.get("deobf-methods", 0) > 0 and figs.get("deobf-classes", 0) > 0,
                      f"corpus/{stem}: figures count the renamed methods and classes: {figs}")
            ctx.check(not any(k in figs for k in ("deobf-ambiguous", "deobf-fallback", "deobf-mismatch")),
                      f"corpus/{stem}: a mapping of the same build resolves every method: {figs}")
        n += 1
    ctx.check(n >= 25 and obfuscated >= 20, f"corpus scenarios: {n}, with app classes renamed: {obfuscated}")
    # the summary line speaks of deobfuscation only when a mapping was given
    r = ctx.run(["-f", "-o", "folded", os.path.join(ctx.source, "corpus", "app-startup.trace"),
                 os.path.join(ctx.work, "plain-summary.folded")])
    ctx.check(r.returncode == 0 and b"deobfuscated:" not in r.stderr and b"deobf-" not in r.stderr, f"no mapping, no deobfuscation figures: {r.stderr!r}")


def feed_variant(ctx, name, header):
    d = os.path.join(ctx.work, "variants", name)
    os.makedirs(d, exist_ok=True)
    scn = os.path.join(d, "feed.scn")
    with open(scn, "w") as f:
        f.write(header + open(FEED).read())
    plain, obf, mp = (os.path.join(d, x) for x in ("plain.trace", "obf.trace", "mapping.txt"))
    if tracegen(ctx, scn, plain) and tracegen(ctx, scn, obf, mp):
        return plain, obf, mp
    return None


def variants(ctx):
    made = {}
    for name, header in VARIANTS.items():
        got = feed_variant(ctx, name, header)
        if got:
            made[name] = got
            compare(ctx, f"feed/{name}", *got)
    # the legacy key/data pair (ART.md §7): the obfuscated v3 trace split in two
    if "v3-dual" in made:
        plain, obf, mp = made["v3-dual"]
        pair = []
        for src in (plain, obf):
            data = read(src)
            cut = data.index(b"\n*end\n") + len(b"\n*end\n")
            stem = os.path.join(os.path.dirname(src), "pair-" + os.path.basename(src)[:-6])
            with open(stem + ".key", "wb") as f:
                f.write(data[:cut])
            with open(stem + ".data", "wb") as f:
                f.write(data[cut:])
            pair.append(stem + ".key")
        compare(ctx, "feed/legacy-pair", pair[0], pair[1], mp, fmts=("folded", "json", "ir"))
    return made


def text_readers(ctx, plain, obf, mp):
    """systrace and Chrome JSON inputs: the obfuscated trace's names as slices."""
    d = os.path.join(ctx.work, "text")
    os.makedirs(d, exist_ok=True)
    for fmt, ext, opts in (("systrace", "html", []), ("systrace", "systrace", ["--text"]), ("json", "json", [])):
        p, o = os.path.join(d, f"plain-{fmt}{opts}.{ext}"), os.path.join(d, f"obf-{fmt}{opts}.{ext}")
        if convert(ctx, plain, fmt, p, opts) is None or convert(ctx, obf, fmt, o, opts) is None:
            continue
        compare(ctx, f"feed/{fmt}{''.join(opts)}-input", p, o, mp, fmts=("folded", "json", "pprof"), reader=["-i", fmt])
    # bare "class.method" slices (atrace sections): renamed when one original name fits
    bare = os.path.join(d, "bare.systrace")
    with open(bare, "w") as f:
        f.write("# tracer: nop\n")
        for i, name in enumerate(("b.b.a", "c.a.a", "x.y.z", "hello world", "a.d$a$a.a")):
            f.write(f"  main-7 (7) [000] ...1 1.{i:04d}00: tracing_mark_write: B|7|{name}\n"
                    f"  main-7 (7) [000] ...1 1.{i:04d}50: tracing_mark_write: E|7\n")
    out = os.path.join(d, "bare.folded")
    if convert(ctx, bare, "folded", out, ["-i", "systrace", "--deobfuscate", mp]) is not None:
        got = {k.split(";", 1)[1] for k in tclib.read_folded(out)}
        ctx.eq(got, {"com.example.feed.data.FeedParser.parse", "com.example.feed.model.User.getName", "x.y.z",
                     "hello world", "com.example.feed.ui.Outer$Inner$Deep.compute"},
               "bare systrace slices: qualified names renamed, others kept")


# Rhea 2.x binary records and btrace 3.x sampling (RHEA.md §2.2, §3), as tests/golden/test_rhea_reader.py writes them
def rhea_v2_record(start_rel, dur, tid, mid):
    return struct.pack("<QQ", (start_rel << 19) | (dur >> 26), ((dur & 0x3FFFFFF) << 38) | (tid << 23) | mid)


def art_methods(ctx, trace):
    """(class, name, descriptor) of the trace's methods in table order, from its *methods section."""
    data = read(trace)
    sec = data[data.index(b"*methods\n") + 9:data.index(b"*end\n")].decode()
    out = []
    for line in sec.splitlines():
        cols = line.split("\t")
        out.append((cols[1].replace("/", "."), cols[2], cols[3]))
    return out


def java_type(desc, i=0):
    """A descriptor's type at i as PrettyMethod writes it: (text, next index)."""
    dims = 0
    while desc[i] == "[":
        dims, i = dims + 1, i + 1
    prim = {"Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int", "J": "long", "F": "float",
            "D": "double", "V": "void"}
    if desc[i] == "L":
        end = desc.index(";", i)
        name, i = desc[i + 1:end].replace("/", "."), end + 1
    else:
        name, i = prim[desc[i]], i + 1
    return name + "[]" * dims, i


def pretty(cls, name, desc):
    args, i = [], 1
    while desc[i] != ")":
        t, i = java_type(desc, i)
        args.append(t)
    ret, _ = java_type(desc, i + 1)
    return f"{ret} {cls}.{name}({', '.join(args)})"


def rhea_readers(ctx, plain, obf, mp):
    d = os.path.join(ctx.work, "rhea")
    os.makedirs(d, exist_ok=True)
    orig, renamed = art_methods(ctx, plain), art_methods(ctx, obf)
    if not ctx.eq(len(orig), len(renamed), "rhea: both traces list the same methods"):
        return
    pid, mono = 4000, 232073280000000
    recs = []  # 2.x: a record is written when its method returns: children first
    for k, tid in enumerate((pid, pid + 1)):
        for g in range(3):
            base = (k * 3 + g) * 100000
            recs += [rhea_v2_record(base + 1000 + 20000 * c, 10000, tid, 1 + (g * 5 + c + k) % len(orig))
                     for c in range(3)]
            recs.append(rhea_v2_record(base, 80000, tid, 1 + (g * 7 + k + 3) % len(orig)))
    body = struct.pack("<IIQQQ", 5, pid, 948220911000000, mono, mono) + b"".join(recs)
    # 3.x sampling: stacks over the methods, leaf first; PrettyMethod names in the mapping
    hdr = struct.pack("<IIIQIi", 0x01020304, 0, 5, 948230000, 4, 2) + b"{}"

    def sample(t0, frames):
        r = struct.pack("<HHIQQQQQQIII", 5, pid, 1, t0, 0, 10, 0, 10, 640, 0, 1, 0)
        return r + struct.pack("<II", len(frames), len(frames)) + b"".join(struct.pack("<Q", f) for f in frames)
    ptr = lambda i: 0x70000000 + 0x100 * i  # noqa: E731
    samples = b"".join(sample(1_000_000_000 + 1_000_000 * s, [ptr((s * 3 + j) % len(orig)) for j in range(4)])
                       for s in range(12))
    for tag, names in (("plain", orig), ("obf", renamed)):
        with open(os.path.join(d, f"{tag}-methodMapping.txt"), "w") as f:
            f.write("#0b5d7a4e-0c1f-4a53-9a43-3f0d6f2b9c11\n")
            for i, (c, n, s) in enumerate(names):
                f.write(f"{i + 1},1,{c} {n} {s}\n")
        with open(os.path.join(d, f"{tag}-appTrace.bin"), "wb") as f:
            f.write(body)
        mpb = struct.pack("<QII", 0, 1, len(names))
        for i, (c, n, s) in enumerate(names):
            txt = pretty(c, n, s).encode()
            mpb += struct.pack("<QH", ptr(i), len(txt)) + txt
        mpb += struct.pack("<hB", pid, 4) + b"main"
        with open(os.path.join(d, f"{tag}-sampling-mapping.bin"), "wb") as f:
            f.write(mpb)
        with open(os.path.join(d, f"{tag}-sampling.bin"), "wb") as f:
            f.write(hdr + samples)
    for kind, side in (("appTrace", "methodMapping.txt"), ("sampling", "sampling-mapping.bin")):
        for fmt in ("folded", "json", "pprof") if kind == "appTrace" else ("folded", "pprof"):  # json: no samples
            ext = tclib.WRITER_EXT[fmt]
            outs = {}
            for tag, extra in (("plain", []), ("obf", []), ("deobf", ["--deobfuscate", mp])):
                src = "plain" if tag == "plain" else "obf"
                out = os.path.join(d, f"{kind}-{tag}.{ext}")
                if convert(ctx, os.path.join(d, f"{src}-{kind}.bin"), fmt, out,
                           ["-i", "rhea", "--mapping", os.path.join(d, f"{src}-{side}"), *extra]) is None:
                    break
                outs[tag] = out
            else:
                get = {"folded": tclib.read_folded, "json": json_events}.get(fmt, lambda f: pprof_stacks(ctx, f))
                want, raw, got = (get(outs[t]) for t in ("plain", "obf", "deobf"))
                ctx.check(want and got == want, f"rhea {kind}: {fmt}: --deobfuscate gives the original names"
                          + ("" if got == want else f"\n  got  {str(got)[:800]}\n  want {str(want)[:800]}"))
                ctx.check(raw != want, f"rhea {kind}: {fmt}: the obfuscated dump's output differs")


def obfuscated_frames(ctx, obf):
    """The names the writers would show for the obfuscated trace's app methods (a.b.a, c.b.<init>)."""
    return {f"{c}.{n}" for c, n, _ in art_methods(ctx, obf)
            if not c.startswith(PLATFORM)}


NAMELESS = {"activity"}  # writers whose output names no method (per-thread counts over time)


def every_writer(ctx, plain, obf, mp):
    r = ctx.run(["--list-formats"], check_rc=0)
    writers, on = [], False
    for line in r.stdout.decode().splitlines():
        if line.startswith("writers"):
            on = True
        elif on and line.strip():
            writers.append(line.split()[0])
    ctx.check(len(writers) >= 6, f"writers listed: {writers}")
    bad = obfuscated_frames(ctx, obf)
    ctx.check(len(bad) >= 10, f"obfuscated names to look for: {sorted(bad)}")
    d = os.path.join(ctx.work, "writers")
    os.makedirs(d, exist_ok=True)
    for w in writers:
        out = os.path.join(d, f"feed.{tclib.WRITER_EXT.get(w, w)}")
        raw_out = os.path.join(d, f"raw-feed.{tclib.WRITER_EXT.get(w, w)}")
        if convert(ctx, obf, w, out, ["--deobfuscate", mp]) is None or convert(ctx, obf, w, raw_out) is None:
            continue
        texts = []
        for f in (out, raw_out):
            b = read(f)
            if b[:2] == b"\x1f\x8b":
                b = gzip.decompress(b)
            t = b.decode("utf-8", errors="replace")
            texts.append(t + "\n" + html.unescape(t))
        shown = sorted(n for n in bad if n in texts[0])
        ctx.check(not shown, f"{w}: no obfuscated name in the deobfuscated output: {shown}")
        if w in NAMELESS:
            ctx.check(not any(n in texts[1] for n in bad), f"{w}: names no method")
            continue
        ctx.check(any(n in texts[1] for n in bad), f"{w}: the obfuscated output does show obfuscated names")
        for want in ("com.example.feed.ui.FeedAdapter", "FeedParser", "Outer$Inner$Deep"):
            ctx.check(want in texts[0], f"{w}: the deobfuscated output names {want}")


def main():
    ctx = tclib.Ctx()
    if not ctx.tracegen:
        ctx.fail("tracegen was not built")
        ctx.done()
    corpus_scenarios(ctx)
    made = variants(ctx)
    if "v3-dual" in made:
        text_readers(ctx, *made["v3-dual"])
        rhea_readers(ctx, *made["v3-dual"])
        every_writer(ctx, *made["v3-dual"])
    ctx.done()


if __name__ == "__main__":
    main()
