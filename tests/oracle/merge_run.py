"""One "run" of an app, recorded twice: as an ART method trace (a tracegen scenario) and as
the atrace capture of the same moments (ftrace text with clock-sync markers), written from
one model; and where every slice of both must land on the merged timeline. Used by
test_merge.py. Nothing here reads traceconv's output: the expectations are the model's.

Times of the model are µs after the method trace's start (its header start, S_US on
CLOCK_MONOTONIC). The capture's clock is BOOTTIME = MONOTONIC + BOOT_DELTA_NS, so a model
time r lands at S_US*1000 + r*1000 + BOOT_DELTA_NS on the merged timeline (ns)."""

PID = 4321
S_US = 5_000_000                  # the ART header start: 5 s of CLOCK_MONOTONIC
BOOT_DELTA_NS = 7_250_000_000     # BOOTTIME - MONOTONIC: the device slept 7.25 s
WALL0_MS = 1_754_392_110_123      # wall clock at the method trace's start (Dalvik's header start)

# ART methods: alias -> (class, name, sig)
METHODS = {
    "A": ("com.example.MainActivity", "onCreate", "(Landroid/os/Bundle;)V"),
    "D": ("android.view.View", "draw", "(Landroid/graphics/Canvas;)V"),
    "I": ("android.view.LayoutInflater", "inflate", "(I)Landroid/view/View;"),
    "M": ("com.example.Crossing", "method", "()V"),
    "W": ("com.example.Worker", "work", "()V"),
    "L": ("com.example.Lonely", "run", "()V"),
}

# threads of the app: tid, ART name, system comm (None: not in the capture)
MAIN, WORKER, LONELY = 4321, 70001, 4500
THREADS = [(MAIN, "main", "com.example.app"), (WORKER, "WorkerThread", "WorkerThread"),
           (LONELY, "Lonely", None)]

# ART frames: tid -> [(alias, begin µs, end µs, depth)]
ART = {
    MAIN: [("A", 1000, 7000, 0), ("D", 1200, 2000, 1), ("I", 3500, 4500, 1), ("M", 6000, 7000, 1)],
    WORKER: [("W", 600, 800, 0)],
    LONELY: [("L", 100, 300, 0)],
}

# atrace slices: tid -> [(name, begin µs, end µs)]; the other process's too
ATRACE = {
    MAIN: [("Choreographer#doFrame", 1100, 2100), ("inflate", 3600, 4400), ("crossing", 6500, 7003)],
    WORKER: [("work", 500, 900)],
    1005: [("binder transaction", 2000, 2500)],
}
OTHER_PID = {1005: 1000}
COMMS = {MAIN: "com.example.app", WORKER: "WorkerThread", 1005: "system_server"}

# Where each slice must land in the merged trace: (tid, name) -> (begin µs, end µs, parent name)
# ("crossing" ends 3 µs after Crossing.method, which holds it: it is ended with it, at 7000).
EXPECTED = {
    (MAIN, "com.example.MainActivity.onCreate"): (1000, 7000, None),
    (MAIN, "Choreographer#doFrame"): (1100, 2100, "com.example.MainActivity.onCreate"),
    (MAIN, "android.view.View.draw"): (1200, 2000, "Choreographer#doFrame"),
    (MAIN, "android.view.LayoutInflater.inflate"): (3500, 4500, "com.example.MainActivity.onCreate"),
    (MAIN, "inflate"): (3600, 4400, "android.view.LayoutInflater.inflate"),
    (MAIN, "com.example.Crossing.method"): (6000, 7000, "com.example.MainActivity.onCreate"),
    (MAIN, "crossing"): (6500, 7000, "com.example.Crossing.method"),
    (WORKER, "work"): (500, 900, None),
    (WORKER, "com.example.Worker.work"): (600, 800, "work"),
    (LONELY, "com.example.Lonely.run"): (100, 300, None),
    (1005, "binder transaction"): (2000, 2500, None),
}
CLAMPED = 1  # "crossing"


def scenario(vm="art", tids="full", pid=True, start_us=S_US, ids=None, art=None, methods=None, threads=None):
    """The tracegen scenario of the ART side. Frames of a thread as nested calls with gaps.
    ids: tid -> the id the method trace gives the thread (Dalvik's small thread ids)."""
    out = ["version 3", "clock dual", f"vm {vm}", f"start {start_us}"]
    if vm == "art":
        out.append(f"tids {tids}")
    if pid:
        out.append(f"pid {PID}")
    for alias, (cls, name, sig) in (methods or METHODS).items():
        out.append(f'method {alias} {cls} {name} "{sig}" {cls.rsplit(".", 1)[-1]}.java')
    art = art or ART
    for tid, name, _comm in threads or THREADS:
        frames = sorted(art[tid], key=lambda f: (f[1], f[3]))
        out.append(f'thread {(ids or {}).get(tid, tid)} "{name}" at={frames[0][1]}us {{')
        out.extend(_calls(frames, 0, frames[0][1]))
        out.append("}")
    return "\n".join(out) + "\n"


def _calls(frames, depth, t):
    """Statements for the frames of one depth from time t (children back to back, gaps between)."""
    lines = []
    mine = [f for f in frames if f[3] == depth]
    for alias, b, e, _d in mine:
        if b > t:
            lines.append(f"gap {b - t}us")
        kids = [f for f in frames if f[3] > depth and f[1] >= b and f[2] <= e]
        if kids:
            lines.append(f"call {alias} {e - b}us {{")
            lines.extend(_calls(kids, depth + 1, b))
            lines.append("}")
        else:
            lines.append(f"call {alias} {e - b}us")
        t = e
    return lines


def _stamp(ns):
    return f"{ns // 10**9}.{ns % 10**9 // 1000:06d}"


def _line(ns, tid, text):
    pid = OTHER_PID.get(tid, PID)
    return f"{COMMS.get(tid, 'thread'):>16}-{tid:<5} ({pid:>5}) [000] ...1 {_stamp(ns)}: tracing_mark_write: {text}\n"


def boot_ns(rel_us):
    """The capture's clock at model time rel_us."""
    return S_US * 1000 + rel_us * 1000 + BOOT_DELTA_NS


def capture(parent=True, realtime=True, parent_text=None, realtime_text=None, marker_at_us=0, atrace=None):
    """The atrace text of the run: markers first (as atrace writes them), then B/E in time order."""
    lines = ["# tracer: nop\n#\n"]
    m = boot_ns(marker_at_us)
    if parent:
        mono = m - BOOT_DELTA_NS
        text = parent_text if parent_text is not None else f"parent_ts={_stamp(mono)}"
        lines.append(_line(m, MAIN, f"trace_event_clock_sync: {text}"))
    if realtime:
        wall_ms = WALL0_MS + marker_at_us // 1000
        text = realtime_text if realtime_text is not None else f"realtime_ts={wall_ms}"
        lines.append(_line(m, MAIN, f"trace_event_clock_sync: {text}"))
    ev = []
    for tid, slices in (atrace or ATRACE).items():
        pid = OTHER_PID.get(tid, PID)
        for name, b, e in slices:
            ev.append((boot_ns(b), 1, tid, f"B|{pid}|{name}"))
            ev.append((boot_ns(e), 0, tid, "E"))
    for ns, _o, tid, text in sorted(ev):
        lines.append(_line(ns, tid, text))
    return "".join(lines)
