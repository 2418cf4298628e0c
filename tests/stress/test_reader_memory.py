"""Issue 22 item 12: peak memory does not grow with the records or the bytes of the input, in
any reader. Each input is generated here at two sizes, N and 4N records, with the same
methods, threads and call paths, and converted; peak RSS (wait4's ru_maxrss) must stay flat
(at most 5 MiB more for 4x the input, which grows by 18-100 MiB) and within 64 MiB.

  art        streaming (0xF3) without a summary (the stream was cut): the summary was looked
             for from the end over the whole file, whose pages then stayed (435 MB for 437 MB)
  art        non-streaming v3 (tracegen --bench)
  json       many events; and one event whose args hold all the bytes (a 60 MB event made a
             2.4 GB cJSON tree)
  systrace   atrace text; TRACE: + zlib (atrace -z); systrace HTML; scheduler data only, to
             perfetto (system events: no buffering in the reader, per-CPU bundles of bounded
             size in the writer); other kernel events to perfetto (the writer's thread read
             their text after the reading thread gave it back: the whole input stayed mapped);
             the pre-2015 page (its JavaScript string decoded to a temporary file); a page whose
             viewer is as large as its data (one memchr over a block mapped all of it)
  rhea       1.x text; 2.x binary method trace
  ir         traceconv's own text dump
  gzip       a gzip-compressed ART trace (inflated to a spool file)
and shapes that grew the readers' own stacks and sets per record: JSON B events never
closed and X events nested ever deeper, Rhea B: markers never closed and binary slices
nested ever deeper (past max-depth they are dropped, as normalize drops them, with the
warning depth-limit), and systrace async slices each with a cookie of its own (a finished
slice now leaves the set).

Skipped under sanitizers (their shadow memory is not the program's)."""
import gzip
import os
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

MIB = 1 << 20
# N is 6-8 chunks of ~1 MiB, 4N 24-32: 18-24 MiB more input. What grew with the input before
# (pages kept, a tree per event, a set per record) grew by the input's size or more, so a
# quarter of the added bytes is room enough for the allocator and tells those apart.
GROWTH = 5 * MIB    # allowed for 4x the input
CEILING = 64 * MIB  # "64 MB plus a documented cost per distinct method / thread / call path": these have few


def write_chunks(path, head, chunk_of, n, tail=b""):
    """head, then chunk_of(i) for i in range(n), then tail."""
    with open(path, "wb") as f:
        f.write(head)
        for i in range(n):
            f.write(chunk_of(i))
        f.write(tail)


# -- generators: n is the number of 1 MiB-ish chunks ------------------------------------------

REC = struct.Struct("<HIII")
PAIRS = 37449  # enter/exit pairs per chunk: 28 bytes each, ~1 MiB


def art_stream(path, n):
    head = b"SLOW" + struct.pack("<HHQH", 0xF3, 32, 1000, 14) + b"\0" * 14
    for m, name in ((4, b"run"), (8, b"step")):
        line = b"0x%x\tcom.example.A\t%s\t()V\tA.java\n" % (m, name)
        head += b"\0\0\x01" + struct.pack("<H", len(line)) + line
    head += b"\0\0\x02" + struct.pack("<HH", 1, 4) + b"main" + REC.pack(1, 4, 0, 0)

    def chunk(i):
        t0 = 1 + i * 2 * PAIRS
        return b"".join(REC.pack(1, 8, t, t) + REC.pack(1, 9, t + 1, t + 1) for t in range(t0, t0 + 2 * PAIRS, 2))
    write_chunks(path, head, chunk, n)  # no summary: cut short


def art_bench(ctx, path, n):
    import subprocess
    subprocess.run([ctx.tracegen, "--bench", str(n), path], check=True, capture_output=True)


def json_events(path, n):
    def chunk(i):
        out = []
        for k in range(5000):
            t = (i * 5000 + k) * 10
            out.append('{"ph":"B","pid":1,"tid":%d,"ts":%d,"name":"m%d","args":{"k":%d}},'
                       '{"ph":"E","pid":1,"tid":%d,"ts":%d},' % (k % 4, t, k % 50, k, k % 4, t + 5))
        return "".join(out).encode()
    write_chunks(path, b'{"traceEvents":[', chunk, n, b'{"ph":"i","pid":1,"tid":1,"ts":0,"name":"end"}]}')


def json_one_event(path, n):
    item = b'{"k":"' + b"v" * 40 + b'","n":[1,2.5,-3e2,true,null]},'
    per = MIB // len(item)
    write_chunks(path, b'{"traceEvents":[{"ph":"X","pid":1,"tid":1,"ts":1,"dur":2,"name":"big","args":{"blob":[',
                 lambda i: item * per, n, b'{}]}},{"ph":"X","pid":1,"tid":1,"ts":5,"dur":1,"name":"b"}]}')


def systrace_lines(i):
    out = []
    for k in range(6000):
        us = (i * 6000 + k) * 10
        sec, frac = 100 + us // 1000000, us % 1000000
        tid = 1000 + k % 4
        out.append("     app-%d  (  999) [001] ...1 %d.%06d: tracing_mark_write: B|999|work%d\n"
                   "     app-%d  (  999) [001] ...1 %d.%06d: tracing_mark_write: E|999\n"
                   % (tid, sec, frac, k % 20, tid, sec, frac + 5))
    return "".join(out).encode()


SYSTRACE_HEAD = b"# tracer: nop\n#\n"


def systrace_text(path, n):
    write_chunks(path, SYSTRACE_HEAD, systrace_lines, n)


def systrace_zlib(path, n):
    z = zlib.compressobj()
    with open(path, "wb") as f:
        f.write(b"TRACE:\n")
        f.write(z.compress(SYSTRACE_HEAD))
        for i in range(n):
            f.write(z.compress(systrace_lines(i)))
        f.write(z.flush())


def systrace_html(path, n):
    write_chunks(path, b'<!DOCTYPE html>\n<html><body>\n<script class="trace-data" type="application/text">\n'
                 + SYSTRACE_HEAD, systrace_lines, n, b"</script>\n</body></html>\n")


def rhea_text(path, n):
    def chunk(i):
        out = []
        for k in range(12000):
            ns = 5_000_000_000 + (i * 12000 + k) * 1000
            out.append("%d.%09d %d: B|77|B:com.example.M.m%d\n%d.%09d %d: B|77|E:com.example.M.m%d\n"
                       % (ns // 10**9, ns % 10**9, 77 + k % 3, k % 30, ns // 10**9, ns % 10**9 + 500, 77 + k % 3,
                          k % 30))
        return "".join(out).encode()
    write_chunks(path, b"1|TRACE_START|5000000000|77|2147483647|2|18316\n", chunk, n,
                 b"2|TRACE_END|99000000000|77|2147483647|2|18316\n")


def rhea_bin2(path, n):
    pid, mono = 77, 1_000_000_000
    head = struct.pack("<IIQQQ", 5, pid, 2_000_000_000, mono, mono)
    per = MIB // 16

    rec = struct.Struct("<QQ")
    buf = bytearray(per * 16)  # one buffer for every chunk: this process stays small (its RSS is the floor
    # of the child's ru_maxrss, which counts the memory it was forked with)

    def chunk(i):
        for k in range(per):
            start, dur, tid, mid = (i * per + k) * 1000, 400, 77 + k % 3, 1 + k % 40
            rec.pack_into(buf, k * 16, start << 19 | dur >> 26, (dur & 0x3FFFFFF) << 38 | tid << 23 | mid)
        return buf
    write_chunks(path, head, chunk, n)


def ir_dump(path, n):
    head = (b"traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=5 start_ns=0\n"
            b'thread 0 tid=5 records=0 name="main"\nmethod 0 id=0x4 name="a.B.c: ()V"\n'
            b'method 1 id=0x8 name="a.B.d: ()V"\n')

    def chunk(i):
        out = []
        for k in range(20000):
            t = (i * 20000 + k) * 10
            out.append("B t=0 m=%d d=0 ts=%d\nE t=0 m=%d d=0 ts=%d\n" % (k % 2, t, k % 2, t + 5))
        return "".join(out).encode()
    write_chunks(path, head, chunk, n)


def art_gzip(ctx, path, n):
    plain = path + ".plain"
    art_bench(ctx, plain, n)
    with open(plain, "rb") as f, gzip.open(path, "wb", compresslevel=1) as g:
        while True:
            b = f.read(MIB)
            if not b:
                break
            g.write(b)
    os.remove(plain)


# -- hostile shapes: nesting that never closes, cookies never reused ---------------------------

def json_unclosed(path, n):
    per = MIB // 48
    write_chunks(path, b'{"traceEvents":[', lambda i: b"".join(
        b'{"ph":"B","pid":1,"tid":1,"ts":%d,"name":"a"},' % (i * per + k) for k in range(per)), n,
        b'{"ph":"i","pid":1,"tid":1,"ts":0,"name":"x"}]}')


def json_nested(path, n):
    per = MIB // 64
    total = n * per
    write_chunks(path, b'{"traceEvents":[', lambda i: b"".join(
        b'{"ph":"X","pid":1,"tid":1,"ts":%d,"dur":%d,"name":"a"},' % (i * per + k, 2 * (total - i * per - k))
        for k in range(per)), n, b'{"ph":"i","pid":1,"tid":1,"ts":0,"name":"x"}]}')


def rhea_unclosed(path, n):
    per = MIB // 40
    write_chunks(path, b"1|TRACE_START|5000000000|77|2147483647|2|18316\n", lambda i: b"".join(
        b"%d.%09d 77: B|77|B:a.B.m%d\n" % (5 + (i * per + k) // 10**6, (i * per + k) % 10**6 * 1000, k % 7)
        for k in range(per)), n)


def rhea_nested(path, n):
    pid, mono = 77, 1_000_000_000
    per = MIB // 16
    total = n * per
    rec = struct.Struct("<QQ")
    buf = bytearray(per * 16)

    def chunk(i):
        for k in range(per):
            j = i * per + k
            start, dur, mid = j * 10, (2 * (total - j)) * 10, 1 + k % 7
            rec.pack_into(buf, k * 16, start << 19 | dur >> 26, (dur & 0x3FFFFFF) << 38 | 77 << 23 | mid)
        return buf
    write_chunks(path, struct.pack("<IIQQQ", 5, pid, 2_000_000_000, mono, mono), chunk, n)


def systrace_cookies(path, n):
    def chunk(i):
        out = []
        for k in range(6000):
            j = i * 6000 + k
            us = j * 10
            for kind, d in ((b"S", 0), (b"F", 5)):
                out.append(b"     app-1000  (  999) [001] ...1 %d.%06d: tracing_mark_write: %s|999|job|%d\n"
                           % (100 + us // 10**6, us % 10**6 + d, kind, j))
        return b"".join(out)
    write_chunks(path, SYSTRACE_HEAD, chunk, n)


def systrace_sched(path, n):
    """Scheduler data only (sched_switch, sched_waking, cpu_frequency on 8 CPUs, 64 tasks):
    system events, which the perfetto writer collects per CPU in bounded bundles."""
    def chunk(i):
        out = []
        for k in range(6000):
            j = i * 6000 + k
            us, cpu, a, b = j * 10, j % 8, 2000 + j % 64, 2000 + (j * 7 + 3) % 64
            ts = b"%d.%06d" % (100 + us // 10**6, us % 10**6)
            if k % 3 == 0:
                out.append(b"          t%d-%d  [%03d] d..2 %s: sched_switch: prev_comm=t%d prev_pid=%d prev_prio=120 "
                           b"prev_state=S ==> next_comm=t%d next_pid=%d next_prio=120\n" % (a, a, cpu, ts, a, a, b, b))
            elif k % 3 == 1:
                out.append(b"          t%d-%d  [%03d] d..2 %s: sched_waking: comm=t%d pid=%d prio=120 target_cpu=%03d\n"
                           % (a, a, cpu, ts, b, b, cpu))
            else:
                out.append(b"          <idle>-0  [%03d] d..2 %s: cpu_frequency: state=%d cpu_id=%d\n"
                           % (cpu, ts, 300000 + 1000 * (j % 50), cpu))
        return b"".join(out)
    write_chunks(path, SYSTRACE_HEAD, chunk, n)


def systrace_kernel_lines(i):
    """Kernel events other than the scheduler's, in their real forms: the perfetto writer reads
    their text after the reading thread (its thread is behind it) and gives it back itself."""
    out = []
    for k in range(5000):
        j = i * 5000 + k
        us, cpu, a = j * 10, j % 8, 2000 + j % 64
        p = b"          t%d-%d  (%5d) [%03d] d..2 %d.%06d: " % (a, a, a, cpu, 100 + us // 10**6, us % 10**6)
        out.append(p + (b"binder_transaction: transaction=%d dest_node=7 dest_proc=900 dest_thread=0 reply=0 "
                        b"flags=0x10 code=0x3\n" % j,
                        b"workqueue_execute_start: work struct ffffff83b8f8%04x: function vmstat_update\n" % (j % 65536),
                        b"sched_blocked_reason: pid=%d iowait=0 caller=worker_thread+0x%x/0x458\n" % (a, j % 16),
                        b"vendor_gpu_busy: gpu=0 busy_pct=%d state=on\n" % (j % 100))[k % 4])
    return b"".join(out)


def systrace_kernel(path, n):
    write_chunks(path, SYSTRACE_HEAD, systrace_kernel_lines, n)


def systrace_legacy(path, n):
    """The pre-2015 page: the text as a JavaScript string with `\\n\\` continuations, decoded into a
    temporary file (the page's pages given back as it goes)."""
    def chunk(i):
        return b"".join(line + b"\\n\\\n" for line in systrace_lines(i).splitlines())
    write_chunks(path, b"<!DOCTYPE html>\n<html><head>\n<script>\n  var linuxPerfData = \"\\\n# tracer: nop\\n\\\n",
                 chunk, n, b"\";\n</script>\n</head><body></body></html>\n")


def systrace_viewer(path, n):
    """A page whose viewer is as large as its data, its code full of '<' and of the data tag's
    text in a regular expression: both scanned a MiB at a time, their pages given back."""
    code = b"var re = /<script class=\"trace-data\" type=\"application\\/text\">/; if (a<b) f(a<<2);\n" * 13000
    with open(path, "wb") as f:  # written a MiB at a time: this process stays small (see rhea_bin2)
        f.write(b"<!DOCTYPE html>\n<html><head>\n")
        for _ in range(n):
            f.write(b"<script>\n" + code + b"</script>\n")
        f.write(b"</head><body>\n<script class=\"trace-data\" type=\"application/text\">\n" + SYSTRACE_HEAD)
        for i in range(n):
            f.write(systrace_lines(i))
        f.write(b"</script>\n</body></html>\n")


CASES = [  # name, reader (-i), generator, chunks for N, output format
    ("art streaming without summary", "art", art_stream, 8, "folded"),
    ("art non-streaming", "art", art_bench, 8, "json"),
    ("json many events", "json", json_events, 8, "folded"),
    ("json one large event", "json", json_one_event, 8, "folded"),
    ("systrace text", "systrace", systrace_text, 8, "folded"),
    ("systrace zlib", "systrace", systrace_zlib, 8, "folded"),
    ("systrace html", "systrace", systrace_html, 8, "folded"),
    ("rhea text", "rhea", rhea_text, 8, "folded"),
    ("rhea binary", "rhea", rhea_bin2, 8, "folded"),
    ("ir", "ir", ir_dump, 8, "folded"),
    ("gzip art", "art", art_gzip, 8, "json"),
    ("json B never closed", "json", json_unclosed, 6, "folded"),
    ("json X nested ever deeper", "json", json_nested, 6, "folded"),
    ("rhea B: markers never closed", "rhea", rhea_unclosed, 6, "folded"),
    ("rhea binary nested ever deeper", "rhea", rhea_nested, 6, "folded"),
    ("systrace async, a cookie each", "systrace", systrace_cookies, 6, "folded"),
    ("systrace sched events", "systrace", systrace_sched, 8, "perfetto"),
    ("systrace kernel events", "systrace", systrace_kernel, 24, "perfetto"),  # past the floor: see below
    ("systrace legacy page", "systrace", systrace_legacy, 8, "folded"),
    ("systrace page with its viewer", "systrace", systrace_viewer, 8, "perfetto"),
]


def measure(ctx, name, reader, gen, n, fmt):
    path = os.path.join(ctx.work, "input.bin")
    if gen in (art_bench, art_gzip):
        gen(ctx, path, n)
    else:
        gen(path, n)
    size = os.path.getsize(path)
    rc, err, rss_kib = tclib.run_measured([ctx.traceconv, "-q", "-f", "-i", reader, "-o", fmt, path, os.devnull])
    os.remove(path)
    ctx.check(rc == 0, f"{name} at {n} chunks: converts ({err.strip()[:300]})")
    return size, rss_kib * 1024


def main():
    ctx = tclib.Ctx()
    if tclib.is_sanitized(ctx.traceconv):
        print("SKIPPED: sanitized build, peak RSS not measured")
        ctx.done()
    if not ctx.tracegen:
        ctx.fail("tracegen is not built")
        ctx.done()
    for name, reader, gen, n, fmt in CASES:
        small, rss_small = measure(ctx, name, reader, gen, n, fmt)
        big, rss_big = measure(ctx, name, reader, gen, 4 * n, fmt)
        print(f"{name:32} {small / MIB:6.1f} MiB: {rss_small / MIB:6.1f} MiB peak; "
              f"{big / MIB:6.1f} MiB: {rss_big / MIB:6.1f} MiB peak")
        ctx.check(rss_big - rss_small <= GROWTH,
                  f"{name}: peak RSS grows with the input: {rss_small / MIB:.1f} MiB for {small / MIB:.0f} MiB, "
                  f"{rss_big / MIB:.1f} MiB for {big / MIB:.0f} MiB")
        ctx.check(rss_big <= CEILING, f"{name}: peak RSS {rss_big / MIB:.1f} MiB is within 64 MiB")
    ctx.done()


if __name__ == "__main__":
    main()
