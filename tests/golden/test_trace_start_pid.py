#!/usr/bin/env python3
"""Issue 10's rules on the trace start, the pid, reconstructed frames and pprof's
header, each on a small input built here, checked in every writer it touches
(expected values come from how the input was built, never from our output):

1. A system trace (atrace text at boot-time seconds, no header start) starts at
   its first event: pprof duration = last - first, JSON otherData.start_time_ns
   and ts 0 at the first event, Perfetto's metadata instant and process
   descriptors at the first event's ns.
2. No made-up pid-0 process: no writer shows pid 0; the metadata instant sits on
   the first real process.
3. A Dalvik trace whose `*threads` lists `1 main` without records for it has
   pid 1 in JSON, Perfetto and systrace alike; the summary says `dalvik v3`.
4. A frame that was open when tracing began (its exit comes first, 700 µs into
   the trace) begins at the trace start: wall offset 0, thread CPU 0 (JSON,
   Perfetto, systrace, folded, pprof).
5. pprof time_nanos only for Dalvik (epoch); ART's monotonic start is left out.
6. A clock=thread-cpu trace: pprof has only the cpu type, duration_nanos from
   elapsed-time-usec; --strict converts it; the summary lists a note.
"""
import gzip
import json
import os
import re
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_perfetto  # noqa: E402  (protoc decoding of perfetto traces)

one = test_perfetto.one


# ---- inputs -------------------------------------------------------------------

def art_trace(path, key, version, start_us, records, rec_size):
    """records: packed bytes. The header is ART's SLOW header (ART.md §3)."""
    hdr = b"SLOW" + struct.pack("<HHQ", version, 32, start_us)
    if version >= 3:
        hdr += struct.pack("<H", rec_size)
    hdr += b"\0" * (32 - len(hdr))
    with open(path, "wb") as f:
        f.write(key.encode() + hdr + records)


def dual(tid, method, action, cpu, wall):
    return struct.pack("<HIII", tid, method | action, cpu, wall)


# boot-time seconds, as atrace writes them; two processes, no header start
SYSTRACE = (
    "# tracer: nop\n"
    "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
    "      sample.app-600   (  600) [000] ...1 948220.912000001: tracing_mark_write: B|600|first\n"
    "  system_server-701   (  700) [001] ...1 948220.913000000: tracing_mark_write: B|700|reply\n"
    "  system_server-701   (  700) [001] ...1 948220.913500000: tracing_mark_write: E|700\n"
    "      sample.app-600   (  600) [000] ...1 948220.914000000: tracing_mark_write: E|600\n"
)
SYS_FIRST_NS = 948220_912000001
SYS_LAST_NS = 948220_914000000

DALVIK_START_US = 1_300_000_000_000_000  # gettimeofday µs (2011): Dalvik's start is epoch time
DALVIK_KEY = ("*version\n3\nclock=dual\nvm=dalvik\n*threads\n1\tmain\n12\tworker\n*methods\n"
              "0x4\tcom/example/W\trun\t()V\tW.java\n*end\n")

ART_START_US = 123_456_789_012  # CLOCK_MONOTONIC µs (34 h of uptime)
ART_KEY = ("*version\n3\nclock=dual\nelapsed-time-usec=1000\nvm=art\npid=42\n*threads\n42\tmain\n*methods\n"
           "0x4\tcom.example.A\tloop\t()V\tA.java\n"
           "0x8\tcom.example.B\trun\t()V\tB.java\n*end\n")
# A was on the stack when tracing began: its exit at wall 700 µs (cpu 300) is the first record
ART_RECORDS = [(42, 0x4, 1, 300, 700), (42, 0x8, 0, 320, 800), (42, 0x8, 1, 400, 900)]

CPU_KEY = ("*version\n2\nclock=thread-cpu\nelapsed-time-usec=5000\nvm=art\npid=9\n*threads\n9\tmain\n*methods\n"
           "0x4\tcom.example.A\tloop\t()V\tA.java\n*end\n")


# ---- decoders -------------------------------------------------------------------

def perfetto_packets(ctx, src, name):
    out, _ = ctx.convert(src, "perfetto", os.path.join(ctx.work, name + ".pftrace"))
    return test_perfetto.decode(ctx, out) if out else None


def pprof_header(ctx, src, name, extra=()):
    """(time_nanos, duration_nanos, [sample type names]) read by protoc with the upstream profile.proto."""
    out, _ = ctx.convert(src, "pprof", os.path.join(ctx.work, name + ".pb.gz"), extra=extra)
    if not out:
        return None
    with open(out, "rb") as f:
        body = gzip.decompress(f.read())
    r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("profile.proto"),
                    "--decode=perftools.profiles.Profile", "profile.proto"], input=body)
    if r is None or not ctx.check(r.returncode == 0, f"{name}: protoc: {r.stderr.decode(errors='replace')}"):
        return None
    p = test_perfetto.parse_text(r.stdout.decode("utf-8", errors="replace"))
    strings = p.get("string_table", [])
    types = [strings[int(one(t, "type", 0))] for t in p.get("sample_type", [])]
    return int(one(p, "time_nanos", 0)), int(one(p, "duration_nanos", 0)), types


def json_doc(ctx, src, name):
    out, _ = ctx.convert(src, "json", os.path.join(ctx.work, name + ".json"))
    if not out:
        return None
    with open(out, "rb") as f:
        return json.load(f)


def systrace_pids(ctx, src, name):
    """Every pid of the systrace output's tracing_mark_write payloads (B|pid|, E|pid)."""
    out, _ = ctx.convert(src, "systrace", os.path.join(ctx.work, name + ".html"))
    if not out:
        return None, ""
    with open(out, encoding="utf-8", errors="replace") as f:
        text = f.read()
    return {int(p) for p in re.findall(r"tracing_mark_write: [BEICSF]\|(\d+)", text)}, text


def descriptors(packets):
    """(process descriptors [(uuid, pid, packet ts)], thread descriptors [(pid, tid)], metadata instant packet)."""
    procs, threads, meta = [], [], None
    for p in packets:
        td = one(p, "track_descriptor")
        if td and "process" in td:
            procs.append((one(td, "uuid"), int(one(one(td, "process"), "pid", 0)), one(p, "timestamp")))
        if td and "thread" in td:
            th = one(td, "thread")
            threads.append((int(one(th, "pid", 0)), int(one(th, "tid", 0))))
        te = one(p, "track_event")
        if te and "traceconv" in te.get("categories", []):
            meta = p
    return procs, threads, meta


# ---- 1 and 2: a system trace ------------------------------------------------------

def check_system_trace(ctx):
    src = os.path.join(ctx.work, "boot.systrace")
    with open(src, "w") as f:
        f.write(SYSTRACE)
    hdr = pprof_header(ctx, src, "boot")
    if hdr:
        ctx.eq(hdr[1], SYS_LAST_NS - SYS_FIRST_NS, "systrace -> pprof: duration_nanos = last event - first event")
        ctx.eq(hdr[0], 0, "systrace -> pprof: no time_nanos (the boot clock is not the epoch)")
    doc = json_doc(ctx, src, "boot")
    if doc:
        ctx.eq(int(doc["otherData"]["start_time_ns"]), SYS_FIRST_NS, "systrace -> json: otherData.start_time_ns")
        first = min(float(e["ts"]) for e in doc["traceEvents"] if e.get("ph") in ("B", "E"))
        ctx.eq(first, 0.0, "systrace -> json: the first event is at ts 0")
        pids = {e["pid"] for e in doc["traceEvents"]}
        ctx.eq(pids, {600, 700}, "systrace -> json: the input's pids, no made-up pid 0")
    packets = perfetto_packets(ctx, src, "boot")
    if packets is not None:
        procs, threads, meta = descriptors(packets)
        ctx.eq(sorted(pid for _, pid, _ in procs), [600, 700], "systrace -> perfetto: process descriptors, no pid 0")
        ctx.eq({ts for _, _, ts in procs}, {SYS_FIRST_NS}, "systrace -> perfetto: process descriptors at the first event")
        ctx.check(all(pid for pid, _ in threads), f"systrace -> perfetto: no thread of pid 0: {threads}")
        if ctx.check(meta is not None, "systrace -> perfetto: a metadata instant"):
            ctx.eq(one(meta, "timestamp"), SYS_FIRST_NS, "systrace -> perfetto: metadata instant at the first event")
            uuid_pid = {u: pid for u, pid, _ in procs}
            ctx.eq(uuid_pid.get(one(one(meta, "track_event"), "track_uuid")), 600,
                   "systrace -> perfetto: the metadata instant is on the first real process")
    pids, _ = systrace_pids(ctx, src, "boot")
    if pids is not None:
        ctx.eq(pids, {600, 700}, "systrace -> systrace: payload pids, no pid 0")


def check_foreign_json(ctx):
    """Chrome JSON without our otherData: µs at boot time, no start given."""
    src = os.path.join(ctx.work, "foreign.json")
    events = [{"ph": "B", "pid": 5, "tid": 5, "ts": 948220912000.5, "name": "a"},
              {"ph": "E", "pid": 5, "tid": 5, "ts": 948220914000, "name": "a"}]
    with open(src, "w") as f:
        json.dump({"traceEvents": events}, f)
    hdr = pprof_header(ctx, src, "foreign")
    if hdr:
        ctx.eq(hdr[1], 1999500, "json -> pprof: duration_nanos = last event - first event")
    doc = json_doc(ctx, src, "foreign-out")
    if doc:
        ctx.eq(int(doc["otherData"]["start_time_ns"]), 948220912000500, "json -> json: start_time_ns = the first event")
        ctx.eq({e["pid"] for e in doc["traceEvents"]}, {5}, "json -> json: the input's pid, no made-up pid 0")
    packets = perfetto_packets(ctx, src, "foreign")
    if packets is not None:
        procs, _, meta = descriptors(packets)
        ctx.eq([pid for _, pid, _ in procs], [5], "json -> perfetto: one process, pid 5")
        ctx.check(meta is not None and one(meta, "timestamp") == 948220912000500,
                  "json -> perfetto: metadata instant at the first event")


# ---- 3 and 5: Dalvik, main listed without records ----------------------------------

def check_dalvik_pid(ctx):
    src = os.path.join(ctx.work, "dalvik-main-idle.trace")
    recs = dual(12, 0x4, 0, 0, 10) + dual(12, 0x4, 1, 20, 30)
    art_trace(src, DALVIK_KEY, 3, DALVIK_START_US, recs, 14)
    r = ctx.run(["-f", "-o", "json", src, os.path.join(ctx.work, "dalvik.json")])
    err = r.stderr.decode(errors="replace")
    ctx.check(r.returncode == 0 and "(dalvik v3 " in err, f"dalvik: the summary says dalvik v3: {err.strip()}")
    if r.returncode == 0:
        with open(os.path.join(ctx.work, "dalvik.json"), "rb") as f:
            doc = json.load(f)
        ctx.eq({e["pid"] for e in doc["traceEvents"]}, {1}, "dalvik -> json: pid = tid of `main` (no records)")
    packets = perfetto_packets(ctx, src, "dalvik")
    if packets is not None:
        procs, threads, _ = descriptors(packets)
        ctx.eq([pid for _, pid, _ in procs], [1], "dalvik -> perfetto: process pid 1")
        ctx.eq(threads, [(1, 12)], "dalvik -> perfetto: thread 12 of pid 1")
    pids, _ = systrace_pids(ctx, src, "dalvik")
    if pids is not None:
        ctx.eq(pids, {1}, "dalvik -> systrace: payload pid 1")
    hdr = pprof_header(ctx, src, "dalvik")
    if hdr:
        ctx.eq(hdr[0], DALVIK_START_US * 1000, "dalvik -> pprof: time_nanos = the (epoch) header start")


# ---- 4 and 5: a frame open when tracing began -----------------------------------------

def check_reconstructed(ctx):
    src = os.path.join(ctx.work, "open-at-start.trace")
    art_trace(src, ART_KEY, 3, ART_START_US, b"".join(dual(*r) for r in ART_RECORDS), 14)
    start_ns = ART_START_US * 1000
    doc = json_doc(ctx, src, "open-at-start")
    if doc:
        b = [e for e in doc["traceEvents"] if e.get("ph") == "B" and e["name"].startswith("com.example.A.loop")]
        if ctx.check(len(b) == 1, f"art -> json: one begin of A: {b}"):
            ctx.eq((float(b[0]["ts"]), float(b[0]["tts"])), (0.0, 0.0),
                   "art -> json: the reconstructed A begins at the trace start, thread CPU 0")
    packets = perfetto_packets(ctx, src, "open-at-start")
    if packets is not None:
        d = test_perfetto.check_packets(ctx, "open-at-start", packets, True)
        ctx.eq(d.timeline.get(42, [])[:1], [("B", start_ns)], "art -> perfetto: A's slice begins at the header start")
        ctx.eq(d.top_cpu.get(42), (300 - 0) * 1000 + (400 - 320) * 1000,
               "art -> perfetto: top-level thread CPU counts A from CPU 0")
        _, _, meta = descriptors(packets)
        ctx.check(meta is not None and one(meta, "timestamp") == start_ns, "art -> perfetto: metadata instant at the header start")
    out, _ = ctx.convert(src, "folded", os.path.join(ctx.work, "open-at-start.folded"))
    if out:
        ctx.eq(tclib.read_folded(out), {"main-42;com.example.A.loop": 700, "main-42;com.example.B.run": 100},
               "art -> folded: A's self time runs from the trace start (700 µs)")
    _, text = systrace_pids(ctx, src, "open-at-start")
    m = re.search(r"\s(\d+\.\d+): tracing_mark_write: B\|42\|com\.example\.A\.loop", text)
    if ctx.check(m is not None, "art -> systrace: A's begin is written"):
        ctx.eq(float(m.group(1)), 0.0, "art -> systrace: A begins at the trace start")
    hdr = pprof_header(ctx, src, "open-at-start")
    if hdr:
        ctx.eq(hdr[0], 0, "art -> pprof: no time_nanos (ART's start is CLOCK_MONOTONIC, not the epoch)")
        ctx.eq(hdr[1], 1000 * 1000, "art -> pprof: duration_nanos = elapsed-time-usec (the last record is at 900 µs)")
        ctx.eq(hdr[2], ["wall", "cpu"], "art -> pprof: dual clock, two sample types")


# ---- 6: a thread-CPU-only trace --------------------------------------------------------

def check_thread_cpu(ctx):
    src = os.path.join(ctx.work, "thread-cpu.trace")
    recs = b"".join(struct.pack("<HII", 9, 0x4 | a, t) for a, t in ((0, 0), (1, 2000)))
    art_trace(src, CPU_KEY, 2, ART_START_US, recs, 10)
    hdr = pprof_header(ctx, src, "thread-cpu")
    if hdr:
        ctx.eq(hdr[2], ["cpu"], "thread-cpu -> pprof: only the cpu sample type")
        ctx.eq(hdr[1], 5000 * 1000, "thread-cpu -> pprof: duration_nanos = elapsed-time-usec, not the largest CPU time")
    r = ctx.run(["-f", "--strict", "-o", "json", src, os.path.join(ctx.work, "thread-cpu.json")])
    err = r.stderr.decode(errors="replace")
    ctx.eq(r.returncode, 0, f"thread-cpu: --strict converts it (the clock is the format, not a defect): {err.strip()}")
    ctx.check("; notes: 1 thread-cpu-timeline" in err and "warnings:" not in err,
              f"thread-cpu: the summary lists a note, no warning: {err.strip()}")


def main():
    ctx = tclib.Ctx()
    check_system_trace(ctx)
    check_foreign_json(ctx)
    check_dalvik_pid(ctx)
    check_reconstructed(ctx)
    check_thread_cpu(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
