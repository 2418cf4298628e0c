#!/usr/bin/env python3
"""The flamegraph writer draws what flamegraph.pl draws from our folded output.

Oracle: Debian's flamegraph.pl (libdevel-nytprof-perl) run on `-o folded` of the
same input with the same options. For every project corpus trace, tests/json and
tests/ir input (corpus/ holds art, rhea and systrace traces), and every trace of
TC_EXTRA_CORPUS when it is set: the multiset of frames (name,
count, percentage, x, width) parsed from the <title>s and <rect>s of our SVG
equals that of flamegraph.pl's SVG (its input's thread frames tagged to sort in our
towers' order, main first, and the tags taken off its names), and y differs by one constant (the Debian
copy's top pad is 48 px, upstream's 36, plus our subtitle). Known differences of
the Debian copy, applied to our names before comparing: it shows '<' '>' as
'(' ')'; it writes names as raw bytes (decoded here as browsers and Python do:
invalid UTF-8 and control characters as U+FFFD, which is what we write).
Colours are not compared with it (its default is unseeded rand()): they are
compared with a model of upstream's formulas written here from
FLAMEGRAPH-SVG.md §6 (drand48 seeded with the sum of code points, namehash,
the palettes, the java rules on the slash form of the class).

Every SVG is well-formed (xmllint --noout, Python's XML parser). Options:
--weight cpu (against folded --weight cpu), --merge-threads (against folded
--no-thread), --inverted (icicle geometry, against flamegraph.pl --inverted),
--width, --minwidth in px and % (the frames kept are exactly those of the
unpruned graph whose count reaches the limit, computed here), --title with <&>,
--colors and --hash. Hostile names (</script>, <img onerror>, &, ]]>, quotes,
control bytes, invalid UTF-8, a NUL, 5000 characters, sibling names that are
prefixes of each other) stay text in <title>s, and the SVG holds one <script>.
"""
import collections
import html
import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import reportlib as rl  # noqa: E402
import tclib  # noqa: E402

FLAMEGRAPH = "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"
SVG = "{http://www.w3.org/2000/svg}"
BROKEN = ("perflib-header.trace", "studio-perflib-basic-special_char.trace")
FFFD = "\ufffd"
XPAD, WIDTH = 10, 1200

# ---- parsing -------------------------------------------------------------------------


def split_title(t):
    """'NAME (1,234 us, 5.00%)' -> (NAME, 1234, '5.00'); the unit ("us", a count profile's
    "cycles:HG") is title_unit's."""
    name, _, rest = t.rpartition(" (")
    count, _, rest = rest.rstrip(")").partition(" ")
    _, _, pct = rest.partition(", ")
    return name, int(count.replace(",", "")), pct.rstrip("%")


def title_unit(t):
    """The count's unit of a tooltip 'NAME (1,234 UNIT, 5.00%)': flamegraph.pl's --countname."""
    return t.rpartition(" (")[2].partition(" ")[2].partition(", ")[0]


def count_name(ctx, src):
    """What a count profile's flame graph counts (its IR metadata sample-type, when sample-unit is
    count: the reader's words, not the writer's), else None: times in us."""
    out = os.path.join(ctx.work, "count-name.ir.txt")
    if ctx.run(["-q", "-f", "-o", "ir", src, out]).returncode:
        return None
    meta = {}
    with open(out, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("meta "):
                try:
                    k, v = json.loads("[" + line[5:].replace('" "', '", "', 1) + "]")
                    meta[k] = v
                except ValueError:
                    pass
    return (meta.get("sample-type") or "samples") if meta.get("sample-unit") == "count" else None


def our_frames(ctx, label, path):
    """Frames of our SVG in document order: dicts name, count, pct, x, y, width, fill, label."""
    r = ctx.oracle(["xmllint", "--noout", path])
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: xmllint --noout ({r.stderr.decode(errors='replace')[-400:]})")
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        ctx.fail(f"{label}: not well-formed XML: {e}")
        return None, None
    frames_g = next((g for g in root.iter(SVG + "g") if g.get("id") == "frames"), None)
    if not ctx.check(frames_g is not None, f"{label}: no <g id=frames>"):
        return None, None
    out = []
    for g in frames_g:
        title, rect, text = g.find(SVG + "title"), g.find(SVG + "rect"), g.find(SVG + "text")
        name, count, pct = split_title(title.text)
        unit = title_unit(title.text)
        out.append(dict(name=name, count=count, pct=pct, x=rect.get("x"), y=float(rect.get("y")),
                        width=rect.get("width"), fill=rect.get("fill"), label=text.text or "", unit=unit))
    return root, out


TITLE_RE = re.compile(rb'<title>(.*?)</title><rect x="([^"]*)" y="([^"]*)" width="([^"]*)"')


def unsafe(c):
    """A character the engine writes as U+FFFD: a control (C0, DEL, C1) or a noncharacter."""
    o = ord(c)
    return o < 0x20 or 0x7F <= o <= 0x9F or 0xFDD0 <= o <= 0xFDEF or (o & 0xFFFE) == 0xFFFE


def debian_name(raw):
    """A name as the Debian flamegraph.pl wrote it (raw bytes, &<>\" escaped), decoded as a browser
    would, with the characters our engine replaces replaced (flamegraph.pl writes them raw)."""
    s = html.unescape(raw.decode("utf-8", "replace"))
    return "".join(FFFD if unsafe(c) else c for c in s)


def debian_frames(svg_bytes):
    out = []
    for t, x, y, w in TITLE_RE.findall(svg_bytes):
        name, count, pct = split_title(debian_name(t))
        out.append(dict(name=name, count=count, pct=pct, x=x.decode(), y=float(y), width=w.decode(),
                        unit=title_unit(debian_name(t))))
    return out


def as_debian(name):
    return name.replace("<", "(").replace(">", ")")


def keyset(frames, mapped=False):
    return collections.Counter((as_debian(f["name"]) if mapped else f["name"], f["count"], f["pct"], f["x"],
                                f["width"], f["unit"]) for f in frames)


ORDER_TAG = re.compile(r"^\d{5}~")


def tower_order(ctx, src, extra=()):
    """Our graph's thread towers left to right (the views' order: main first, doc/cli.md, "Thread
    order"; tests/cli/test_thread_order.py checks that order against its model), read off an
    unpruned upright graph: flamegraph.pl sorts them by name, so its input is given in ours."""
    svg = convert(ctx, src, "flamegraph", os.path.join(ctx.work, os.path.basename(src) + "-order.svg"),
                  ["--minwidth", "0", *extra], quiet_fail=True)
    _, frames = our_frames(ctx, "order", svg) if svg else (None, None)
    if not frames:
        return None
    towers = [f for f in frames if f["y"] == frames[0]["y"] - 16]
    return [f["name"] for f in sorted(towers, key=lambda f: float(f["x"]))]


def ordered_folded(folded, order):
    """A copy of folded whose thread frames sort as order ("00000~main-1"): flamegraph.pl's sort
    of the lines then lays the towers out in our order, the rest of its geometry untouched."""
    rank = {name: i for i, name in enumerate(order)}
    out = folded + ".ordered"
    with open(folded, encoding="utf-8", errors="surrogateescape") as f, \
            open(out, "w", encoding="utf-8", errors="surrogateescape") as g:
        for line in f:
            head, sep, rest = line.partition(";")
            stack, _, count = head.rpartition(" ") if not sep else (head, "", "")
            thread = head if sep else stack
            if thread in rank:
                line = f"{rank[thread]:05d}~{line}"
            g.write(line)
    return out


def run_flamegraph_pl(ctx, folded, args, countname="us", order=None):
    if order:
        folded = ordered_folded(folded, order)
    r = ctx.oracle(["perl", FLAMEGRAPH, "--countname=" + countname, *args, folded])
    if r is None:
        return None
    err = r.stderr.decode(errors="replace")
    ctx.check("Ignored" not in err, f"flamegraph.pl {folded}: ignored lines: {err[-300:]}")
    if r.returncode == 2 and "No stack counts" in err:
        return []
    ctx.eq(r.returncode, 0, f"flamegraph.pl {folded} exit ({err[-300:]})")
    frames = debian_frames(r.stdout)
    if order:  # the towers' names as they were
        for f in frames:
            f["name"] = ORDER_TAG.sub("", f["name"])
    return frames


def compare(ctx, label, ours, theirs):
    """Same frames (name, count, percentage, x, width), and y shifted by one constant."""
    a, b = keyset(ours, mapped=True), keyset(theirs)
    if not ctx.check(a == b, f"{label}: frames differ from flamegraph.pl's: ours only {list((a - b).items())[:5]}, "
                             f"flamegraph.pl only {list((b - a).items())[:5]}"):
        return
    ours_y = collections.Counter((as_debian(f["name"]), f["x"], f["width"], f["y"]) for f in ours)
    shift = ours[0]["y"] - next(f["y"] for f in theirs if f["name"] == "all")
    theirs_y = collections.Counter((f["name"], f["x"], f["width"], f["y"] + shift) for f in theirs)
    ctx.check(ours_y == theirs_y, f"{label}: y positions are not flamegraph.pl's shifted by {shift}")
    names = collections.Counter((as_debian(f["name"]), f["count"]) for f in ours)
    ctx.eq(names, collections.Counter((f["name"], f["count"]) for f in theirs), f"{label}: (name, count) multiset")


# ---- the colour model (FLAMEGRAPH-SVG.md §6), independent of the C code ---------------------


def perl_rand_after_srand(seed):
    x = ((seed & 0xFFFFFFFF) << 16) + 0x330E
    x = (0x5DEECE66D * x + 0xB) & ((1 << 48) - 1)
    return x / float(1 << 48)


def namehash(name):
    name = re.sub(r".(.*?)`", "", name, count=1)
    vector, weight, mx, mod = 0.0, 1.0, 1.0, 10
    for c in name:
        i = ord(c) % mod
        vector += (i / (mod - 1)) * weight
        mod += 1
        mx += 1 * weight
        weight *= 0.70
        if mod > 12:
            break
    return 1 - vector / mx


def java_hue(name):
    if name.endswith("_[j]"):
        return "green"
    if name.endswith("_[i]"):
        return "aqua"
    if re.match(r"^L?(java|javax|jdk|net|org|com|io|sun)/", name.replace(".", "/")):
        return "green"
    if ":::" in name:
        return "green"
    if "::" in name:
        return "yellow"
    if name.endswith("_[k]"):
        return "orange"
    return "red"


def model_fill(name, palette="java", hashed=False):
    if name == "--":
        return "rgb(160,160,160)"
    if name == "-":
        return "rgb(200,200,200)"
    if hashed:
        v1 = namehash(name)
        v2 = v3 = namehash(name[::-1])
    else:
        v1 = v2 = v3 = perl_rand_after_srand(sum(ord(c) for c in name))
    if palette == "java":
        palette = java_hue(name)
    i = int
    rgb = {
        "hot": (205 + i(50 * v3), i(230 * v1), i(55 * v2)),
        "mem": (0, 190 + i(50 * v2), i(210 * v1)),
        "io": (80 + i(60 * v1), 80 + i(60 * v1), 190 + i(55 * v2)),
        "red": (200 + i(55 * v1), 50 + i(80 * v1), 50 + i(80 * v1)),
        "green": (50 + i(60 * v1), 200 + i(55 * v1), 50 + i(60 * v1)),
        "blue": (80 + i(60 * v1), 80 + i(60 * v1), 205 + i(50 * v1)),
        "yellow": (175 + i(55 * v1), 175 + i(55 * v1), 50 + i(20 * v1)),
        "purple": (190 + i(65 * v1), 80 + i(60 * v1), 190 + i(65 * v1)),
        "aqua": (50 + i(60 * v1), 165 + i(55 * v1), 165 + i(55 * v1)),
        "orange": (190 + i(65 * v1), 90 + i(65 * v1), 0),
    }[palette]
    return "rgb(%d,%d,%d)" % rgb


def check_colors(ctx, label, frames, palette="java", hashed=False):
    bad = [(f["name"], f["fill"], model_fill("" if i == 0 else f["name"], palette, hashed))
           for i, f in enumerate(frames) if f["fill"] != model_fill("" if i == 0 else f["name"], palette, hashed)]
    ctx.check(not bad, f"{label}: fills differ from upstream's formulas ({palette}, hash={hashed}): {bad[:4]}")


# ---- one input --------------------------------------------------------------------------------


def convert(ctx, src, fmt, out, extra=(), quiet_fail=False):
    r = ctx.run(["-f", "-o", fmt, *extra, src, out])
    if r.returncode != 0:
        if not quiet_fail:
            ctx.fail(f"{src} -> {fmt} {' '.join(extra)}: exit {r.returncode}: {r.stderr.decode(errors='replace')}")
        return None
    return out


def check_input(ctx, label, src, n):
    base = os.path.join(ctx.work, f"{n:03d}")
    folded = convert(ctx, src, "folded", base + ".folded", quiet_fail=True)
    if folded is None:
        r = ctx.run(["-o", "flamegraph", src, base + ".svg"])
        ctx.check(r.returncode != 0, f"{label}: folded fails but flamegraph converts")
        return False
    count = count_name(ctx, src)  # a count profile's tooltips: "(3,000 cycles:HG, 1.00%)", as --countname
    order = tower_order(ctx, src)
    for minwidth in (None, "0"):
        extra = ("--minwidth", minwidth) if minwidth else ()
        svg = convert(ctx, src, "flamegraph", f"{base}-{minwidth or 'd'}.svg", extra)
        if svg is None:
            continue
        _, ours = our_frames(ctx, label, svg)
        theirs = run_flamegraph_pl(ctx, folded, extra, count or "us", order)
        if ours is None or theirs is None:
            continue
        if not theirs:  # no counts at all: flamegraph.pl refuses; we draw no frame
            ctx.eq(ours, [], f"{label}: frames of a graph without counts")
            continue
        compare(ctx, f"{label} (minwidth {minwidth or 'default'})", ours, theirs)
        # the default palette, android, is traceconv's own (tests/cli/test_code_groups.py);
        # flamegraph.pl's palettes are checked with --colors in check_options
    return True


# ---- options -------------------------------------------------------------------------------------


def check_options(ctx, src):
    label = os.path.basename(src)
    w = os.path.join(ctx.work, "opt-" + label)
    order = tower_order(ctx, src)
    # --weight cpu and --merge-threads, against the folded output with the same meaning
    for ours_opts, folded_opts, pl_opts in ((["--weight", "cpu"], ["--weight", "cpu"], []),
                                             (["--merge-threads"], ["--no-thread"], []),
                                             (["--merge-threads", "--weight", "cpu"], ["--no-thread", "--weight",
                                                                                       "cpu"], []),
                                             (["--width", "600"], [], ["--width", "600"]),
                                             (["--minwidth", "5"], [], ["--minwidth", "5"]),
                                             (["--inverted"], [], ["--inverted"])):
        tag = "".join(ours_opts).replace("-", "")
        folded = convert(ctx, src, "folded", f"{w}-{tag}.folded", folded_opts)
        svg = convert(ctx, src, "flamegraph", f"{w}-{tag}.svg", ours_opts)
        if not folded or not svg:
            continue
        root, ours = our_frames(ctx, label, svg)
        theirs = run_flamegraph_pl(ctx, folded, pl_opts, order=None if "--merge-threads" in ours_opts else order)
        if ours and theirs:
            compare(ctx, f"{label} {' '.join(ours_opts)}", ours, theirs)
        if "--merge-threads" in ours_opts and ours:
            tops = [f for f in ours if re.search(r"-\d+$", f["name"]) and f["y"] == ours[0]["y"] - 16]
            ctx.eq(tops, [], f"{label} --merge-threads: no thread frame under all")
        if "--inverted" in ours_opts and ours:
            ctx.eq(root.find(SVG + "text[@id='title']").text, "Icicle Graph", f"{label} --inverted: default title")
            ctx.eq(ours[0]["y"], 36 + 24, f"{label} --inverted: root at the top, under title and subtitle")
            depth_y = {f["y"] for f in ours}
            ctx.check(all((y - 60) % 16 == 0 for y in depth_y), f"{label} --inverted: rows 16 px apart downwards")
    # --minwidth: exactly the frames of the full graph whose count reaches the limit
    full = convert(ctx, src, "flamegraph", f"{w}-full.svg", ["--minwidth", "0"])
    _, all_frames = our_frames(ctx, label, full) if full else (None, None)
    if all_frames:
        total = all_frames[0]["count"]
        for limit in ("3", "25", "1%", "0.5%"):
            if limit.endswith("%"):
                min_count = total * float(limit[:-1]) / 100
            else:
                min_count = float(limit) / ((WIDTH - 2 * XPAD) / total)
            want = collections.Counter((f["name"], f["count"], f["x"]) for f in all_frames if f["count"] >= min_count)
            svg = convert(ctx, src, "flamegraph", f"{w}-min{limit}.svg", ["--minwidth", limit])
            _, got = our_frames(ctx, label, svg) if svg else (None, None)
            if got is not None:
                ctx.eq(collections.Counter((f["name"], f["count"], f["x"]) for f in got), want,
                       f"{label} --minwidth {limit}: the frames kept")
                if label == "app-startup.trace":  # many narrow frames: the limit must bite
                    ctx.check(len(got) < len(all_frames), f"{label} --minwidth {limit}: nothing was pruned")
    # --title with markup, --colors, --hash
    svg = convert(ctx, src, "flamegraph", f"{w}-title.svg", ["--title", "a<b & c>d \"q\" ]]>"])
    root, _ = our_frames(ctx, label, svg) if svg else (None, None)
    if root is not None:
        ctx.eq(root.find(SVG + "text[@id='title']").text, "a<b & c>d \"q\" ]]>", f"{label}: --title text")
    for palette, hashed in (("hot", False), ("java", False), ("java", True), ("mem", False), ("aqua", True),
                            ("orange", False)):
        opts = ["--colors", palette] + (["--hash"] if hashed else [])
        svg = convert(ctx, src, "flamegraph", f"{w}-{palette}{hashed}.svg", opts)
        _, frames = our_frames(ctx, label, svg) if svg else (None, None)
        if frames:
            check_colors(ctx, f"{label} {' '.join(opts)}", frames, palette, hashed)


def check_refusals(ctx):
    wall_only = os.path.join(ctx.corpus, "v2-wall.trace")
    r = ctx.run(["-o", "flamegraph", "--weight", "cpu", wall_only, os.path.join(ctx.work, "wall-cpu.svg")])
    ctx.eq(r.returncode, 1, "--weight cpu on a wall-only input: exit")
    ctx.check(b"no thread-CPU clock" in r.stderr, f"--weight cpu on a wall-only input: {r.stderr[-200:]!r}")
    ctx.check(not os.path.exists(os.path.join(ctx.work, "wall-cpu.svg")), "no output left after the refusal")
    for opt, val in (("--width", "50"), ("--minwidth", "x"), ("--minwidth", "101%"), ("--colors", "pink"),
                     ("--minwidth", "-1")):
        r = ctx.run(["-o", "flamegraph", opt, val, wall_only, os.path.join(ctx.work, "bad.svg")])
        ctx.eq(r.returncode, 2, f"{opt} {val}: usage error")


# ---- hostile names ---------------------------------------------------------------------------------

SYSTRACE_HDR = (b"# tracer: nop\n#\n"
                b"#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
                b"#              | |        |      |   ||||       |         |\n")
HOSTILE = [b"</script><script>window.pwned=1</script>", b"<img src=x onerror=window.pwned=2>", b"a&b&amp;c",
           b"]]><x>", b"\"double\" 'single'", b"ctl\x01\x02\x1f\x7fend", b"bad\xff\xfe\xc3utf8\xe2\x82",
           b"nul\x00byte", b"long" + b"L" * 5000, b"run", b"run2", b"run-x", b"run.y", b"-", b"--"]


def hostile_trace(path):
    """An atrace text: each hostile name called under main, with self time and (for run) a child."""
    lines, ts = [SYSTRACE_HDR], 1000

    def line(payload):
        nonlocal ts
        ts += 137
        return b"  app-42  (   42) [000] ...1 %6d.%06d: tracing_mark_write: %s\n" % (
            100 + ts // 1000000, ts % 1000000, payload)
    lines.append(line(b"B|42|main"))
    for k, name in enumerate(HOSTILE):
        for _ in range(k % 3 + 1):
            lines.append(line(b"B|42|" + name))
            if name == b"run":
                lines.append(line(b"B|42|child"))
                lines.append(line(b"E|42"))
            lines.append(line(b"E|42"))
    lines.append(line(b"E|42"))
    with open(path, "wb") as f:
        f.write(b"".join(lines))


def shown(raw):
    """How a name must appear in a <title>: as the folded writer names it (';' is ':', control
    characters and a backslash as the text rule's escapes, invalid UTF-8 as U+FFFD), then
    noncharacters (NUL is stored as U+FFFD) as U+FFFD."""
    folded = rl.text_escape(raw.decode("utf-8", "replace").replace(";", ":").replace("\0", FFFD))
    return "".join(FFFD if unsafe(c) else c for c in folded)


def check_hostile(ctx):
    src = os.path.join(ctx.work, "hostile.systrace")
    hostile_trace(src)
    svg = convert(ctx, src, "flamegraph", os.path.join(ctx.work, "hostile.svg"), ["--minwidth", "0"])
    if not svg:
        return
    root, frames = our_frames(ctx, "hostile", svg)
    if frames is None:
        return
    names = {f["name"] for f in frames}
    for raw in HOSTILE:
        ctx.check(shown(raw) in names, f"hostile: {raw[:40]!r} is not the text of a <title> "
                                       f"(has {sorted(n[:30] for n in names)})")
    scripts = list(root.iter(SVG + "script"))
    ctx.eq(len(scripts), 1, "hostile: <script> elements")
    with open(svg, "rb") as f:
        data = f.read()
    ctx.eq(data.count(b"<script"), 1, "hostile: '<script' occurs once in the bytes")
    ctx.eq(data.count(b"]]>"), 1, "hostile: ']]>' occurs once (the script's CDATA end)")
    for markup in (b"<img", b"<x>", b"</script><script>"):
        ctx.check(markup not in data, f"hostile: {markup!r} occurs unescaped")
    folded = convert(ctx, src, "folded", os.path.join(ctx.work, "hostile.folded"))
    theirs = run_flamegraph_pl(ctx, folded, ["--minwidth", "0"], order=tower_order(ctx, src)) if folded else None
    if theirs:
        compare(ctx, "hostile names", frames, theirs)
        # run and run2 are siblings: flamegraph.pl draws run twice (its own line, then run2, then run's child)
        ctx.eq(sum(1 for f in frames if f["name"] == "run"), 2, "hostile: 'run' drawn twice around 'run2'")


def check_differential(ctx):
    """The engine's differential mode (tests/unit/flame_render.c, for traceconv diff) against
    flamegraph.pl on the same 3-column lines: frames, and colours too (deterministic there)."""
    render = os.path.join(os.path.dirname(os.path.abspath(ctx.traceconv)), "flame_render")
    if not ctx.check(os.path.exists(render), f"{render} is not built"):
        return
    src = os.path.join(ctx.corpus, "app-startup.trace")
    wall = convert(ctx, src, "folded", os.path.join(ctx.work, "diff-wall.folded"))
    cpu = convert(ctx, src, "folded", os.path.join(ctx.work, "diff-cpu.folded"), ["--weight", "cpu"])
    if not wall or not cpu:
        return
    a, b = tclib.read_folded(cpu), tclib.read_folded(wall)
    lines = "".join(f"{k} {a.get(k, 0)} {b.get(k, 0)}\n" for k in sorted(set(a) | set(b), key=lambda k: hash(k)))
    diff = os.path.join(ctx.work, "diff.folded")
    with open(diff, "w", encoding="utf-8") as f:
        f.write(lines)
    for negate in ([], ["--negate"]):
        out = os.path.join(ctx.work, f"diff{len(negate)}.svg")
        with open(out, "wb") as f:
            r = subprocess.run([render, "--diff", "--countname", "us", *negate, diff], stdout=f)
        if not ctx.eq(r.returncode, 0, "flame_render --diff exit"):
            continue
        _, ours = our_frames(ctx, "differential", out)
        r = ctx.oracle(["perl", FLAMEGRAPH, "--countname=us", *negate, diff])
        theirs = debian_frames(r.stdout) if r is not None else None
        if ours and theirs:
            compare(ctx, f"differential {' '.join(negate)}", ours, theirs)
            fills = collections.Counter((as_debian(f["name"]), f["x"], f["fill"]) for f in ours)
            deb_fills = collections.Counter((as_debian(d["name"]), d["x"], d["fill"]) for d in
                                            debian_fill_frames(r.stdout))
            ctx.eq(fills, deb_fills, f"differential {' '.join(negate)}: red/blue/white fills")
            ctx.check(any(f["fill"] not in ("rgb(255,255,255)",) for f in ours), "differential: some frame coloured")


FILL_RE = re.compile(rb'<title>(.*?)</title><rect x="([^"]*)" y="[^"]*" width="[^"]*" height="[^"]*" fill="([^"]*)"')


def debian_fill_frames(svg_bytes):
    return [dict(name=split_title(debian_name(t))[0], x=x.decode(), fill=c.decode())
            for t, x, c in FILL_RE.findall(svg_bytes)]


def corpus_inputs(ctx, verb):
    """The inputs the flamegraph.pl oracle runs on (here and in test_diff): the project's cases
    (art, rhea, systrace), tests/json and tests/ir; and TC_EXTRA_CORPUS's traces without BROKEN
    when it is set."""
    inputs = [p for _, p, _ in ctx.project_cases()]
    for sub in ("rhea", "systrace"):
        inputs += [p for _, p, _ in ctx.corpus_inputs(sub)]
    for sub in ("json", "ir"):
        d = os.path.join(ctx.source, "tests", sub)
        inputs += sorted(os.path.join(d, f) for f in os.listdir(d))
    extra = [p for sub in ("art", "rhea", "systrace") for _, p in ctx.extra_files(sub)
             if os.path.basename(p) not in BROKEN]
    if not extra:
        print(f"note: TC_EXTRA_CORPUS is not set: only the project's traces are {verb}")
    return inputs, extra


def main():
    ctx = tclib.Ctx()
    if not ctx.check(os.path.exists(FLAMEGRAPH), f"oracle {FLAMEGRAPH} is missing (make test installs it)"):
        ctx.done()
    inputs, shared = corpus_inputs(ctx, "compared")
    compared = 0
    for n, src in enumerate(inputs + shared):
        compared += check_input(ctx, os.path.relpath(src, os.path.dirname(ctx.source)), src, n)
    ctx.check(compared >= len(inputs), f"compared {compared} inputs of {len(inputs) + len(shared)}")
    print(f"{compared} inputs compared with flamegraph.pl")
    for name in ("app-startup.trace", "recursion-10000.trace", "v3-dual.trace"):
        check_options(ctx, os.path.join(ctx.corpus, name))
    check_refusals(ctx)
    check_hostile(ctx)
    check_differential(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
