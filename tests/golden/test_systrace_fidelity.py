#!/usr/bin/env python3
"""What a real atrace capture showed (issue 10), on small inputs built here.

7. Thread names from scheduler events. Tasks shown as `<...>` are named by
   sched_switch (prev_comm/next_comm), sched_waking/sched_wakeup (comm= pid=),
   task_newtask (pid= comm=) and task_rename (pid= newcomm=) lines, the latest
   name winning, except that a 15-byte kernel comm never replaces the longer
   name it is a truncation of. A process is named after its thread tid == pid
   when nothing better (PROCESS DUMP) names it, even if that thread has no
   records. Checked in the ir, json (thread_name/process_name metadata),
   perfetto (track descriptors, decoded with protoc) and systrace (PROCESS
   DUMP and task column) outputs.
8. Async ends without a begin. An F (or H) whose (process, name, cookie) has
   no open S (or G) is dropped by the reader and counted as `unmatched-async-end`,
   so every writer shows the same async slices and none reports them as
   writer-dropped-frames.
11. The systrace writer keeps whole thread names in the task column (Perfetto
   reads everything before the last `-<tid>`), and its output read back keeps
   them."""
import collections
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_perfetto  # noqa: E402  (its protoc decoder)

HEAD = ("# tracer: nop\n#\n"
        "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
        "#              | |        |      |   ||||       |         |\n")


def line(task, tid, tgid, ts_us, event, details):
    tg = f"{tgid:5d}" if tgid is not None else "-----"
    return f"{task:>16}-{tid:<5d} ({tg}) [000] ...1 {ts_us // 1000000:5d}.{ts_us % 1000000:06d}: {event}: {details}\n"


def mark(tid, tgid, ts, payload, task="<...>"):
    return line(task, tid, tgid, ts, "tracing_mark_write", payload)


# -- 7: names ---------------------------------------------------------------

# tid -> (name, pid) that the construction below gives (the model)
WANT_THREADS = {
    600: ("sample.app", 600),             # sched_wakeup comm= (the main thread)
    611: ("RenderThread", 600),           # sched_switch next_comm=
    612: ("Binder:600_2", 600),           # task_newtask, then task_rename: latest wins
    613: ("pool-1-thread-1-worker", 600), # its task column; a later 15-byte comm is its truncation
    614: ("hwui worker 1", 600),          # sched_switch prev_comm=, then sched_waking with spaces: latest
    701: ("Thread-701", 700),             # never named
}
WANT_PROCESSES = {600: "sample.app", 700: "system_server"}  # 700: its main thread has no records


def names_input(path):
    t = 1_000_000
    text = HEAD
    text += line("<idle>", 0, None, t, "sched_switch",
                 "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                 "next_comm=RenderThread next_pid=611 next_prio=110")
    text += line("<...>", 600, 600, t + 1, "sched_wakeup", "comm=sample.app pid=600 prio=120 success=1 target_cpu=000")
    text += line("<...>", 600, 600, t + 2, "task_newtask", "pid=612 comm=sample.app clone_flags=3d0f00 oom_score_adj=0")
    text += line("<...>", 612, 600, t + 3, "task_rename",
                 "pid=612 oldcomm=sample.app newcomm=Binder:600_2 oom_score_adj=0")
    text += line("<...>", 614, 600, t + 4, "sched_switch",
                 "prev_comm=old name prev_pid=614 prev_prio=120 prev_state=S ==> "
                 "next_comm=swapper/0 next_pid=0 next_prio=120")
    text += line("<idle>", 0, None, t + 5, "sched_waking", "comm=system_server pid=700 prio=120 target_cpu=001")
    text += mark(613, 600, t + 6, "B|600|pool work", task="pool-1-thread-1-worker")
    ts = t + 10
    for tid in (600, 611, 612, 613, 614):
        text += mark(tid, 600, ts, f"B|600|work {tid}")
        text += mark(tid, 600, ts + 5, "E|600")
        ts += 10
    text += mark(701, 700, ts, "B|700|binder reply")
    text += mark(701, 700, ts + 5, "E|700")
    text += mark(613, 600, ts + 6, "E|600")
    text += line("<idle>", 0, None, ts + 7, "sched_switch",
                 "prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> "
                 "next_comm=pool-1-thread-1 next_pid=613 next_prio=120")
    text += line("<idle>", 0, None, ts + 8, "sched_waking", "comm=hwui worker 1 pid=614 prio=120 target_cpu=001")
    with open(path, "w") as f:
        f.write(text)


def ir_processes(ir):
    """{index: (pid, name)}; process 0 is the trace line's pid= and its `process "name"` line."""
    procs = {int(m.group(1)): (int(m.group(2)), json.loads(m.group(3)))
             for m in re.finditer(r'^process (\d+) pid=(-?\d+) name=(".*")$', ir, re.M)}
    procs[0] = (int(re.search(r"^trace .* pid=(-?\d+)", ir, re.M).group(1)),
                json.loads(re.search(r'^process (".*")$', ir, re.M).group(1)))
    return procs


def ir_threads(ir):
    procs = {i: pid for i, (pid, _) in ir_processes(ir).items()}
    out = {}
    for m in re.finditer(r'^thread \d+ tid=(\d+) records=(\d+)(?: process=(\d+))? name=(".*")$', ir, re.M):
        if int(m.group(2)):
            out[int(m.group(1))] = (json.loads(m.group(4)), procs.get(int(m.group(3) or 0)))
    return out


def json_names(path):
    with open(path, "rb") as f:
        ev = json.load(f)["traceEvents"]
    threads = {e["tid"]: (e["args"]["name"], e["pid"]) for e in ev if e.get("ph") == "M" and e["name"] == "thread_name"}
    procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
    return threads, procs


def perfetto_names(packets):
    one = test_perfetto.one
    threads, procs = {}, {}
    for p in packets:
        td = one(p, "track_descriptor")
        if not td:
            continue
        th, pr = one(td, "thread"), one(td, "process")
        if th:
            threads[int(one(th, "tid"))] = (one(th, "thread_name"), int(one(th, "pid")))
        if pr and one(pr, "process_name") is not None:
            procs[int(one(pr, "pid"))] = one(pr, "process_name")
    return threads, procs


def systrace_names(path):
    """({tid: (dump name, pid)}, {tid: task column}, {pid: dump name}) of our systrace HTML."""
    with open(path, encoding="utf-8") as f:
        html = f.read()
    dump = html[html.index("PROCESS DUMP"):html.index("  </script>")]
    tail = dump[dump.index("USER           PID   TID CMD"):]
    threads = {int(m.group(2)): (m.group(3), int(m.group(1)))
               for m in re.finditer(r"^user +(\d+) +(\d+) (.*)$", tail, re.M)}
    procs = {int(m.group(1)): m.group(2) for m in re.finditer(r"^user +(\d+) +0 .* S (\S+) +\S+$", dump, re.M)}
    tasks = {}
    for m in re.finditer(r"^ *(.+?)-(\d+) +\( *\d+\) \[000\] ", html[html.index("# tracer: nop"):], re.M):
        tasks[int(m.group(2))] = m.group(1)
    return threads, tasks, procs


def check_names(ctx):
    src = os.path.join(ctx.work, "names.systrace")
    names_input(src)
    out, _ = ctx.convert(src, "ir", os.path.join(ctx.work, "names.ir"))
    if out:
        with open(out) as f:
            ir = f.read()
        ctx.eq(ir_threads(ir), WANT_THREADS, "names: ir threads (name, pid)")
        got = dict(ir_processes(ir).values())
        ctx.eq({p: got.get(p) for p in WANT_PROCESSES}, WANT_PROCESSES, "names: ir process names")
    out, _ = ctx.convert(src, "json", os.path.join(ctx.work, "names.json"))
    if out:
        threads, procs = json_names(out)
        ctx.eq(threads, WANT_THREADS, "names: json thread_name metadata")
        ctx.eq({p: procs.get(p) for p in WANT_PROCESSES}, WANT_PROCESSES, "names: json process_name metadata")
    out, _ = ctx.convert(src, "perfetto", os.path.join(ctx.work, "names.pftrace"))
    packets = test_perfetto.decode(ctx, out) if out else None
    if packets is not None:
        threads, procs = perfetto_names(packets)
        ctx.eq(threads, WANT_THREADS, "names: perfetto thread descriptors")
        ctx.eq({p: procs.get(p) for p in WANT_PROCESSES}, WANT_PROCESSES, "names: perfetto process descriptors")
    out, _ = ctx.convert(src, "systrace", os.path.join(ctx.work, "names.html"))
    if out:
        threads, tasks, procs = systrace_names(out)
        ctx.eq(threads, WANT_THREADS, "names: systrace PROCESS DUMP threads")
        ctx.eq({p: procs.get(p) for p in WANT_PROCESSES}, WANT_PROCESSES, "names: systrace PROCESS DUMP processes")
        ctx.eq(tasks, {tid: name for tid, (name, _) in WANT_THREADS.items()}, "names: systrace task column")


# -- 8: async ends without a begin -------------------------------------------

def async_input(path):
    t = 2_000_000
    p = [
        "S|600|load|1", "F|600|load|1",      # matched
        "F|600|orphan|5",                    # never begun
        "F|600|load|1",                      # begun, but already ended
        "S|600|x|2", "F|600|x|3",            # another cookie: not matched
        "F|600|x|2",                         # matched
        "G|600|net|req|9", "H|600|net|9",    # matched, on a named track
        "H|600|net|10",                      # never begun
    ]
    text = HEAD + "".join(mark(600, 600, t + 10 * i, s, task="sample.app") for i, s in enumerate(p))
    t += 10 * len(p)
    text += mark(650, 600, t, "S|600|y|4", task="worker")       # async slices are process-scoped:
    text += mark(651, 600, t + 10, "F|600|y|4", task="worker2")  # another thread of 600 ends it
    text += mark(660, 660, t + 20, "S|600|z|1", task="other")    # begun in process 660 (its TGID column),
    text += mark(600, 600, t + 30, "F|600|z|1", task="sample.app")  # so process 600 has no such slice
    with open(path, "w") as f:
        f.write(text)


LONE = 5
BEGINS, ENDS = 5, 4


def perfetto_async(packets):
    """(begins, ends) of slices on async tracks (neither thread nor process nor counter)."""
    one = test_perfetto.one
    kind, seq_track = {}, {}
    for p in packets:
        td = one(p, "track_descriptor")
        if td:
            kind[one(td, "uuid")] = next((k for k in ("thread", "process", "counter") if k in td), "async")
        defs = one(p, "trace_packet_defaults")
        if defs:
            seq_track[one(p, "trusted_packet_sequence_id")] = one(one(defs, "track_event_defaults", {}), "track_uuid")
    n = collections.Counter()
    for p in packets:
        te = one(p, "track_event")
        if te and kind.get(one(te, "track_uuid", seq_track.get(one(p, "trusted_packet_sequence_id")))) == "async":
            n[one(te, "type")] += 1
    return n["TYPE_SLICE_BEGIN"], n["TYPE_SLICE_END"]


def check_async(ctx):
    src = os.path.join(ctx.work, "async.systrace")
    async_input(src)
    for fmt in ("ir", "json", "perfetto", "systrace"):
        out, figs = ctx.convert(src, fmt, os.path.join(ctx.work, "async.out." + fmt))
        if not out:
            continue
        ctx.eq(figs.get("unmatched-async-end"), LONE, f"async -> {fmt}: unmatched-async-end")
        ctx.eq(figs.get("writer-dropped-frames", 0), 0, f"async -> {fmt}: nothing dropped by the writer")
        if fmt == "ir":
            with open(out) as f:
                ir = f.read()
            got = (len(re.findall(r"^S ", ir, re.M)), len(re.findall(r"^F ", ir, re.M)))
        elif fmt == "json":
            with open(out, "rb") as f:
                ev = json.load(f)["traceEvents"]
            got = (sum(e.get("ph") == "b" for e in ev), sum(e.get("ph") == "e" for e in ev))
        elif fmt == "perfetto":
            packets = test_perfetto.decode(ctx, out)
            if packets is None:
                continue
            got = perfetto_async(packets)
        else:
            with open(out) as f:
                html = f.read()
            got = (len(re.findall(r"tracing_mark_write: S\|", html)), len(re.findall(r"tracing_mark_write: F\|", html)))
        ctx.eq(got, (BEGINS, ENDS), f"async -> {fmt}: async begins and ends written")


# -- 11: whole names in the systrace writer's task column ----------------------

# thread name -> what the task column holds (the model: only a split-point look-alike and a newline change)
FULL_NAMES = {
    "Binder Thread #1": "Binder Thread #1",
    "Binder Thread #2": "Binder Thread #2",
    "Binder Thread #3": "Binder Thread #3",
    "androidx.test.runner.AndroidJUnitRunner": "androidx.test.runner.AndroidJUnitRunner",
    "Thread-13": "Thread-13",
    "pool-1-thread-1": "pool-1-thread-1",
    "x-1 (2) [000] y": "x_1 (2) [000] y",   # would be the line's "-<tid> (<tgid>) [<cpu>]"
    "two\nlines": "two lines",               # a newline ends the line
    "render|thread": "render|thread",         # '|' only separates payload fields
}
PERFETTO = re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):")


def full_names_input(path):
    text = "traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=900 start_ns=0\nprocess \"app\"\n"
    for i, name in enumerate(FULL_NAMES):
        text += f"thread {i} tid={900 + i} records=0 name={json.dumps(name)}\n"
    text += "method 0 id=0 name=\"work\"\n"
    for i in range(len(FULL_NAMES)):
        text += f"B t={i} m=0 ts={1000 * i + 1000}\nE t={i} m=- ts={1000 * i + 1500}\n"
    with open(path, "w") as f:
        f.write(text)


def check_full_names(ctx):
    src = os.path.join(ctx.work, "full-names.ir.txt")
    full_names_input(src)
    want = {900 + i: shown for i, shown in enumerate(FULL_NAMES.values())}
    for text in (False, True):
        label = "full names" + (" (--text)" if text else "")
        out = os.path.join(ctx.work, "full-names" + (".txt" if text else ".html"))
        out, _ = ctx.convert(src, "systrace", out, extra=("-i", "ir") + (("--text",) if text else ()))
        if not out:
            continue
        with open(out, encoding="utf-8") as f:
            lines = [l for l in f.read().split("\n") if "tracing_mark_write:" in l]
        tasks = {}
        for ln in lines:  # what Perfetto's tokenizer takes from each line
            m = PERFETTO.search(ln)
            if ctx.check(m is not None, f"{label}: Perfetto's regex does not match {ln!r}"):
                tasks[int(m.group(1))] = ln[:m.start()].strip()
        ctx.eq(tasks, want, f"{label}: task column as Perfetto reads it")
        back, _ = ctx.convert(out, "ir", out + ".ir", extra=("-i", "systrace"))
        if back:
            with open(back) as f:
                ir = f.read()
            # HTML: the PROCESS DUMP has the name as it is (but for the newline) and wins over a task it differs from
            whole = {900 + i: name.replace("\n", " ") for i, name in enumerate(FULL_NAMES)}
            ctx.eq({tid: name for tid, (name, _) in ir_threads(ir).items()}, want if text else whole,
                   f"{label}: read back by our reader")


def main():
    ctx = tclib.Ctx()
    check_names(ctx)
    check_async(ctx)
    check_full_names(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
