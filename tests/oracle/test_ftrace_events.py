#!/usr/bin/env python3
"""Every ftrace event of a systrace capture reaches the perfetto output (issue 35, item 4).

Each capture is converted with -o perfetto and the output decoded by protoc with the upstream
schema (third_party/perfetto). Checked against what this test reads from the input itself:
1. Per event name, the FtraceEvents of the output equal the capture's event lines: a line is
   found by Perfetto's own line regex (systrace_line_tokenizer.cc), HTML pages are read with
   Python's html.parser (the trace-data elements' text); atrace payloads (B|, E, C|, ...) are
   left aside (they are track events), the kernel's print events that are no atrace payload
   (free text, clock-sync markers) count as `print`. An event FtraceEvent has a member for is
   that member, any other a GenericFtraceEvent named after it.
2. corpus/systrace/kernel-events.txt, by value (its facts come from gen.py's model): binder
   transactions (debug_id, target_node, to_proc, to_thread, reply, flags, code), blocked
   reasons (pid, io_wait, caller resolved through the interned kernel symbols as Perfetto
   resolves it), CPU frequency limits, rss_stat (member, size), suspend_resume (action, val,
   start), workqueue functions (interned symbols), and the vendor's events as generic events
   with every field (numbers as numbers, the rest as text).
3. corpus/systrace/systrace.html: its PROCESS DUMP reaches ProcessTree packets: every process
   (pid, ppid, name) and every thread (tid, tgid, name) of the dump, the thread whose dump row
   disagrees with its lines in the lines' process; the reader's warning says so. The same for
   old-thread-list.txt, old systrace's `ps -t` table appended to the ftrace text. The captures
   without a dump place their threads in the ProcessTree by their TGID column or payload pid.
4. Random captures (seeded, printed; TC_FTRACE_SEED=N replays one) of real events' forms with
   random values and hostile details: the counts of 1 hold and protoc decodes the output.
On traceconv before issue 35 (kernel events counted, not converted) 1 fails for every capture."""
import collections
import html.parser
import os
import random
import re
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import tclib  # noqa: E402
from test_perfetto import decode  # noqa: E402

# Perfetto's line regex (systrace_line_tokenizer.cc, current), the event name its last group
LINE = re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):(.*)$")
ATRACE = re.compile(r"\s*(?:[BCSFINGH]\||E\s*$|E\|)")
PRINTS = ("tracing_mark_write", "0", "print")


class TraceData(html.parser.HTMLParser):
    """The text of a page's <script class="trace-data"> elements (html.parser keeps script
    content raw and skips comments, as a browser does)."""

    def __init__(self):
        super().__init__(convert_charrefs=False)
        self.blocks, self.inside = [], False

    def handle_starttag(self, tag, attrs):
        classes = (dict(attrs).get("class") or "").split()
        self.inside = tag == "script" and "trace-data" in classes
        if self.inside:
            self.blocks.append("")

    def handle_endtag(self, tag):
        self.inside = False

    def handle_data(self, data):
        if self.inside:
            self.blocks[-1] += data


def input_text(path):
    with open(path, "rb") as f:
        raw = f.read()
    if raw.startswith(b"TRACE:\n") and not raw[7:].startswith(b"#"):
        raw = zlib.decompress(raw[7:])  # atrace -z
    data = raw.decode("utf-8", errors="replace")
    if data.lstrip().lower().startswith(("<!doctype", "<html")):
        p = TraceData()
        p.feed(data)
        return "\n".join(p.blocks)
    return data


def input_counts(path):
    """{event name: lines} of the capture's kernel events, as Perfetto's tokenizer finds lines."""
    counts = collections.Counter()
    for line in input_text(path).splitlines():
        if line.lstrip().startswith("#"):
            continue
        m = LINE.search(line)
        if not m:
            continue
        event, details = m.group(6), m.group(7)[1:] if m.group(7).startswith(" ") else m.group(7)
        if event in PRINTS:
            payload = details.lstrip()
            if event == "print":
                for pre in ("tracing_mark_write: ", "0: "):
                    if payload.startswith(pre):
                        payload = payload[len(pre):]
            if ATRACE.match(payload):
                continue
            event = "print"
        counts[event] += 1
    return counts


def ftrace_events(packets):
    for p in packets or []:
        for b in p.get("ftrace_events", []):
            for e in b.get("event", []):
                yield e


def member_of(e):
    keys = [k for k in e if k not in ("timestamp", "pid")]
    return keys[0] if len(keys) == 1 else None


def output_counts(packets):
    counts = collections.Counter()
    for e in ftrace_events(packets):
        k = member_of(e)
        if k == "generic":
            k = e["generic"][0]["event_name"][0]
        counts[k] += 1
    return counts


def convert(ctx, src, label, quiet=True):
    out = os.path.join(ctx.work, re.sub(r"[^\w.-]", "_", label) + ".pftrace")
    r = ctx.run((["-q"] if quiet else []) + ["-f", "-o", "perfetto", src, out])
    if not ctx.check(r.returncode == 0, f"{label}: exit {r.returncode}: {r.stderr.decode(errors='replace')[-400:]}"):
        return None, ""
    return decode(ctx, out), r.stderr.decode(errors="replace")


def compare_counts(ctx, label, src):
    want = input_counts(src)
    packets, _ = convert(ctx, src, label)
    if packets is None:
        return None
    got = output_counts(packets)
    ctx.eq(dict(got), dict(want), f"{label}: FtraceEvents per event name vs the input's event lines")
    return packets


def symbols(packets):
    """The kernel symbols interned on the process sequence: iid -> text."""
    out = {}
    for p in packets:
        for d in p.get("interned_data", []):
            for s in d.get("kernel_symbols", []):
                out[s["iid"][0]] = s["str"][0]
    return out


def members(packets, name):
    return [e[name][0] for e in ftrace_events(packets) if name in e]


def v(msg, field, default=0):
    return msg.get(field, [default])[0]


def kernel_values(ctx, packets, facts):
    label = "kernel-events.txt"
    got = [[v(b, "debug_id"), v(b, "target_node"), v(b, "to_proc"), v(b, "to_thread"), v(b, "reply"), v(b, "flags"),
            v(b, "code")] for b in members(packets, "binder_transaction")]
    ctx.eq(sorted(got), sorted(facts["binder"]), f"{label}: binder transactions as Perfetto needs them for flows")
    syms = symbols(packets)
    got = [[v(b, "pid"), v(b, "io_wait"), syms.get(v(b, "caller"), "?")] for b in members(packets, "sched_blocked_reason")]
    ctx.eq(sorted(got), sorted(facts["blocked"]), f"{label}: blocked reasons, the caller through the interned kernel symbols")
    got = [syms.get(v(w, "function"), "?") for w in members(packets, "workqueue_execute_start")]
    ctx.eq(sorted(got), sorted(facts["workqueue"]), f"{label}: workqueue functions through the interned kernel symbols")
    got = [[v(b, "min_freq"), v(b, "max_freq"), v(b, "cpu_id")] for b in members(packets, "cpu_frequency_limits")]
    ctx.eq(sorted(got), sorted(facts["limits"]), f"{label}: CPU frequency limits (min=/max= and min_freq=/max_freq= forms)")
    got = [[v(b, "member"), v(b, "size")] for b in members(packets, "rss_stat")]
    ctx.eq(sorted(got), sorted(facts["rss"]), f"{label}: rss_stat member (member= and type=MM_* forms) and size (its B unit off)")
    got = [[v(b, "action", ""), v(b, "val"), v(b, "start")] for b in members(packets, "suspend_resume")]
    ctx.eq(sorted(got), sorted(facts["suspend"]), f"{label}: suspend_resume from 'action[val] begin|end'")
    cpus = [v(b, "cpu") for b in members(packets, "workqueue_queue_work")]
    ctx.check(-1 in cpus and all(isinstance(c, int) for c in cpus),
              f"{label}: cpu=4294967295 (an int32 printed %u) is -1, as Perfetto's recorder stores it: {cpus[:6]}")
    generic = []
    for g in members(packets, "generic"):
        if v(g, "event_name", "") != "vendor_gpu_busy":
            continue
        fields = {}
        for f in g.get("field", []):
            fields[v(f, "name", "")] = v(f, "int_value", None) if "int_value" in f else (
                v(f, "uint_value", None) if "uint_value" in f else v(f, "str_value", None))
        generic.append(["vendor_gpu_busy", fields])
    key = lambda g: sorted(g[1].items())  # noqa: E731 (CPU bundles: the order is per CPU)
    ctx.eq(sorted(generic, key=key), sorted(facts["vendor"], key=key),
           f"{label}: an event no schema has: a generic event with every field")
    text = [v(g, "field", {}) for g in members(packets, "generic") if v(g, "event_name", "") == "sde_evtlog"]
    ctx.check(len(text) == 24 and all(v(t, "name", "") == "text" for t in text),
              f"{label}: a text of no key=value is one field 'text' of its generic event")


def process_tree(ctx, label, packets, err, facts):
    procs, threads = {}, {}
    for p in packets:
        for t in p.get("process_tree", []):
            for pr in t.get("processes", []):
                procs[str(v(pr, "pid"))] = [v(pr, "ppid", None), v(pr, "cmdline", None)]
            for th in t.get("threads", []):
                threads[str(v(th, "tid"))] = [v(th, "tgid", None), v(th, "name", None)]
    dump = facts["dump"]
    for pid, (ppid, name) in dump["processes"].items():
        ctx.eq(procs.get(pid), [ppid, name], f"{label}: process {pid} of the PROCESS DUMP in the ProcessTree")
    for tid, (pid, name) in dump["threads"].items():
        ctx.eq(threads.get(tid), [pid, name], f"{label}: thread {tid} of the PROCESS DUMP in the ProcessTree")
    ctx.eq(tclib.parse_figures(err).get("process-dump-disagrees", 0), dump["disagree"],
           f"{label}: a dump row that disagrees with the lines is said: {err[-300:]}")
    ctx.eq(tclib.parse_figures(err).get("bad-line", 0), 0, f"{label}: every row of the listing is read")


def tgid_tree(ctx, label, packets, facts):
    """A capture without a dump: the ProcessTree still places each thread the input placed (its
    TGID column, an atrace payload's pid), as trace processor's import of the text does."""
    threads = {}
    for p in packets:
        for t in p.get("process_tree", []):
            for th in t.get("threads", []):
                threads[str(v(th, "tid"))] = v(th, "tgid", None)
    for tid, (name, pid) in facts["threads"].items():
        ctx.eq(threads.get(tid), pid, f"{label}: thread {tid} ({name}) in process {pid} in the ProcessTree")


# -- random captures --------------------------------------------------------------------

FORMS = [  # (event, details) with {n} a random number, {h} hex digits, {w} a word
    ("binder_transaction", "transaction={n} dest_node={n} dest_proc={n} dest_thread={n} reply={b} flags=0x{h} code=0x{h}"),
    ("binder_transaction_received", "transaction={n}"),
    ("sched_blocked_reason", "pid={n} iowait={b} caller={w}+0x{h}/0x{h}"),
    ("irq_handler_exit", "irq={n} ret={w}"),
    ("softirq_entry", "vec={n} [action={w}]"),
    ("workqueue_execute_start", "work struct {h}: function {w}"),
    ("workqueue_execute_end", "work struct {h}"),
    ("cpu_frequency_limits", "min={n} max={n} cpu_id={n}"),
    ("suspend_resume", "{w}[{n}] {w}"),
    ("rss_stat", "mm_id={n} curr={b} type={w} size={n}B"),
    ("task_newtask", "pid={n} comm={w} {w} clone_flags={h} oom_score_adj=-{n}"),
    ("i2c_write", "i2c-{n} #{n} a={h} f={h} l={n} [{h}-{h}]"),
    ("clock_set_rate", "{w} state={n} cpu_id={n}"),
    ("vendor_{w}", "a={n} b=-{n} c=0x{h} d={w}"),
    ("{w}", "{w} {w}={w}= ={n}"),
    ("tracing_mark_write", "{w} {w} {n}"),
    ("0", "{w}"),
    ("print", "0x{h}: {w}"),
    ("mm_vmscan_direct_reclaim_begin", "order={n} may_writepage={b} gfp_flags={w}|{w}"),
    ("sde_evtlog", "{n}|{w}:{n}|{h}"),
    ("binder_transaction", ""),
    ("irq_handler_entry", "irq=99999999999999999999999 name={w}"),
    ("ion_heap_grow", "heap_name={w}, len={n}, total_allocated=-{n}"),
]


def random_capture(rng, lines):
    words = ["x", "handled", "unhandled", "MM_ANONPAGES", "begin", "end", "futex_wait", "a b", "é", "\\", "==",
             "[wlan]", "0x", "-", "%s", "4294967296", "18446744073709551616"]

    def fill(t):
        t = re.sub(r"\{n\}", lambda _: str(rng.choice([0, 1, 7, 255, 65535, 2**31 - 1, 2**31, 2**32 - 1, 2**32,
                                                          2**63 - 1, rng.randrange(10**6)])), t)
        t = re.sub(r"\{h\}", lambda _: "%x" % rng.choice([0, 0xff, 0xffffff83b8f89238, rng.randrange(2**40)]), t)
        t = re.sub(r"\{b\}", lambda _: str(rng.randrange(2)), t)
        return re.sub(r"\{w\}", lambda _: rng.choice(words), t)
    out = ["# tracer: nop\n", "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"]
    ts = 1000.0
    for i in range(lines):
        event, details = rng.choice(FORMS)
        event = fill(event).replace(" ", "_").replace(":", "_") or "e"
        if event in ("é", "\\", "==", "-", "%s", "a_b", "[wlan]", "0x"):
            event = "vendor" + str(i % 3)
        tid = rng.choice([1, 42, 4242, 2**31 - 1])
        ts += rng.randrange(1, 5000) / 1e6
        tgid = rng.choice([f"{tid:>5}", "-----"])
        out.append(f"{'task' + str(tid % 7):>16}-{tid:<5} ({tgid}) [{rng.randrange(8):03d}] d..2 {ts:.6f}: "
                   f"{event}: {fill(details)}\n")
    return "".join(out)


def main():
    ctx = tclib.Ctx()
    facts = ctx.corpus_facts("systrace")
    checked = 0
    for label, src, f in ctx.corpus_inputs("systrace"):
        if label.endswith(("linuxperfdata.html", "split.html")):
            continue  # legacy pages: test_systrace_reader compares them with the text they hold
        packets = compare_counts(ctx, label, src)
        checked += packets is not None
        name = os.path.basename(src)
        if packets is not None and name == "kernel-events.txt":
            kernel_values(ctx, packets, facts[name])
        if packets is not None and "threads" in f and "dump" not in f:
            tgid_tree(ctx, name, packets, f)
        if packets is not None and "dump" in f:
            _, err = convert(ctx, src, label + ".again", quiet=False)
            process_tree(ctx, name, packets, err, f)
    ctx.check(checked >= 8, f"corpus captures compared: {checked}")
    ke = sum(input_counts(os.path.join(ctx.corpus, "systrace", "kernel-events.txt")).values())
    ctx.check(ke > 600, f"kernel-events.txt holds the kernel's events: {ke} lines")
    env_seed = os.environ.get("TC_FTRACE_SEED", "").strip()
    seeds = [int(env_seed)] if env_seed else [random.randrange(2**32) for _ in range(4)]
    for s in seeds:
        rng = random.Random(s)
        path = os.path.join(ctx.work, f"random-{s}.txt")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(random_capture(rng, rng.randint(100, 2000)))
        print(f"random capture, seed {s} (replay: TC_FTRACE_SEED={s})")
        compare_counts(ctx, f"random seed {s}", path)
    ctx.done()


if __name__ == "__main__":
    main()
