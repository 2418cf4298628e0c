#!/usr/bin/env python3
"""The report writer (text and --csv) against models computed without traceconv.

1. Project corpus (traces written by tracegen from corpus/*.scn): the CSV rows,
   all threads and per thread, equal the facts' per-method figures exactly
   (tracegen computes them from its own model of the scenario: calls split
   normal+recursive, inclusive time of outermost activations, exclusive time;
   doc/diff-and-reports.md, "Profile accounting"); the text report's tables agree with the CSV,
   its percentages with its spans, and its parents/children section with the
   facts' edges; --sort orders and --weight cpu sorts and percentages are
   right; wall-only and thread-CPU-only inputs leave the other clock's
   columns empty ("-" in the text). The text's counts and times are grouped
   by thousands ("1,234,567", as Python's format(n, ",") writes them: the
   header's duration, records and threads, the spans, every table cell and
   every parents/children figure); the CSV's stay raw.
2. DMTRACEDUMP-REPORT.md §7: the trace of its worked example, written here byte
   by byte, gives dmtracedump's numbers wherever dmtracedump is right, and
   differs exactly where the spec says it is wrong (listed in EXPECTED_DIFFS).
3. Every input of the project corpus (art, rhea, systrace), tests/json, tests/ir
   (and TC_EXTRA_CORPUS when set) that a reader
   converts (the ir writer succeeds) converts to report, --csv and dot, with
   sane figures; the others fail the same way. Each reader reaches the report.
4. Hostile names (control bytes, quotes, commas, newlines, invalid UTF-8) stay
   on their line in the text and in the CSV (RFC 4180), control characters
   escaped in both as the text rule writes them (issue 38).
5. Rounding: ns sums (halves, sums of calls) are rounded once to the nearest µs.
"""
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import reportlib as rl  # noqa: E402
import tclib  # noqa: E402


def convert(ctx, src, out, *opts):
    """Run the report writer; the output path, or None (and a failure)."""
    r = ctx.run(["-q", "-f", "-o", "report", *opts, src, out])
    if not ctx.check(r.returncode == 0, f"{src} --report {' '.join(opts)}: exit {r.returncode}: "
                                        f"{r.stderr.decode(errors='replace').strip()}"):
        return None
    return out


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


# -- 1. the corpus against the facts ----------------------------------------------

def clock_of(facts):
    """The report's weight by default: wall, or CPU when the input has no wall clock."""
    return 2 if facts["clock"] == "thread-cpu" else 1


def csv_names(rows):
    """Rows with their names as the CSV writes them (the text rule: control characters escaped)."""
    return [(rl.text_escape(r[0]),) + tuple(r[1:]) for r in rows]


def text_as_csv(name):
    """A name of the text report as the CSV writes it: the bytes that are not UTF-8, \\xHH each in
    the text, are U+FFFD in the CSV (one per ill-formed subpart, as Python's decoder counts)."""
    return re.sub(r"\\\\|((?:\\x[89A-F][0-9A-F])+)",
                  lambda m: bytes.fromhex(m.group(1).replace("\\x", "")).decode("utf-8", "replace")
                  if m.group(1) else m.group(0), name)


def check_csv_vs_facts(ctx, name, facts, groups):
    prof = facts["profile"]
    want = {"all": csv_names(rl.facts_rows(facts, prof["all"]))}
    for t in prof["threads"]:
        if t["methods"]:
            want[int(t["tid"])] = csv_names(rl.facts_rows(facts, t["methods"]))
    ctx.eq(sorted(groups, key=str), sorted(want, key=str), f"{name}: CSV thread groups ('all' and the tids)")
    for key, rows in want.items():
        got = groups.get(key, [])
        if not ctx.eq(sorted(got), sorted(rows), f"{name}: CSV rows of {key} vs facts"):
            for g, w in zip(sorted(got), sorted(rows)):
                if g != w:
                    print(f"   got  {g}\n   want {w}")


def check_order(ctx, name, facts, groups, sort, clock):
    """The 'all' rows of --sort SORT: the facts' figures in the report's total order."""
    ms = facts["profile"]["methods"]
    rows = facts["profile"]["all"]
    col = {1: ("incl_wall_us", "excl_wall_us"), 2: ("incl_cpu_us", "excl_cpu_us")}[clock]

    def key(r):
        if sort == "incl":
            v = r[col[0]]
        elif sort == "excl":
            v = r[col[1]]
        elif sort == "calls":
            v = r["calls"] + r["recursive_calls"]
        else:
            v = 0
        return (-v,) + rl.sort_tuple(ms[r["method"]]) + (r["method"],)

    want = [rl.text_escape(rl.method_label(ms[r["method"]])) for r in sorted(rows, key=key)]
    got = [row[0] for row in groups.get("all", [])]
    ctx.eq(got, want, f"{name}: --sort {sort} (clock {'wall' if clock == 1 else 'cpu'}): order of the 'all' rows")


def check_text_vs_csv(ctx, name, text, groups, facts):
    """Each table of the text: the same rows, in the same order, as the CSV; percentages of its span."""
    doc = rl.parse_text(text)
    tid_of = {}
    for t in facts["threads"] if facts else []:
        tid_of[t["tid"]] = t
    tables = [s for s in doc["sections"] if s["rows"]]
    keys = []
    for s in tables:
        if s["title"].startswith("All threads"):
            keys.append("all")
        else:
            tail = s["title"].rsplit("(tid ", 1)
            keys.append(int(tail[1].rstrip(")")) if len(tail) == 2 else None)
    ctx.eq(keys, list(groups), f"{name}: text tables (all, then each thread) vs CSV groups")
    for key, sec in zip(keys, tables):
        rows = groups.get(key, [])
        ctx.eq(len(sec["rows"]), len(rows), f"{name}: {key}: text rows vs CSV rows")
        for i, (tr, cr) in enumerate(zip(sec["rows"], rows)):
            label = cr[0]  # the CSV writes the text's escapes but U+FFFD for bytes that are not UTF-8
            shown = text_as_csv(tr["name"])
            ctx.check(shown == label or shown.startswith(label + "  ["),
                      f"{name}: {key} row {i}: text name {tr['name']!r} vs CSV {cr[0]!r}")
            ctx.eq(tr["index"], i + 1, f"{name}: {key} row {i}: index")
            ctx.eq(tr["calls"] + tr["rec"], cr[1], f"{name}: {key} {cr[0]}: calls")
            ctx.eq((tr["incl_wall"], tr["excl_wall"], tr["incl_cpu"], tr["excl_cpu"]), cr[2:],
                   f"{name}: {key} {cr[0]}: text times vs CSV")
            span_w, span_c = sec["span"]
            for col, span in (("incl_wall", span_w), ("excl_wall", span_w), ("incl_cpu", span_c), ("excl_cpu", span_c)):
                p = tr[col + "_pct"]
                if tr[col] is None or not span:
                    ctx.check(p is None, f"{name}: {key} {cr[0]}: {col} % shown without a value")
                    continue
                ctx.check(p is not None and abs(p - 100.0 * tr[col] / span) <= 0.051,
                          f"{name}: {key} {cr[0]}: {col} {p}% vs {tr[col]} of {span}")
        if facts and key != "all" and key in tid_of:
            t = tid_of[key]
            ctx.eq(sec["span"], (t.get("span_wall_us"), t.get("span_cpu_us")), f"{name}: thread {key}: span vs facts")
        if facts and key == "all":
            sw = [t.get("span_wall_us") for t in facts["threads"]]
            sc = [t.get("span_cpu_us") for t in facts["threads"]]
            want = (None if None in sw else sum(sw), None if None in sc else sum(sc))
            ctx.eq(sec["span"], want, f"{name}: all threads: span vs facts (sum of the threads')")
    return doc


def check_calls_section(ctx, name, doc, facts, clock):
    """The parents-and-children section against the facts' edges, in the weight clock."""
    got = doc["calls"]
    if not ctx.check(got is not None, f"{name}: no parents-and-children section"):
        return
    want = rl.facts_calls_blocks(facts, clock)
    ctx.eq(sorted(got), sorted(want), f"{name}: methods with a parents-and-children block")
    total = doc["sections"][0]["span"][clock - 1] if doc["sections"] else None
    for m, w in want.items():
        g = got.get(m)
        if g is None:
            continue
        if m != "(toplevel)":
            ctx.eq((g["calls"], g["rec"], g["incl"], g["excl"]), (w["calls"], w["rec"], w["incl"], w["excl"]),
                   f"{name}: {m}: calls, recursive calls, inclusive, outermost self (excl line)")
            if total:
                ctx.check(abs(g["pct_total"] - 100.0 * w["incl"] / total) <= 0.051,
                          f"{name}: {m}: %/total {g['pct_total']} vs {w['incl']} of {total}")
        for lst in ("parents", "parents_nested", "children", "children_nested"):
            ctx.eq(sorted(g[lst]), sorted(w[lst]), f"{name}: {m}: {lst.replace('_', ' ')} (name, calls, of, time)")
            times = [t for _, _, _, t in g[lst]]
            ctx.check(times == sorted(times, reverse=True), f"{name}: {m}: {lst} not by time: {times}")


def check_grouping(ctx, name, doc, facts):
    """The text's counts and times are grouped by thousands, each as Python's format(n, ",")
    writes it: the header's duration, threads, methods and records (the facts'), every span,
    every table cell and every parents-and-children figure."""
    head = doc["header"]
    dur = head.get("duration", "")
    ctx.check(dur.endswith(" us") and rl.grouped(dur[:-3]), f"{name}: the header's duration grouped: {dur!r}")
    ctx.eq((head.get("records"), head.get("threads")), (f"{facts['records']:,}", f"{len(facts['threads']):,}"),
           f"{name}: the header's records and threads, grouped by thousands")
    texts = [t for sec in doc["sections"] for t in sec.get("texts", []) + [c for r in sec["rows"] for c in r["texts"]]]
    for b in (doc["calls"] or {}).values():
        texts += b.get("texts", []) + b.get("edge_texts", [])
    bad = [t for t in texts if not rl.grouped(t)]
    ctx.check(texts and not bad, f"{name}: figures not grouped by thousands: {bad[:6]} (of {len(texts)})")
    return sum("," in t for t in texts)


def check_corpus(ctx):
    cases = [c for c in ctx.project_cases() if c[2]]
    ctx.check(len(cases) >= 20, f"project corpus cases with facts: {len(cases)}")
    seen = {"recursion": False, "mutual": False, "pre": False, "open": False, "wall-only": False, "cpu-only": False,
            "grouped": 0}
    for name, trace, facts_path in cases:
        with open(facts_path, encoding="utf-8") as f:
            facts = __import__("json").load(f)
        if "profile" not in facts:
            ctx.check("profile_omitted" in facts, f"{name}: facts have neither profile nor profile_omitted")
            continue
        clock = clock_of(facts)
        out = convert(ctx, trace, os.path.join(ctx.work, name + ".csv"), "--csv")
        if not out:
            continue
        header, rows = rl.read_csv(out)
        ctx.eq(header, rl.CSV_HEADER, f"{name}: CSV header")
        groups = rl.csv_groups(rows)
        check_csv_vs_facts(ctx, name, facts, groups)
        check_order(ctx, name, facts, groups, "incl", clock)
        for sort in ("excl", "calls", "name"):
            o = convert(ctx, trace, os.path.join(ctx.work, f"{name}.{sort}.csv"), "--csv", "--sort", sort)
            if o:
                check_order(ctx, name, facts, rl.csv_groups(rl.read_csv(o)[1]), sort, clock)
        txt = convert(ctx, trace, os.path.join(ctx.work, name + ".txt"))
        if txt:
            doc = check_text_vs_csv(ctx, name, read(txt), groups, facts)
            check_calls_section(ctx, name, doc, facts, clock)
            seen["grouped"] += check_grouping(ctx, name, doc, facts)
        if facts["clock"] == "dual":  # --weight cpu: CPU order, CPU %/total in the calls section
            o = convert(ctx, trace, os.path.join(ctx.work, name + ".cpu.csv"), "--csv", "--weight", "cpu")
            if o:
                check_order(ctx, name + " --weight cpu", facts, rl.csv_groups(rl.read_csv(o)[1]), "incl", 2)
            o = convert(ctx, trace, os.path.join(ctx.work, name + ".cpu.txt"), "--weight", "cpu")
            if o:
                doc = rl.parse_text(read(o))
                ctx.eq(doc["header"].get("sorted by"), "inclusive thread-CPU time", f"{name}: --weight cpu header")
                check_calls_section(ctx, name + " --weight cpu", doc, facts, 2)
        # what the corpus must exercise
        prof = facts["profile"]
        seen["recursion"] |= any(r["recursive_calls"] for r in prof["all"])
        seen["mutual"] |= any(e["caller"] is not None and e["caller"] != e["callee"] and
                              e["callee_outer"][0] < e["all"][0] for e in prof["edges"])
        seen["pre"] |= bool(facts.get("exit_without_enter"))
        seen["open"] |= bool(facts.get("open_at_end"))
        seen["wall-only"] |= facts["clock"] in ("wall", "global")
        seen["cpu-only"] |= facts["clock"] == "thread-cpu"
        if facts["clock"] in ("wall", "global"):
            ctx.check(all(r[4] is None and r[5] is None for rows_ in groups.values() for r in rows_),
                      f"{name}: wall-only input: CPU columns must be empty")
        if facts["clock"] == "thread-cpu":
            ctx.check(all(r[2] is None and r[3] is None for rows_ in groups.values() for r in rows_),
                      f"{name}: thread-CPU-only input: wall columns must be empty")
    ctx.check(seen.pop("grouped") > 100, "the corpus's text reports have figures of four digits and more")
    ctx.eq(seen, {k: True for k in seen}, "the corpus exercises recursion, mutual recursion, frames open "
                                           "before tracing and at the end, wall-only and CPU-only clocks")


# -- 2. DMTRACEDUMP-REPORT.md §7 ------------------------------------------------------

# dmtracedump's output for the §7 trace (the spec's golden, its inclusive section).
DMTRACEDUMP_GOLDEN = """\
index  %/total %/self  index     calls         usecs name
----------------------------------------------------
[0]    100.0%                     0+0            195 (toplevel)
                48.7%   excl                      95
                35.9%    [1]      1/3             70 p.A.f ()V
                15.4%    [2]      1/2             30 p.B.g ()V
                 2.6%    [3]      1/3              5 p.C.h (I)I
----------------------------------------------------
               100.0%    [0]      1/3             70 (toplevel)
               +++++++++++++++++++++++++
                         [1]      2/3             80 p.A.f ()V
[1]     35.9%                     1+2             70 p.A.f ()V
                28.6%   excl                      20
                71.4%    [1]      1/3             50 p.A.f ()V
               +++++++++++++++++++++++++
                         [1]      1/3             30 p.A.f ()V
                         [2]      1/2             10 p.B.g ()V
----------------------------------------------------
                75.0%    [0]      1/2             30 (toplevel)
                25.0%    [1]      1/2             10 p.A.f ()V
[2]     20.5%                     2+0             40 p.B.g ()V
                75.0%   excl                      30
                25.0%    [3]      2/3             10 p.C.h (I)I
----------------------------------------------------
                66.7%    [2]      2/3             10 p.B.g ()V
                33.3%    [0]      1/3              5 (toplevel)
[3]      7.7%                     3+0             15 p.C.h (I)I
                66.7%   excl                      10
"""
# its exclusive section (Usecs per method) and its total
DMTRACEDUMP_EXCL = {"p.A.f ()V": 60, "p.B.g ()V": 30, "p.C.h (I)I": 10}
DMTRACEDUMP_TOTAL = 195

# Where we differ from dmtracedump, and why (DMTRACEDUMP-REPORT.md §2, §8 #3):
# worker's C exited at 5 µs with no entry. dmtracedump charges that call from
# time 0 for C's inclusive time (15 = 5 + 10 + 0) but starts the thread's clock
# at its first record (5): the 5 µs are in no one's exclusive time and not in the
# total (195 = 70 + 125). We reconstruct the frame at the trace start (the same
# instant as dmtracedump's 0 in an ART file, whose record times count from the
# header's start, so C's inclusive time agrees) and count it everywhere: C's
# self time 15 (its excl line too), the total 200 = 70 + 130, and so every
# %/total. Everything else agrees, recursion and edges included.
EXPECTED_DIFFS = {
    "total": (195, 200),
    "C exclusive": (10, 15),
    "C excl line (outermost self)": (10, 15),
}


def write_section7_trace(path):
    """DMTRACEDUMP-REPORT.md §7: v3 header, single clock (10-byte records), wall µs."""
    key = ("*version\n3\ndata-file-overflow=false\nclock=wall\nelapsed-time-usec=130\nnum-method-calls=13\n"
           "clock-call-overhead-nsec=0\nvm=art\npid=1\n*threads\n1\tmain\n2\tworker\n*methods\n"
           "0x4\tp.A\tf\t()V\tA.java\n0x8\tp.B\tg\t()V\tB.java\n0xc\tp.C\th\t(I)I\tC.java\n*end\n")
    A, B, C = 0x4, 0x8, 0xC
    enter, leave = 0, 1
    recs = [(1, enter, A, 0), (2, leave, C, 5), (1, enter, A, 10), (1, enter, A, 20), (1, enter, B, 30),
            (1, leave, B, 40), (1, leave, A, 50), (1, leave, A, 60), (1, leave, A, 70), (2, enter, B, 100),
            (2, enter, C, 110), (2, leave, C, 120), (2, enter, C, 130)]
    header = struct.pack("<IHHQH", 0x574F4C53, 3, 32, 1_000_000, 10) + b"\0" * 14
    body = b"".join(struct.pack("<HII", tid, mid | action, t) for tid, action, mid, t in recs)
    with open(path, "wb") as f:
        f.write(key.encode() + header + body)


def check_section7(ctx):
    src = os.path.join(ctx.work, "rec.trace")
    write_section7_trace(src)
    txt = convert(ctx, src, os.path.join(ctx.work, "rec.txt"))
    out_csv = convert(ctx, src, os.path.join(ctx.work, "rec.csv"), "--csv")
    if not txt or not out_csv:
        return
    golden = rl.parse_calls(DMTRACEDUMP_GOLDEN.split("\n"))
    doc = rl.parse_text(read(txt))
    ours = doc["calls"] or {}
    total = doc["sections"][0]["span"][0]
    ctx.eq((DMTRACEDUMP_TOTAL, total), EXPECTED_DIFFS["total"], "§7: total (sum of the threads' spans)")
    ctx.eq(sorted(ours), sorted(golden), "§7: the same methods, (toplevel) included")
    for name, g in golden.items():
        o = ours.get(name)
        if o is None:
            continue
        # the lists: parents and children, normal and nested (dmtracedump's "recursive"), all agree
        for lst in ("parents", "parents_nested", "children", "children_nested"):
            ctx.eq(o[lst], g[lst], f"§7: {name}: {lst.replace('_', ' ')} (name, calls, of, usecs), in order")
        if name == "(toplevel)":
            ctx.eq(o["excl"], g["excl"], "§7: (toplevel) excl: time outside any method")
            ctx.eq((g["incl"], o["incl"]), EXPECTED_DIFFS["total"], "§7: (toplevel) usecs = the total")
            continue
        ctx.eq((o["calls"], o["rec"], o["incl"]), (g["calls"], g["rec"], g["incl"]),
               f"§7: {name}: calls+recursive and inclusive time")
        if name == "p.C.h (I)I":
            ctx.eq((g["excl"], o["excl"]), EXPECTED_DIFFS["C excl line (outermost self)"], "§7: C's excl line")
        else:
            ctx.eq(o["excl"], g["excl"], f"§7: {name}: excl line (self time of the outermost calls)")
        ctx.check(abs(o["pct_total"] - round(100.0 * o["incl"] / total, 1)) < 0.01,
                  f"§7: {name}: %/total {o['pct_total']} is of our total {total}")
    _, rows = rl.read_csv(out_csv)
    excl = {r["method"]: r["excl_wall_us"] for r in rows if r["thread"] == "all"}
    for name, v in DMTRACEDUMP_EXCL.items():
        if name == "p.C.h (I)I":
            ctx.eq((v, excl.get(name)), EXPECTED_DIFFS["C exclusive"], "§7: C's exclusive time")
        else:
            ctx.eq(excl.get(name), v, f"§7: {name}: exclusive time")
    ctx.check(all(r["incl_cpu_us"] is None and r["excl_cpu_us"] is None for r in rows),
              "§7: a wall-only trace leaves the CPU columns empty")
    ctx.check(doc["header"].get("clock", "").startswith("wall (wall only"), f"§7: clock line: {doc['header']}")
    # weakness #8: "(toplevel)" never "(null)"; weakness #7: the source file apart from the signature
    text = read(txt)
    ctx.check("(null)" not in text, "§7: no '(null)' in the report")
    ctx.check("p.A.f ()V  [A.java]" in text, "§7: the source file is shown apart from the signature")
    # --weight cpu on a wall-only input is refused, as folded does
    r = ctx.run(["-q", "-f", "-o", "report", "--weight", "cpu", src, os.path.join(ctx.work, "rec-cpu.txt")])
    ctx.eq(r.returncode, 1, "§7: --weight cpu without a CPU clock: a clear error")
    ctx.check(b"no thread-CPU clock" in r.stderr, f"§7: --weight cpu message: {r.stderr!r}")


# -- 3. every reader reaches the report ---------------------------------------------

def sane(ctx, src, text, rows):
    doc = rl.parse_text(text)
    ctx.check(text.startswith("# traceconv "), f"{src}: report starts with its mark")
    tables = [s for s in doc["sections"] if s["rows"]]
    groups = rl.csv_groups(rows)
    ctx.eq(len(tables), len(groups), f"{src}: text tables vs CSV groups")
    for r in rows:
        for k in ("incl_wall_us", "incl_cpu_us"):
            excl = r[k.replace("incl", "excl")]
            if r[k] is not None and excl is not None:
                ctx.check(0 <= excl <= r[k] + 1, f"{src}: {r['thread']} {r['method']}: {k} {r[k]} < excl {excl}")
        ctx.check(r["calls"] >= 0, f"{src}: negative calls")
    for s in tables:
        for tr in s["rows"]:
            span_w, span_c = s["span"]
            if tr["incl_wall"] is not None and span_w is not None:
                ctx.check(tr["incl_wall"] <= span_w + 1, f"{src}: {s['title']}: {tr['name']} longer than the span")


def check_every_reader(ctx):
    inputs = rl.corpus_inputs(ctx)
    readers = set()
    for src in inputs:
        base = os.path.basename(src)
        ir = ctx.run(["-q", "-f", "-o", "ir", src, os.path.join(ctx.work, base + ".ir.txt")])
        outs = {"report": os.path.join(ctx.work, base + ".txt"), "csv": os.path.join(ctx.work, base + ".csv"),
                "dot": os.path.join(ctx.work, base + ".dot")}
        runs = {k: ctx.run(["-f", "-o", "dot" if k == "dot" else "report", *(["--csv"] if k == "csv" else []),
                            src, p]) for k, p in outs.items()}
        for k, r in runs.items():
            ctx.eq(r.returncode, ir.returncode, f"{src}: -o {k} exit vs -o ir exit ({r.stderr.decode(errors='replace').strip()[-200:]})")
        if ir.returncode != 0 or any(r.returncode for r in runs.values()):
            continue
        line = runs["report"].stderr.decode(errors="replace")
        readers.add(line.split("(", 1)[1].split()[0] if "(" in line else "?")
        _, rows = rl.read_csv(outs["csv"])
        sane(ctx, src, read(outs["report"]), rows)
    want = {"art", "dalvik", "json", "ir", "rhea", "systrace"}
    ctx.check(want <= readers, f"readers that reached the report: {sorted(readers)}, want {sorted(want)}")


# -- 4. hostile names -----------------------------------------------------------------

# the method names of tests/ir/hostile-names.ir.txt (and one more: "bad" + bytes FF FE)
HOSTILE = ["a,b", 'q"uote', "new\nline", "cr\rret", "tab\there", "back\\slash", "</script>&amp;]]>",
           "nul\x01ctl", "{}|<>", "\u00e9t\u00e9"]


def check_hostile(ctx):
    src = os.path.join(ctx.source, "tests", "ir", "hostile-names.ir.txt")
    if not ctx.check(os.path.exists(src), f"{src} is missing"):
        return
    txt = convert(ctx, src, os.path.join(ctx.work, "hostile.txt"))
    out_csv = convert(ctx, src, os.path.join(ctx.work, "hostile.csv"), "--csv")
    if not txt or not out_csv:
        return
    with open(txt, "rb") as f:
        raw = f.read()
    ctx.check(all(b >= 0x20 or b == 0x0A for b in raw), "hostile: no control byte but LF in the text report")
    try:
        raw.decode("utf-8")
        ctx.check(True, "")
    except UnicodeDecodeError as e:
        ctx.fail(f"hostile: the text report is not UTF-8: {e}")
    doc = rl.parse_text(raw.decode("utf-8", errors="replace"))
    rows = doc["sections"][0]["rows"] if doc["sections"] else []
    names = sorted(r["name"] for r in rows)
    want = sorted(rl.text_escape(n) for n in HOSTILE)
    ctx.check(set(want) <= set(names), f"hostile: every name on its own row, escaped: {names}")
    ctx.check(any(n.startswith("bad") and "\\xFF" in n for n in names), f"hostile: invalid UTF-8 as \\xFF: {names}")
    ctx.check("main\\nthread" in raw.decode("utf-8", errors="replace"), "hostile: the thread name escaped")
    with open(out_csv, "rb") as f:
        craw = f.read()
    try:
        craw.decode("utf-8")
    except UnicodeDecodeError as e:
        ctx.fail(f"hostile: the CSV is not UTF-8: {e}")
    _, crow = rl.read_csv(out_csv)
    got = sorted(r["method"] for r in crow if r["thread"] == "all")
    ctx.check(all(32 <= ord(c) < 0x7F or ord(c) > 0x9F or c in "\r\n" for c in craw.decode("utf-8", "replace")),
              "hostile: no control character in the CSV but its line ends")
    ctx.check({rl.text_escape(n) for n in HOSTILE} <= set(got), f"hostile: every name in the CSV, escaped: {got}")
    ctx.check("bad\ufffd\ufffd" in got, f"hostile: invalid UTF-8 (2 bytes) as U+FFFD in the CSV: {got}")
    ctx.check(all(r["thread"] == "main\\nthread" for r in crow if r["tid"]), "hostile: thread name in the CSV")
    ctx.eq(len(crow), 2 * len(HOSTILE + ["bad"]), "hostile: one row per method, all and per thread")


# -- 5. rounding: exact ns sums, rounded once to the nearest µs ------------------------

# (method name, [durations of its calls in ns]): halves, just below halves, and a sum
# (2 x 700 ns) whose µs differ from the sum of the calls' rounded µs
ROUNDING = [("r499", [499]), ("r500", [500]), ("r1499", [1499]), ("r1500", [1500]), ("r2500", [2500]),
            ("twice700", [700, 700]), ("big", [123456789])]


def round_us(ns):
    """ns to µs, to the nearest, halves away from zero (the report's rule), computed here."""
    q, r = divmod(ns, 1000)
    return q + (1 if r >= 500 else 0)


def check_rounding(ctx):
    src = os.path.join(ctx.work, "rounding.ir.txt")
    lines = ["traceconv-ir 1", "trace clock=dual has_wall=1 has_cpu=1 pid=9 start_ns=0",
             'thread 0 tid=9 records=0 name="main"']
    lines += [f'method {i} id=0 name="{name}"' for i, (name, _) in enumerate(ROUNDING)]
    t = 0
    for i, (_, durations) in enumerate(ROUNDING):
        for d in durations:
            lines.append(f"B t=0 m={i} d=0 ts={t} cpu={t // 3}")
            t += d
            lines.append(f"E t=0 m={i} d=0 ts={t} cpu={t // 3}")
            t += 1  # a gap, so the next call starts elsewhere
    with open(src, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    out = convert(ctx, src, os.path.join(ctx.work, "rounding.csv"), "--csv")
    if not out:
        return
    got = {r["method"]: (r["incl_wall_us"], r["incl_cpu_us"]) for r in rl.read_csv(out)[1] if r["thread"] == "all"}
    t = 0
    for name, durations in ROUNDING:
        wall = cpu = 0
        for d in durations:
            wall += d
            cpu += (t + d) // 3 - t // 3
            t += d + 1
        ctx.eq(got.get(name), (round_us(wall), round_us(cpu)), f"rounding: {name} ({wall} ns wall, {cpu} ns cpu)")


def main():
    ctx = tclib.Ctx()
    check_rounding(ctx)
    check_corpus(ctx)
    check_section7(ctx)
    check_every_reader(ctx)
    check_hostile(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
