"""Issue 22, the readers' items (13, 14, 19): what a reader finds is said, never silently
dropped or made up. Each input is built here; each expectation is computed from how it is
built (file sizes, counts written), not taken from traceconv's output.

13. An ART file cut at a record boundary (the key says num-method-calls=3807, the file holds
    1000): a warning "truncated: 1000 of 3807 records" (figure truncated-input), exit 0;
    an error under --strict. Cut inside a record: the same, saying so. The counts come from
    the key section and the file size. A stream whose summary states the count is checked
    after the first pass.
14. Every reader refuses input in which it finds nothing it converts: -i rhea on text, -i
    json on a document without trace events, -i art on a key section with no record, -i ir
    on a header only: exit 1, one line saying "no trace events found", no output.
    JSON: a negative tid is refused (never wrapped to 18446744073709551611); an unpaired
    surrogate (\\ud800) becomes U+FFFD with a counted warning (unpaired-surrogate) instead
    of failing the file, and every name decodes as Python's json decodes it (escapes,
    pairs); out of memory is said as such, not as "not valid JSON here" (under an address
    space limit, not under sanitizers). gzip followed by zero padding (tape/block padding,
    as gzip -d accepts) converts, with the note gzip-zero-padding; other trailing bytes are
    a clear error naming "trailing garbage" and their offset.
19. A systrace capture of scheduler events only converts (exit 0); a writer that cannot
    show them (json) says what it left out, as a note: "kernel events not shown in json: 116
    (sched_switch 80, sched_wakeup 36)" (figures sched-events, sched-events-not-shown;
    --strict accepts it). A capture of other kernel events only converts the same way, each
    a kernel event (the perfetto output shows them: protoc decodes 5 irq_handler_entry
    messages), the json output saying so by name: "kernel events not shown in json: 5
    (irq_handler_entry 5)"; --strict accepts it.
20. Hostile scheduler lines (a pid that is not a number or beyond 2^31-1, a prio beyond
    int32, missing fields, a frequency beyond 32 bits, a CPU beyond Perfetto's 1023) are
    each one bad-line warning through every writer; the good line beside them, with
    markup in its names and a negative prio, reaches the perfetto output as it is
    (protoc decodes it with the upstream schema).
The library call tc_conv_open_pair with the halves swapped is in tests/unit/open_pair.c."""
import gzip
import json
import os
import random
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def s(b):
    return b.decode("utf-8", errors="replace")


def one_error(ctx, r, what, words):
    err = s(r.stderr).strip()
    lines = err.splitlines()
    ctx.eq(r.returncode, 1, f"{what}: exit status ({err[:300]})")
    ctx.check(len(lines) == 1 and words in err, f"{what}: one line saying {words!r}: {err[:400]!r}")


# -- 13: ART cut at a record boundary ----------------------------------------------------------

def art_layout(path):
    """(bytes up to the data, record size, num-method-calls) from the file itself."""
    with open(path, "rb") as f:
        data = f.read()
    key_end = data.index(b"*end\n") + 5
    declared = int(re.search(rb"\nnum-method-calls=(\d+)\n", data[:key_end]).group(1))
    slow = data[key_end:key_end + 32]
    assert slow[:4] == b"SLOW" and slow[4] == 3
    offset = int.from_bytes(slow[6:8], "little")
    rec = int.from_bytes(slow[16:18], "little")
    return data, key_end + offset, rec, declared


def check_art_truncated(ctx):
    data, start, rec, declared = art_layout(os.path.join(ctx.corpus, "app-startup.trace"))
    ctx.check(len(data) == start + declared * rec, "the corpus file holds num-method-calls records")
    for name, keep, tail in (("boundary", 1000, 0), ("inside", 1000, 5)):
        path = os.path.join(ctx.work, f"cut-{name}.trace")
        with open(path, "wb") as f:
            f.write(data[:start + keep * rec + tail])
        out = os.path.join(ctx.work, f"cut-{name}.json")
        r = ctx.run(["-f", "-o", "json", path, out])
        err = s(r.stderr)
        ctx.eq(r.returncode, 0, f"cut {name}: converts what is there ({err.strip()[:300]})")
        ctx.check(f"truncated: {keep} of {declared} records" in err,
                  f"cut {name}: the warning says {keep} of {declared} records: {err.strip()[:400]}")
        ctx.eq(tclib.parse_figures(err).get("truncated-input"), 1, f"cut {name}: one truncated-input figure")
        ctx.eq(tclib.parse_figures(err).get("records"), keep, f"cut {name}: the records there")
        if tail:
            ctx.check("ends inside the next one" in err, f"cut inside a record: said so: {err.strip()[:400]}")
        os.remove(out)
        r = ctx.run(["--strict", "-f", "-o", "json", path, out])
        one_error(ctx, r, f"cut {name} --strict", f"truncated: {keep} of {declared} records")
        ctx.check(not os.path.exists(out), f"cut {name} --strict: no output")
    # the whole file: no warning of the kind
    r = ctx.run(["--strict", "-f", "-o", "json", os.path.join(ctx.corpus, "app-startup.trace"),
                 os.path.join(ctx.work, "whole.json")])
    ctx.eq(r.returncode, 0, f"the whole file under --strict ({s(r.stderr).strip()[:300]})")


def check_stream_count(ctx):
    """A stream whose summary states num-method-calls (as a V2 summary does) and holds fewer."""
    rec = struct.Struct("<HIII")
    line = b"0x4\tcom.example.A\trun\t()V\tA.java\n"
    body = (b"SLOW" + struct.pack("<HHQH", 0xF3, 32, 1000, 14) + b"\0" * 14
            + b"\0\0\x01" + struct.pack("<H", len(line)) + line
            + b"\0\0\x02" + struct.pack("<HH", 1, 4) + b"main")
    records = [rec.pack(1, 4, 10 * i, 10 * i) + rec.pack(1, 5, 10 * i + 5, 10 * i + 5) for i in range(3)]
    body += b"".join(records)
    for declared, warn in ((6, False), (9, True)):
        summary = (b"*version\n3\nclock=dual\nnum-method-calls=%d\nvm=art\npid=1\n*threads\n1\tmain\n*methods\n*end\n"
                   % declared)
        path = os.path.join(ctx.work, f"stream-{declared}.trace")
        with open(path, "wb") as f:
            f.write(body + b"\0\0\x03" + struct.pack("<I", len(summary)) + summary)
        r = ctx.run(["-f", "-o", "json", path, path + ".json"])
        err = s(r.stderr)
        ctx.eq(r.returncode, 0, f"stream of 6 records saying {declared}: converts ({err.strip()[:300]})")
        ctx.eq("truncated: 6 of 9 records" in err, warn,
               f"stream of 6 records saying {declared}: warned only when fewer: {err.strip()[:300]}")


# -- 14: nothing found ------------------------------------------------------------------------

def check_nothing_found(ctx):
    data, start, _, _ = art_layout(os.path.join(ctx.corpus, "app-startup.trace"))
    inputs = {
        "rhea-text": ("rhea", b"this is not a trace\njust some lines of text\n\n12 monkeys\n"),
        "json-no-events": ("json", b'{"traceEvents": [], "facts": {"a": 1}}'),
        "json-only-metadata": ("json", b'[{"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"x"}}]'),
        "art-no-record": ("art", data[:start]),
        "ir-header-only": ("ir", b"traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0\n"
                                 b'thread 0 tid=5 records=0 name="t"\n'),
        "systrace-comments": ("systrace", b"# tracer: nop\n#\n# nothing here\n"),
    }
    for name, (reader, body) in inputs.items():
        path = os.path.join(ctx.work, name + ".in")
        with open(path, "wb") as f:
            f.write(body)
        out = os.path.join(ctx.work, name + ".json")
        r = ctx.run(["-i", reader, "-o", "json", path, out])
        one_error(ctx, r, f"-i {reader} on {name}", "no trace events found")
        ctx.check(f": {reader}: " in s(r.stderr), f"{name}: the message names the reader {reader}: {s(r.stderr)!r}")
        ctx.check(not os.path.exists(out), f"{name}: no output")


# -- 14: JSON ------------------------------------------------------------------------------

def check_json_ids(ctx):
    for key in ("tid", "pid"):
        ev = {"ph": "X", "pid": 7, "tid": 8, "ts": 1, "dur": 2, "name": "a"}
        ev[key] = -5
        path = os.path.join(ctx.work, f"negative-{key}.json")
        with open(path, "w") as f:
            json.dump({"traceEvents": [ev]}, f)
        out = path + ".out.json"
        r = ctx.run(["-o", "json", path, out])
        one_error(ctx, r, f"negative {key}", f'"{key}" is -5')
        ctx.check("18446744073709551611" not in s(r.stderr), f"negative {key}: never wrapped")
        ctx.check(not os.path.exists(out), f"negative {key}: no output")


def fix_lone(text):
    """What a name must become: U+D800-DFFF left alone by Python's json (a lone surrogate) is U+FFFD."""
    return re.sub("[\ud800-\udfff]", "\ufffd", text).replace("\0", "\ufffd")


def check_json_strings(ctx):
    pieces = ["a", " ", '\\"', "\\\\", "\\/", "\\n", "\\t", "\\u0041", "\\u00e9", "\\ud83d\\ude00", "\\ud800",
              "\\udc00", "\\u20ac", "é", "\\b", "\\f", "\\r"]
    rnd = random.Random(22)
    names = ["lone \\ud800 here", "\\udc00 first", "pair \\ud83d\\ude00 ok"]
    names += ["".join(rnd.choice(pieces) for _ in range(rnd.randint(1, 9))) for _ in range(60)]
    doc = '{"traceEvents":[%s]}' % ",".join(
        '{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":1,"name":"%s"}' % (10 * i, n) for i, n in enumerate(names))
    path = os.path.join(ctx.work, "strings.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(doc)
    want = json.loads(doc)  # the oracle: Python's json decodes the same literals
    lone = sum(len(re.findall("[\ud800-\udfff]", e["name"])) for e in want["traceEvents"])
    out = os.path.join(ctx.work, "strings.out.json")
    r = ctx.run(["-f", "-o", "json", path, out])
    err = s(r.stderr)
    ctx.eq(r.returncode, 0, f"names with unpaired surrogates convert ({err.strip()[:300]})")
    ctx.eq(tclib.parse_figures(err).get("unpaired-surrogate"), lone, "each unpaired surrogate counted")
    ctx.check("half a surrogate pair" in err, f"the warning says what it replaced: {err.strip()[:300]}")
    if r.returncode:
        return
    with open(out, encoding="utf-8") as f:
        got = json.load(f)
    got_names = sorted(e["name"] for e in got["traceEvents"] if e["ph"] == "B")
    ctx.eq(got_names, sorted(fix_lone(e["name"]) for e in want["traceEvents"]), "names as Python's json decodes them")


def check_json_out_of_memory(ctx):
    if tclib.is_sanitized(ctx.traceconv):
        print("SKIPPED CHECK: sanitized build (no address space limit under ASan)")
        return
    n = 150 << 20
    path = os.path.join(ctx.work, "bigname.json")
    with open(path, "w") as f:
        f.write('{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":1,"name":"')
        f.write("a" * n)
        f.write('"}]}')
    limit = os.path.getsize(path) + (100 << 20)  # the mapped file fits, a copy of the name does not
    r = subprocess.run(["prlimit", f"--as={limit}", ctx.traceconv, "--max-string", "1G", "--max-json", "1G", "-f",
                        "-o", "json", path, os.path.join(ctx.work, "bigname.out.json")], capture_output=True)
    err = s(r.stderr).strip()
    ctx.check(r.returncode == 1 and "out of memory" in err and "not valid JSON" not in err,
              f"out of memory is said as such (exit {r.returncode}): {err[:300]}")
    os.remove(path)


# -- 14: gzip padding ------------------------------------------------------------------------

def check_gzip_padding(ctx):
    src = os.path.join(ctx.corpus, "app-startup.trace")
    with open(src, "rb") as f:
        packed = gzip.compress(f.read())
    for name, tail, ok in (("zero padding", b"\0" * 4096, True), ("one zero byte", b"\0", True),
                           ("garbage", b"hello", False), ("zeros then garbage", b"\0" * 100 + b"x", False)):
        path = os.path.join(ctx.work, "padded.trace.gz")
        with open(path, "wb") as f:
            f.write(packed + tail)
        out = os.path.join(ctx.work, "padded.json")
        if os.path.exists(out):
            os.remove(out)
        for chunk in ([], ["--read-chunk", "1"]):  # as a file and as a stream read a byte at a time
            what = f"{name}{' (read-chunk 1)' if chunk else ''}"
            r = ctx.run(["-f", *chunk, "-o", "json", path, out])
            err = s(r.stderr)
            if ok:
                ctx.eq(r.returncode, 0, f"{what}: converts ({err.strip()[:300]})")
                ctx.eq(tclib.parse_figures(err).get("gzip-zero-padding"), 1, f"{what}: the note gzip-zero-padding")
                ctx.eq(tclib.parse_figures(err).get("records"), 3807, f"{what}: every record")
            else:
                bad = len(packed) + tail.index(next(b for b in tail if b)) if any(tail) else len(packed)
                one_error(ctx, r, what, "trailing garbage")
                ctx.check(f"offset {bad:#x}:" in err, f"{what}: names the offset {bad:#x}: {err.strip()}")


# -- 19: scheduler events only -----------------------------------------------------------------

def check_sched_only(ctx):
    lines = ["# tracer: nop", "#"]
    t = 100.0
    for i in range(80):
        lines.append("          <idle>-0     [002] d..2   %.6f: sched_switch: prev_comm=swapper/2 prev_pid=0 "
                     "prev_prio=120 prev_state=R ==> next_comm=app next_pid=%d next_prio=120" % (t, 1000 + i % 3))
        t += 0.001
    for i in range(36):
        lines.append("           app-1000  [001] d..3   %.6f: sched_wakeup: comm=worker pid=1001 prio=120 "
                     "target_cpu=001" % t)
        t += 0.001
    path = os.path.join(ctx.work, "sched-only.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    out = os.path.join(ctx.work, "sched-only.json")
    r = ctx.run(["-f", "-o", "json", path, out])
    err = s(r.stderr)
    ctx.eq(r.returncode, 0, f"a scheduler-only capture converts ({err.strip()[:300]})")
    ctx.check("kernel events not shown in json: 116 (sched_switch 80, sched_wakeup 36)" in err,
              f"the json output says what it leaves out: {err.strip()[:400]}")
    figs = tclib.parse_figures(err)
    ctx.eq((figs.get("events"), figs.get("sched-events-not-shown")), (116, 116), "the figures count them")
    if r.returncode == 0:
        with open(out) as f:
            json.load(f)  # a valid (empty) trace, by Python's json
    r = ctx.run(["--strict", "-f", "-o", "json", path, out + "2"])
    ctx.eq(r.returncode, 0, "--strict: what a writer cannot show is a note, not a warning")
    # kernel events of other kinds: converted (perfetto shows them), named where left out
    path = os.path.join(ctx.work, "irq-only.txt")
    with open(path, "w") as f:
        f.write("".join("          <idle>-0     [002] d.h2   %.6f: irq_handler_entry: irq=%d name=arch_timer\n"
                        % (100 + i / 1000, i) for i in range(5)))
    r = ctx.run(["-f", "-o", "json", path, os.path.join(ctx.work, "irq-only.json")])
    err = s(r.stderr)
    ctx.eq(r.returncode, 0, f"a capture of other kernel events only converts ({err.strip()[:300]})")
    ctx.check("kernel events not shown in json: 5 (irq_handler_entry 5)" in err,
              f"the json output says what it left out, by name: {err}")
    figs = tclib.parse_figures(err)
    ctx.eq((figs.get("events"), figs.get("sched-events-not-shown"), figs.get("not-converted")), (5, 5, None),
           "the figures count them as kernel events, converted")
    r = ctx.run(["--strict", "-f", "-o", "json", path, os.path.join(ctx.work, "irq-only.json2")])
    ctx.eq(r.returncode, 0, "--strict: what a writer cannot show is a note, not a warning")
    pf = os.path.join(ctx.work, "irq-only.pftrace")
    ctx.run(["-q", "-f", "-o", "perfetto", path, pf], check_rc=0)
    with open(pf, "rb") as f:
        d = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                        "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], stdin=f)
    ctx.eq(d and d.stdout.decode().count("irq_handler_entry {"), 5, "the perfetto output holds the 5 irq_handler_entry")


# -- 20: hostile scheduler lines ------------------------------------------------------------------

SCHED_GOOD = ("   <b>x</b>-77    [001] d..2   200.000001: sched_switch: prev_comm=<b>x</b> prev_pid=77 prev_prio=120 "
              "prev_state=D|K ==> next_comm=\"'&<script> next_pid=78 next_prio=-5\n")
SCHED_BAD = [  # each one line that a field makes unusable: skipped with a bad-line warning
    "sched_switch: prev_comm=a prev_pid=77 prev_prio=120 prev_state=S ==> next_comm=b next_pid=abc next_prio=120",
    "sched_switch: prev_comm=a prev_pid=99999999999 prev_prio=120 prev_state=S ==> next_comm=b next_pid=1 next_prio=1",
    "sched_switch: prev_comm=a prev_pid=77 prev_prio=120 prev_state=S ==> next_comm=b next_pid=1 next_prio=-2147483649",
    "sched_switch: prev_comm=a prev_state=S ==> next_comm=b",
    "sched_waking: comm=a prio=120 target_cpu=001",
    "sched_wakeup: comm=a pid=12 prio=x target_cpu=001",
    "cpu_frequency: state=99999999999 cpu_id=0",
    "cpu_frequency: state=300000 cpu_id=5000",
    "cpu_idle: state=1",
    "task_rename: oldcomm=a newcomm=b oom_score_adj=0",
    "sched_process_exit: comm=a pid=-3 prio=120",
]


def check_sched_hostile(ctx):
    lines = ["# tracer: nop", SCHED_GOOD.rstrip("\n")]
    lines += ["   a-90    [001] d..2   200.%06d: %s" % (10 + i, body.replace("=77 ", "=90 "))
              for i, body in enumerate(SCHED_BAD)]
    lines.append("   a-90    [5000] d..2   200.000100: sched_switch: prev_comm=a prev_pid=90 prev_prio=120 "
                 "prev_state=S ==> next_comm=b next_pid=91 next_prio=120")  # CPU beyond Perfetto's 1024
    path = os.path.join(ctx.work, "sched-hostile.systrace")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    for fmt in ("perfetto", "json", "systrace", "folded", "pprof", "report", "report-html", "ir", "speedscope",
                "flamegraph", "dot"):
        out = os.path.join(ctx.work, "sched-hostile." + tclib.WRITER_EXT.get(fmt, fmt))
        r = ctx.run(["-f", "-o", fmt, path, out])
        err = s(r.stderr)
        ctx.eq(r.returncode, 0, f"hostile sched lines -> {fmt}: converts ({err.strip()[-300:]})")
        ctx.eq(tclib.parse_figures(err).get("bad-line"), len(SCHED_BAD) + 1,
               f"hostile sched lines -> {fmt}: each bad line is one bad-line warning")
        if fmt == "perfetto":
            ctx.check("CPU number above 1023" in err or err.count("line skipped") >= 1, f"the CPU bound is named: {err}")
            r2 = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                             "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], stdin=open(out, "rb"))
            if r2 is not None and ctx.check(r2.returncode == 0, f"protoc decodes the output: {r2.stderr[:300]!r}"):
                text = s(r2.stdout)
                ctx.eq(text.count("sched_switch {"), 1, "the one good sched_switch is written")
                ctx.check("prev_state: 130" in text, f"D|K is the kernel's 0x82: {text[-800:]}")
                ctx.check("next_prio: -5" in text and 'next_comm: "' + '\\"' + "\\'&<script>" + '"' in text and
                          'prev_comm: "<b>x</b>"' in text,
                          f"a negative prio and a comm with markup pass as they are: {text[-800:]}")


def main():
    ctx = tclib.Ctx()
    check_art_truncated(ctx)
    check_stream_count(ctx)
    check_nothing_found(ctx)
    check_json_ids(ctx)
    check_json_strings(ctx)
    check_json_out_of_memory(ctx)
    check_gzip_padding(ctx)
    check_sched_only(ctx)
    check_sched_hostile(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
