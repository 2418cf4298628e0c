#!/usr/bin/env python3
"""Issue 22's writer items, each checked against a reader we did not write or an
expectation computed here from the input, never from traceconv's own output:

  * many processes (item 11): json, perfetto and systrace name each process with
    events once (Python's json, protoc with the project's schema, the systrace
    PROCESS DUMP read here) and their cost grows linearly with the processes
    (CPU time of 4x the processes < 8x; not under sanitizers);
  * async slices keep their process (item 21): two processes with one name and
    cookie, read as Perfetto's JSON importer reads b/e (PERFETTO-IMPORT.md §5:
    the track is (scope, name, cat, id), a plain id global, id2.local
    process-scoped; nestable: an end closes the track's innermost begin), are
    300 ms and 400 ms, not 500 ms and 200 ms; our own reader reads them back
    (id2.local, id2.global, id) to the same slices;
  * pprof's comments (item 20) group the figures as the CLI summary does:
    `go tool pprof -comments` shows repairs under repaired:, warnings under
    warnings:, notes under notes:, with the counts of tracegen's facts;
  * one name for the input's format (item 20): a Dalvik trace is "dalvik v1"
    in the summary and in every output's metadata (JSON otherData, pprof's
    comments, the Perfetto facts, the report, the report page, systrace);
  * one name for an undefined method (item 20): the report (text, CSV, HTML)
    and the call graph say unknown.0x<id> for each unknown id of the facts,
    as the timelines and folded stacks do;
  * one row per method (item 20): ART listing one method under two ids gives
    one report row and one call-graph node, with the figures of tracegen's
    facts for the two ids summed;
  * speedscope counts an async slice it leaves out once (item 20): the
    writer-dropped-frames figure equals the instants, counters, async slices
    and lone async ends of the input, counted here.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import reportlib  # noqa: E402
import tclib  # noqa: E402


def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    return path


def protoc_decode(ctx, path, message, proto):
    with open(path, "rb") as f:
        r = ctx.oracle(["protoc", "--proto_path=" + os.path.join(ctx.source, "proto"), "--decode=" + message,
                        proto], stdin=f)
    if r is None or not ctx.check(r.returncode == 0, f"protoc --decode {path}: {r.stderr.decode(errors='replace')}"):
        return None
    return r.stdout.decode("utf-8", errors="replace")


# -- item 11: many processes -----------------------------------------------------------------

def many_processes_ir(path, n, idle_every=0):
    """n processes (pids 1..n), one thread each (tid = pid) with one slice; with idle_every,
    every idle_every-th process's thread has no events (so the process has nothing to show)."""
    lines = ["traceconv-ir 1", "trace clock=wall has_wall=1 has_cpu=0 pid=1 start_ns=0", 'process "p1"']
    lines += [f'process {i} pid={i + 1} name="p{i + 1}"' for i in range(1, n)]
    lines += [f'thread {i} tid={i + 1} records=0{"" if i == 0 else f" process={i}"} name="t{i + 1}"'
              for i in range(n)]
    lines.append('method 0 id=0 name="work"')
    busy = [i for i in range(n) if not (idle_every and i % idle_every == idle_every - 1)]
    for i in busy:
        lines += [f"B t={i} m=0 ts={i * 10}", f"E t={i} m=0 ts={i * 10 + 5}"]
    write(path, "\n".join(lines) + "\n")
    return {i + 1 for i in busy}


def process_names_in_outputs(ctx):
    """Each writer names exactly the processes with events, once."""
    src = os.path.join(ctx.work, "procs.ir.txt")
    want = many_processes_ir(src, 300, idle_every=7)
    js = os.path.join(ctx.work, "procs.json")
    if ctx.run(["-q", "-f", "-o", "json", src, js], check_rc=0).returncode == 0:
        with open(js, encoding="utf-8") as f:
            ev = json.load(f)["traceEvents"]
        named = [e["pid"] for e in ev if e.get("ph") == "M" and e.get("name") == "process_name"]
        ctx.eq(sorted(named), sorted(want), "json: one process_name per process with events")
    pf = os.path.join(ctx.work, "procs.pftrace")
    if ctx.run(["-q", "-f", "-o", "perfetto", src, pf], check_rc=0).returncode == 0:
        text = protoc_decode(ctx, pf, "perfetto.protos.Trace", "perfetto_trace_subset.proto")
        if text is not None:
            pids = [int(p) for p in re.findall(r"process \{\s*pid: (\d+)", text)]
            ctx.eq(sorted(pids), sorted(want), "perfetto: one process descriptor per process with events")
    st = os.path.join(ctx.work, "procs.html")
    if ctx.run(["-q", "-f", "-o", "systrace", src, st], check_rc=0).returncode == 0:
        with open(st, encoding="utf-8") as f:
            html = f.read()
        dump = html.split("PROCESS DUMP\n", 1)[1].split("USER           PID   TID CMD\n", 1)[0]
        pids = [int(line.split()[1]) for line in dump.splitlines()[1:]]
        ctx.eq(sorted(pids), sorted(want), "systrace: one PROCESS DUMP line per process with events")


def many_processes_linear(ctx):
    """The metadata of json, perfetto and systrace is linear in the processes (it was one scan
    of every thread per process: 200k processes took 9 s in json where 50k took 0.6 s)."""
    if tclib.is_sanitized(ctx.traceconv):
        print("many processes: timing bound skipped under sanitizers")
        return
    sizes = (50000, 200000)
    paths = {}
    for n in sizes:
        paths[n] = os.path.join(ctx.work, f"procs{n}.ir.txt")
        many_processes_ir(paths[n], n)
    for fmt in ("json", "perfetto", "systrace"):
        out = {n: os.path.join(ctx.work, f"procs{n}.out.{tclib.WRITER_EXT[fmt]}") for n in sizes}
        t = {n: ctx.cpu_time(["-q", "-f", "-o", fmt, paths[n], out[n]], runs=2) for n in sizes}
        for n in sizes:
            if os.path.exists(out[n]):
                os.unlink(out[n])
        if None in t.values():
            return
        print(f"{fmt}: {sizes[0]} processes {t[sizes[0]]:.2f} s CPU, {sizes[1]} {t[sizes[1]]:.2f} s")
        ctx.check(t[sizes[1]] < max(8 * t[sizes[0]], 0.5),
                  f"{fmt}: 4x the processes cost {t[sizes[1]] / max(t[sizes[0]], 1e-3):.1f}x the time (quadratic?)")
    for p in paths.values():
        os.unlink(p)


# -- item 21: async slices keep their process ------------------------------------------------------

MS = 1000000  # ns
# (pid, name, cookie, begin ns, end ns): two processes with the same name and cookie, overlapping;
# a second cookie of the same name in process 10, overlapping its first
ASYNC = [(10, "load", 7, 0, 300 * MS), (20, "load", 7, 100 * MS, 500 * MS), (10, "load", 8, 50 * MS, 150 * MS)]


def async_ir(path):
    lines = ["traceconv-ir 1", "trace clock=wall has_wall=1 has_cpu=0 pid=10 start_ns=0", 'process "ten"',
             'process 1 pid=20 name="twenty"', 'thread 0 tid=10 records=0 name="main10"',
             'thread 1 tid=20 records=0 process=1 name="main20"', 'method 0 id=0 name="load"']
    recs = []
    for pid, _, cookie, b, e in ASYNC:
        t = 0 if pid == 10 else 1
        recs += [(b, f"S t={t} m=0 ts={b} id={cookie}"), (e, f"F t={t} m=0 ts={e} id={cookie}")]
    lines += [line for _, line in sorted(recs)]
    write(path, "\n".join(lines) + "\n")


def perfetto_json_async(events):
    """Durations of the nestable async slices (b/e) as Perfetto's JSON importer pairs them
    (PERFETTO-IMPORT.md §5, CHROME_JSON.md): the track is (scope, cat, name, id) where id2.local
    is scoped to the pid and a plain id (or id2.global) is global; on a track an end closes the
    innermost open begin. -> sorted [(pid of the begin, name, duration in µs)]."""
    open_ = {}
    out = []
    for e in sorted((e for e in events if e.get("ph") in ("b", "e")), key=lambda e: float(e["ts"])):
        if "id2" in e:
            scope = ("local", e["pid"]) if "local" in e["id2"] else ("global",)
            ident = e["id2"].get("local", e["id2"].get("global"))
        else:
            scope, ident = ("global",), e.get("id")
        track = (scope, e.get("cat"), e["name"], str(ident))
        if e["ph"] == "b":
            open_.setdefault(track, []).append(e)
        elif open_.get(track):
            b = open_[track].pop()
            out.append((b["pid"], b["name"], round(float(e["ts"]) - float(b["ts"]))))
    return sorted(out)


def ir_async_slices(path):
    """Async slices of an IR dump (S/F lines): sorted [(pid, name, cookie, duration ns)], each end
    closing the innermost open begin of its (process, name, cookie)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    pid_of_process = {0: int(re.search(r"^trace .*\bpid=(-?\d+)", text, re.M).group(1))}
    for m in re.finditer(r"^process (\d+) pid=(-?\d+)", text, re.M):
        pid_of_process[int(m.group(1))] = int(m.group(2))
    process_of_thread = {}
    for m in re.finditer(r"^thread (\d+) .*", text, re.M):
        p = re.search(r" process=(\d+)", m.group(0))
        process_of_thread[int(m.group(1))] = int(p.group(1)) if p else 0
    names = {int(m.group(1)): json.loads(m.group(2)) for m in re.finditer(r"^method (\d+) .*name=(\".*\")$", text, re.M)}
    open_, out = {}, []
    for m in re.finditer(r"^([SF]) t=(\d+) m=(\d+) .*ts=(-?\d+) .*id=(\d+)", text, re.M):
        kind, t, meth, ts, cookie = m.group(1), int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5))
        key = (pid_of_process[process_of_thread[t]], names[meth], cookie)
        if kind == "S":
            open_.setdefault(key, []).append(ts)
        elif open_.get(key):
            out.append(key + (ts - open_[key].pop(),))
    return sorted(out)


def async_keeps_process(ctx):
    src = os.path.join(ctx.work, "async.ir.txt")
    async_ir(src)
    js = os.path.join(ctx.work, "async.json")
    if ctx.run(["-q", "-f", "-o", "json", src, js], check_rc=0).returncode:
        return
    with open(js, encoding="utf-8") as f:
        ev = json.load(f)["traceEvents"]
    want = sorted((pid, name, (e - b) // 1000) for pid, name, _, b, e in ASYNC)
    ctx.eq(perfetto_json_async(ev), want,
           "json b/e as Perfetto pairs them: each process's slice keeps its own length (300 ms, 400 ms)")
    be = [e for e in ev if e.get("ph") in ("b", "e")]
    ctx.check(all("id" not in e and set(e.get("id2", {})) == {"local"} for e in be),
              f"json b/e carry a process-scoped id2.local and no global id: {be[:2]}")
    # our own reader reads them back to the same slices, each in its process with its cookie
    back = os.path.join(ctx.work, "async.back.ir.txt")
    if ctx.run(["-q", "-f", "-o", "ir", js, back], check_rc=0).returncode == 0:
        ctx.eq(ir_async_slices(back), sorted(ASYNC_KEYED), "json -> ir: the async slices read back")
    # a foreign document's id2.global and plain id read as the cookie too
    doc = os.path.join(ctx.work, "async-ids.json")
    write(doc, json.dumps({"traceEvents": [
        {"ph": "b", "pid": 1, "tid": 1, "ts": 0, "name": "g", "cat": "c", "id2": {"global": "0x2a"}},
        {"ph": "e", "pid": 1, "tid": 1, "ts": 5, "name": "g", "cat": "c", "id2": {"global": "0x2a"}},
        {"ph": "b", "pid": 1, "tid": 1, "ts": 1, "name": "p", "cat": "c", "id": 9},
        {"ph": "e", "pid": 1, "tid": 1, "ts": 3, "name": "p", "cat": "c", "id": "0x9"}]}))
    back = os.path.join(ctx.work, "async-ids.ir.txt")
    if ctx.run(["-q", "-f", "-o", "ir", doc, back], check_rc=0).returncode == 0:
        ctx.eq(ir_async_slices(back), [(1, "g", 42, 5000), (1, "p", 9, 2000)], "id2.global and id read as cookies")


ASYNC_KEYED = [(pid, name, cookie, e - b) for pid, name, cookie, b, e in ASYNC]


# -- item 20: figures, format name, unknown names, duplicate ids, speedscope drops ------------------

def summary_groups(stderr):
    """The CLI summary line's groups: {'repaired': {name: n}, 'warnings': {...}, 'notes': {...}}."""
    line = [x for x in stderr.splitlines() if x.startswith("traceconv: ") and " -> " in x][-1]
    out = {"repaired": {}, "warnings": {}, "notes": {}}
    for part in line.split("; ")[1:]:
        head, _, rest = part.partition(": ")
        if head in out:
            out[head] = {name: int(n) for n, name in re.findall(r"(\d+) ([a-z][a-z0-9-]*)", rest)}
    return out


def summary_format(stderr):
    line = [x for x in stderr.splitlines() if x.startswith("traceconv: ") and " -> " in x][-1]
    return re.search(r" \((.*), clock [a-z-]+(?:, gzip)? -> ", line).group(1)


def go_pprof_comments(ctx, env, path):
    r = ctx.oracle(["go", "tool", "pprof", "-comments", path], env=env)
    if r is None or not ctx.check(r.returncode == 0, f"go tool pprof -comments: {r.stderr.decode(errors='replace')}"):
        return None
    return r.stdout.decode(errors="replace").splitlines()


def comment_groups(lines):
    out = {}
    for line in lines:
        head, _, rest = line.partition(": ")
        if head in ("repaired", "warnings", "notes"):
            out[head] = {} if rest == "none" else {name: int(n) for n, name in re.findall(r"(\d+) ([a-z][a-z0-9-]*)", rest)}
    return out


def pprof_comments_grouped(ctx, env):
    """Repairs under repaired:, warnings under warnings:, notes under notes:, as the summary."""
    cases = {  # corpus trace: what its facts make us expect under each heading
        "exits-without-enter": lambda f: {"repaired": {"exit-without-enter": f["exit_without_enter"],
                                                       "open-at-end": f["open_at_end"]}},
        "unknown-method-ids": lambda f: {"warnings": {"unknown-method-id": f["unknown_method_ids"]}},
        "v1-dalvik-threadcpu": lambda f: {"notes": {"thread-cpu-timeline": 1}},
    }
    for stem, expect in cases.items():
        src = os.path.join(ctx.corpus, stem + ".trace")
        with open(os.path.join(ctx.corpus, stem + ".facts.json"), encoding="utf-8") as f:
            facts = json.load(f)
        out = os.path.join(ctx.work, stem + ".pb.gz")
        r = ctx.run(["-f", "-o", "pprof", src, out], check_rc=0)
        if r.returncode:
            continue
        lines = go_pprof_comments(ctx, env, out)
        if lines is None:
            continue
        got = comment_groups(lines)
        ctx.eq(got, summary_groups(r.stderr.decode(errors="replace")), f"{stem}: pprof comments grouped as the summary")
        for head, figs in expect(facts).items():
            for name, n in figs.items():
                if n:
                    ctx.eq(got.get(head, {}).get(name), n, f"{stem}: pprof comment {head}: {name} (facts)")


def format_named_once(ctx, env):
    """A Dalvik trace is called dalvik in the summary and in every output's metadata."""
    src = os.path.join(ctx.corpus, "v1-dalvik-threadcpu.trace")
    with open(os.path.join(ctx.corpus, "v1-dalvik-threadcpu.facts.json"), encoding="utf-8") as f:
        facts = json.load(f)
    want = f"{facts['vm']} v{facts['version']} non-streaming"  # tracegen's scenario: vm dalvik, version 1
    base = os.path.join(ctx.work, "dalvik")
    outs = {"json": base + ".json", "pprof": base + ".pb.gz", "perfetto": base + ".pftrace", "report": base + ".txt",
            "systrace": base + ".html"}
    stderr = ""
    for fmt, out in outs.items():
        r = ctx.run(["-f", "-o", fmt, src, out], check_rc=0)
        stderr = r.stderr.decode(errors="replace")
    ctx.eq(summary_format(stderr), want, "the summary names the format")
    html = base + ".report.html"
    ctx.run(["-f", "-o", "report", "--html", src, html], check_rc=0)
    got = {}
    if os.path.exists(outs["json"]):
        with open(outs["json"], encoding="utf-8") as f:
            got["json"] = json.load(f)["otherData"]["format"]
    if os.path.exists(outs["pprof"]):
        lines = go_pprof_comments(ctx, env, outs["pprof"]) or []
        got["pprof"] = next((x[len("format: "):] for x in lines if x.startswith("format: ")), None)
    if os.path.exists(outs["perfetto"]):
        text = protoc_decode(ctx, outs["perfetto"], "perfetto.protos.Trace", "perfetto_trace_subset.proto") or ""
        m = re.search(r'debug_annotations \{\s+string_value: "([^"]*)"\s+name: "format"', text)
        got["perfetto"] = m and m.group(1)
    if os.path.exists(outs["report"]):
        with open(outs["report"], encoding="utf-8") as f:
            m = re.search(r"^format +(.*)$", f.read(), re.M)
        got["report"] = m and m.group(1)
    if os.path.exists(html):
        with open(html, encoding="utf-8") as f:
            m = re.search(r"<th[^>]*>format</th>\s*<td[^>]*>([^<]*)</td>", f.read())
        got["report --html"] = m and m.group(1)
    if os.path.exists(outs["systrace"]):
        with open(outs["systrace"], encoding="utf-8") as f:
            m = re.search(r"^# traceconv [^:]*: input [^,]*, format ([^,]*), clock", f.read(), re.M)
        got["systrace"] = m and m.group(1)
    ctx.eq(got, {k: want for k in ("json", "pprof", "perfetto", "report", "report --html", "systrace")},
           "every output's metadata names the format as the summary does")


def unknown_names(ctx):
    """Undefined method ids are unknown.0x<id> in the report and the call graph, as everywhere."""
    src = os.path.join(ctx.corpus, "unknown-method-ids.trace")
    with open(os.path.join(ctx.corpus, "unknown-method-ids.facts.json"), encoding="utf-8") as f:
        facts = json.load(f)
    want = sorted("unknown." + m["id"] for m in facts["profile"]["methods"] if m["unknown"])
    ctx.eq(len(want), facts["unknown_method_ids"], "facts: the unknown ids")
    base = os.path.join(ctx.work, "unknown")
    runs = {"report": ([], base + ".txt"), "report --csv": (["--csv"], base + ".csv"),
            "report --html": (["--html"], base + ".report.html"), "dot": (["--threshold", "0"], base + ".dot"),
            "folded": ([], base + ".folded")}
    for what, (extra, out) in runs.items():
        r = ctx.run(["-f", "-o", what.split()[0], *extra, src, out], check_rc=0)
        if r.returncode:
            continue
        with open(out, encoding="utf-8") as f:
            text = f.read()
        named = sorted(set(re.findall(r"unknown\.0x[0-9a-f]+", text)))
        ctx.eq(named, want, f"{what}: each unknown id named unknown.0x<id>")
        ctx.check("(unknown" not in text, f"{what}: no other name for an unknown id")


DUP_SCN = """# One method (Cache.get) listed under two ids, as ART may; never one inside the other.
version 3
clock dual
pid 4242
method main  com.example.Main run "()V" Main.java
method get1  com.example.Cache get "(I)Ljava/lang/Object;" Cache.java id=0x400
method get2  com.example.Cache get "(I)Ljava/lang/Object;" Cache.java id=0x800
method put   com.example.Cache put "(I)V" Cache.java
method query com.example.Db query "()V" Db.java

thread 4242 main cpu=80% {
  call main {
    call get1 10
    call get2 20 { call query 5 }
    call put { call get1 7 }
    gap 4
  }
}
thread 4243 worker cpu=50% {
  call get2 12
  call put 9 { call get2 3 }
  call get1 6
}
"""


def merged_facts(facts, pm):
    """The facts rows with the rows of one name summed: {label: (calls, incl, excl, incl cpu, excl cpu)}."""
    out = {}
    for label, *vals in reportlib.facts_rows(facts, pm):
        prev = out.get(label, (0,) * len(vals))
        out[label] = tuple(a + b for a, b in zip(prev, vals))
    return out


def duplicate_ids_one_row(ctx):
    scn = write(os.path.join(ctx.work, "dup.scn"), DUP_SCN)
    src, facts_path = os.path.join(ctx.work, "dup.trace"), os.path.join(ctx.work, "dup.facts.json")
    g = subprocess.run([ctx.tracegen, scn, src, "--facts", facts_path], capture_output=True)
    if not ctx.check(g.returncode == 0, f"tracegen: {g.stderr.decode(errors='replace')}"):
        return
    with open(facts_path, encoding="utf-8") as f:
        facts = json.load(f)
    ms = facts["profile"]["methods"]
    ctx.eq(sorted(m["id"] for m in ms if m["name"] == "get"), ["0x400", "0x800"], "facts: get under two ids")
    csv_out = os.path.join(ctx.work, "dup.csv")
    if ctx.run(["-f", "-o", "report", "--csv", src, csv_out], check_rc=0).returncode == 0:
        _, rows = reportlib.read_csv(csv_out)
        groups = reportlib.csv_groups(rows)
        want = {"all": merged_facts(facts, facts["profile"]["all"])}
        for th in facts["profile"]["threads"]:
            want[th["tid"]] = merged_facts(facts, th["methods"])
        for key, w in want.items():
            got_rows = groups.get(key, [])
            ctx.eq(len(got_rows), len(w), f"report csv {key}: one row per method name")
            ctx.eq({r[0]: tuple(r[1:]) for r in got_rows}, w, f"report csv {key}: the two ids' figures summed")
    txt = os.path.join(ctx.work, "dup.txt")
    if ctx.run(["-f", "-o", "report", src, txt], check_rc=0).returncode == 0:
        with open(txt, encoding="utf-8") as f:
            rows = [reportlib.ROW_RE.match(line) for line in f.read().splitlines()]
        names = [reportlib.FILE_RE.sub("", m.group(14)) for m in rows if m]
        get = "com.example.Cache.get (I)Ljava/lang/Object;"
        ctx.eq(names.count(get), 1 + len(facts["profile"]["threads"]), "report text: get has one row per section")
    dot = os.path.join(ctx.work, "dup.dot")
    if ctx.run(["-f", "-o", "dot", "--threshold", "0", src, dot], check_rc=0).returncode == 0:
        with open(dot, encoding="utf-8") as f:
            labels = re.findall(r'^\s*m\d+ \[label=.*, tooltip="(.*?) \(incl ', f.read(), re.M)  # the full names
        ctx.eq(sorted(labels), sorted(set(merged_facts(facts, facts["profile"]["all"]))), "dot: one node per method name")


SS_IR = """traceconv-ir 1
trace clock=wall has_wall=1 has_cpu=0 pid=5 start_ns=0
process "app"
thread 0 tid=5 records=0 name="main"
thread 1 tid=6 records=0 name="worker"
method 0 id=0 name="frame"
method 1 id=0 name="load"
method 2 id=0 name="vsync"
method 3 id=0 name="heap"
B t=0 m=0 ts=0
S t=0 m=1 ts=10 id=1
I t=0 m=2 ts=20
S t=1 m=1 ts=25 id=2
C t=1 m=3 ts=30 value=3
F t=0 m=1 ts=40 id=1
F t=1 m=1 ts=45 id=9
E t=0 m=0 ts=50
F t=1 m=1 ts=60 id=2
"""


def speedscope_async_once(ctx):
    """Left out by speedscope: 2 async slices, 1 instant, 1 counter, 1 end without a begin = 5."""
    src = write(os.path.join(ctx.work, "ss.ir.txt"), SS_IR)
    out = os.path.join(ctx.work, "ss.speedscope.json")
    r = ctx.run(["-f", "-o", "speedscope", src, out], check_rc=0)
    if r.returncode:
        return
    ctx.eq(tclib.parse_figures(r.stderr.decode(errors="replace")).get("writer-dropped-frames"), 5,
           "speedscope: each async slice left out counted once")


def main():
    ctx = tclib.Ctx()
    home = tempfile.mkdtemp(prefix="go-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    process_names_in_outputs(ctx)
    async_keeps_process(ctx)
    pprof_comments_grouped(ctx, env)
    format_named_once(ctx, env)
    unknown_names(ctx)
    duplicate_ids_one_row(ctx)
    speedscope_async_once(ctx)
    many_processes_linear(ctx)
    for f in glob.glob(os.path.join(ctx.work, "*.pftrace")):
        os.unlink(f)
    ctx.done()


if __name__ == "__main__":
    main()
