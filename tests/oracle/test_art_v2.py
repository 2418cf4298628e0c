#!/usr/bin/env python3
"""ART trace format V2 (ART.md 5) against two independent references.

Twins: a V2 trace and its v3 twin, written by tracegen from one scenario (corpus/art-v2/,
and random scenarios: the seed is printed, TC_V2_SEED=N replays one), convert exactly
alike: folded stacks, Chrome JSON (slices, thread names), pprof as `go tool pprof -raw`
reads it and Perfetto as protoc decodes it with the upstream schema, once the input's name
and format (which legitimately differ: "art V2, Android 16 layout, ..." against "art v3
non-streaming") are taken out. The v3 reader is the independent side: it shares no decoding
with the V2 reader.

Decoder: tests/checkers/artrace_inspect.py (its own V2 decoder, with its own layout and
writer-bug rules) finds the records per thread, thread names, method ids, unknown ids and
entries (thread, method id, ns) that `-o ir` shows.

Bad inputs: cut, wrapped, overlong or oversized V2 files give one line naming the file, the
art-v2 module and an offset, exit 1 and no output; a V2 file cut inside a block converts
what is there with a truncated-input warning.
"""
import json
import os
import random
import re
import struct
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

VARIANTS = ("a16-ns", "a16-us", "a15", "perfetto")
FORMAT_RE = re.compile(r"\((art .*?), clock [\w-]+ -> ")
# Perfetto's clock: the writer counts in the reader's unit (µs for v3 and for V2 in µs, ns for
# V2 in ns), so a V2 ns file's timestamps are written in another unit; its times are compared
# through the other writers (JSON's ts), the rest of its packets line by line.
CLOCK_LINES = re.compile(r"timestamp|clock|unit_multiplier|is_incremental|extra_counter_values|^\s*\}$")


def run_conv(ctx, src, fmt, out):
    r = ctx.run(["-f", "--process-name", "P", "-o", fmt, src, out])
    if not ctx.check(r.returncode == 0, f"{src} -> {fmt}: exit {r.returncode}: {r.stderr.decode(errors='replace')}"):
        return None, ""
    m = FORMAT_RE.search(r.stderr.decode(errors="replace"))
    return out, m.group(1) if m else ""


def neutral(text, src, fmt_text):
    """The output without what names the input: its file name and its format."""
    text = text.replace(os.path.basename(src), "INPUT")
    if fmt_text:
        text = text.replace(fmt_text, "FORMAT").replace(fmt_text.replace("'", "\\'"), "FORMAT")
    return text


def decoded(ctx, fmt, path):
    if fmt == "pprof":
        home = os.path.join(ctx.work, "home")
        os.makedirs(home, exist_ok=True)
        r = ctx.oracle(["go", "tool", "pprof", "-symbolize=none", "-raw", path], env=dict(os.environ, HOME=home))
    elif fmt == "perfetto":
        with open(path, "rb") as f:
            r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                            "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], stdin=f)
    else:
        with open(path, encoding="utf-8") as f:
            return f.read()
    if not ctx.check(r is not None and r.returncode == 0, f"{fmt} oracle on {path}: {r and r.stderr[-300:]}"):
        return None
    return r.stdout.decode("utf-8", errors="replace")


def pprof_samples(text):
    _, samples, locs = tclib.pprof_raw(text)
    return sorted(f"{s[0]} {s[1]} {';'.join(locs.get(i, '?') for i in s[2])} {sorted(s[3].items())}" for s in samples)


def check_twins(ctx, label, v2, v3):
    for fmt, ext in (("folded", "folded"), ("json", "json"), ("pprof", "pb.gz"), ("perfetto", "pftrace")):
        texts, in_ns = [], False
        for src in (v2, v3):
            out = os.path.join(ctx.work, f"{os.path.basename(src)}.{ext}")
            got, fmt_text = run_conv(ctx, src, fmt, out)
            in_ns |= ", ns, " in fmt_text
            text = decoded(ctx, fmt, got) if got else None
            texts.append(neutral(text, src, fmt_text) if text is not None else None)
        if None in texts:
            continue
        if fmt == "perfetto" and in_ns:
            texts = ["\n".join(l for l in t.splitlines() if not CLOCK_LINES.search(l)) for t in texts]
        # Threads enter the tables in the order the files announce them (a V2 stream at its
        # first flush), which orders outputs and numbers pprof's locations and Perfetto's
        # tracks: compared as sets of lines, pprof's samples by their frames' names.
        if fmt == "pprof":
            texts = [pprof_samples(t) for t in texts]
        elif fmt == "perfetto":
            texts = [sorted(l for l in t.splitlines() if not re.search(r"uuid|sequence_id|iid", l)) for t in texts]
        else:
            texts = [sorted(l for l in t.splitlines() if "thread_sort_index" not in l) for t in texts]
        if texts[0] != texts[1]:
            a, b = texts
            first = next((i for i in range(min(len(a), len(b))) if a[i] != b[i]), min(len(a), len(b)))
            ctx.fail(f"{label} -> {fmt}: V2 and v3 twin differ at line {first + 1}: "
                     f"{a[first] if first < len(a) else '<end>'!r} vs {b[first] if first < len(b) else '<end>'!r}")
        else:
            ctx.check(True, "")


def ir_tables(text):
    threads, methods, enters, start = {}, {}, [], 0
    ids = {}
    for line in text.splitlines():
        if line.startswith("thread "):
            m = re.match(r'thread (\d+) tid=(\d+) records=(\d+) name="(.*)"$', line)
            ids[int(m.group(1))] = int(m.group(2))
            threads[int(m.group(2))] = (int(m.group(3)), m.group(4))
        elif line.startswith("method "):
            m = re.match(r"method (\d+) id=0x([0-9a-f]+) defined=(\d)", line)
            methods[int(m.group(1))] = (int(m.group(2), 16), m.group(3) == "1")
        elif line.startswith("B "):
            f = dict(re.findall(r"(\w+)=(-?\d+)", line))
            enters.append([ids[int(f["t"])], methods[int(f["m"])][0], int(f["ts"])])
    return threads, methods, enters


def check_decoder(ctx, label, v2):
    r = ctx.oracle(["python3", ctx.checker("artrace_inspect.py"), v2])
    if not ctx.check(r is not None and r.returncode == 0, f"{label}: artrace_inspect.py failed: {r and r.stderr[-300:]}"):
        return
    facts = json.loads(r.stdout)
    r = ctx.run(["-o", "ir", v2, "-"])
    if not ctx.check(r.returncode == 0, f"{label} -> ir: {r.stderr.decode(errors='replace')}"):
        return
    threads, methods, enters = ir_tables(r.stdout.decode())
    got = {str(tid): n for tid, (n, _) in threads.items() if n}
    ctx.eq(got, facts["records_per_thread"], f"{label}: records per thread (ir vs artrace_inspect)")
    for tid, name in facts["thread_names"].items():
        ctx.eq(threads.get(int(tid), (0, None))[1], name, f"{label}: name of thread {tid}")
    ctx.eq(sorted(i for i, d in methods.values() if d), facts["method_ids"], f"{label}: defined method ids")
    ctx.eq(sum(1 for i, d in methods.values() if not d), facts["unknown_method_ids"], f"{label}: unknown method ids")
    missing = [e for e in facts["enters"] if e[2] is not None]  # one clock, thread-cpu: no wall  # every entry record is a begin of the IR (which may add repairs)
    for e in enters:
        if e in missing:
            missing.remove(e)
    ctx.eq(missing[:5], [], f"{label}: entries (thread, method id, ns) of artrace_inspect missing from the IR")


# ---- random scenarios ---------------------------------------------------------------

def body(rng, methods, depth, budget):
    lines = []
    for _ in range(rng.randint(1, 4)):
        if budget[0] <= 0:
            break
        budget[0] -= 1
        m = rng.choice(methods)
        dur = rng.randint(1, 400)
        if depth < 6 and rng.random() < 0.5:
            lines.append(f"call {m} {{")
            lines += ["  " + x for x in body(rng, methods, depth + 1, budget)]
            lines.append("}")
        else:
            lines.append(f"call {m} {dur}" + (f" cpu={rng.randint(0, 100)}%" if rng.random() < 0.3 else ""))
        if rng.random() < 0.3:
            lines.append(f"gap {rng.randint(1, 50)}")
    return lines


def scenario(rng):
    clock = rng.choice(["dual", "dual", "wall", "thread-cpu"])
    out = [f"version {3 if clock == 'dual' else 2}", f"clock {clock}",
           f"streaming {rng.choice(['yes', 'no'])}", f"pid {rng.randint(100, 40000)}",
           f"start {rng.randint(10 ** 6, 10 ** 11)}", f"order chunked {rng.randint(1, 40)}"]
    methods = []
    for i in range(rng.randint(2, 12)):
        methods.append(f"m{i}")
        src = rng.choice(["F.java", "null", "Other.kt"])
        out.append(f'method m{i} com.ex.C{i % 3} run{i} "(I)V" {src}')
    used = set()
    for i in range(rng.randint(1, 4)):
        while True:
            tid = rng.choice([rng.randint(2, 60000), rng.randint(65536, 4 * 10 ** 6)])
            if tid & 0xFFFF not in used and tid & 0xFFFF:
                used.add(tid & 0xFFFF)
                break
        out.append(f'thread {tid} "T {i}" at={rng.randint(0, 300)} {{')
        out += ["  " + x for x in body(rng, methods, 0, [rng.randint(1, 60)])]
        out.append("}")
    return "\n".join(out) + "\n"


def tracegen(ctx, scn, out, args):
    r = subprocess.run([ctx.tracegen, scn, out, *args], capture_output=True)
    return ctx.check(r.returncode == 0, f"tracegen {scn} {' '.join(args)}: {r.stderr.decode(errors='replace')}")


def random_twins(ctx, n):
    seed = int(os.environ.get("TC_V2_SEED", random.randrange(10 ** 9)))
    print(f"random scenarios: seed {seed} (TC_V2_SEED={seed} replays them)")
    rng = random.Random(seed)
    for i in range(n):
        scn = os.path.join(ctx.work, f"r{i}.scn")
        with open(scn, "w") as f:
            f.write(scenario(rng))
        variant = rng.choice(VARIANTS)
        if variant == "perfetto" and "clock thread-cpu" in open(scn).read():
            variant = "a16-ns"  # 5.4 has one time field, read as wall time (Perfetto's reader): no v3 twin
        args = ["--v2", variant]
        if variant.startswith("a16") and rng.random() < 0.5:
            args += ["--v2-split", str(rng.randint(1, 5))]
        v2, v3 = os.path.join(ctx.work, f"r{i}.trace"), os.path.join(ctx.work, f"r{i}.v3.trace")
        if tracegen(ctx, scn, v2, args) and tracegen(ctx, scn, v3, []):
            label = f"random {i} (seed {seed}, {' '.join(args)})"
            check_twins(ctx, label, v2, v3)
            check_decoder(ctx, label, v2)


WRAP_SCN = """version 3
clock dual
streaming yes
pid 42
start 5000000
order chunked 100000
method a com.ex.A run "()V" A.java
method b com.ex.B leaf "(I)V" B.java
thread 42 main {
  call a {
    repeat 40000 {
      call b 3
    }
  }
}
thread 43 other {
  call b 5
}
"""


def a15_wrapped(ctx):
    """Android 15's u16 counts wrap: one block of 80,002 records (240,003 payload bytes) says
    14,465 and 43,395, and whose declared end lands inside its own records."""
    scn = os.path.join(ctx.work, "wrap.scn")
    with open(scn, "w") as f:
        f.write(WRAP_SCN)
    v2, v3 = os.path.join(ctx.work, "wrap.trace"), os.path.join(ctx.work, "wrap.v3.trace")
    if tracegen(ctx, scn, v2, ["--v2", "a15"]) and tracegen(ctx, scn, v3, []):
        check_twins(ctx, "A15 wrapped block", v2, v3)
        check_decoder(ctx, "A15 wrapped block", v2)


def perfetto_without_tsc(ctx):
    """Perfetto's layout with the header's TSC fields zero (times then in ns, which tracegen's
    1 GHz ticks are): only the method ids prove the layout, and they must."""
    d = os.path.join(ctx.corpus, "art-v2")
    with open(os.path.join(d, "perfetto-layout.trace"), "rb") as f:
        data = bytearray(f.read())
    data[14:30] = bytes(16)
    path = os.path.join(ctx.work, "perfetto-no-tsc.trace")
    with open(path, "wb") as f:
        f.write(data)
    check_twins(ctx, "Perfetto's layout, no TSC in the header", path, os.path.join(d, "perfetto-layout.v3.trace"))


# ---- bad inputs ------------------------------------------------------------------------

def check_refused(ctx, name, data, what):
    path = os.path.join(ctx.work, name)
    with open(path, "wb") as f:
        f.write(data)
    out = os.path.join(ctx.work, name + ".json")
    r = ctx.run(["-o", "json", path, out])
    lines = [l for l in r.stderr.decode(errors="replace").splitlines() if l.strip()]
    ctx.eq(r.returncode, 1, f"{name} ({what}): exit status")
    ctx.eq(len(lines), 1, f"{name} ({what}): stderr lines {lines}")
    msg = lines[0] if lines else ""
    ctx.check(name in msg and ": art-v2:" in msg and "offset 0x" in msg, f"{name} ({what}): message {msg!r}")
    ctx.check(not os.path.exists(out), f"{name} ({what}): output left behind")


def block(tid, payload, n):
    return bytes([2]) + struct.pack("<I", tid) + n.to_bytes(3, "little") + struct.pack("<I", len(payload)) + payload


def leb(v, signed):
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if (not signed and not v) or (signed and ((v == 0 and not byte & 0x40) or (v == -1 and byte & 0x40))):
            return bytes(out + bytes([byte]))
        out.append(byte | 0x80)


def header(version=0xF5):
    return b"SLOW" + struct.pack("<HQ", version, 10 ** 12) + bytes(18)


def bad_inputs(ctx):
    text = b"C\tm\t()V\tF.j\n"
    method = bytes([1]) + struct.pack("<QH", 0x7100000000, len(text)) + text
    good = header() + method + block(7, leb(0x7100000000, True) + leb(5, False) + leb(3, False), 1)
    ok_path = os.path.join(ctx.work, "good.trace")
    with open(ok_path, "wb") as f:
        f.write(good)
    r = ctx.run(["-o", "json", ok_path, "-"])
    ctx.check(r.returncode == 0 and b'"ts":0.005,"tts":0.003,"name":"C.m: ()V"' in r.stdout,
              f"a hand-made V2 file (one entry of C.m at 5 ns, CPU 3 ns): {r.stdout[-400:]!r} {r.stderr!r}")
    check_refused(ctx, "overlong.trace", header() + method + block(7, bytes([0x80] * 11) + b"\0\0", 1),
                  "an 11-byte LEB128")
    check_refused(ctx, "unknown-packet.trace", header() + method + bytes([9, 1, 2, 3]), "packet type 9")
    check_refused(ctx, "past-block.trace", header() + method + block(7, bytes([0x04, 0x05]), 1),
                  "a record running past its block")
    check_refused(ctx, "no-record.trace", header() + method, "no block")
    # a u32 size past the end of the file: cut, kept what is there (the block holds nothing whole)
    huge = header() + method + bytes([2]) + struct.pack("<I", 7) + (1).to_bytes(3, "little") + struct.pack("<I", 2 ** 31)
    check_refused(ctx, "huge-size.trace", huge, "a block size of 2 GiB in a small file")
    # Android 15 (its first block begins with a defined method) whose u16 counts say 6 records in
    # 3 bytes: neither that end nor any wrap of it (+ k * 65536) fits
    summary = b"*version\n5\nclock=dual\nelapsed-time-usec=9\n*end\n"
    a15 = (header() + method + bytes([2]) + struct.pack("<IQII", 7, 0x7100000000, 0, 0) + struct.pack("<HH", 5, 3)
           + bytes([4, 1, 1]) * 3 + bytes([3]) + struct.pack("<H", len(summary)) + summary)
    check_refused(ctx, "a15-wrapped.trace", a15, "an Android 15 block whose u16 size fits nowhere")
    # a sample cut in the middle of its last block: converted, with a warning
    with open(os.path.join(ctx.corpus, "art-v2", "a16-streaming-dual-ns.trace"), "rb") as f:
        data = f.read()
    last = data.rfind(b"\x02", 0, data.rfind(b"*version") - 40)
    cut = os.path.join(ctx.work, "cut.trace")
    with open(cut, "wb") as f:
        f.write(data[:last + 40])
    r = ctx.run(["-o", "folded", cut, "-"])
    err = r.stderr.decode(errors="replace")
    ctx.check(r.returncode == 0 and "truncated-input" in err and r.stdout, f"a V2 file cut inside a block: {err}")


def main():
    ctx = tclib.Ctx()
    d = os.path.join(ctx.corpus, "art-v2")
    names = sorted(f[:-len(".v3.trace")] for f in os.listdir(d) if f.endswith(".v3.trace"))
    ctx.check(len(names) >= 4, f"{d}: {len(names)} V2 samples with a v3 twin")
    for name in names:
        v2, v3 = os.path.join(d, name + ".trace"), os.path.join(d, name + ".v3.trace")
        check_twins(ctx, f"corpus/art-v2/{name}", v2, v3)
        check_decoder(ctx, f"corpus/art-v2/{name}", v2)
    a15_wrapped(ctx)
    perfetto_without_tsc(ctx)
    random_twins(ctx, int(os.environ.get("TC_V2_RANDOM", "6")))
    bad_inputs(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
