#!/usr/bin/env python3
"""--reverse (bottom-up, issue 24 item 4): every stack, thread frame included, read from its
other end, as flamegraph.pl --reverse, in folded, flamegraph, report and diff -o flamegraph.

Independent model: the JSON output of the same input, read with Python's json (its B/E
slices, µs with ns decimals, and tts for thread CPU time), is folded here: per thread and
call path the self time in ns, names made safe by folded.c's rules (test_pprof's sanitize).
Each model stack read backwards is the line --reverse must print:
- folded --reverse (wall and --weight cpu, with and without --no-thread): the same stacks,
  each count within 1 µs of the model's exact ns (counts are rounded cumulatively, so a line
  is within 1 µs; a thread's total within 1 µs of its exact sum), the thread frame last;
- flamegraph --reverse: the frames flamegraph.pl --reverse draws from our forward folded
  output (Debian's flamegraph.pl; ART clocks are whole µs, so the counts agree exactly);
  with --inverted too, and with --merge-threads against folded --no-thread;
- report --reverse: the bottom-up tree of the text (roots with their chains of callers,
  µs and calls, threads merged, lines under 0.1% of the total left out) and every row of
  the CSV (linked by id and callee, all threads and per thread), against the model's
  bottom-up tree of full names;
- diff -o flamegraph --reverse: flamegraph.pl on difffolded.pl's lines of the two forward
  folded outputs, each stack reversed here; diff text and CSV are per method and do not change.
Run against a build without --reverse, every comparison fails (the option is unused and the
stacks stay top-down).
"""
import collections
import csv
import html
import io
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tclib  # noqa: E402
import test_flamegraph as tf  # noqa: E402
from test_diff import difffolded  # noqa: E402
from test_pprof import sanitize  # noqa: E402

SIG = re.compile(r": \(")
FLAME_INPUTS = ("app-startup", "v3-dual", "names-utf8-nullsource-dupthreads-unknownkeys", "recursion-mutual",
                "v1-dalvik-threadcpu")  # flamegraph.pl is the slow part: inputs with many threads, odd names, recursion
MODEL_DEPTH = 300  # deeper inputs (recursion-10000) are left out: the model's paths are quadratic in depth


def short_name(name):
    """The JSON event name "pkg.Class.method: (sig)ret" -> folded's short name."""
    m = SIG.search(name)
    return name[: m.start()] if m else name


def report_name(name):
    """The report's "pkg.Class.method (sig)ret" from the JSON's "pkg.Class.method: (sig)ret", escaped as
    the text report escapes (control characters and backslashes as \\n, \\\\, \\xHH, \\u0085)."""
    named = {"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return "".join(named.get(c) or (f"\\x{ord(c):02X}" if ord(c) < 0x20 or ord(c) == 0x7F else
                                    f"\\u{ord(c):04X}" if 0x80 <= ord(c) <= 0x9F else c)
                   for c in SIG.sub(" (", name, count=1))


def ns(v):
    return round(float(v) * 1000)


def model(path):
    """{(thread frame, (names outermost first)): [self wall ns, self cpu ns, calls]} of the JSON's B/E slices
    (None for a trace deeper than MODEL_DEPTH)."""
    with open(path, "rb") as f:
        doc = json.load(f)
    names, stacks, out = {}, {}, {}
    for e in doc["traceEvents"]:
        ph = e.get("ph")
        if ph == "M" and e.get("name") == "thread_name":
            names[e["tid"]] = e["args"]["name"]
        if ph not in ("B", "E"):
            continue
        st = stacks.setdefault(e["tid"], [])
        if ph == "B":
            st.append([e, 0, 0])  # the slice, its children's wall and cpu
            continue
        if len(st) > MODEL_DEPTH:  # paths as tuples: quadratic in depth (recursion-10000)
            return None
        b, cw, cc = st.pop()
        wall = ns(e["ts"]) - ns(b["ts"])
        cpu = ns(e["tts"]) - ns(b["tts"]) if "tts" in e and "tts" in b else 0
        if st:
            st[-1][1] += wall
            st[-1][2] += cpu
        path = tuple(x[0]["name"] for x in st) + (b["name"],)
        fig = out.setdefault((e["tid"], path), [0, 0, 0])
        fig[0] += wall - cw
        fig[1] += cpu - cc
        fig[2] += 1
    return {(sanitize(f"{names.get(tid, tid)}-{tid}"), path): fig for (tid, path), fig in out.items()}


def model_reversed_folded(m, cpu, threads):
    """{reversed folded stack: exact ns} as flamegraph.pl --reverse reads our stacks."""
    out = collections.Counter()
    for (thread, path), fig in m.items():
        frames = [sanitize(short_name(n)) for n in path]
        stack = frames[::-1] + ([thread] if threads else [])
        out[";".join(stack)] += fig[1 if cpu else 0]
    return out


def read_folded(path):
    out = collections.Counter()
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            out[stack] += int(count)
    return out


# ---- folded ------------------------------------------------------------------------------


def check_folded(ctx, label, src, m, has_cpu):
    for cpu in (False, True) if has_cpu else (False,):
        for threads in (True, False):
            opts = ["--reverse"] + (["--weight", "cpu"] if cpu else []) + ([] if threads else ["--no-thread"])
            what = f"{label} folded {' '.join(opts)}"
            out = os.path.join(ctx.work, f"{os.path.basename(src)}{''.join(opts)}.folded")
            if not ctx.run(["-q", "-f", "-o", "folded", *opts, src, out], check_rc=0).returncode == 0:
                continue
            ours, want = read_folded(out), model_reversed_folded(m, cpu, threads)
            far = {s: (ours.get(s, 0), want.get(s, 0) / 1000) for s in set(ours) | set(want)
                   if abs(ours.get(s, 0) - want.get(s, 0) / 1000) >= 1}
            ctx.check(not far, f"{what}: stacks whose count is 1 µs or more from the model's: {list(far.items())[:4]}")
            if threads:
                last = {s.rpartition(";")[2] for s in ours}
                model_threads = {t for t, _ in m}
                ctx.check(last <= model_threads, f"{what}: last frames that are not threads: {last - model_threads}")
            total = sum(want.values()) / 1000
            ctx.check(abs(sum(ours.values()) - total) < 1 + len({t for t, _ in m}),
                      f"{what}: total {sum(ours.values())} vs the model's {total}")


# ---- flamegraph --------------------------------------------------------------------------


def check_flamegraph(ctx, label, src):
    w = os.path.join(ctx.work, "fg-" + os.path.basename(src))
    # --colors java: the palette whose formulas tf.check_colors knows (android's: test_code_groups)
    for ours_opts, folded_opts, pl_opts in ((["--reverse"], [], ["--reverse"]),
                                             (["--reverse", "--inverted"], [], ["--reverse", "--inverted"]),
                                             (["--reverse", "--merge-threads"], ["--no-thread"], ["--reverse"])):
        tag = "".join(ours_opts).replace("-", "")
        ours_opts = ours_opts + ["--colors", "java"]
        folded = tf.convert(ctx, src, "folded", f"{w}-{tag}.folded", folded_opts)
        svg = tf.convert(ctx, src, "flamegraph", f"{w}-{tag}.svg", ours_opts)
        if not folded or not svg:
            continue
        _, ours = tf.our_frames(ctx, label, svg)
        theirs = tf.run_flamegraph_pl(ctx, folded, pl_opts)
        if ours and theirs:
            tf.compare(ctx, f"{label} flamegraph {' '.join(ours_opts)}", ours, theirs)
            tf.check_colors(ctx, f"{label} flamegraph {' '.join(ours_opts)}", ours)


def check_report_html(ctx, label, src):
    """report --html --reverse: the page opens on its bottom-up tree (its data says so) and its wall
    graph has the frames of flamegraph --reverse (which check_flamegraph holds to flamegraph.pl);
    without --reverse the page says top-down."""
    w = os.path.join(ctx.work, "rh-" + os.path.basename(src))
    for opts, view in ((["--reverse"], "bottom-up"), ([], "top-down")):
        page = tf.convert(ctx, src, "report-html", f"{w}{len(opts)}.report.html", opts)
        if not page:
            continue
        with open(page, encoding="utf-8") as f:
            text = f.read()
        m = re.search(r'<script type="application/json" id="pv-data">(.*?)</script>', text, re.S)
        if ctx.check(m is not None, f"{label} report-html {opts}: the call trees' data"):
            ctx.eq(json.loads(m.group(1)).get("view"), view, f"{label} report-html {opts}: the view it opens on")
        if not opts:
            continue
        g = re.search(r'<svg id="fg-(wall|cpu)".*?</svg>', text, re.S)  # the first graph: wall, else CPU
        if not ctx.check(g is not None, f"{label} report-html --reverse: a graph"):
            continue
        svg = tf.convert(ctx, src, "flamegraph", f"{w}.{g.group(1)}.svg", ["--reverse", "--weight", g.group(1)])
        if not svg:
            continue
        embedded = collections.Counter(tf.split_title(html.unescape(t))[:2]
                                       for t in re.findall(r"<title>([^<]*)</title>", g.group(0)) if " us, " in t)
        _, ours = tf.our_frames(ctx, label, svg)
        if ours:
            ctx.eq(embedded, collections.Counter((f["name"], f["count"]) for f in ours),
                   f"{label} report-html --reverse: its {g.group(1)} graph's frames are flamegraph --reverse's")


# ---- report ----------------------------------------------------------------------------------


def csv_name(name):
    """The CSV's name: the text report's escapes (the names here are text: no byte that is not UTF-8)."""
    return report_name(name)


def model_bottom_up(m, per_thread, name_of=report_name):
    """{(thread or None, (root, caller, caller's caller, ...)): [total wall, total cpu, self wall, self cpu,
    calls]}: every prefix of every reversed path, report names (threads merged under None)."""
    out = {}
    for (thread, path), (wall, cpu, calls) in m.items():
        names = tuple(name_of(n) for n in reversed(path))
        for key in ((None, names), (thread, names)) if per_thread else ((None, names),):
            for i in range(1, len(names) + 1):
                fig = out.setdefault((key[0], names[:i]), [0, 0, 0, 0, 0])
                fig[0] += wall
                fig[1] += cpu
                fig[4] += calls
            fig[2] += wall
            fig[3] += cpu
    return out


LINE = re.compile(r"^ *(-|[\d.]+%) +(-?\d[\d,]*) +(\d[\d,]*) +(\d+)  ( *)(.*)$")  # figures grouped: 1,234


def check_report_text(ctx, label, src, m):
    out = os.path.join(ctx.work, os.path.basename(src) + ".reverse.txt")
    if ctx.run(["-q", "-f", "-o", "report", "--reverse", src, out], check_rc=0).returncode != 0:
        return
    with open(out, encoding="utf-8") as f:
        text = f.read()
    if not ctx.check("\nBottom-up: who calls each method" in text, f"{label} report --reverse: no bottom-up section"):
        return
    ctx.check("Parents and children" not in text, f"{label} report --reverse: the parents section is still there")
    span = re.search(r"All threads \(\d+\)\n  span        wall (?:-|(-?[\d,]+) us), cpu (?:-|(-?[\d,]+) us)", text)
    if not ctx.check(span, f"{label} report --reverse: no span line"):
        return
    total_ns = int((span.group(1) or span.group(2)).replace(",", "")) * 1000  # the clock the report weighs by (cpu without wall)
    section = text.split("\nBottom-up: who calls each method", 1)[1].split("\n name\n", 1)[-1]
    lines = section.split(" depth  name\n", 1)[1].split("\n\n", 1)[0].splitlines()  # up to the threads' sections
    bu = {path: fig for (th, path), fig in model_bottom_up(m, False).items()}
    got, chain, prev = [], [], None
    for line in lines:
        mt = LINE.match(line)
        if not ctx.check(mt, f"{label} report --reverse: a line that is not a tree line: {line!r}"):
            return
        depth = int(mt.group(4))
        ctx.eq(len(mt.group(5)), 2 * min(depth, 20), f"{label} report --reverse: indentation of {line!r}")
        if prev is not None:
            ctx.check(depth <= prev + 1, f"{label} report --reverse: depth jumps by more than one at {line!r}")
        chain = chain[:depth] + [mt.group(6)]
        prev = depth
        got.append((tuple(chain), int(mt.group(2).replace(",", "")), int(mt.group(3).replace(",", ""))))
    # the lines shown are exactly the model's nodes at or above 0.1% of the total, whose parent is shown
    want = {p for p, fig in bu.items() if fig[0] > 0 and fig[0] * 1000 >= total_ns}
    want = {p for p in want if all(p[:i] in want for i in range(1, len(p)))}
    ctx.eq(sorted(p for p, _, _ in got), sorted(want), f"{label} report --reverse: the bottom-up tree's lines")
    for path, us, calls in got:
        if path in bu:
            ctx.check(abs(us - bu[path][0] / 1000) <= 0.5, f"{label} report --reverse: {path[-1]} at depth "
                      f"{len(path) - 1}: {us} us, the model's {bu[path][0] / 1000}")
            ctx.eq(calls, bu[path][4], f"{label} report --reverse: calls of {path}")
    # siblings by time, largest first
    order = collections.defaultdict(list)
    for path, us, _ in got:
        order[path[:-1]].append(bu.get(path, [0])[0])
    ctx.check(all(v == sorted(v, reverse=True) for v in order.values()),
              f"{label} report --reverse: siblings not in order of time")
    return True


def check_report_csv(ctx, label, src, m, has_cpu):
    out = os.path.join(ctx.work, os.path.basename(src) + ".reverse.csv")
    if ctx.run(["-q", "-f", "-o", "report-csv", "--reverse", src, out], check_rc=0).returncode != 0:
        return
    with open(out, encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    ctx.eq(rows and list(rows[0]), ["thread", "tid", "method", "calls", "incl_wall_us", "excl_wall_us",
                                    "incl_cpu_us", "excl_cpu_us", "id", "callee"] if rows else [],
           f"{label} report-csv --reverse: columns")
    by_id, got = {}, {}
    for r in rows:
        callee = r["callee"]
        path = (by_id[callee][1] if callee else ()) + (r["method"],)
        thread = None if r["thread"] == "all" else sanitize(f"{r['thread']}-{r['tid']}")
        by_id[r["id"]] = (thread, path)
        ctx.check((thread, path) not in got, f"{label} report-csv --reverse: {path} twice")
        got[(thread, path)] = r
    want = model_bottom_up(m, True, csv_name)
    ctx.eq(sorted(got, key=repr), sorted(want, key=repr), f"{label} report-csv --reverse: the bottom-up nodes")
    for key, r in got.items():
        fig = want.get(key)
        if fig is None:
            continue
        cols = [("incl_wall_us", 0), ("excl_wall_us", 2), ("incl_cpu_us", 1), ("excl_cpu_us", 3)]
        for col, i in cols:
            if r[col] == "":  # a clock the input lacks
                continue
            ctx.check(abs(int(r[col]) - fig[i] / 1000) <= 0.5, f"{label} report-csv --reverse: {key} {col} "
                      f"{r[col]}, the model's {fig[i] / 1000}")
        ctx.eq(int(r["calls"]), fig[4], f"{label} report-csv --reverse: {key} calls")


# ---- diff --------------------------------------------------------------------------------


def reversed_lines(path, dst):
    with open(path, "rb") as f, open(dst, "wb") as o:
        for line in f:
            stack, _, count = line.rstrip(b"\n").rpartition(b" ")
            o.write(b";".join(stack.split(b";")[::-1]) + b" " + count + b"\n")


def check_diff(ctx, base, new):
    label = f"diff {os.path.basename(base)} {os.path.basename(new)}"
    svg = os.path.join(ctx.work, "rev.diff.svg")
    r = ctx.run(["diff", "-q", "-f", "--reverse", "-o", "flamegraph", base, new, svg])
    if not ctx.eq(r.returncode, 0, f"{label} --reverse: exit ({r.stderr[-300:]!r})"):
        return
    fwd = []
    for i, src in enumerate((base, new)):
        fo = os.path.join(ctx.work, f"diff-{i}.folded")
        ctx.run(["-q", "-f", "-o", "folded", "--no-thread", src, fo], check_rc=0)
        reversed_lines(fo, fo + ".rev")
        fwd.append(fo + ".rev")
    lines = os.path.join(ctx.work, "diff-rev.lines")
    with open(lines, "wb") as f:
        # Lines of BASE only (NEW 0) draw nothing; flamegraph.pl names a frame by name, depth and end
        # time, so such a zero-width frame ending where a drawn frame of that name and depth ends
        # replaces it (a bug of its own): they are left out (widths and deltas are NEW's own lines').
        f.write(b"".join(l for l in difffolded(*fwd).splitlines(True) if not l.endswith(b" 0\n")))
    _, ours = tf.our_frames(ctx, label, svg)
    o = ctx.oracle(["perl", tf.FLAMEGRAPH, "--countname=us", lines])
    if ours is not None and o is not None:
        tf.compare(ctx, f"{label} -o flamegraph --reverse", ours, tf.debian_frames(o.stdout))
    for fmt in ("text", "csv"):
        a = ctx.run(["diff", "-q", "-o", fmt, base, new])
        b = ctx.run(["diff", "-q", "-o", fmt, "--reverse", base, new])
        ctx.eq(b.stdout, a.stdout, f"{label} -o {fmt} --reverse: the per-method rows, as without it")


# ---- main --------------------------------------------------------------------------------------


def inputs(ctx):
    out = [(name, path) for name, path, _ in ctx.project_cases()]
    for sub in ("art",):
        out += ctx.extra_files(sub)
    return out


def main():
    ctx = tclib.Ctx()
    checked = 0
    for label, src in inputs(ctx):
        js = os.path.join(ctx.work, os.path.basename(src) + ".json")
        r = ctx.run(["-q", "-f", "-o", "json", src, js])
        if r.returncode != 0:  # a trace no writer converts: not this test's business
            continue
        m = model(js)
        if m is None:
            continue
        with open(js, "rb") as f:
            has_cpu = b'"tts":' in f.read()
        check_folded(ctx, label, src, m, has_cpu)
        if label in FLAME_INPUTS or label.startswith("extra/"):
            check_flamegraph(ctx, label, src)
            check_report_html(ctx, label, src)
        if check_report_text(ctx, label, src, m):
            checked += 1
        check_report_csv(ctx, label, src, m, has_cpu)
    ctx.check(checked >= 10, f"only {checked} inputs had a bottom-up report checked")
    check_diff(ctx, os.path.join(ctx.corpus, "v3-dual.trace"), os.path.join(ctx.corpus, "app-startup.trace"))
    check_diff(ctx, os.path.join(ctx.corpus, "app-startup.trace"), os.path.join(ctx.corpus, "v2-wall.trace"))
    ctx.done()


if __name__ == "__main__":
    main()
