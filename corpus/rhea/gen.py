#!/usr/bin/env python3
"""Writes the project's RheaTrace / btrace dumps (corpus/rhea/) and their facts.

Every dump is built from a model written below: the calls each thread made (who
called whom, when, and how each call ended). The dump bytes are derived from the
model with the layouts of the RheaTrace/btrace format notes (1.x/2.x text dumps,
2.x binary method trace, 3.x sampling dump; docs/formats/RHEA.md in the team's shared
notes); facts.json is derived from the same model, never by decoding a dump and
never by traceconv: it is what a reader must recover. Deterministic (no clock, no
randomness): running it twice gives identical files.

    python3 corpus/rhea/gen.py [OUTDIR]      (default: the directory of this script)

facts.json maps each file name to its facts:
  "input": true for a dump, false for a side file (mapping, binder table) that no
           reader may claim;
  "variant": v1-text | v2-text | v2-binary | v3-sampling;
  "pid": the process;
  "slices": {tid: [[name, start_us, end_us], ...]} sorted, times in µs from the
            dump's time origin (1.x: TRACE_START; 2.x text: its first line);
            what the dump means after the repairs of RHEA.md §4.2;
  "folded": {stack: µs} for the binary dumps (thread frame "main-<pid>" for the
            pid's thread, "Thread-<tid>-<tid>" for the others: 2.x names no threads);
  "folded_unmapped": the same without the mapping (method#<id> / method#0x<ptr>);
  "samples": the 3.x record count; "unknown_ids": ids the mapping lacks.
"""
import gzip
import json
import os
import struct
import sys

# ---- 1.x text dumps --------------------------------------------------------------------------
# A frame: (tid, name, start_us, end_us, how, children). how: "E" exit marker, "T" exit by an
# explicit throw, "prop" its exception propagated (no marker: the dump shows it ending with its
# caller's exit), "open" still running at TRACE_END, "atrace" a framework B|pid|name closed by
# E|pid, "bareE" a framework slice closed by a bare E, "caught" (T:x then E:x: a throw caught
# inside x; the shown end is the E).

PID1 = 4242
START1_NS = 51234500000000  # TRACE_START, CLOCK_BOOTTIME ns: 51234.500000 s
END1_US = 8000              # TRACE_END, µs after TRACE_START


def f(name, start, end, how="E", *children):
    return [name, start, end, how, list(children)]


V1_ALL = {
    4242: [f("NotesApp:onCreate", 1000, 3000, "E",
             f("NotesApp:initDb", 1100, 1900, "E",
               f("DbHelper:open", 1200, None, "prop")),
             f("Parser:parse", 2000, 2400, "T"),
             f("Prefs:load", 2500, 2900, "caught",
               f("Log:w", 2650, 2700, "E"))),
           f("Choreographer#doFrame", 6000, 6500, "atrace",
             f("traversal", 6100, 6300, "bareE"))],
    4260: [f("SyncWorker:run", 4000, 5000, "E",
             f("open:/data/user/0/com.example.notes/databases/notes.db", 4100, 4300, "atrace"))],
    4261: [f("Cache:trim", 4500, 4800, "E"),
           f("MainActivity$onResume$1:run", 5500, 5600, "E"),
           f("Tree:walk", 5700, 5900, "E",
             f("Tree:walk", 5750, 5850, "E")),
           f("Cache:evict", 7000, None, "open")],
}
CAUGHT_THROW_AT = {"Prefs:load": 2600}  # when the caught throw's T: marker is written

PID_MAIN = 3310
START_MAIN_NS = 77001250000000  # 77001.250000 s
END_MAIN_US = 3000
V1_MAIN = {
    3310: [f("MainActivity:onCreate", 600, 1200, "E",
             f("MainActivity:setupViews[1, true]", 900, 1000, "E")),
           f("inflate", 2000, 2100, "atrace"),
           f("MainActivity:onStart", 2200, 2300, "E")],
}


def v1_events(pid, frames, tid, out):
    """(time µs, order, tid, payload) of every marker a 1.x dump holds for these frames."""
    for name, start, end, how, children in frames:
        out.append((start, len(out), tid, f"B|{pid}|{name}" if how in ("atrace", "bareE") else f"B|{pid}|B:{name}"))
        v1_events(pid, children, tid, out)
        if how == "caught":
            out.append((CAUGHT_THROW_AT[name], len(out), tid, f"B|{pid}|T:{name}"))
        if how in ("E", "caught"):
            out.append((end, len(out), tid, f"B|{pid}|E:{name}"))
        elif how == "T":
            out.append((end, len(out), tid, f"B|{pid}|T:{name}"))
        elif how == "atrace":
            out.append((end, len(out), tid, f"E|{pid}"))
        elif how == "bareE":
            out.append((end, len(out), tid, "E"))
    return out


def shown(frames, parent_end, trace_end, out):
    """The slices a reader must show: a propagated frame ends with its caller, an open one at
    the trace's end."""
    for name, start, end, how, children in frames:
        if how == "prop":
            end = parent_end
        elif how == "open":
            end = trace_end
        out.append([name, start, end])
        shown(children, end, trace_end, out)
    return out


def stamp(start_ns, us):
    ns = start_ns + us * 1000
    return f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"


def v1_dump(pid, start_ns, end_us, threads, main_only):
    lines = [f"512|TRACE_START|{start_ns}|{pid}|2147483647|2|18316"]
    # the clock pair written when tracing starts (never closed; not a slice)
    ev = [(51, -1, pid, f"B|{pid}|monotonic_time: 20417.{start_ns // 1000 % 1000000:06d}")]
    for tid, frames in threads.items():
        v1_events(pid, frames, tid, ev)
    for us, _, tid, payload in sorted(ev):
        lines.append(f"{stamp(start_ns, us)}: {payload}" if main_only else f"{stamp(start_ns, us)} {tid}: {payload}")
    lines.append(f"513|TRACE_END|{start_ns + end_us * 1000}|{pid}|2147483647|2|18316")
    return ("\n".join(lines) + "\n").encode()


def v1_facts(pid, end_us, threads):
    return {"input": True, "variant": "v1-text", "pid": pid,
            "slices": {str(tid): sorted(shown(frames, None, end_us, [])) for tid, frames in threads.items()}}


# ---- 2.x text dump: 9 decimals, CLOCK_MONOTONIC, framework and <rhea-draft> events only ------

PID2 = 5100
V2_TEXT_FIRST_NS = 27438977315541  # the first line's time; the reader's time origin
V2_TEXT = [  # (tid, name as written, start ns from the first line, end ns, end form)
    (5133, "open", 0, 100000, "E|pid"),
    (5100, "<rhea-draft>binder transact[android.content.pm.IPackageManager:3]", 2684459, 3684459, "E|pid"),
    (5100, "Choreographer#doFrame", 12684460, 21684459, "E|pid"),
    (5100, "traversal", 13000000, 20000001, "E"),
]


def v2_text():
    ev = []
    for i, (tid, name, s, e, form) in enumerate(V2_TEXT):
        ev.append((s, 0, -i, tid, f"B|{PID2}|{name}"))
        ev.append((e, 1, i, tid, f"E|{PID2}" if form == "E|pid" else "E"))
    lines = [f"512|TRACE_START|948220911000000|{PID2}|2147483647|2|18316"]
    for ns, _, _, tid, payload in sorted(ev):
        t = V2_TEXT_FIRST_NS + ns
        lines.append(f"{t // 10**9}.{t % 10**9:09d} {tid}: {payload}")
    lines.append(f"513|TRACE_END|948220918000000|{PID2}|2147483647|2|18316")
    text = ("\n".join(lines) + "\n").encode()
    slices = {}
    for tid, name, s, e, _ in V2_TEXT:
        slices.setdefault(str(tid), []).append([name.replace("<rhea-draft>", ""), s / 1000, e / 1000])
    return text, {"input": True, "variant": "v2-text", "pid": PID2,
                  "slices": {k: sorted(v) for k, v in slices.items()}}


BINDER = "#android.content.pm.IPackageManager\nTRANSACTION_getPackageInfo:3\nTRANSACTION_getApplicationInfo:9\n"

# ---- 2.x binary method trace -----------------------------------------------------------------

APP = "com.example.notes."
MAPPING = [  # id, access flags, class, method, desc
    (1, 17, APP + "ListFragment$onViewCreated$1", "onClick", "(Landroid/view/View;)V"),
    (2, 4, APP + "NotesApp", "attachBaseContext", "(Landroid/content/Context;)V"),
    (3, 1, APP + "NotesApp", "onCreate", "()V"),
    (4, 1, APP + "MainActivity", "onCreate", "(Landroid/os/Bundle;)V"),
    (1048574, 1, "android.os.Handler", "dispatchMessage", "(Landroid.os.Message;)V"),
]
BIN_MONO_NS = 232073280000000
BIN_CALLS = [  # (tid, method id, start ns from the base, duration ns); children are written first
    (5100, 3, 2000000, 3000000),   # onCreate [2, 5) ms inside attachBaseContext
    (5100, 2, 1000000, 6000000),   # attachBaseContext [1, 7) ms
    (5133, 1, 8000000, 500000),    # onClick [8, 8.5) ms
    (5100, 99, 9000000, 100000),   # id 99: not in the mapping
]


def bin_record(start_rel, dur, tid, mid):
    return struct.pack("<QQ", (start_rel << 19) | (dur >> 26), ((dur & 0x3FFFFFF) << 38) | (tid << 23) | mid)


def v2_binary():
    data = struct.pack("<IIQQQ", 5, PID2, 948220911000000, BIN_MONO_NS, BIN_MONO_NS)
    data += b"".join(bin_record(s, d, tid, m) for tid, m, s, d in BIN_CALLS)
    data += bytes(96)  # the mmapped file's unused zero tail
    names = {i: f"{c}.{m}" for i, _, c, m, _ in MAPPING}

    def thread(tid):
        return f"main-{tid}" if tid == PID2 else f"Thread-{tid}-{tid}"

    def parent(call):  # the innermost call on the same thread that encloses this one
        tid, _, s, d = call
        outer = [c for c in BIN_CALLS if c is not call and c[0] == tid and c[2] <= s and s + d <= c[2] + c[3]]
        return min(outer, key=lambda c: c[3]) if outer else None

    def folded(name_of):
        out = {}
        for call in BIN_CALLS:
            self_ns = call[3] - sum(c[3] for c in BIN_CALLS if parent(c) is call)
            stack, c = [], call
            while c:
                stack.insert(0, name_of(c[1]))
                c = parent(c)
            key = ";".join([thread(call[0])] + stack)
            out[key] = out.get(key, 0) + self_ns // 1000
        return out

    facts = {"input": True, "variant": "v2-binary", "pid": PID2, "records": len(BIN_CALLS),
             "folded": folded(lambda m: names.get(m, f"method#{m}")),
             "folded_unmapped": folded(lambda m: f"method#{m}"),
             "unknown_ids_unmapped": len({m for _, m, _, _ in BIN_CALLS}),
             "unknown_ids": len({m for _, m, _, _ in BIN_CALLS if m not in names})}
    return data, facts


def mapping_text():
    return "#6f1c2a7e-3d44-4b8e-9c55-0a1b2c3d4e5f\n" + "".join(
        f"{i},{flags},{c} {m} {d}\n" for i, flags, c, m, d in MAPPING)


# ---- 3.x sampling dump -----------------------------------------------------------------------

PTRS = {  # ArtMethod* -> PrettyMethod(true)
    0x71001000: "void android.app.ActivityThread.main(java.lang.String[])",
    0x71002000: "void com.example.notes.MainActivity.onCreate(android.os.Bundle)",
    0x71003000: "void com.example.notes.SyncTask.run()",
}
A, B, C = 0x71001000, 0x71002000, 0x71003000
SAMPLES = [  # (tid, begin ns, end ns or 0, stack root first); weight: end - begin, else the gap to
    # the thread's next sample, else the thread's previous gap, else 1 ms (RHEA.md §3, rhea.c)
    (5100, 2000000000, 0, [A, B, C]),
    (5100, 2001000000, 0, [A, B]),
    (5100, 2002000000, 2004000000, [A, C]),
    (5133, 2003000000, 0, [A, C]),
]
THREAD_NAMES = [(5100, b"example.notes"), (5133, b"pool-2-thread-1\n")]  # comm, as fgets read it


def v3_sampling():
    extra = json.dumps({"processId": PID2}).encode()
    data = struct.pack("<IIIQIi", 0x01020304, 0, 5, 2100, len(SAMPLES), len(extra)) + extra
    for tid, begin, end, stack in SAMPLES:
        data += struct.pack("<HHIQQQQ", 5, tid, 1, begin, end, 10, 10 if end else 0)
        data += struct.pack("<QQ", 0, 640) + struct.pack("<III", 0, 1, 0)
        data += struct.pack("<II", len(stack), len(stack))
        data += b"".join(struct.pack("<Q", p) for p in reversed(stack))  # leaf first
    mp = struct.pack("<QII", 0, 1, len(PTRS))
    for ptr, name in PTRS.items():
        mp += struct.pack("<QH", ptr, len(name)) + name.encode()
    for tid, name in THREAD_NAMES:
        mp += struct.pack("<hB", tid, len(name)) + name
    short = {p: n.split(" ", 1)[1].split("(")[0] for p, n in PTRS.items()}
    names = {tid: n.decode().strip() for tid, n in THREAD_NAMES}

    def weights():
        out = []
        for i, (tid, begin, end, stack) in enumerate(SAMPLES):
            same = [s for s in SAMPLES if s[0] == tid]
            k = same.index(SAMPLES[i])
            if end:
                w = end - begin
            elif k + 1 < len(same):
                w = same[k + 1][1] - begin
            elif k > 0:
                w = begin - same[k - 1][1]
            else:
                w = 1000000
            out.append((tid, stack, w // 1000))
        return out

    def folded(thread_name, frame):
        out = {}
        for tid, stack, us in weights():
            key = ";".join([thread_name(tid)] + [frame(p) for p in stack])
            out[key] = out.get(key, 0) + us
        return out

    facts = {"input": True, "variant": "v3-sampling", "pid": PID2, "samples": len(SAMPLES),
             "folded": folded(lambda t: f"{names[t]}-{t}", lambda p: short[p]),
             # without the mapping no thread has a name either: the pid's thread is "main"
             "folded_unmapped": folded(lambda t: f"main-{t}" if t == PID2 else f"Thread-{t}-{t}",
                                       lambda p: f"method#0x{p:x}")}
    return data, mp, facts


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    files, facts = {}, {}
    files["v1-allthreads.rhea-atrace.txt"] = v1_dump(PID1, START1_NS, END1_US, V1_ALL, False)
    facts["v1-allthreads.rhea-atrace.txt"] = v1_facts(PID1, END1_US, V1_ALL)
    # gzip as the device writes it; mtime 0 and no file name: the same bytes every run
    files["v1-allthreads.rhea-atrace.gz"] = gzip.compress(files["v1-allthreads.rhea-atrace.txt"], 9, mtime=0)
    facts["v1-allthreads.rhea-atrace.gz"] = facts["v1-allthreads.rhea-atrace.txt"]
    files["v1-mainthread.rhea-atrace.txt"] = v1_dump(PID_MAIN, START_MAIN_NS, END_MAIN_US, V1_MAIN, True)
    facts["v1-mainthread.rhea-atrace.txt"] = v1_facts(PID_MAIN, END_MAIN_US, V1_MAIN)
    text, facts["v2-atrace.gz"] = v2_text()
    files["v2-atrace.gz"] = gzip.compress(text, 9, mtime=0)
    files["v2-binder.txt"] = BINDER.encode()
    facts["v2-binder.txt"] = {"input": False}
    files["v2-appTrace.bin"], facts["v2-appTrace.bin"] = v2_binary()
    files["v2-methodMapping.txt"] = mapping_text().encode()  # found beside v2-appTrace.bin
    facts["v2-methodMapping.txt"] = {"input": False}
    files["v3-sampling.bin"], files["v3-sampling-mapping.bin"], facts["v3-sampling.bin"] = v3_sampling()
    facts["v3-sampling-mapping.bin"] = {"input": False}
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)
    with open(os.path.join(out, "facts.json"), "w") as fh:
        fh.write("{\n" + ",\n".join(f" {json.dumps(k)}: {json.dumps(v, sort_keys=True)}"
                                    for k, v in sorted(facts.items())) + "\n}\n")
    print(f"rhea/gen.py: wrote {len(files)} files and facts.json in {out}")


if __name__ == "__main__":
    main()
