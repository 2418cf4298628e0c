#!/usr/bin/env python3
"""Scheduler data (systrace/atrace sched_switch, sched_waking, cpu_frequency, cpu_idle)
reaches the perfetto output so that Perfetto's importer builds the same `sched`,
`thread_state` and `counter` tables from it as from the original text.

No trace_processor here, so this is a model of Perfetto's import, written for this test
from Perfetto's sources (read, not copied; snapshot of 2026-08-22):
  - the text front end: systrace_line_tokenizer.cc (the line regex; ts = double seconds
    * 1e9, truncated), systrace_line_parser.cc (args split at spaces, key=value at '=';
    sched_switch needs prev_pid, prev_prio, next_pid, next_prio; prev_state through
    TaskState::FromSystrace and ToRawStateOnlyForSystraceConversions; sched_waking:
    wakee = pid=, waker = the line's task; cpu_frequency / cpu_idle: counters by
    cpu_id; sched_wakeup, sched_process_exit, task_rename: nothing);
  - the proto front end: ftrace_parser.cc (sched_switch -> the same PushSchedSwitch;
    sched_waking -> PushWakingEvent(ts, pid=, FtraceEvent.pid); cpu_frequency/cpu_idle
    -> counters by cpu_id; the others fill only the raw table), ftrace_tokenizer.cc (a
    bundle without ftrace_clock is BOOTTIME);
  - what both end in: FtraceSchedEventTracker::PushSchedSwitch (a CPU's pending slice is
    closed by a switch whose prev_pid is the CPU's last next_pid, with end_state the
    prev_state string), SchedEventTracker (slices: cpu, ts, dur -1 until closed, utid,
    end_state, priority = next_prio), ThreadStateTracker (switch: close prev's state, open
    prev_state; close next's, open Running on the cpu; waking: R unless the thread's last
    state is Running or R; the swapper (tid 0) has no rows), TaskState::FromRawPrevState
    with the default kernel 4.4 and ToString (3 chars at most).
Both front ends feed one tracker model; events go through a stable sort by timestamp
(the importer's sorter). The original text is read with exact fixed-point timestamps
(as traceconv does): the tables must be equal. Perfetto's own double conversion is
also computed and may differ by 1 ns only (reported, not a failure of ours).
Inputs: every corpus/systrace capture with scheduler lines, and random captures
(seed printed; TC_SCHED_SEED=N replays one). On traceconv before issue 25 (no ftrace events
in the output) every comparison fails."""
import os
import random
import re
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import tclib  # noqa: E402
from test_perfetto import parse_text, one  # noqa: E402

LINE = re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):")

# -- task states (TaskState) --------------------------------------------------

K_PARKED, K_TASKDEAD, K_WAKEKILL, K_WAKING, K_NOLOAD, K_IDLE, K_PREEMPTED, K_INVALID = (
    0x40, 0x80, 0x100, 0x200, 0x400, 0x4000, 0x8000, 0xFFFF)


def from_systrace(s):
    if not s:
        return K_INVALID
    if s[0] == "R":
        return K_PREEMPTED if s == "R+" else 0
    flags = {"S": 1, "D": 2, "T": 4, "t": 8, "X": 0x10, "Z": 0x20, "P": K_PARKED, "x": K_TASKDEAD,
             "K": K_WAKEKILL, "W": K_WAKING, "N": K_NOLOAD, "I": K_IDLE}
    parsed = 0
    for c in s:
        if c == "|":
            continue
        if c not in flags:
            return K_INVALID
        parsed |= flags[c]
    return parsed


def to_raw(parsed):
    if parsed == K_INVALID:
        return 0xFFFF
    if parsed == K_PREEMPTED:
        return 0x800
    ret = parsed & 0x3F
    for flag, bit in ((K_TASKDEAD, 0x40), (K_WAKEKILL, 0x80), (K_WAKING, 0x100), (K_PARKED, 0x200),
                      (K_NOLOAD, 0x400)):
        if parsed & flag:
            ret |= bit
    if parsed & K_IDLE:
        ret |= 0x2 | 0x400
    return ret


def from_raw_44(raw):
    """FromRawPrevState with no kernel version (4.4)."""
    raw &= 0xFFFF
    parsed = raw & 0x3F
    for bit, flag in ((0x40, K_TASKDEAD), (0x80, K_WAKEKILL), (0x100, K_WAKING), (0x200, K_PARKED),
                      (0x400, K_NOLOAD)):
        if raw & bit:
            parsed |= flag
    if parsed == (2 | K_NOLOAD):
        parsed = K_IDLE
    if raw & 0x800:
        parsed |= K_PREEMPTED
    return parsed


def state_string(parsed):
    if parsed == K_INVALID:
        return None
    if not parsed & ~K_PREEMPTED:
        return "R+" if parsed & K_PREEMPTED else "R"
    out = ""
    for flag, c in ((1, "S"), (2, "D"), (4, "T"), (8, "t"), (0x10, "X"), (0x20, "Z"), (K_PARKED, "P"),
                    (K_TASKDEAD, "x"), (K_WAKEKILL, "K"), (K_WAKING, "W"), (K_NOLOAD, "N"), (K_IDLE, "I")):
        if parsed & flag:
            out += c
    return out[:3]


# -- the trackers -------------------------------------------------------------

class Import:
    """The tables Perfetto's importer fills from scheduler events (utid = tid: neither input
    has events that start or end threads)."""

    def __init__(self):
        self.sched = []          # [cpu, ts, dur, tid, end_state, prio]
        self.pending = {}        # cpu -> (row index, last next_pid)
        self.states = []         # [ts, dur, tid, state, cpu]
        self.last = {}           # tid -> row index of its last state
        self.counters = {}       # (name, cpu) -> [(ts, value)]

    def switch(self, cpu, ts, prev_pid, prev_state_raw, next_pid, next_prio):
        end_state = state_string(from_raw_44(prev_state_raw))
        if cpu in self.pending:
            idx, last_pid = self.pending[cpu]
            if prev_pid == last_pid:
                self.sched[idx][2] = ts - self.sched[idx][1]
                self.sched[idx][4] = end_state
        self.sched.append([cpu, ts, -1, next_pid, None, next_prio])
        self.pending[cpu] = (len(self.sched) - 1, next_pid)
        data_loss = prev_pid in self.last and self.states[self.last[prev_pid]][3] != "Running"
        self.close(ts, prev_pid, data_loss)
        self.open(ts, prev_pid, end_state, None)
        self.close(ts, next_pid, False)
        self.open(ts, next_pid, "Running", cpu)

    def waking(self, ts, wakee):
        if wakee in self.last and self.states[self.last[wakee]][3] in ("Running", "R"):
            return  # a spurious wakeup: its own table
        self.close(ts, wakee, False)
        self.open(ts, wakee, "R", None)

    def close(self, ts, tid, data_loss):
        if tid in self.last and not data_loss:
            row = self.states[self.last[tid]]
            row[1] = ts - row[0]

    def open(self, ts, tid, state, cpu):
        if tid == 0:
            return  # the swapper
        self.states.append([ts, -1, tid, state, cpu])
        self.last[tid] = len(self.states) - 1

    def counter(self, name, cpu, ts, value):
        self.counters.setdefault((name, cpu), []).append((ts, float(value)))

    def tables(self):
        return ([tuple(r) for r in self.sched], [tuple(r) for r in self.states],
                {k: v for k, v in sorted(self.counters.items())})


def run_events(events):
    """events: (ts, order, fn, args) -> the tables, after the importer's sort."""
    imp = Import()
    for ev in sorted(events, key=lambda e: (e[0], e[1])):
        getattr(imp, ev[2])(*ev[3])
    return imp.tables()


# -- front end 1: the original text, as Perfetto's systrace importer reads it ----

def ftrace_text(data):
    """The ftrace lines of a capture: plain text, TRACE: + zlib, or the first trace-data
    block of systrace HTML that is not a dump (Perfetto reads that one only)."""
    mark = data.find(b"TRACE:\n", 0, 4096)
    if mark >= 0 and not data[mark + 7:mark + 15].startswith(b"# tracer"):
        try:
            return zlib.decompress(data[mark + 7:]).decode("utf-8", errors="replace")
        except zlib.error:
            pass
    text = data.decode("utf-8", errors="replace")
    if "<script class=\"trace-data\"" in text:
        for block in re.findall(r'<script class="trace-data"[^>]*>(.*?)</script', text, re.S):
            b = block.strip()
            if b and not b.startswith(("PROCESS DUMP", "CGROUP DUMP", "{", "[")):
                return block
        return ""
    return text


def exact_ns(ts):
    secs, frac = ts.split(".")
    return int(secs) * 10**9 + int((frac + "000000000")[:9])


def u32(s):
    return int(s) if re.fullmatch(r"\d+", s or "") and int(s) < 2**32 else None


def i32(s):
    return int(s) if re.fullmatch(r"[-+]?\d+", s or "") and -2**31 <= int(s) < 2**31 else None


def args_of(s):
    args = {}
    for tok in [t for t in s.split(" ") if t]:
        if "=" not in tok:
            args["name"] = tok
            continue
        parts = [p for p in tok.split("=") if p]
        if parts:
            args[parts[0]] = parts[-1] if len(parts) > 1 else ""
    return args


def text_events(text, exact=True):
    events, float_err = [], 0
    for n, line in enumerate(text.split("\n")):
        line = line.rstrip("\r")
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        m = LINE.search(line)
        if not m:
            continue
        pid, cpu, ts_s, event = int(m.group(1)), int(m.group(3)), m.group(5), m.group(6)
        ts = exact_ns(ts_s) if exact else int(float(ts_s) * 1e9)
        float_err = max(float_err, abs(exact_ns(ts_s) - int(float(ts_s) * 1e9)))
        a = args_of(line[m.end():].strip())
        if event == "sched_switch":
            pp, pr, np_, nr = u32(a.get("prev_pid")), i32(a.get("prev_prio")), u32(a.get("next_pid")), i32(a.get("next_prio"))
            if None in (pp, pr, np_, nr):
                continue
            raw = to_raw(from_systrace(a.get("prev_state", "")))
            events.append((ts, n, "switch", (cpu, ts, pp, raw, np_, nr)))
        elif event == "sched_waking":
            wakee = u32(a.get("pid"))
            if wakee is not None:
                events.append((ts, n, "waking", (ts, wakee)))
        elif event in ("cpu_frequency", "cpu_idle"):
            c, state = u32(a.get("cpu_id")), a.get("state")
            if c is not None and state is not None:
                events.append((ts, n, "counter", ("cpufreq" if event == "cpu_frequency" else "cpuidle", c, ts, float(state))))
    return events, float_err


# -- front end 2: our perfetto output, decoded by protoc with the upstream schema ----

def proto_events(packets):
    events, order = [], 0
    for pk in packets:
        for bundle in pk.get("ftrace_events", []):
            cpu = one(bundle, "cpu")
            for ev in bundle.get("event", []):
                ts, pid = one(ev, "timestamp"), one(ev, "pid", 0)
                order += 1
                if "sched_switch" in ev:
                    s = ev["sched_switch"][0]
                    events.append((ts, order, "switch", (cpu, ts, one(s, "prev_pid", 0), one(s, "prev_state", 0),
                                                         one(s, "next_pid", 0), one(s, "next_prio", 0))))
                elif "sched_waking" in ev:
                    events.append((ts, order, "waking", (ts, one(ev["sched_waking"][0], "pid", 0))))
                elif "cpu_frequency" in ev or "cpu_idle" in ev:
                    key = "cpu_frequency" if "cpu_frequency" in ev else "cpu_idle"
                    f = ev[key][0]
                    events.append((ts, order, "counter", ("cpufreq" if key == "cpu_frequency" else "cpuidle",
                                                          one(f, "cpu_id", 0), ts, one(f, "state", 0))))
    return events


def decode(ctx, path):
    with open(path, "rb") as f:
        r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                        "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], stdin=f)
    if r is None or not ctx.check(r.returncode == 0, f"protoc cannot decode {path}: {r.stderr[:300]!r}"):
        return None
    return parse_text(r.stdout.decode("utf-8", errors="replace")).get("packet", [])


def compare(ctx, name, src):
    with open(src, "rb") as f:
        text = ftrace_text(f.read())
    want_events, float_err = text_events(text)
    if not want_events:
        return False
    out, _ = ctx.convert(src, "perfetto", os.path.join(ctx.work, os.path.basename(src) + ".pftrace"))
    packets = decode(ctx, out) if out else None
    if packets is None:
        return True
    want, got = run_events(want_events), run_events(proto_events(packets))
    same = True
    for what, w, g in zip(("sched", "thread_state", "counter"), want, got):
        same &= w == g
        if not ctx.check(w == g, f"{name}: the {what} table differs from Perfetto's import of the text "
                                 f"({len(g)} rows, want {len(w)})"):
            wl, gl = (list(w.items()) if isinstance(w, dict) else w), (list(g.items()) if isinstance(g, dict) else g)
            for i, (a, b) in enumerate(zip(wl, gl)):
                if a != b:
                    print(f"  first difference, row {i}: want {a}, got {b}")
                    break
    ctx.check(float_err <= 1, f"{name}: Perfetto's double reading of the timestamps is {float_err} ns off")
    if same:
            print(f"{name}: {len(want[0])} sched rows, {len(want[1])} thread states, "
              f"{sum(len(v) for v in want[2].values())} counter values agree"
              f"{' (Perfetto reads some timestamps 1 ns early through a double)' if float_err else ''}")
    return True


# -- random captures ------------------------------------------------------------

STATES = ["S", "D", "R", "R+", "I", "D|K", "X", "Z", "T", "t", "P", "W", "N", "x", "K", "S|W", "", "Q", "RS"]


def random_capture(rng, n):
    """A capture with a plausible scheduler: per CPU a running task; switches (mostly
    consistent, sometimes not), wakings of any thread, frequencies and idle states;
    strictly increasing timestamps (the importer's sort of equal ones is its own)."""
    tids = [0] + rng.sample(range(100, 40000), rng.randint(2, 30))
    ncpu = rng.randint(1, 8)
    cur = {c: rng.choice(tids) for c in range(ncpu)}
    lines, ts = ["# tracer: nop", "#"], rng.randint(1, 10**6) * 1000
    tgid = rng.random() < 0.5
    for _ in range(n):
        ts += rng.randint(1, 5000) * 1000
        cpu = rng.randrange(ncpu)
        r = rng.random()
        task = cur[cpu]
        comm = "<idle>" if task == 0 else f"t{task}"
        if r < 0.55:
            nxt = rng.choice(tids)
            prev = task if rng.random() < 0.95 else rng.choice(tids)
            pcomm = f"swapper/{cpu}" if prev == 0 else f"t{prev}"
            ncomm = f"swapper/{cpu}" if nxt == 0 else f"t{nxt}"
            body = (f"sched_switch: prev_comm={pcomm} prev_pid={prev} prev_prio={rng.choice([120, 98, 130])} "
                    f"prev_state={rng.choice(STATES)} ==> next_comm={ncomm} next_pid={nxt} next_prio={rng.choice([120, 100])}")
            cur[cpu] = nxt
        elif r < 0.8:
            w = rng.choice(tids[1:])
            kind = rng.choice(["sched_waking", "sched_waking", "sched_wakeup", "sched_wakeup_new"])
            body = f"{kind}: comm=t{w} pid={w} prio=120 target_cpu={rng.randrange(ncpu):03d}"
        elif r < 0.9:
            body = f"cpu_frequency: state={rng.choice([300000, 1200000, 2400000])} cpu_id={rng.randrange(ncpu)}"
        elif r < 0.97:
            body = f"cpu_idle: state={rng.choice([0, 1, 2, 4294967295])} cpu_id={rng.randrange(ncpu)}"
        else:
            w = rng.choice(tids[1:])
            body = f"task_rename: pid={w} oldcomm=t{w} newcomm=n{w} oom_score_adj=0"
        col = "(-----) " if tgid else ""
        lines.append(f"{comm:>16}-{task:<5} {col}[{cpu:03d}] d..2 {ts // 10**9}.{ts % 10**9 // 1000:06d}: {body}")
    return "\n".join(lines) + "\n"


def main():
    ctx = tclib.Ctx()
    env_seed = os.environ.get("TC_SCHED_SEED", "").strip()
    seed = int(env_seed) if env_seed else None
    compared = 0
    for src in ctx.corpus_files("systrace"):
        compared += compare(ctx, os.path.basename(src), src)
    ctx.check(compared >= 2, f"corpus captures with scheduler data compared: {compared}")
    seeds = [seed] if seed is not None else [random.randrange(2**32) for _ in range(6)]
    for s in seeds:
        rng = random.Random(s)
        path = os.path.join(ctx.work, f"random-{s}.txt")
        with open(path, "w") as f:
            f.write(random_capture(rng, rng.randint(50, 3000)))
        print(f"random capture, seed {s} (replay: TC_SCHED_SEED={s})")
        compare(ctx, f"random seed {s}", path)
    ctx.done()


if __name__ == "__main__":
    main()
