"""The systrace reader (-i systrace): atrace/ftrace text, TRACE: + zlib, systrace HTML.
1. Every file of the project's corpus/systrace (made by its gen.py from a model, with
   facts from the same model) converts to every writer (JSON outputs pass
   check_chrome_json.py), except procfs-dump, a /proc listing (input of catapult's TGID
   repair), not a trace: no reader claims it. The same for every file of
   TC_EXTRA_CORPUS/systrace when it is set (catapult's and Perfetto's files, by name).
   The legacy pages (`var linuxPerfData`, one string with `\n\` continuations, or several
   literals joined by `+` with JavaScript's escapes, after a viewer whose code mentions the
   variable and matches its assignment in a regex) read as the text they hold: their -o ir
   dump equals that of the text file the facts name (same_as). The gen-B page whose viewer
   code, a comment and a style hold the trace-data tag's text gives one ftrace block and no
   bad line.
2. The captures: per pid, B slices, C samples and S async slices in our JSON equal the
   input lines of each kind, counted here with a regex over the input and in the facts;
   thread names and processes equal the facts; the zlib-compressed copy gives the same
   -o ir dump (the trace line, which names the compression, aside).
3. Facts checked by hand on small inputs: corpus/systrace/bad-lines.systrace (with
   Perfetto's bad_print test file when TC_EXTRA_CORPUS holds it) and hand-written
   text/HTML (`<...>` tasks, `(-----)` TGIDs, bare E, 9-digit times, PROCESS DUMP names,
   CRLF, instants, decimal counters).
4. Probing: ART and JSON inputs are never claimed."""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

WRITERS = ("json", "folded", "perfetto", "pprof", "ir")
# TC_EXTRA_CORPUS/systrace: catapult's and Perfetto's files, known by name
NOT_A_TRACE = ("catapult-systrace-atrace_procfs_dump",)
CAPTURE = "catapult-systrace-decompressed_atrace_data.txt"
COMPRESSED = "catapult-systrace-compressed_atrace_data.txt"


def stderr_of(r):
    return r.stderr.decode(errors="replace")


def lint_json(ctx, path):
    chk = ctx.oracle(["python3", ctx.checker("check_chrome_json.py"), path])
    ctx.check(chk is not None and chk.returncode == 0,
              f"{path}: check_chrome_json.py: {chk and (chk.stdout + chk.stderr)[-600:]}")


def refusal(facts):
    """What the one-line error of a file the facts say must fail holds; None for a trace."""
    if not facts["input"]:
        return "unknown input format"  # no reader claims it
    return facts.get("refused")


def every_file(ctx, files):
    """files: (name, path, refusal: None for a trace, else the words its one-line error holds)."""
    for f, src, refusal in files:
        for w in WRITERS:
            out = os.path.join(ctx.work, f"{f}.{w}")
            if os.path.exists(out):
                os.remove(out)
            r = ctx.run(["-f", "-o", w, src, out])
            err = stderr_of(r)
            lines = [l for l in err.splitlines() if l.strip()]
            if refusal:
                ctx.eq(r.returncode, 1, f"{f} -> {w}: exit status ({err.strip()[:200]})")
                ctx.eq(len(lines), 1, f"{f} -> {w}: one line on stderr")
                ctx.check(not os.path.exists(out), f"{f} -> {w}: no output file")
                ctx.check(refusal in err, f"{f} -> {w}: the message says '{refusal}': {err.strip()}")
                continue
            if not ctx.check(r.returncode == 0, f"{f} -> {w}: exit {r.returncode}: {err.strip()[-400:]}"):
                continue
            ctx.check("(systrace " in err, f"{f}: read by the systrace reader: {err.strip()[-300:]}")
            ctx.check(os.path.exists(out), f"{f} -> {w}: output written")
            if w == "json":
                lint_json(ctx, out)


PAYLOAD = re.compile(r": (?:tracing_mark_write|0|print): ([BCSF])\|(\d+)\|", re.M)


def input_counts(path):
    """{(kind, pid): lines} from the input text, independently of traceconv."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return collections.Counter((k, int(pid)) for k, pid in PAYLOAD.findall(text))


def json_counts(path):
    with open(path, "rb") as f:
        ev = json.load(f)["traceEvents"]
    kinds = {"B": "B", "C": "C", "b": "S"}
    return collections.Counter((kinds[e["ph"]], int(e["pid"])) for e in ev if e.get("ph") in kinds)


def capture_counts(ctx, text, compressed, facts=None, totals=None):
    """text and compressed: one capture as text and as TRACE: + zlib; facts: its model's counts
    (project corpus); totals: {kind: lines} known for it (catapult's capture: CORPUS.md)."""
    want = input_counts(text)
    for kind, n in (totals or {}).items():
        ctx.eq(sum(v for (k, _), v in want.items() if k == kind), n, f"{os.path.basename(text)}: {kind} lines")
    want = collections.Counter({k: v for k, v in want.items() if k[0] != "F"})
    if facts is not None:
        model = {(k, int(pid)): n for k, per in facts["counts"].items() if k in "BCS" for pid, n in per.items()}
        ctx.eq(dict(want), model, f"{os.path.basename(text)}: B, C and S lines per pid vs the facts")
    irs = []
    for src in (text, compressed):
        f = os.path.basename(src)
        js = os.path.join(ctx.work, f + ".counts.json")
        ctx.run(["-q", "-f", "-o", "json", src, js], check_rc=0)
        if os.path.exists(js):
            got = json_counts(js)
            ctx.eq(dict(got), dict(want), f"{f}: B, C and b events per pid in the JSON vs lines in the input")
        ir = os.path.join(ctx.work, f + ".cmp.ir")
        ctx.run(["-q", "-f", "--process-name", "capture", "-o", "ir", src, ir], check_rc=0)
        with open(ir) as fh:
            irs.append([l for l in fh if not l.startswith("trace ")])
    ctx.check(irs[0] == irs[1] and len(irs[0]) > 1000,
              f"compressed and decompressed capture give the same -o ir dump ({len(irs[0])} / {len(irs[1])} lines)")


def ir_dump(ctx, src, extra=()):
    out = os.path.join(ctx.work, os.path.basename(src) + ".ir")  # never beside a shared input
    if os.path.exists(out):  # an existing OUTPUT without the .ir.txt extension would be a second input
        os.remove(out)
    r = ctx.run(["-f", "-o", "ir", *extra, src, out])
    if not ctx.check(r.returncode == 0, f"{src}: exit {r.returncode}: {stderr_of(r).strip()}"):
        return None, stderr_of(r)
    with open(out) as f:
        return absolute_times(f.read()), stderr_of(r)


def absolute_times(ir):
    """The IR's event times are ns since the trace start (here the first event): made absolute
    again by adding the trace line's start_ns, so that expectations are the input's own times."""
    start = int(re.search(r"^trace .* start_ns=(-?\d+)", ir, re.M).group(1))
    return re.sub(r"^([BEICSF] .*? ts=)(-?\d+)", lambda m: m.group(1) + str(start + int(m.group(2))), ir, flags=re.M)


def threads_of(ir):
    """{tid: (name, pid)} from an IR dump."""
    procs = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^process (\d+) pid=(-?\d+)", ir, re.M)}
    procs[0] = int(re.search(r"^trace .* pid=(-?\d+)", ir, re.M).group(1))  # the trace line is process 0
    out = {}
    for m in re.finditer(r'^thread \d+ tid=(\d+) records=\d+(?: process=(\d+))? name=(".*")$', ir, re.M):
        out[int(m.group(1))] = (json.loads(m.group(3)), procs.get(int(m.group(2) or 0), None))
    return out


def corpus_facts(ctx, label, src, facts):
    """A project capture's threads (name, process), slices and open frames equal its facts."""
    ir, err = ir_dump(ctx, src)
    if ir is None:
        return
    th = threads_of(ir)
    for tid, (name, pid) in facts.get("threads", {}).items():
        ctx.eq(th.get(int(tid)), (name, pid), f"{label}: thread {tid}: name and process")
    begins = collections.Counter(int(m) for m in re.findall(r"^B t=(\d+) ", ir, re.M))
    tids = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"^thread (\d+) tid=(\d+) ", ir, re.M)}
    got = {str(tids[t]): n for t, n in sorted(begins.items())}
    ctx.eq(got, facts["slices"], f"{label}: slices per thread")
    ctx.eq(tclib.parse_figures(err).get("open-at-end", 0), facts.get("open_at_end", 0), f"{label}: open-at-end figure")
    for pid, name in facts.get("processes", {}).items():
        ctx.check(re.search(rf'^process \d+ pid={pid} name={re.escape(json.dumps(name))}$', ir, re.M) is not None or
                  (re.search(rf"^trace .* pid={pid} ", ir, re.M) and f"\nprocess {json.dumps(name)}\n" in ir),
                  f"{label}: process {pid} named {name!r} by PROCESS DUMP")


def bad_lines(ctx, label, src, facts):
    """corpus/systrace/bad-lines.systrace: a kernel event's details run over lines that are no
    ftrace lines: each is a bad-line warning, the first named by its offset, the rest is read."""
    ir, err = ir_dump(ctx, src)
    if ir is None:
        return
    figs = tclib.parse_figures(err)
    ctx.eq(figs.get("bad-line"), facts["bad_lines"], f"{label}: the continuation lines are bad-line warnings")
    ctx.check(f"offset 0x{facts['first_bad_offset']:x}:" in err,
              f"{label}: the first bad line is named by its offset 0x{facts['first_bad_offset']:x}: {err}")
    for tid, (name, pid) in facts["threads"].items():
        ctx.eq(threads_of(ir).get(int(tid)), (name, pid), f"{label}: thread {tid} named by its task")
    ctx.eq(len(re.findall(r"^B ", ir, re.M)), facts["slices"]["620"], f"{label}: the slice after them is read")


def same_text(ctx, label, page, text):
    """A legacy page reads as the text its linuxPerfData string holds."""
    dumps = []
    for src in (page, text):
        ir, err = ir_dump(ctx, src, ["--process-name", "capture"])
        if ir is None:
            return
        dumps.append([l for l in ir.splitlines() if not l.startswith("trace ")])
        if src == page:
            ctx.check("legacy HTML (var linuxPerfData)" in err, f"{label}: the summary says what it read: {err[-300:]}")
    ctx.check(dumps[0] == dumps[1] and len(dumps[0]) > 20,
              f"{label}: the same -o ir dump as {os.path.basename(text)} ({len(dumps[0])} / {len(dumps[1])} lines)")


def html_blocks(ctx, label, src, facts):
    """The trace-data elements are found as an HTML parser finds them: text that looks like the
    tag inside the viewer's code, a comment or a style is no block."""
    ir, err = ir_dump(ctx, src)
    if ir is None:
        return
    ctx.check(f"HTML, {facts['ftrace_blocks']} ftrace block" in err, f"{label}: ftrace blocks: {err[-300:]}")
    ctx.eq(tclib.parse_figures(err).get("bad-line", 0), facts["bad_lines"], f"{label}: bad lines")


def bad_print(ctx, corpus):
    ir, err = ir_dump(ctx, os.path.join(corpus, "perfetto-atrace-bad_print.systrace"))
    if ir is None:
        return
    figs = tclib.parse_figures(err)
    ctx.eq(figs.get("bad-line"), 2, "bad_print: the two continuation lines are bad-line warnings")
    ctx.check("offset 0x61" in err, f"bad_print: the first bad line is at its offset 0x61: {err}")
    ctx.eq(threads_of(ir).get(598), ("surfaceflinger", 598), "bad_print: thread 598 named by its task, in pid 598")
    ev = re.findall(r"^([BE]) t=\d+ m=\d+ d=0 ts=(\d+)", ir, re.M)
    ctx.eq(ev, [("B", "10852771242000"), ("E", "10852771245000")], "bad_print: one slice, times in exact ns")
    ctx.check('name="some event"' in ir, "bad_print: slice named after B|598|")


HAND = (
    "# tracer: nop\n"
    "#\n"
    "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
    "#              | |        |      |   ||||       |         |\n"
    "           <...>-201   (-----) [001] ...1     1.000000001: tracing_mark_write: B|200|outer\n"
    "     RenderThread-201  (-----) [001] ...1     1.000002000: tracing_mark_write: B|200|inner|with|bars\n"
    "           <...>-201   (-----) [001] ...1     1.000003000: tracing_mark_write: E\n"
    "           <...>-201   (-----) [001] ...1     1.000004000: tracing_mark_write: E|200\n"
    "   my app thread-202   (  200) [000] d..2     1.000005000: tracing_mark_write: C|200|queue|2.5\n"
    "   my app thread-202   (  200) [000] ....     1.000006000: tracing_mark_write: I|200|tick\r\n"
    "           <...>-203   (-----) [000] ....     1.000007000: tracing_mark_write: S|200|load|-7\n"
    "           <...>-203   (-----) [000] ....     1.000008000: tracing_mark_write: F|200|load|-7\n"
    "          <idle>-0     [002] d..2     1.000009000: sched_switch: prev_comm=swapper/2 ==> next_comm=x\n"
    "         surface-300   (  300) [002] ...1     1.000010: tracing_mark_write: trace_event_clock_sync: parent_ts=1.0\n"
    "         surface-300   (  300) [002] ...1     1.00x011: tracing_mark_write: B|300|broken time\n"
)


def hand_text(ctx):
    src = os.path.join(ctx.work, "hand.systrace")
    with open(src, "w", newline="") as f:
        f.write(HAND)
    ir, err = ir_dump(ctx, src)
    if ir is None:
        return
    th = threads_of(ir)
    ctx.eq(th.get(201), ("RenderThread", 200), "<...> lines and a named line: the thread takes the name; "
                                              "(-----) TGID: the process comes from B|200|")
    ctx.eq(th.get(202), ("my app thread", 200), "task names with spaces; the TGID column")
    ctx.eq(th.get(203), ("Thread-203", 200), "a thread seen only as <...>: default name, process from S|200|")
    ctx.check('name="inner|with|bars"' in ir, "B name = everything after B|pid| (Perfetto)")
    ctx.check(re.search(r"^B t=\d+ m=\d+ d=0 ts=1000000001 ", ir, re.M) is not None,
              "9-digit timestamp kept to the ns, fixed point")
    ends = re.findall(r"^E t=\d+ m=\d+ d=(\d) ts=(\d+)", ir, re.M)
    ctx.eq(ends, [("1", "1000003000"), ("0", "1000004000")], "bare E and E|pid close the innermost slices")
    ctx.check(re.search(r"^C t=\d+ m=\d+ d=0 ts=1000005000 cpu=- value=2\.5", ir, re.M) is not None,
              f"decimal counter value: {re.findall(r'^C .*', ir, re.M)}")
    ctx.check(re.search(r"^I t=\d+ m=\d+ d=0 ts=1000006000", ir, re.M) is not None, "instant (CRLF line)")
    ctx.check(re.search(r"^S .* id=18446744073709551609$", ir, re.M) is not None or
              re.search(r"^S .* id=-7$", ir, re.M) is not None, f"async cookie -7 kept: {re.findall(r'^[SF] .*', ir, re.M)}")
    figs = tclib.parse_figures(err)
    ctx.eq(figs.get("bad-line"), 2, f"the broken timestamp and the sched_switch without pids and prios "
                                     f"(Perfetto: 'Could not parse sched_switch') are bad lines, skipped: {err.strip()}")
    ctx.check("offset 0x%x" % HAND.encode().index(b"         surface-300   (  300) [002] ...1     1.00x") in err,
              f"the bad line's offset is named: {err}")
    ctx.eq(figs.get("records"), 8, "records: 2 B, 2 E, C, I, S, F (clock sync and sched_switch make none)")
    ctx.check("sched_switch: a field is missing or out of range; line skipped" in err,
              f"the sched_switch line without pids says why it is skipped: {err}")
    js = os.path.join(ctx.work, "hand.json")
    if ctx.run(["-q", "-f", "-o", "json", src, js], check_rc=0).returncode == 0:
        lint_json(ctx, js)


HTML = (
    "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"/><title>t</title></head>\n<body>\n"
    "<!-- BEGIN TRACE -->\n"
    "  <script class=\"trace-data\" type=\"application/text\">\n"
    "PROCESS DUMP\n"
    "USER           PID  PPID     VSZ    RSS WCHAN  PC S NAME                        COMM\n"
    "u0_a123      18557   700       0      0 0       0 S com.example.sample.app     example.sample.app\n"
    "USER           PID   TID CMD\n"
    "u0_a123      18557 18601 pool-1-thread-1\n"
    "  </script>\n"
    "  <script class=\"trace-data\" type=\"application/text\">\n"
    "{\"traceEvents\": [], \"metadata\": {\"clock-domain\": \"SYSTRACE\"}}\n"
    "  </script>\n"
    "  <script class=\"trace-data\" type=\"application/text\">\n"
    "# tracer: nop\n"
    "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
    "  le.sample.app-18557 (18557) [000] ...1 948220.912000: tracing_mark_write: B|18557|onCreate\n"
    "           <...>-18601 (-----) [001] ...1 948220.913000: tracing_mark_write: B|18557|work\n"
    "           <...>-18601 (-----) [001] ...1 948220.913500: tracing_mark_write: E|18557\n"
    "  le.sample.app-18557 (18557) [000] ...1 948220.914000: tracing_mark_write: E|18557\n"
    "  </script>\n"
    "<!-- END TRACE -->\n</body>\n</html>\n"
)


def hand_html(ctx):
    src = os.path.join(ctx.work, "hand.html")
    with open(src, "w") as f:
        f.write(HTML)
    ir, err = ir_dump(ctx, src)
    if ir is None:
        return
    th = threads_of(ir)
    ctx.eq(th.get(18557), ("le.sample.app", 18557), "HTML: main thread named by its task")
    ctx.eq(th.get(18601), ("pool-1-thread-1", 18557), "HTML: a <...> thread named by PROCESS DUMP")
    ctx.check(re.search(r'^process \d+ pid=18557 name="com.example.sample.app"$', ir, re.M) is not None or
              (re.search(r"^trace .* pid=18557 ", ir, re.M) and '\nprocess "com.example.sample.app"\n' in ir),
              "HTML: process named by PROCESS DUMP's NAME column")
    ctx.eq(tclib.parse_figures(err).get("records"), 4, "HTML: the controller JSON block is skipped")
    ctx.check("HTML, 1 ftrace block" in err, f"HTML: detail says so: {err}")
    js = os.path.join(ctx.work, "hand.html.json")
    if ctx.run(["-q", "-f", "-o", "json", src, js], check_rc=0).returncode == 0:
        lint_json(ctx, js)
        names = {e["args"]["name"] for e in json.load(open(js))["traceEvents"] if e.get("name") == "process_name"}
        ctx.check("com.example.sample.app" in names, f"HTML: process name reaches the JSON: {names}")


def probes(ctx):
    """ART and JSON inputs keep their readers."""
    inputs = [p for _, p, _ in ctx.project_cases()][:3]
    inputs += [os.path.join(ctx.source, "tests", "json", f) for f in ("system.json", "exits-without-enter.json")]
    for p in inputs:
        r = ctx.run(["--probe", p])
        scores = dict(re.findall(r"^(\w+)\s+(\d+)$", r.stdout.decode(), re.M))
        ctx.eq(scores.get("systrace"), "0", f"{os.path.basename(p)}: systrace probe score")


def main():
    ctx = tclib.Ctx()
    hand_text(ctx)
    hand_html(ctx)
    probes(ctx)
    facts = ctx.corpus_facts("systrace")
    every_file(ctx, [(os.path.basename(p), p, refusal(facts[os.path.basename(p)])) for p in ctx.corpus_files("systrace")])
    ours = os.path.join(ctx.corpus, "systrace")
    capture_counts(ctx, os.path.join(ours, "capture.txt"), os.path.join(ours, "capture.ctrace"), facts["capture.txt"])
    for label, src, f in ctx.corpus_inputs("systrace"):
        if "threads" in f and "bad_lines" not in f:
            corpus_facts(ctx, label, src, f)
    bad_lines(ctx, "bad-lines.systrace", os.path.join(ours, "bad-lines.systrace"), facts["bad-lines.systrace"])
    for label, src, f in ctx.corpus_inputs("systrace"):
        if "same_as" in f:
            same_text(ctx, label, src, os.path.join(ours, f["same_as"]))
        if "ftrace_blocks" in f:
            html_blocks(ctx, label, src, f)
    extra = ctx.extra_corpus("systrace")
    if extra:  # catapult's and Perfetto's files: what CORPUS.md says of them
        every_file(ctx, [(f, p, "unknown input format" if f in NOT_A_TRACE else None)
                         for f, p in ((os.path.basename(p), p) for _, p in ctx.extra_files("systrace"))])
        if os.path.exists(os.path.join(extra, CAPTURE)):
            capture_counts(ctx, os.path.join(extra, CAPTURE), os.path.join(extra, COMPRESSED),
                           totals={"B": 463, "C": 88, "S": 17})
        if os.path.exists(os.path.join(extra, "perfetto-atrace-bad_print.systrace")):
            bad_print(ctx, extra)
    ctx.done()


if __name__ == "__main__":
    main()
