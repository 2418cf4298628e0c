#!/usr/bin/env python3
"""`traceconv batch`: archives, directories and stdin built here from the project's traces
(corpus/ with its rhea and systrace folders, tests/json, tests/ir; TC_EXTRA_CORPUS's too when
set); every output byte-identical to the single-file conversion of the
same member (extracted alone, so no side file is found); the summary lists exactly the
members with the statuses the test expects from how it built them; hostile archives never
write outside OUTDIR; -j 1 == -j 4; shards partition the members; SIGINT leaves nothing
partial behind."""
import glob
import gzip
import io
import json
import os
import shutil
import signal
import sys
import subprocess
import tarfile
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from tclib import Ctx, WRITER_EXT, is_temp_name  # noqa: E402

ctx = Ctx()
W = ctx.work
FORMATS = ["json", "folded", "perfetto"]
# The archive kinds other than plain tar differ only in how members are read: they are
# converted to one format (perfetto), the tar and the directory tree to all of FORMATS.
READ_ONLY_FORMATS = ["perfetto"]

# A Chrome JSON trace small enough for 10,000 copies; an ART header with an impossible start time.
TINY = b'{"traceEvents":[{"ph":"B","name":"f","pid":1,"tid":1,"ts":0},{"ph":"E","pid":1,"tid":1,"ts":5}]}'
CORRUPT = b"SLOW\x03\x00\x10\x00" + b"garbage" * 8
TEXT = b"just some notes, not a trace\n"


def sources():
    """(member path inside the archives, local file, expected status) of every trace we pack."""
    out = []
    for p in sorted(glob.glob(os.path.join(ctx.source, "corpus", "*.trace"))):
        out.append(("project/" + os.path.basename(p), p))
    for pat in ("tests/json/*.json", "tests/ir/*.ir.txt"):
        for p in sorted(glob.glob(os.path.join(ctx.source, pat))):
            out.append(("project/" + os.path.basename(p), p))
    for sub in ("systrace", "rhea"):  # every file there, side files and non-traces too
        out += [(f"project/{sub}/" + os.path.basename(p), p) for p in ctx.corpus_files(sub)]
    for sub in ("art", "systrace", "rhea"):
        out += [(label, p) for label, p in ctx.extra_files(sub)]
    return out


def strip_ext(path):
    base = os.path.basename(path)
    stem = base
    if stem.endswith(".gz") and "." in stem[:-3].lstrip("."):
        stem = stem[:-3]
    i = stem.rfind(".")
    if i > 0:
        stem = stem[:i]
    d = os.path.dirname(path)
    return os.path.join(d, stem) if d else stem


def output_name(stem, member, fmt):
    """A member's output for fmt: stem + the writer's extension, or stem.FORMAT.ext when that
    would be the member's own name (system.json -> system.json.json): never the input's name."""
    name = f"{stem}.{WRITER_EXT[fmt]}"
    if os.path.basename(name).lower() == os.path.basename(member).lower():
        name = f"{stem}.{fmt}.{WRITER_EXT[fmt]}"
    return name


def output_stems(names, formats=FORMATS):
    """The stems the batch must give, in member order: the path without extension, then -1, -2...
    while one of its output names is taken (names compared without case)."""
    used, out = set(), {}
    for n in names:
        want = strip_ext(n)
        stem, k = want, 0
        while any(output_name(stem, n, f).lower() in used for f in formats):
            k += 1
            stem = f"{want}-{k}"
        used.update(output_name(stem, n, f).lower() for f in formats)
        out[n] = stem
    return out


def in_place(path, fmt, cache={}):
    """The single-file CLI's conversion of a file where it is (side files found): bytes or None."""
    if (path, fmt) not in cache:
        out = os.path.join(W, "inplace." + WRITER_EXT[fmt])
        r = ctx.reference_run(["-q", "-f", "-o", fmt, path, out])
        cache[(path, fmt)] = open(out, "rb").read() if r.returncode == 0 else None
        if os.path.exists(out):
            os.unlink(out)
    return cache[(path, fmt)]


def single_file(data, name, fmt, cache={}):
    """The single-file CLI's conversion of a member extracted alone: bytes or None (failed)."""
    key = (data, name, fmt)
    if key not in cache:
        d = os.path.join(W, "single", str(len(cache)))
        os.makedirs(d)
        src = os.path.join(d, name)
        with open(src, "wb") as f:
            f.write(data)
        out = os.path.join(d, "out." + WRITER_EXT[fmt])
        r = ctx.reference_run(["-q", "-o", fmt, src, out])
        cache[key] = open(out, "rb").read() if r.returncode == 0 else None
        shutil.rmtree(d)
    return cache[key]


def probe_recognizes(data):
    p = os.path.join(W, "probe.bin")
    with open(p, "wb") as f:
        f.write(data)
    r = ctx.reference_run(["--probe", p])
    return any(int(line.split()[1]) > 0 for line in r.stdout.decode().splitlines() if line.strip())


def members_set():
    """{member path: bytes}: the corpus plus a text file and a corrupt trace."""
    m = {}
    for name, p in sources():
        m[name] = open(p, "rb").read()
    m["notes/readme.txt"] = TEXT
    m["bad/corrupt.trace"] = CORRUPT
    return m


def expected_status(data, name, convert=None, formats=FORMATS):
    if not data or not probe_recognizes(data):
        return "skipped"
    convert = convert or (lambda f: single_file(data, os.path.basename(name), f))
    return "ok" if all(convert(f) is not None for f in formats) else "failed"


def batch(args, check_rc=None, **kw):
    return ctx.run(["batch", *args], check_rc=check_rc, **kw)


def summary(outdir, path=None):
    with open(path or os.path.join(outdir, "traceconv-batch.json")) as f:
        return json.load(f)


def names_under(d):
    """The paths of the files under d (their contents are not read: outputs may be large)."""
    return [os.path.relpath(os.path.join(root, f), d) for root, _, files in os.walk(d) for f in files]


def files_under(d):
    out = {}
    for root, dirs, files in os.walk(d):
        for f in files:
            p = os.path.join(root, f)
            out[os.path.relpath(p, d)] = open(p, "rb").read()
    return out


def check_outputs(outdir, group, members, expect, what, tree=None, formats=FORMATS):
    """Every member's outputs equal the single-file conversion (of the file in tree, when given);
    statuses as expected; no other file."""
    s = summary(outdir)
    stems = output_stems(sorted(members) if tree else list(members), formats)
    got = {e["member"]: e for e in s["members"]}
    ctx.eq(sorted(got), sorted(members), f"{what}: members listed")
    want_files = {"traceconv-batch.json"}
    for name, data in members.items():
        e = got.get(name)
        if not e:
            continue
        ctx.eq(e["status"], expect[name], f"{what}: {name} status ({e.get('error') or e.get('reason')})")
        ctx.eq(e["size"], len(data), f"{what}: {name} size")
        if expect[name] != "ok":
            continue
        for fmt in formats:
            rel = os.path.join(group, output_name(stems[name], name, fmt))
            want_files.add(rel)
            p = os.path.join(outdir, rel)
            want = in_place(os.path.join(tree, name), fmt) if tree else single_file(data, os.path.basename(name), fmt)
            ok = os.path.exists(p) and open(p, "rb").read() == want
            ctx.check(ok, f"{what}: {rel} differs from the single-file conversion (or is missing)")
        ctx.eq(sorted(o["format"] for o in e.get("outputs", [])), sorted(formats), f"{what}: {name} outputs")
    ctx.eq(sorted(names_under(outdir)), sorted(want_files), f"{what}: files in OUTDIR")
    t = s["totals"]
    for st in ("ok", "failed", "skipped"):
        ctx.eq(t[st], sum(1 for v in expect.values() if v == st), f"{what}: totals.{st}")


def tar_bytes(members, mode="w", **kw):
    """A tar archive of {name: bytes} (mode "w:gz" gzips it), as bytes."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode=mode, **kw) as t:
        for name, data in members.items():
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            ti.mtime = 1700000000
            t.addfile(ti, io.BytesIO(data))
    return buf.getvalue()


def write_tar(path, members, mode="w"):
    with open(path, "wb") as f:
        f.write(tar_bytes(members, mode))


def gzip_copy(path, dest=None):
    """path gzipped (level 1) into dest, path + ".gz" by default; returns dest."""
    dest = dest or path + ".gz"
    with open(path, "rb") as f, gzip.open(dest, "wb", compresslevel=1) as g:
        shutil.copyfileobj(f, g)
    return dest


def write_zip(path, members):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in members.items():
            z.writestr(name, data)


def test_archive_kinds(members, expect):
    expect_one = {n: expected_status(d, n, formats=READ_ONLY_FORMATS) for n, d in members.items()}
    kinds = {"zip": None, "tar": "w", "tar.gz": "w:gz", "tar.xz": "w:xz", "tar.bz2": "w:bz2"}
    for kind, mode in kinds.items():
        arc = os.path.join(W, f"set.{kind}")
        write_zip(arc, members) if kind == "zip" else write_tar(arc, members, mode)
        out = os.path.join(W, f"out-{kind}")
        formats, want = (FORMATS, expect) if kind == "tar" else (READ_ONLY_FORMATS, expect_one)
        batch(["-o", ",".join(formats), "-O", out, "-q", arc], check_rc=1 if "failed" in want.values() else 0)
        check_outputs(out, "set", members, want, kind, formats=formats)
    if shutil.which("zstd"):
        tar = os.path.join(W, "set.tar")
        subprocess.run(["zstd", "-q", "-f", tar, "-o", tar + ".zst"], check=True)
        out = os.path.join(W, "out-zst")
        batch(["-o", ",".join(READ_ONLY_FORMATS), "-O", out, "-q", tar + ".zst"], check_rc=1)
        check_outputs(out, "set", members, expect_one, "tar.zst", formats=READ_ONLY_FORMATS)
    # a directory tree
    tree = os.path.join(W, "tree")
    for name, data in members.items():
        os.makedirs(os.path.dirname(os.path.join(tree, name)), exist_ok=True)
        with open(os.path.join(tree, name), "wb") as f:
            f.write(data)
    out = os.path.join(W, "out-dir")
    expect_tree = {n: expected_status(d, n, lambda f, n=n: in_place(os.path.join(tree, n), f))
                   for n, d in members.items()}
    batch(["-o", ",".join(FORMATS), "-O", out, "-q", tree], check_rc=1 if "failed" in expect_tree.values() else 0)
    check_outputs(out, "tree", members, expect_tree, "directory", tree=tree)
    # stdin
    out = os.path.join(W, "out-stdin")
    batch(["-o", ",".join(READ_ONLY_FORMATS), "-O", out, "-q", "-"],
          stdin=open(os.path.join(W, "set.tar.gz"), "rb").read(), check_rc=1)
    check_outputs(out, "stdin", members, expect_one, "stdin", formats=READ_ONLY_FORMATS)


def test_jobs_and_shards():
    arc = os.path.join(W, "set.tar.gz")
    runs = {}
    for j in ("1", "4"):
        out = os.path.join(W, f"out-j{j}")
        batch(["-o", "json,folded", "-O", out, "-j", j, "-q", arc])
        s = summary(out)
        for e in s["members"]:
            e.pop("seconds", None)
        s["totals"].pop("seconds")
        runs[j] = (files_under(out), s)
    for j in runs:
        runs[j][0].pop("traceconv-batch.json")
    ctx.check(runs["1"][0] == runs["4"][0], "-j 1 and -j 4 write different files")
    ctx.eq(runs["4"][1], runs["1"][1], "-j 1 and -j 4 summaries")
    whole_files, whole = runs["1"]
    seen, files = [], {}
    procs = []
    for i in range(3):  # as doc/batch.md's recipe: shards at the same time, each its own OUTDIR
        out = os.path.join(W, f"out-shard{i}")
        procs.append((out, subprocess.Popen([ctx.traceconv, "batch", "-o", "json,folded", "-O", out, "-q",
                                             "--shard", f"{i}/3", arc])))
    for out, p in procs:
        p.wait()
        s = summary(out)
        seen += [(e["source"], e["member"]) for e in s["members"]]
        for k, v in files_under(out).items():
            if k != "traceconv-batch.json":
                ctx.check(k not in files, f"shards overlap: {k}")
                files[k] = v
    ctx.eq(sorted(seen), sorted((e["source"], e["member"]) for e in whole["members"]), "union of the shards' members")
    ctx.eq(len(seen), len(set(seen)), "no member in two shards")
    ctx.check(files == whole_files, "union of the shards' outputs differs from the whole")


def test_readme_shard_recipe():
    """Two shards at once into one OUTDIR, each with its own summary, merged as doc/batch.md's recipes end."""
    page = open(os.path.join(ctx.source, "doc", "batch.md")).read()
    recipes = page[page.index("Recipes:"):page.index("`traceconv batch --help` lists every option")]
    ctx.eq(recipes.count("traceconv batch --merge-summaries --summary /data/out/traceconv-batch.json "
                         "/data/out/shard-*.json"), 3, "doc/batch.md: each recipe ends with the merge")
    arc = os.path.join(W, "set.tar.gz")
    out = os.path.join(W, "out-recipe")
    procs = [subprocess.Popen([ctx.traceconv, "batch", "-o", "json", "-O", out, "-q", "--summary",
                               os.path.join(out, f"shard-{k}.json"), "--shard", f"{k}/2", arc]) for k in range(2)]
    for p in procs:
        p.wait()
    whole = os.path.join(W, "out-whole")
    batch(["-o", "json", "-O", whole, "-q", arc])
    r = ctx.run(["batch", "--merge-summaries", os.path.join(out, "shard-0.json"), os.path.join(out, "shard-1.json")],
                check_rc=0)
    merged, w = json.loads(r.stdout), summary(whole)
    merged["totals"].pop("seconds")
    w["totals"].pop("seconds")
    ctx.eq(merged, w, "recipe: the merged summary (seconds aside)")
    a, b = files_under(out), files_under(whole)
    for d in (a, b):
        for k in [k for k in d if k.endswith(".json") and "/" not in k]:
            d.pop(k)
    ctx.check(a == b, "recipe: the shards' shared OUTDIR equals the whole run's")


def test_man_and_completion():
    """Every long option of `batch --help` is in the man page and the completion; the completion
    offers exactly the writers of --list-formats."""
    import re
    helptext = ctx.run(["batch", "--help"], check_rc=0).stdout.decode()
    opts = set(re.findall(r"^ +(?:-\w, )?(--[a-z][a-z-]+)", helptext, re.M))  # the options it defines
    man = open(os.path.join(ctx.source, "doc", "traceconv.1")).read().replace("\\-", "-")
    comp = os.path.join(ctx.source, "doc", "traceconv.bash-completion")

    def complete(*words):  # the completion asks the program it completes for its tables
        r = subprocess.run(["bash", "-c", f'source "{comp}"; COMP_WORDS=("{ctx.traceconv}" {" ".join(words)}); '
                            f'COMP_CWORD={len(words)}; _traceconv; printf "%s\\n" "${{COMPREPLY[@]}}"'],
                           capture_output=True, text=True)
        return r.stdout.split()
    offered = set(complete("batch", "--"))
    for o in sorted(opts):
        ctx.check(o in man, f"man page lacks {o}")
        ctx.check(o in offered, f"bash completion lacks {o}")
    listed = ctx.run(["--list-formats"], check_rc=0).stdout.decode().split("writers")[1]
    writers = sorted(line.split()[0] for line in listed.splitlines()[1:] if line.strip())
    variants = sorted(re.findall(r"(?:also -o |, )([a-z]+-[a-z]+) \(", listed))
    ctx.eq(sorted(w.split(",", 1)[1] for w in complete("batch", "-o", "json,")), sorted(writers + variants),
           "completion: writers and their variants after a comma")


def test_nested():
    """An archive in an archive is read (one level); one more level down is a member like any other."""
    good = open(os.path.join(ctx.source, "corpus", "app-startup.trace"), "rb").read()
    deeper = io.BytesIO()
    with zipfile.ZipFile(deeper, "w") as z:
        z.writestr("deep.trace", good)
    inner = tar_bytes({"in/x.trace": good, "deeper.zip": deeper.getvalue()}, "w:gz")
    arc = os.path.join(W, "outer.zip")
    write_zip(arc, {"sub/inner.tar.gz": inner, "top.trace": good})
    out = os.path.join(W, "out-nested")
    batch(["-o", "json", "-O", out, "-q", arc], check_rc=0)
    s = summary(out)
    ctx.eq([(e["member"], e["status"]) for e in s["members"]],
           [("sub/inner.tar.gz", "skipped"), ("sub/inner.tar.gz/in/x.trace", "ok"),
            ("sub/inner.tar.gz/deeper.zip", "skipped"), ("top.trace", "ok")], "nested: members")
    p = os.path.join(out, "outer", "sub", "inner", "in", "x.json")
    ctx.check(os.path.exists(p) and open(p, "rb").read() == single_file(good, "x.trace", "json"),
              "nested: outer/sub/inner/in/x.json is the single-file conversion")


def entry(s, member):
    es = [e for e in s["members"] if e["member"] == member]
    return es[0] if len(es) == 1 else None


def test_hostile():
    good = open(os.path.join(ctx.source, "corpus", "app-startup.trace"), "rb").read()

    box = os.path.join(W, "box")  # nothing may appear in box but the archive and OUTDIR
    os.makedirs(os.path.join(box, "inner"))
    arc = os.path.join(box, "inner", "evil.tar")
    with tarfile.open(arc, "w") as t:
        def add(name, data=b"", **kw):
            ti = tarfile.TarInfo(name)
            ti.size = len(data)
            for k, v in kw.items():
                setattr(ti, k, v)
            t.addfile(ti, io.BytesIO(data) if data else None)
        add("../x.trace", good)
        add("/abs/x.trace", good)
        add("a/../../y.trace", good)
        add("C:\\win\\z.trace", good)
        add("link.trace", type=tarfile.SYMTYPE, linkname="../../../outside.trace")
        add("ln/", type=tarfile.DIRTYPE)
        add("ln", type=tarfile.SYMTYPE, linkname="/tmp")  # then a member through it
        add("ln/through.trace", good)
        add("hard.trace", type=tarfile.LNKTYPE, linkname="../x.trace")
        add("dev.trace", type=tarfile.CHRTYPE, devmajor=1, devminor=3)
        add("dup.trace", good)
        add("dup.trace", good)
        add("dup-1.trace", good)
        add("corrupt.trace", CORRUPT)
        add("bomb.trace", b"\0" * (24 << 20))
        add("..", good)
    gz = gzip_copy(arc)
    out = os.path.join(box, "out")
    tmp = os.path.join(W, "tmp-hostile")  # the spool files' directory
    os.makedirs(tmp)
    batch(["-o", "json", "-O", out, "-q", "--max-input", "16M", gz], check_rc=1, env=dict(os.environ, TMPDIR=tmp))
    s = summary(out)
    expect = {"../x.trace": ("ok", "x"), "/abs/x.trace": ("ok", "abs/x"), "a/../../y.trace": ("ok", "y"),
              "C:\\win\\z.trace": ("ok", "win/z"), "link.trace": ("skipped", None), "ln": ("skipped", None),
              "hard.trace": ("skipped", None), "dev.trace": ("skipped", None), "dup-1.trace": ("ok", "dup-1-1"),
              "corrupt.trace": ("failed", None), "bomb.trace": ("failed", None), "..": ("skipped", None),
              "ln/through.trace": ("ok", "ln/through")}
    for name, (status, stem) in expect.items():
        e = entry(s, name)
        if not ctx.check(e is not None, f"hostile: {name} listed once"):
            continue
        ctx.eq(e["status"], status, f"hostile: {name} status")
        if stem:
            p = os.path.join(out, "evil", stem + ".json")
            want = single_file(good, os.path.basename(name.replace("\\", "/")), "json")  # process name: its stem
            ctx.check(os.path.exists(p) and open(p, "rb").read() == want, f"hostile: {name} -> evil/{stem}.json")
    dups = [e for e in s["members"] if e["member"] == "dup.trace"]
    ctx.eq([(e["status"], e.get("output")) for e in dups], [("ok", "evil/dup"), ("ok", "evil/dup-1")],
           "hostile: duplicate names get -1 in member order")
    ctx.check("max-input" in (entry(s, "bomb.trace") or {}).get("error", ""), "hostile: bomb refused by --max-input")
    ctx.eq(len(s["members"]), len(expect) + 2, "hostile: every member listed")
    ctx.eq(sorted(os.listdir(box)), ["inner", "out"], "hostile: nothing beside OUTDIR")
    ctx.eq(sorted(os.listdir(os.path.join(box, "inner"))), ["evil.tar", "evil.tar.gz"], "hostile: nothing beside the archive")
    ctx.check(not os.path.exists(os.path.join(W, "outside.trace")), "hostile: symlink target written")
    ctx.eq(os.listdir(tmp), [], "hostile: no spool file left")
    # a symlink already in OUTDIR on the way of an output: refused, nothing written through it
    outside = os.path.join(W, "outside")
    os.makedirs(outside)
    out2 = os.path.join(W, "out-symdir")
    os.makedirs(os.path.join(out2, "evil"))
    os.symlink(outside, os.path.join(out2, "evil", "sub"))
    a2 = os.path.join(W, "evil.zip")
    write_zip(a2, {"sub/x.trace": good, "ok.trace": good})
    batch(["-o", "json", "-O", out2, "-q", a2], check_rc=1)
    s = summary(out2)
    ctx.eq(entry(s, "sub/x.trace")["status"], "failed", "symlinked OUTDIR component: refused")
    ctx.eq(entry(s, "ok.trace")["status"], "ok", "symlinked OUTDIR component: the others go on")
    ctx.eq(os.listdir(outside), [], "symlinked OUTDIR component: nothing written through it")


def test_damaged_and_empty():
    members = {f"m{i}.trace": open(os.path.join(ctx.source, "corpus", "app-startup.trace"), "rb").read()
               for i in range(6)}
    arc = os.path.join(W, "cut.tar.gz")
    write_tar(arc, members, "w:gz")
    data = open(arc, "rb").read()
    with open(arc, "wb") as f:
        f.write(data[: len(data) // 2])
    out = os.path.join(W, "out-cut")
    batch(["-o", "json", "-O", out, "-q", arc], check_rc=1)
    s = summary(out)
    ctx.check(s["totals"]["failed"] >= 1, "cut archive: a failure recorded")
    for e in s["members"]:
        if e["status"] == "ok":
            want = single_file(members[e["member"]], e["member"], "json")
            p = os.path.join(out, e["output"] + ".json")
            ctx.check(open(p, "rb").read() == want, f"cut archive: {p} complete")
    listed = {e["output"] + ".json" for e in s["members"] if e["status"] == "ok"}
    ctx.eq(sorted(os.path.relpath(p, out) for p in glob.glob(os.path.join(out, "cut", "*"))),
           sorted(listed), "cut archive: only complete outputs")
    for kind in ("tar", "zip"):
        arc = os.path.join(W, f"empty.{kind}")
        write_zip(arc, {}) if kind == "zip" else write_tar(arc, {})
        out = os.path.join(W, f"out-empty-{kind}")
        batch(["-o", "json", "-O", out, "-q", arc], check_rc=0)
        listed = [(e["member"], e["status"], "empty" in e.get("reason", "")) for e in summary(out)["members"]]
        ctx.eq(listed, [(f"empty.{kind}", "skipped", True)], f"empty {kind}: listed itself, skipped as empty")
    if shutil.which("zip"):
        d = os.path.join(W, "enc")
        os.makedirs(d)
        shutil.copy(os.path.join(ctx.source, "corpus", "app-startup.trace"), d)
        subprocess.run(["zip", "-q", "-P", "secret", "../enc.zip", "app-startup.trace"], cwd=d, check=True)
        out = os.path.join(W, "out-enc")
        r = batch(["-o", "json", "-O", out, "-q", os.path.join(W, "enc.zip")])
        e = entry(summary(out), "app-startup.trace")
        ctx.check(e is not None and e["status"] != "ok" and "encrypt" in (e.get("reason", "") + e.get("error", "")),
                  f"encrypted zip member: {e}")
        ctx.eq(set(names_under(out)) - {"traceconv-batch.json"}, set(), "encrypted zip member: no output")


def test_many_tiny():
    arc = os.path.join(W, "tiny.tar")
    members = {f"d{i // 1000}/t{i:05}.json": (TINY if i % 100 == 0 else b"x") for i in range(10000)}
    write_tar(arc, members)
    out = os.path.join(W, "out-tiny")
    t = time.time()
    batch(["-o", "folded", "-O", out, "-q", arc], check_rc=0)
    el = time.time() - t
    s = summary(out)
    ctx.eq(len(s["members"]), 10000, "10,000 members listed")
    ctx.eq((s["totals"]["ok"], s["totals"]["skipped"]), (100, 9900), "10,000 members: statuses")
    ctx.eq(len(names_under(out)), 101, "10,000 members: outputs")
    print(f"10,000 tiny members: {el:.2f}s")


def test_in_place():
    """Members of an uncompressed tar are converted from the archive's own bytes (no spool
    file): GNU and pax headers (long and non-ASCII names), a size of whole blocks, an empty
    member, a plain tar and a tar.gz inside it. Each is checked against the same tar gzipped,
    whose members are all copied out by the reading thread: the same statuses, the same
    content hashes (a wrong offset changes the hash) and byte-identical outputs. A sparse member
    is stored with holes left out, so it is copied (and expanded). With TMPDIR unusable, only
    what must be copied fails: that proves the others were read in place. --skip-existing
    judges in-place members by the hash their worker took."""
    good = open(os.path.join(ctx.source, "corpus", "app-startup.trace"), "rb").read()
    tree = os.path.join(W, "inplace-tree")
    members = {
        "short.trace": good,
        "d/" + "n" * 120 + "/long-name.trace": good,
        "\u00fcn\u00efcode/\u540d\u524d.json": TINY,
        "empty.trace": b"",
        "corrupt.trace": CORRUPT,
        "block.json": TINY + b" " * (1024 - len(TINY)),
    }
    members["inner.tar"] = tar_bytes({"a.trace": good, "b.json": TINY})
    members["inner.tar.gz"] = tar_bytes({"c.trace": good}, "w:gz")
    for name, data in members.items():
        path = os.path.join(tree, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)
    with open(os.path.join(tree, "holes.bin"), "wb") as f:  # 1 MB, nearly all hole
        f.write(b"x" * 10)
        f.seek(1 << 20)
        f.write(b"y")
    want = {"short.trace": "ok", "d/" + "n" * 120 + "/long-name.trace": "ok", "\u00fcn\u00efcode/\u540d\u524d.json": "ok",
            "empty.trace": "skipped", "corrupt.trace": "failed", "block.json": "ok", "inner.tar": "skipped",
            "inner.tar/a.trace": "ok", "inner.tar/b.json": "ok", "inner.tar.gz": "skipped",
            "inner.tar.gz/c.trace": "ok", "holes.bin": "skipped"}
    names = sorted(os.path.relpath(os.path.join(r, f), tree) for r, _, fs in os.walk(tree) for f in fs)

    def run(arc, out, env=None, extra=()):
        r = subprocess.run([ctx.traceconv, "batch", "-o", "json,perfetto", "-O", out, "-q", *extra, arc],
                           env=env, capture_output=True)
        ctx.check(r.returncode in (0, 1), f"in place: {arc}: exit {r.returncode}: {r.stderr.decode()[-300:]}")
        s = summary(out)
        return {e["member"]: e for e in s["members"]}, files_under(out)

    def comparable(e):
        return {k: v for k, v in e.items() if k not in ("source", "seconds")}

    for fmt in ("gnu", "pax"):
        arc = os.path.join(W, f"inplace-{fmt}.tar")
        subprocess.run(["tar", f"--format={fmt}", "--sparse", "-cf", arc, "-C", tree, *names], check=True)
        plain, plain_files = run(arc, os.path.join(W, f"out-inplace-{fmt}"))
        copied, copied_files = run(gzip_copy(arc), os.path.join(W, f"out-copied-{fmt}"))
        ctx.eq({m: e["status"] for m, e in plain.items()}, want, f"in place ({fmt}): statuses")
        ctx.eq({m: comparable(e) for m, e in plain.items()}, {m: comparable(e) for m, e in copied.items()},
               f"in place ({fmt}): summary entries equal those of the gzipped copy (sizes, hashes, figures)")
        for files in (plain_files, copied_files):
            files.pop("traceconv-batch.json")
        ctx.eq(sorted(plain_files), sorted(copied_files), f"in place ({fmt}): the same outputs")
        ctx.check(plain_files == copied_files, f"in place ({fmt}): outputs byte-identical to the gzipped copy's")
        ctx.eq(len(plain_files), 2 * sum(1 for v in want.values() if v == "ok"), f"in place ({fmt}): outputs made")
        # nothing can be spooled: only the sparse member and the one inside the tar.gz fail
        env = dict(os.environ, TMPDIR=os.path.join(W, "no-such-dir"))
        nospool, _ = run(arc, os.path.join(W, f"out-nospool-{fmt}"), env=env)
        failed = {m: e.get("error", "") for m, e in nospool.items() if e["status"] == "failed" and want[m] != "failed"}
        ctx.eq(sorted(failed), ["holes.bin", "inner.tar.gz/c.trace"], f"in place ({fmt}): failing without TMPDIR")
        ctx.check(all("spool" in v for v in failed.values()), f"in place ({fmt}): why: {failed}")
    # --skip-existing: in-place members kept by their hash; a member changed in place (same size) is redone
    arc, out = os.path.join(W, "inplace-gnu.tar"), os.path.join(W, "out-inplace-gnu")
    again, _ = run(arc, out, extra=["--skip-existing"])
    ctx.eq(sorted(m for m, e in again.items() if e.get("existing")), sorted(m for m, v in want.items() if v == "ok"),
           "in place: --skip-existing keeps every ok member")
    data = bytearray(open(arc, "rb").read())
    at = data.find(good[-64:])  # the end of the first copy of app-startup.trace
    data[at + 60] ^= 0x01
    with open(arc, "wb") as f:
        f.write(data)
    again, _ = run(arc, out, extra=["--skip-existing"])
    redone = sorted(m for m, e in again.items() if want[m] == "ok" and not e.get("existing"))
    ctx.eq(len(redone), 1, f"in place: one member changed in place is converted again ({redone})")


def test_mutated_tars():
    """Hostile tar headers against the in-place path: mutants of a small plain tar (bytes flipped,
    mostly in the headers, or the archive cut short), each converted as it is (in place) and
    gzipped (every member copied out through libarchive). The two must agree on every member's
    status, size, hash and outputs, and neither may crash. The seed changes on every run and is
    printed; TC_ARCHIVE_SEED=N replays it."""
    import random
    env_seed = os.environ.get("TC_ARCHIVE_SEED", "").strip()
    seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1 << 32)
    print(f"archive mutation seed: {seed} (replay with TC_ARCHIVE_SEED={seed})", flush=True)
    rnd = random.Random(seed)
    good = open(os.path.join(ctx.source, "corpus", "app-startup.trace"), "rb").read()
    base = tar_bytes({"a.trace": good, "p/" + "q" * 110 + ".json": TINY, "c.json": TINY, "d.trace": good},
                     format=tarfile.PAX_FORMAT)
    headers = [i for i in range(0, len(base), 512) if base[i + 257:i + 262] == b"ustar"]
    with tarfile.open(fileobj=io.BytesIO(base)) as t:  # each member's content ends here; its block later
        content_ends = [m.offset_data + m.size for m in t.getmembers() if m.size % 512]
    box = os.path.join(W, "mutated")
    compared = 0
    for k in range(24):
        data = bytearray(base)
        if k == 0:  # cut between a member's content and the end of its block
            end = rnd.choice(content_ends)
            data = data[:end + rnd.randrange(512 - end % 512)]
        elif k % 6 == 5:
            data = data[:rnd.randrange(512, len(data))]
        for _ in range(rnd.randint(1, 6) if k else 0):
            h = rnd.choice(headers)
            at = h + rnd.choice((124, 124, 125, 130, 135, 148, 156, 257, 345)) + rnd.randrange(12) \
                if rnd.random() < 0.8 else rnd.randrange(len(data))
            if at < len(data):
                data[at] = rnd.choice((0x30, 0x37, 0x20, 0x00, 0xff, 0x80, rnd.randrange(256)))
        what = f"archive mutant {k} (seed {seed})"
        arc = os.path.join(box, f"m{k}.tar")
        os.makedirs(box, exist_ok=True)
        with open(arc, "wb") as f:
            f.write(data)
        gzip_copy(arc)
        runs = []
        for a in (arc, arc + ".gz"):
            out = os.path.join(box, "out-" + os.path.basename(a))
            r = subprocess.run([ctx.traceconv, "batch", "-o", "json,perfetto", "-O", out, "-q", "-j", "2", a],
                               capture_output=True, timeout=120)
            ctx.check(r.returncode in (0, 1), f"{what}: {os.path.basename(a)}: exit {r.returncode}: "
                                              f"{r.stderr.decode(errors='replace')[-400:]}")
            s = summary(out)
            entries = [{k: v for k, v in e.items() if k not in ("source", "seconds")} for e in s["members"]]
            runs.append((entries, {k: v for k, v in files_under(out).items() if k != "traceconv-batch.json"}))
        ctx.eq(sorted(os.listdir(box)), sorted([f"m{k}.tar", f"m{k}.tar.gz", f"out-m{k}.tar", f"out-m{k}.tar.gz"]),
               f"{what}: nothing written beside OUTDIR")
        shutil.rmtree(box)
        if any(e["member"].startswith(f"m{k}.tar") for e in runs[0][0] + runs[1][0]):
            continue  # a first header too damaged: not read as an archive, but as a file nobody knows
        ctx.eq(runs[0][0], runs[1][0], f"{what}: in place and copied: the summaries")
        ctx.check(runs[0][1] == runs[1][1], f"{what}: in place and copied: the outputs")
        compared += 1
    ctx.check(compared >= 6, f"archive mutants: only {compared} of 24 were read as archives (seed {seed})")
    print(f"archive mutants: {compared} of 24 read as archives agree in place and copied (seed {seed})")


def test_sigint():
    N = 8  # members of 12 MB: json outputs of ~130 MB each, slow enough to be interrupted
    big = os.path.join(W, "big.trace")
    if not ctx.tracegen:
        ctx.fail("tracegen is not built")
        return
    subprocess.run([ctx.tracegen, "--bench", "12", big], check=True, capture_output=True)
    data = open(big, "rb").read()
    # gzipped, so that the members are spooled (an interrupted run leaves no spool file)
    write_tar(os.path.join(W, "big.tar"), {f"b{i}.trace": data for i in range(N)})
    arc = gzip_copy(os.path.join(W, "big.tar"))
    tmp = os.path.join(W, "tmpdir")
    os.makedirs(tmp)
    out = os.path.join(W, "out-int")
    env = dict(os.environ, TMPDIR=tmp)
    p = subprocess.Popen([ctx.traceconv, "batch", "-o", "json,perfetto", "-O", out, "-j", "2", "-q", arc], env=env)
    for _ in range(600):  # interrupt once the first outputs are in place: others are being written
        if len(glob.glob(os.path.join(out, "big", "*.pftrace"))) >= 2 or p.poll() is not None:
            break
        time.sleep(0.05)
    p.send_signal(signal.SIGINT)
    p.wait()
    ctx.eq(p.returncode, -signal.SIGINT, "SIGINT: dies of the signal")
    leftovers = [f for f in names_under(out) if is_temp_name(f)]
    ctx.eq(leftovers, [], "SIGINT: no temporary file left")
    ctx.eq(os.listdir(tmp), [], "SIGINT: no spool file left")
    done = sorted(f for f in names_under(out) if f.endswith(".json") and f != "traceconv-batch.json")
    ctx.check(0 < len(done) < N, f"SIGINT: interrupted in the middle ({len(done)} of {N} done)")
    for f in done[:2]:
        want = single_file(data, os.path.basename(f)[:-5] + ".trace", "json")
        ctx.check(open(os.path.join(out, f), "rb").read() == want, f"SIGINT: {f} is complete")
    # the summary says what was done: those ok have both outputs, the rest are not ok
    s = summary(out)
    ok = sorted(e["output"] + ".json" for e in s["members"] if e["status"] == "ok")
    ctx.eq(ok, done, "SIGINT: the summary lists exactly the outputs written")
    ctx.check(s.get("interrupted") is True, "SIGINT: the summary says it was interrupted")
    # the rerun converts only the rest, leaving the finished outputs alone
    stamps = {f: os.stat(os.path.join(out, f)).st_mtime_ns for f in done}
    r = subprocess.run([ctx.traceconv, "batch", "-o", "json,perfetto", "-O", out, "-q", "--skip-existing", arc],
                       env=env)
    ctx.eq(r.returncode, 0, "SIGINT: the rerun succeeds")
    s = summary(out)
    ctx.eq((s["totals"]["ok"], s["totals"]["existing"]), (N, len(done)), "SIGINT rerun: all ok, the done ones kept")
    ctx.eq({f: os.stat(os.path.join(out, f)).st_mtime_ns for f in done}, stamps, "SIGINT rerun: kept outputs untouched")
    ctx.eq(len([f for f in names_under(out) if f.endswith((".json", ".pftrace"))]), 2 * N + 1, "SIGINT rerun: every output")


def test_options():
    good = open(os.path.join(ctx.source, "corpus", "app-startup.trace"), "rb").read()
    arc = os.path.join(W, "opts.zip")
    write_zip(arc, {"a/one.trace": good, "a/bad.trace": CORRUPT, "b/two.trace": good, "b/three.trace": good})
    for args in (["-O", os.path.join(W, "u")], ["-o", "json"], ["-o", "nosuch", "-O", W], ["-o", "json", "-O", W],
                 ["-o", "json", "-O", W, "--shard", "3/3", arc], ["-o", "json", "-O", W, "-j", "0", arc]):
        r = batch(args)
        ctx.eq(r.returncode, 2, f"usage error {args}")
    out = os.path.join(W, "out-incl")
    batch(["-o", "json", "-O", out, "-q", "--include", "b/*", "--exclude", "*three*", arc], check_rc=0)
    ctx.eq([e["member"] for e in summary(out)["members"]], ["b/two.trace"], "--include/--exclude")
    out = os.path.join(W, "out-ff")
    batch(["-o", "json", "-O", out, "-q", "-j", "1", "--fail-fast", arc], check_rc=1)
    s = summary(out)
    ctx.check(s["totals"]["ok"] < 3 and s["totals"]["failed"] == 1, f"--fail-fast stops: {s['totals']}")
    out = os.path.join(W, "out-progress")
    r = batch(["-o", "json", "-O", out, "--progress", arc], check_rc=1)
    err = r.stderr.decode()
    ctx.check("files" in err and "\r" in err and "4 members: 3 ok" in err, f"--progress line and summary: {err!r}")
    r = batch(["-o", "json", "-O", os.path.join(W, "out-noprog"), arc], check_rc=1)
    ctx.check("\r" not in r.stderr.decode(), "no progress when stderr is not a terminal")
    # --skip-existing on a directory: a touched file is converted again, the others kept
    tree = os.path.join(W, "skiptree")
    os.makedirs(tree)
    for n in ("p.trace", "q.trace"):
        with open(os.path.join(tree, n), "wb") as f:
            f.write(good)
    out = os.path.join(W, "out-skip")
    batch(["-o", "json", "-O", out, "-q", tree], check_rc=0)
    os.utime(os.path.join(tree, "q.trace"), (1, 1))
    batch(["-o", "json", "-O", out, "-q", "--skip-existing", tree], check_rc=0)
    s = summary(out)
    ctx.eq({e["member"]: e.get("existing", False) for e in s["members"]}, {"p.trace": True, "q.trace": False},
           "--skip-existing: only the touched file again")


members = members_set()
expect = {name: expected_status(data, name) for name, data in members.items()}
ctx.eq(expect["notes/readme.txt"], "skipped", "model: the text member is skipped")
ctx.eq(expect["bad/corrupt.trace"], "failed", "model: the corrupt member fails")
test_options()
test_man_and_completion()
test_archive_kinds(members, expect)
test_jobs_and_shards()
test_readme_shard_recipe()
test_nested()
test_in_place()
test_mutated_tars()
test_hostile()
test_damaged_and_empty()
test_many_tiny()
test_sigint()
ctx.done()
