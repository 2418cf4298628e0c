#!/usr/bin/env python3
"""Writes the project's systrace / atrace inputs (corpus/systrace/) and their facts.

Each capture is built from a model written below: processes, their threads (tid,
kernel comm), and what each thread traced (nested atrace slices, counters, async
slices, instants), plus the kernel's own events (sched_switch, sched_wakeup,
cpu_idle, cpu_frequency) that a method-trace converter ignores. The files are
written from the model with the layouts of the systrace notes (ftrace/atrace text
with and without the TGID column, `TRACE:` + zlib, catapult's systrace HTML, the
pre-2015 `linuxPerfData` HTML; docs/formats/SYSTRACE.md in the team's shared notes);
facts.json comes from the same model, never from decoding a file and never from
traceconv. Deterministic (a fixed-seed generator, no clock): running it twice gives
identical files.

    python3 corpus/systrace/gen.py [OUTDIR]      (default: the directory of this script)

facts.json maps each file name to its facts:
  "input": false for a file that is not a trace at all (no reader may claim it);
  "refused": the words the one-line error must contain, for a file the systrace
             reader must refuse (exit 1, no output);
  "counts": {"B"|"C"|"S"|"I": {pid: lines}}: slice begins, counter values, async
            begins and instants the capture holds per process;
  "threads": {tid: [name, pid]}: each thread's name (its kernel comm, or its PROCESS
             DUMP name when only `<...>` shows it) and process;
  "processes": {pid: name} of processes with events that a PROCESS DUMP names;
  "slices": {tid: n}: thread slices; "open_at_end": slices never closed;
  "bad_lines", "first_bad_offset": lines no ftrace parser can read, and where the
             first one starts.
"""
import collections
import json
import os
import sys
import zlib

T0_NS = 20417000000000  # 20417.000000 s, CLOCK_BOOTTIME of the first event


class Rng:
    """xorshift64*: the same numbers on every Python."""

    def __init__(self, seed):
        self.s = seed

    def below(self, n):
        self.s ^= (self.s >> 12)
        self.s ^= (self.s << 25) & 0xFFFFFFFFFFFFFFFF
        self.s ^= (self.s >> 27)
        return ((self.s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) % n


# processes (pid, name) and threads (tid, pid, kernel comm as ftrace prints it)
PROCS = [(4242, "com.example.notes"), (1100, "system_server"), (620, "/system/bin/surfaceflinger")]
THREADS = [
    (4242, 4242, "m.example.notes"),   # ART's SetThreadName: the last 15 chars of the package
    (4270, 4242, "RenderThread"),
    (4281, 4242, "pool-1-thread-1"),
    (4290, 4242, "OkHttp Dispatch"),   # a comm with a space
    (1100, 1100, "system_server"),
    (1120, 1100, "binder:1100_2"),
    (620, 620, "surfaceflinger"),
    (655, 620, "app"),
]
COMM = {tid: comm for tid, _, comm in THREADS}
PID_OF = {tid: pid for tid, pid, _ in THREADS}
CPU_OF = {4242: 1, 4270: 2, 4281: 3, 4290: 3, 1100: 0, 1120: 0, 620: 2, 655: 0}


class Model:
    """Events of one capture: (ns, seq, tid, kind, text). kind: the atrace payload letter,
    or 'k' for a kernel event (text = "event: details")."""

    def __init__(self):
        self.ev = []
        self.stack = {}
        self.slices = {}
        self.open = {}
        self.async_open = set()

    def add(self, ns, tid, kind, text):
        self.ev.append((ns, len(self.ev), tid, kind, text))

    def begin(self, ns, tid, name):
        self.add(ns, tid, "B", f"B|{PID_OF[tid]}|{name}")
        self.stack.setdefault(tid, []).append(name)
        self.slices[tid] = self.slices.get(tid, 0) + 1

    def end(self, ns, tid, form="E|pid"):
        name = self.stack[tid].pop()
        text = {"E": "E", "E|pid": f"E|{PID_OF[tid]}", "E|pid|name": f"E|{PID_OF[tid]}|{name}"}[form]
        self.add(ns, tid, "E", text)

    def slice(self, ns, tid, name, dur, form="E|pid", body=None):
        """A slice from ns lasting dur; body(ns) adds its children."""
        self.begin(ns, tid, name)
        if body:
            body(ns)
        self.end(ns + dur, tid, form)

    def counter(self, ns, tid, name, value):
        self.add(ns, tid, "C", f"C|{PID_OF[tid]}|{name}|{value}")

    def async_begin(self, ns, tid, name, cookie):
        self.add(ns, tid, "S", f"S|{PID_OF[tid]}|{name}|{cookie}")

    def async_end(self, ns, tid, name, cookie):
        self.add(ns, tid, "F", f"F|{PID_OF[tid]}|{name}|{cookie}")

    def instant(self, ns, tid, name):
        self.add(ns, tid, "I", f"I|{PID_OF[tid]}|{name}")

    def kernel(self, ns, tid, text):
        self.add(ns, tid, "k", text)

    def facts(self):
        counts = {}
        for _, _, tid, kind, _ in self.ev:
            if kind in "BCSI":
                per = counts.setdefault(kind, {})
                per[str(PID_OF[tid])] = per.get(str(PID_OF[tid]), 0) + 1
        return {"counts": counts, "slices": {str(t): n for t, n in sorted(self.slices.items())},
                "open_at_end": sum(len(s) for s in self.stack.values())}


def app_capture(frames, seed):
    """An app start-up, then `frames` vsync frames of the app, its RenderThread and
    surfaceflinger; background work on the pool, OkHttp and binder threads."""
    m, rng = Model(), Rng(seed)
    us = 1000
    m.async_begin(0, 1100, "launching: com.example.notes", 0)

    def startup(t):
        m.slice(t + 100 * us, 4242, "bindApplication", 9000 * us, body=lambda t2: (
            m.slice(t2 + 200 * us, 4242, "OpenDexFilesFromOat", 3000 * us),
            m.slice(t2 + 4000 * us, 4242, "NotesApp.onCreate", 4500 * us, body=lambda t3: (
                m.slice(t3 + 100 * us, 4242, "Room.open", 2000 * us)))))
        m.slice(t + 10000 * us, 4242, "activityStart", 14000 * us, body=lambda t2: (
            m.slice(t2 + 500 * us, 4242, "inflate", 8000 * us, body=lambda t3: (
                m.slice(t3 + 100 * us, 4242, "Inflate: activity_main", 6000 * us),)),
            m.slice(t2 + 9000 * us, 4242, "activityResume", 4000 * us)))
    m.slice(0, 4242, "activityStart-process", 25000 * us, body=startup)
    m.async_end(30000 * us, 1100, "launching: com.example.notes", 0)
    m.slice(2000 * us, 1120, "binder reply", 300 * us, form="E", body=lambda t: (
        m.slice(t + 50 * us, 1120, "AIDL::java::IActivityManager::attachApplication::server", 200 * us, form="E"),))

    t = 31000 * us
    for i in range(frames):
        vsync = t + i * 16667 * us
        m.counter(vsync, 655, "VSYNC-app", i % 2)
        m.slice(vsync + 20 * us, 620, "onMessageReceived", (900 + rng.below(400)) * us, form="E",
                body=lambda s: m.slice(s + 30 * us, 620, "handleMessageRefresh", 500 * us, form="E"))
        if i % 5 == 0:
            m.async_begin(vsync + 100 * us, 4242, "deliverInputEvent", 1000 + i)
        work = 3000 + rng.below(9000)

        def frame(s, i=i, work=work):
            if i % 5 == 0:
                m.slice(s + 40 * us, 4242, "input", 400 * us)
            m.slice(s + 500 * us, 4242, "animation", 300 * us)
            m.slice(s + 900 * us, 4242, "traversal", work * us, body=lambda s2: (
                m.slice(s2 + 10 * us, 4242, "measure", work // 4 * us),
                m.slice(s2 + (20 + work // 4) * us, 4242, "layout", work // 4 * us),
                m.slice(s2 + (30 + work // 2) * us, 4242, "draw", work // 3 * us, body=lambda s3: (
                    m.slice(s3 + 5 * us, 4242, "Record View#draw()", work // 4 * us),))))
        m.slice(vsync + 200 * us, 4242, f"Choreographer#doFrame {1000 + i}", (1200 + work) * us, body=frame)
        if i % 5 == 0:
            m.async_end(vsync + 1100 * us, 4242, "deliverInputEvent", 1000 + i)
        draw = vsync + (1500 + work) * us
        m.slice(draw, 4270, "DrawFrames", 2500 * us, body=lambda s: (
            m.slice(s + 10 * us, 4270, "syncFrameState", 300 * us),
            m.slice(s + 400 * us, 4270, "flush commands", 1500 * us, body=lambda s2: (
                m.slice(s2 + 1000 * us, 4270, "queueBuffer", 200 * us),))))
        m.counter(draw + 2600 * us, 620, "BufferTX - com.example.notes", 1 + i % 3)
        if i % 4 == 1:  # vendor-style ends carry the name
            m.slice(vsync + 3000 * us, 4281, "SQLiteDatabase.query", (400 + rng.below(800)) * us, form="E|pid|name")
        if i % 7 == 3:
            m.slice(vsync + 5000 * us, 4290, "http request", 6000 * us)
            m.counter(vsync + 11000 * us, 4290, "bytesReceived", 1000 * (i + 1) + rng.below(1000))
        if i % 9 == 0:
            m.instant(vsync + 150 * us, 4242, "frameDeadline")
        # the scheduler around the frame: ignored events, but they name threads too
        m.kernel(vsync + 190 * us, 4242, f"sched_wakeup: comm={COMM[4242]} pid=4242 prio=110 target_cpu=001")
        m.kernel(vsync + 195 * us, 4242, "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 "
                                         f"prev_state=R ==> next_comm={COMM[4242]} next_pid=4242 next_prio=110")
        m.kernel(vsync + 15000 * us, 4242, "cpu_idle: state=0 cpu_id=1")
        if i % 8 == 0:
            m.kernel(vsync + 16000 * us, 620, "cpu_frequency: state=1708800 cpu_id=2")
    # the last frame is still running when tracing stops
    last = t + frames * 16667 * us
    m.begin(last + 200 * us, 4242, f"Choreographer#doFrame {1000 + frames}")
    m.begin(last + 300 * us, 4242, "traversal")
    m.counter(last + 400 * us, 655, "VSYNC-app", frames % 2)
    return m


# ---- writing ftrace text ---------------------------------------------------------------------

HEADER_TGID = """# tracer: nop
#
# entries-in-buffer/entries-written: {n}/{n}   #P:4
#
#                                      _-----=> irqs-off
#                                     / _----=> need-resched
#                                    | / _---=> hardirq/softirq
#                                    || / _--=> preempt-depth
#                                    ||| /     delay
#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION
#              | |        |      |   ||||       |         |
"""
HEADER_PLAIN = """# tracer: nop
#
# entries-in-buffer/entries-written: {n}/{n}   #P:4
#
#                              _-----=> irqs-off
#                             / _----=> need-resched
#                            | / _---=> hardirq/softirq
#                            || / _--=> preempt-depth
#                            ||| /     delay
#           TASK-PID   CPU#  ||||    TIMESTAMP  FUNCTION
#              | |       |   ||||       |         |
"""


def ftrace_line(ns, tid, kind, text, tgid=True, unknown_task=False, tgid_unknown=False, symbol="tracing_mark_write"):
    """kernel/trace/trace_output.c: "%16s-%-5d (%5d) [%03d] %s %5lu.%06lu: event: details"."""
    task = "<...>" if unknown_task else COMM[tid]
    prefix = f"{task:>16}-{tid:<5} "
    if tgid:
        prefix += "(-----) " if tgid_unknown else f"({PID_OF[tid]:>5}) "
    flags = "d..2" if kind == "k" else "...1"
    stamp = f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"
    body = text if kind == "k" else f"{symbol}: {text}"
    return f"{prefix}[{CPU_OF[tid]:03d}] {flags} {stamp}: {body}\n"


def capture_text(m, tgid=True, seed=7, sync=True):
    """The model as `atrace` prints it: time order (ties in the order written), some lines
    with `<...>` for the task (comm not in saved_cmdlines) or `(-----)` for the TGID."""
    rng = Rng(seed)
    lines = []
    if sync:  # systrace's clock-sync markers come first: print events that are no slice
        t = T0_NS - 20000
        lines.append(ftrace_line(t, 4242, "M", f"trace_event_clock_sync: parent_ts={(t + 21000000) // 10**9}."
                                 f"{(t + 21000000) % 10**9 // 1000:06d}", tgid, True, True))
        lines.append(ftrace_line(t + 18000, 4242, "M", "trace_event_clock_sync: realtime_ts=1754392110123",
                                 tgid, True, True))
    seen = set()
    for ns, _, tid, kind, text in sorted(m.ev):
        # the first line of each thread shows its comm (the reader learns the name there)
        hide = tid in seen and rng.below(6) == 0
        seen.add(tid)
        lines.append(ftrace_line(T0_NS + ns, tid, kind, text, tgid, hide, hide and rng.below(2) == 0))
    header = (HEADER_TGID if tgid else HEADER_PLAIN).format(n=len(lines))
    return (header + "".join(lines)).encode()


def thread_facts(names=None):
    names = names or COMM
    return {str(tid): [names[tid], PID_OF[tid]] for tid in COMM}


def capture_facts(m):
    f = m.facts()
    used = {e[2] for e in m.ev}
    f["threads"] = {k: v for k, v in thread_facts().items() if int(k) in used}
    return dict(f, input=True)


# ---- other shapes ----------------------------------------------------------------------------

def sched_only():
    """A capture with the scheduler's events only (catapult's `atrace_data` shape): nothing
    a method-trace converter draws."""
    m, rng = Model(), Rng(11)
    for i in range(120):
        t = i * 2100000
        a, b = (4242, 4270) if i % 2 else (620, 655)
        m.kernel(t, a, f"sched_switch: prev_comm={COMM[a]} prev_pid={a} prev_prio=120 prev_state=S ==> "
                       f"next_comm={COMM[b]} next_pid={b} next_prio=120")
        m.kernel(t + 500000 + rng.below(1000) * 1000, b, f"sched_wakeup: comm={COMM[a]} pid={a} prio=120 target_cpu=002")
    text = capture_text(m, tgid=False, seed=3, sync=False)
    return text, {"input": True, "sched_only": True, "counts": {}, "slices": {}}


def procfs_dump():
    """The /proc listing catapult's TGID repair reads (`ls -d /proc/*/task/*`): not a trace."""
    rows = []
    for pid in sorted({p for _, p, _ in THREADS} | {1, 2, 300, 301, 302}, key=str):
        for tid in sorted([t for t, p, _ in THREADS if p == pid] or [pid], key=str):
            rows.append(f"/proc/{pid}/task/{tid}\n")
    return "".join(rows).encode(), {"input": False}


def js_string_lines(text, quote='"'):
    """text as a JavaScript string literal the way old systrace.py wrote it: each line followed by
    `\\n\\` (an escaped newline, then a line continuation)."""
    esc = text.replace("\\", "\\\\").replace(quote, "\\" + quote)
    return "".join(line + "\\n\\\n" for line in esc.splitlines())


def legacy_html(text):
    """Generation A (old systrace.py, before 2015): the ftrace text inside a JS string, each line
    ending in `\\n\\` (a string continuation). Perfetto cannot read it; catapult's importer and
    traceconv can: it reads as the text it holds (the test compares it with that text's reading)."""
    html = ("<!DOCTYPE html>\n<html>\n<head i18n-values=\"dir:textdirection;\">\n<title>Android System Trace</title>\n"
            "<script>\n  var linuxPerfData = \"\\\n" + js_string_lines(text) + "\";\n</script>\n</head>\n<body>\n</body>\n</html>\n")
    return html.encode()


VIEWER_2013 = (  # what the 2013 standalone viewer's code holds: a use of the variable, and a regex
    "<script>\n'use strict';\nfunction onLoad() {\n  if (!linuxPerfData)\n    return;\n"  # that names its assignment
    "  var ok = /^  var linuxPerfData = \"\\\\$/.test(lines[1]);\n}\n"
    "document.addEventListener('DOMContentLoaded', onLoad);\n</script>\n")


def legacy_split_html(text):
    """The same page as a 2013 standalone viewer wrote it (trace_html.py): the viewer's code first
    (it mentions linuxPerfData and matches `var linuxPerfData = "` in a regex: neither is the
    data), then the string split over several literals joined with `+`, the second in single
    quotes, with the escapes JavaScript has (\\t, \\", \\', \\u00e9, \\x41, \\/, \\u{1F600}), a
    `'use strict';` statement before the assignment."""
    lines = text.splitlines(keepends=True)
    third = len(lines) // 3
    parts = ["".join(lines[:third]), "".join(lines[third:2 * third]), "".join(lines[2 * third:])]

    def escaped(chunk, quote):
        out = []
        for ch in chunk:
            if ch == "\n":
                out.append("\\n")
            elif ch == "\t":
                out.append("\\t")
            elif ch == "\\":
                out.append("\\\\")
            elif ch == quote:
                out.append("\\" + quote)
            elif ch == "/":
                out.append("\\/")
            elif ch == "A":
                out.append("\\x41")
            elif ord(ch) > 0xFFFF:
                out.append("\\u{%X}" % ord(ch))
            elif ord(ch) > 0x7E:
                out.append("\\u%04x" % ord(ch))
            else:
                out.append(ch)
        return "".join(out)
    body = ('"' + escaped(parts[0], '"') + '" +\n    \'' + escaped(parts[1], "'") + "' +\n    \"" +
            escaped(parts[2], '"') + '"')
    html = ("<!DOCTYPE html>\n<html>\n<head>\n<title>Android System Trace</title>\n"
            "<style>.view { overflow: hidden; }</style>\n" + VIEWER_2013 + "</head>\n<body>\n  <div class=\"view\"></div>\n"
            "<!-- BEGIN TRACE -->\n  <script>\n  'use strict';\n  var linuxPerfData = " + body + ";\n  </script>\n"
            "<!-- END TRACE -->\n</body>\n</html>\n")
    return html.encode()


PS_HEAD = "USER           PID  PPID     VSZ    RSS WCHAN  PC S NAME                        COMM\n"
PST_HEAD = "USER           PID   TID CMD\n"
THREAD_CMD = COMM  # `ps -T` prints each thread's comm
# what `ps -A` lists beside the processes with events: (pid, ppid, name), and their threads
DUMP_ONLY_PROCS = [(1, 0, "/system/bin/init"), (2, 0, "[kthreadd]"), (700, 1, "zygote64"),
                   (9000, 700, "com.android.phone")]
DUMP_ONLY_THREADS = [(1, 1, "init"), (2, 2, "kthreadd"), (700, 700, "main"), (9000, 9000, "m.android.phone"),
                     (9011, 9000, "Binder:9000_1"), (9012, 9000, "RenderThread"), (4299, 4242, "OkHttp ConnectionPool")]
PPID = {4242: 700, 1100: 700, 620: 1}
# the dump says the pool thread is system_server's; its lines (B|4242|) say the app's: the lines win
DUMP_PID_OF = {**PID_OF, 4281: 1100}


def process_dump():
    out = "PROCESS DUMP\n"
    procs = [(pid, PPID[pid], name) for pid, name in PROCS] + DUMP_ONLY_PROCS
    threads = [(tid, DUMP_PID_OF[tid], THREAD_CMD[tid]) for tid, _, _ in THREADS] + \
        [(tid, pid, name) for tid, pid, name in DUMP_ONLY_THREADS]
    for _ in range(2):  # the start and the stop snapshot
        out += PS_HEAD
        for pid, ppid, name in procs:
            user = "u0_a123" if pid == 4242 else "system"
            out += f"{user:<12} {pid:>5} {ppid:>5} {0:>7} {0:>6} {0:<6} {0:>2} S {name:<27} {name.rsplit('/', 1)[-1]}\n"
        out += PST_HEAD
        for tid, pid, name in threads:
            user = "u0_a123" if pid == 4242 else "system"
            out += f"{user:<12} {pid:>5} {tid:>5} {name}\n"
    return out


def dump_facts():
    """What a reader of the dump knows: every process (ppid, name) and thread (process, name)."""
    procs = {str(pid): [PPID[pid], name] for pid, name in PROCS}
    procs.update({str(pid): [ppid, name] for pid, ppid, name in DUMP_ONLY_PROCS})
    threads = {str(tid): [PID_OF[tid], THREAD_CMD[tid]] for tid, _, _ in THREADS}
    threads.update({str(tid): [pid, name] for tid, pid, name in DUMP_ONLY_THREADS})
    return {"processes": procs, "threads": threads, "disagree": 1}


VIEWER_2019 = (  # the catapult viewer inlined before the data: its code names the data element in a
    # regular expression (escaped slash) and in strings; an HTML comment and a style hold the tag too
    "<script>\n/* trace viewer (stub) */\n"
    "var kDataRe = /<script class=\"trace-data\" type=\"application\\/text\">/;\n"
    "var kOpen = '<script class=\"trace-data\" type=\"application/text\">';\n"
    "function onLoad() { return document.body.querySelectorAll('.trace-data'); }\n</script>\n"
    "<!-- a comment: <script class=\"trace-data\" type=\"application/text\">\nnot data\n</script> -->\n"
    "<style>/* <script class=\"trace-data\"> */ .trace-data { display: none; }</style>\n")


def systrace_html():
    """Generation B, as catapult's systrace.py writes it (output_generator.py): a viewer prefix
    (here a stub), then PROCESS DUMP, the ftrace text and the controller's JSON, each in a
    trace-data block. The ftrace text names the pool thread only as `<...>`: PROCESS DUMP does."""
    m = Model()
    m.slice(1000000, 4242, "activityStart", 5000000, body=lambda t: m.slice(t + 1000000, 4242, "inflate", 2000000))
    m.slice(2000000, 4281, "SQLiteDatabase.query", 1500000)
    m.counter(7000000, 4242, "aq:pending", 3)
    m.async_begin(7100000, 4242, "launch", 7)
    m.async_end(8100000, 4242, "launch", 7)
    lines = []
    for ns, _, tid, kind, text in sorted(m.ev):
        lines.append(ftrace_line(T0_NS + ns, tid, kind, text, True, tid == 4281, tid == 4281))
    ftrace = HEADER_TGID.format(n=len(lines)) + "".join(lines)
    html = ("<!DOCTYPE html>\n<html>\n<head i18n-values=\"dir:textdirection;\">\n<meta charset=\"utf-8\"/>\n"
            "<title>Android System Trace</title>\n" + VIEWER_2019 + "</head>\n"
            "<body>\n<!-- BEGIN TRACE -->\n"
            "  <script class=\"trace-data\" type=\"application/text\">\n" + process_dump() + "  </script>\n"
            "  <script class=\"trace-data\" type=\"application/text\">\n" + ftrace + "  </script>\n"
            "  <script class=\"trace-data\" type=\"application/text\">\n"
            "{\"traceEvents\": [{\"cat\": \"__metadata\", \"pid\": 0, \"tid\": 0, \"ts\": 0, \"ph\": \"M\", "
            "\"name\": \"clock_sync\", \"args\": {\"sync_id\": \"9f6c1a77\"}}], "
            "\"metadata\": {\"clock-domain\": \"SYSTRACE\"}}\n  </script>\n"
            "<!-- END TRACE -->\n</body>\n</html>\n")
    f = m.facts()
    f["threads"] = {k: v for k, v in thread_facts(THREAD_CMD).items() if int(k) in (4242, 4281)}
    f["processes"] = {str(pid): name for pid, name in PROCS if pid == 4242}  # the one with events
    return html.encode(), dict(f, input=True, dump=dump_facts(), ftrace_blocks=1, bad_lines=0)


def bad_lines():
    """A kernel event whose details run over three lines (a driver printing newlines): the two
    continuation lines match no ftrace line; the slice after them is read."""
    head = HEADER_TGID.format(n=3)
    lines = [ftrace_line(T0_NS + 100000, 620, "k", "mdss_fb_dump: panel state: on"),
             "  bl = 255, mode = 0x2\n",
             "dsi0: ok\n"]
    m = Model()
    m.slice(300000, 620, "commit", 4000, form="E")
    for ns, _, tid, kind, text in sorted(m.ev):
        lines.append(ftrace_line(T0_NS + ns, tid, kind, text))
    data = head + "".join(lines)
    f = m.facts()
    f.update(input=True, bad_lines=2, first_bad_offset=len((head + lines[0]).encode()),
             threads={"620": ["surfaceflinger", 620]})
    return data.encode(), f



# ---- kernel events, as real devices print them -----------------------------------------------

SYMBOLS = ["futex_wait_queue_me+0x10c/0x178", "rpmh_write_batch+0x638/0x7d0", "worker_thread+0x368/0x458",
           "msm_rpm_wait_for_ack+0x68/0x128"]
WORK_FUNCS = ["binder_deferred_func", "vmstat_update", "hdd_bus_bw_work_handler [wlan]"]


def kernel_capture():
    """Binder calls from the app to system_server and their replies, blocked reasons, irqs, softirqs,
    ipis, workqueues, clocks, CPU frequency limits, suspend/resume, memory (rss_stat both ways
    kernels print it, vmscan, ion, dma fences), new tasks, i2c, regulators, a vendor's events no
    schema knows, free-text prints and clock-sync markers, beside atrace slices and scheduler
    events. Facts: the lines per event name, and the fields of the events a test checks by value."""
    m, rng = Model(), Rng(31)
    us = 1000
    f = {"binder": [], "blocked": [], "limits": [], "rss": [], "suspend": [], "vendor": [], "workqueue": []}
    tid_seq = 68227878
    for i in range(24):
        t = i * 5000 * us
        code = 1 + i % 7
        node = 10330411 + i % 3
        # the app calls system_server (a binder thread answers), which replies
        m.slice(t, 4242, f"binder transaction async {i}" if i % 6 == 5 else "binder transaction", 900 * us)
        m.kernel(t + 10 * us, 4242, f"binder_transaction: transaction={tid_seq} dest_node={node} dest_proc=1100 "
                                    f"dest_thread=0 reply=0 flags=0x{0x10 | (i % 6 == 5):x} code=0x{code:x}")
        f["binder"].append([tid_seq, node, 1100, 0, 0, 0x10 | (i % 6 == 5), code])
        m.kernel(t + 12 * us, 4242, f"binder_transaction_alloc_buf: transaction={tid_seq} data_size={88 + 8 * i} "
                                    f"offsets_size={8 * (i % 2)} extra_buffers_size=0")
        m.kernel(t + 40 * us, 1120, f"binder_transaction_received: transaction={tid_seq}")
        m.kernel(t + 41 * us, 1120, f"binder_set_priority: proc=1100 thread=1120 old=120 => new=110 desired=110")
        if i % 6 != 5:
            m.kernel(t + 600 * us, 1120, f"binder_transaction: transaction={tid_seq + 1} dest_node=0 dest_proc=4242 "
                                         f"dest_thread=4242 reply=1 flags=0x0 code=0x0")
            f["binder"].append([tid_seq + 1, 0, 4242, 4242, 1, 0, 0])
            m.kernel(t + 620 * us, 4242, f"binder_transaction_received: transaction={tid_seq + 1}")
        tid_seq += 2
        caller = SYMBOLS[i % len(SYMBOLS)]
        m.kernel(t + 700 * us, 620, f"sched_blocked_reason: pid=4281 iowait={i % 2} caller={caller}")
        f["blocked"].append([4281, i % 2, caller])
        m.kernel(t + 800 * us, 655, f"irq_handler_entry: irq={32 + i % 4} name=90b6400.qcom,cpu-cpu-llcc-bwmon")
        m.kernel(t + 805 * us, 655, f"irq_handler_exit: irq={32 + i % 4} ret={'handled' if i % 5 else 'unhandled'}")
        action = ["TIMER", "NET_RX", "TASKLET", "SCHED"][i % 4]
        vec = {"TIMER": 1, "NET_RX": 3, "TASKLET": 6, "SCHED": 7}[action]
        m.kernel(t + 806 * us, 655, f"softirq_raise: vec={vec} [action={action}]")
        m.kernel(t + 810 * us, 655, f"softirq_entry: vec={vec} [action={action}]")
        m.kernel(t + 830 * us, 655, f"softirq_exit: vec={vec} [action={action}]")
        m.kernel(t + 900 * us, 620, "ipi_entry: (Rescheduling interrupts)")
        m.kernel(t + 903 * us, 620, "ipi_exit: (Rescheduling interrupts)")
        work = 0xffffff83b8f89238 + 0x40 * (i % 3)
        fn = WORK_FUNCS[i % len(WORK_FUNCS)]
        m.kernel(t + 1000 * us, 1120, f"workqueue_queue_work: work struct={work:x} function={fn} "
                                      f"workqueue=ffffffdb37408c00 req_cpu=8 cpu={4294967295 if i % 2 else i % 4}")
        m.kernel(t + 1001 * us, 1120, f"workqueue_activate_work: work struct {work:x}")
        m.kernel(t + 1100 * us, 4281, f"workqueue_execute_start: work struct {work:x}: function {fn}")
        m.kernel(t + 1150 * us, 4281, f"workqueue_execute_end: work struct {work:x}")
        f["workqueue"].append(fn)
        m.kernel(t + 1200 * us, 4290, f"clock_set_rate:       video_subcore0_clk_src state={200000000 + i * 1000} cpu_id=3")
        m.kernel(t + 1210 * us, 4290, f"clk_set_rate: l3_cluster0_vote_clk {710400000 + i * 100}")
        lo, hi = 300000 + 100 * i, 1785600 - 100 * i
        if i % 3 == 0:  # newer kernels print min=/max=, older min_freq=/max_freq=
            m.kernel(t + 1300 * us, 620, f"cpu_frequency_limits: min={lo} max={hi} cpu_id={i % 4}")
        else:
            m.kernel(t + 1300 * us, 620, f"cpu_frequency_limits: min_freq={lo} max_freq={hi} cpu_id={i % 4}")
        f["limits"].append([lo, hi, i % 4])
        size = 3829760 + 4096 * i
        if i % 2:
            m.kernel(t + 1400 * us, 4242, f"rss_stat: mm_id=2672238769 curr=1 member={i % 4} size={size}B")
            f["rss"].append([i % 4, size])
        else:
            kind = ["MM_FILEPAGES", "MM_ANONPAGES", "MM_SWAPENTS", "MM_SHMEMPAGES"][i % 4]
            m.kernel(t + 1400 * us, 4242, f"rss_stat: mm_id=1617 curr=1 type={kind} size={size}B")
            f["rss"].append([i % 4, size])
        m.kernel(t + 1500 * us, 4270, f"dma_fence_init: driver=kgsl-timeline timeline=kgsl-3d0_7-com.example.notes"
                                      f"(4242)-RenderThread(4270) context=13 seqno={60437 + i}")
        m.kernel(t + 1600 * us, 655, f"dma_fence_signaled: driver=kgsl-timeline timeline=kgsl-3d0_7-com.example.notes"
                                     f"(4242)-RenderThread(4270) context=13 seqno={60437 + i}")
        if i % 8 == 0:
            m.kernel(t + 1700 * us, 4242, f"task_newtask: pid={9550 + i} comm=RenderThread clone_flags=3d0f00 "
                                          "oom_score_adj=0")
            m.kernel(t + 1710 * us, 1100, "mm_vmscan_direct_reclaim_begin: order=0 may_writepage=1 "
                                          "gfp_flags=GFP_HIGHUSER_MOVABLE|__GFP_ZERO")
            m.kernel(t + 1790 * us, 1100, f"mm_vmscan_direct_reclaim_end: nr_reclaimed={32 + i}")
            m.kernel(t + 1800 * us, 620, f"ion_heap_grow: heap_name=system, len={4096 * (i + 1)}, "
                                         f"total_allocated={40960 + i}")
            m.kernel(t + 1810 * us, 620, f"ion_heap_shrink: heap_name=system, len={4096 * (i + 1)}, "
                                         f"total_allocated={40960 - i}")
            m.kernel(t + 1820 * us, 1100, f"i2c_write: i2c-2 #0 a=044 f=0000 l=2 [0c-{i:02x}]")
            m.kernel(t + 1830 * us, 1100, "i2c_result: i2c-2 n=1 ret=1")
            m.kernel(t + 1840 * us, 1100, "regulator_set_voltage: name=pm8150l_l3 (1200000-1200000)")
            action = ["sync_filesystems", "freeze_processes", "machine_suspend"][i // 8 % 3]
            for start in (1, 0):
                m.kernel(t + (1850 + 10 * (1 - start)) * us, 1100,
                         f"suspend_resume: {action}[{i // 8}] {'begin' if start else 'end'}")
                f["suspend"].append([action, i // 8, start])
        # a vendor's events: no schema has them
        m.kernel(t + 1900 * us, 655, f"vendor_gpu_busy: gpu=0 busy_pct={50 + i} state={'on' if i % 2 else 'off'}")
        f["vendor"].append(["vendor_gpu_busy", {"gpu": 0, "busy_pct": 50 + i, "state": "on" if i % 2 else "off"}])
        m.kernel(t + 1950 * us, 655, f"sde_evtlog: 260|sde_rsc_client_state_update:876|0|1|1|{i}|2222|0")
        if i % 4 == 0:  # prints that are no atrace payload: the kernel's print events all the same
            m.kernel(t + 2000 * us, 4242, f"tracing_mark_write: free text from the app, step {i}")
            m.kernel(t + 2010 * us, 620, f"0: a marker without kallsyms {i}")
        # the scheduler beside them
        m.kernel(t + 2100 * us, 4242, "sched_switch: prev_comm=swapper/1 prev_pid=0 prev_prio=120 prev_state=R ==> "
                                      f"next_comm={COMM[4242]} next_pid=4242 next_prio=110")
        m.kernel(t + 2200 * us, 4242, f"sched_waking: comm={COMM[4281]} pid=4281 prio=120 target_cpu=003")
    f["events"] = dict(collections.Counter(text.split(":", 1)[0] for _, _, _, kind, text in m.ev if kind == "k"))
    f["atrace_lines"] = sum(1 for e in m.ev if e[3] != "k")
    return m, f


TRACE_CMD_PREAMBLE = "version = 6\nCPU 1 is empty\nCPU 2 is empty\ncpus=4\n"


def trace_cmd_capture():
    """`trace-cmd report` of the same kind of capture: its preamble (version, empty CPUs, cpus=),
    no irq-flags column, event names padded to a column, prints as `print: IP: text` and bputs."""
    lines, events = [], collections.Counter()
    for i in range(30):
        ns = T0_NS + i * 1000000
        stamp = f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"
        tid = (620, 4242, 1100)[i % 3]
        rows = [("sched_switch", f"prev_comm={COMM[tid]} prev_pid={tid} prev_prio=120 prev_state=S ==> "
                                 f"next_comm=swapper/0 next_pid=0 next_prio=120"),
                ("thermal_temperature", f"thermal_zone=exynos-therm id=0 temp_prev={24000 + i} temp={24100 + i}"),
                ("print", f"0xc00a081cf: TRACE_MARKER {i}"),
                ("bputs", f"0xffff0000080feeb8s: equals_event: my_field=foo{i}=bar")]
        if i % 5 == 0:  # a slice of 400 µs, in print events
            rows.append(("print", f"tracing_mark_write: B|{PID_OF[tid]}|trace-cmd slice {i}"))
            rows.append(("print", f"tracing_mark_write: E|{PID_OF[tid]}"))
        for k, (event, details) in enumerate(rows):
            at = stamp if not details.startswith("tracing_mark_write: E|") else f"{(ns + 400000) // 10**9}.{(ns + 400000) % 10**9 // 1000:06d}"
            lines.append(f"{COMM[tid]:>16}-{tid:<5} [{CPU_OF[tid]:03d}] {at}: {event + ':':<22}{details}\n")
            if not (event == "print" and "tracing_mark_write: " in details):
                events[event] += 1
    return (TRACE_CMD_PREAMBLE + "".join(lines)).encode(), {"input": True, "events": dict(events),
                                                            "atrace_lines": 12, "counts": {}, "slices": {}}


UNICODE_COMM = {4242: "notes-café", 4270: "RenderThread"}


def unicode_capture():
    """A small capture whose slice and thread names are not ASCII (é, an emoji): the legacy page's
    string carries them as \\u escapes."""
    lines = []
    for i in range(6):
        for tid in (4242, 4270):
            ns = T0_NS + i * 2000000 + (tid - 4242) * 1000
            stamp = f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"
            for kind, text in (("B", f"B|4242|dessin 😀 {i}/{tid}\tA"), ("E", "E|4242")):
                lines.append(f"{UNICODE_COMM[tid]:>16}-{tid:<5} [{CPU_OF[tid]:03d}] ...1 {stamp}: "
                             f"tracing_mark_write: {text}\n")
                ns += 500000
                stamp = f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"
    text = HEADER_PLAIN.format(n=len(lines)) + "".join(lines)
    return text.encode(), {"input": True, "counts": {"B": {"4242": 12}}, "slices": {"4242": 6, "4270": 6},
                           "threads": {"4242": ["notes-café", 4242], "4270": ["RenderThread", 4242]}}


def old_thread_list():
    """Old systrace (2014) appended `ps -t` to the ftrace text: one table of processes, each
    followed by its threads (same VSIZE and RSS, PPID the process), header `USER PID PPID VSIZE
    RSS WCHAN PC NAME` (rows have one more column, the state). Read as a process listing."""
    text, _ = sched_only()
    procs = [(1, 0, "/init", 8784, 712), (2, 0, "kthreadd", 0, 0), (620, 1, "/system/bin/surfaceflinger", 146792, 9724),
             (4242, 700, "com.example.notes", 912332, 61200), (700, 1, "zygote", 880000, 40000)]
    threads = {620: [(655, "app"), (661, "Binder_1")], 4242: [(4270, "RenderThread"), (4281, "pool-1-thread-1")]}
    rows = ["USER     PID   PPID  VSIZE  RSS     WCHAN    PC        NAME\n"]
    dump_p, dump_t = {}, {}
    for pid, ppid, name, vsize, rss in procs:
        rows.append(f"root      {pid:<5} {ppid:<5} {vsize:<6} {rss:<6} ffffffff 00000000 S {name}\n")
        dump_p[str(pid)] = [ppid, name]
        dump_t[str(pid)] = [pid, name]
        for tid, tname in threads.get(pid, []):
            rows.append(f"root      {tid:<5} {pid:<5} {vsize:<6} {rss:<6} ffffffff 00000000 S {tname}\n")
            dump_t[str(tid)] = [pid, tname]
    return text + "".join(rows).encode(), {"input": True, "sched_only": True, "counts": {}, "slices": {},
                                           "dump": {"processes": dump_p, "threads": dump_t, "disagree": 0},
                                           "bad_lines": 0}

def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    files, facts = {}, {}
    m = app_capture(frames=40, seed=2024)
    files["capture.txt"], facts["capture.txt"] = capture_text(m), capture_facts(m)
    # `atrace -z` as adb prints it: TRACE: then the zlib stream of the same text
    files["capture.ctrace"] = b"TRACE:\n" + zlib.compress(files["capture.txt"], 9)
    facts["capture.ctrace"] = facts["capture.txt"]
    small = app_capture(frames=12, seed=99)
    files["capture-notgid.txt"], facts["capture-notgid.txt"] = capture_text(small, tgid=False, seed=5), capture_facts(small)
    files["sched-only.txt"], facts["sched-only.txt"] = sched_only()
    files["procfs-dump"], facts["procfs-dump"] = procfs_dump()
    files["legacy-linuxperfdata.html"] = legacy_html(files["capture-notgid.txt"].decode())
    facts["legacy-linuxperfdata.html"] = dict(facts["capture-notgid.txt"], same_as="capture-notgid.txt")
    files["unicode-names.txt"], facts["unicode-names.txt"] = unicode_capture()
    files["legacy-split.html"] = legacy_split_html(files["unicode-names.txt"].decode())
    facts["legacy-split.html"] = dict(facts["unicode-names.txt"], same_as="unicode-names.txt")
    km, kf = kernel_capture()
    files["kernel-events.txt"] = capture_text(km, seed=13)
    facts["kernel-events.txt"] = dict(capture_facts(km), **kf)
    files["trace-cmd-report.txt"], facts["trace-cmd-report.txt"] = trace_cmd_capture()
    files["old-thread-list.txt"], facts["old-thread-list.txt"] = old_thread_list()
    files["systrace.html"], facts["systrace.html"] = systrace_html()
    files["bad-lines.systrace"], facts["bad-lines.systrace"] = bad_lines()
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)
    with open(os.path.join(out, "facts.json"), "w") as fh:
        fh.write("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                                    for k, v in sorted(facts.items())) + "\n}\n")
    print(f"systrace/gen.py: wrote {len(files)} files and facts.json in {out}")


if __name__ == "__main__":
    main()
