#!/usr/bin/env python3
"""Writes the reader goldens' binary inputs from their models, so that a reviewer reads the
model here rather than a hex dump (test_reader_goldens.py checks that this reproduces the
committed files byte for byte):

  rhea/v2-appTrace.bin     a RheaTrace 2.x binary method trace (RHEA.md §2.2 of the format
                           notes): the 32-byte header, then one 16-byte record per method
                           return, inner calls first, then the mmapped file's zero tail;
  rhea/v3-sampling.bin     a btrace 3.x sampling dump (RHEA.md §3, version 5): the 28-byte
  rhea/v3-sampling-mapping.bin   header and its JSON, one record per sample (its stack leaf
                           first), and the mapping: each ArtMethod* with its PrettyMethod
                           text, then the threads' comm names;
  systrace/capture.ctrace  `atrace -z` output: adb's "capturing trace... done" line,
                           "TRACE:", then systrace/capture.txt deflated with zlib;
  art-longrun/anr-slow.txt an ART long-running-method dump (ART.md §6, §11), SLOW 0xF6 with
                           the summary record, as base64 inside an ANR report;
  pftrace/two-processes.pftrace  a Perfetto trace carrying two such dumps of two processes.

    python3 tests/golden/gen.py [OUTDIR]      (default: the directory of this script)
"""
import base64
import os
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))

# Header: u32 version 5, u32 pid (the main thread's tid), u64 CLOCK_BOOTTIME at init, u64
# CLOCK_MONOTONIC at init (the records' base), u64 CLOCK_MONOTONIC when tracing started.
RHEA_PID = 7000
RHEA_BOOT_NS = 100_000_000_000
RHEA_MONO_NS = 40_000_000_000
RHEA_BEGIN_NS = RHEA_MONO_NS + 500_000

# (start ns after the monotonic base, duration ns, tid, method id), in the order the app
# wrote them: when each method returned. Method ids 1-6 are in v2-methodMapping.txt, 99 is not.
RHEA_RECORDS = [
    (200_000, 500_000, 7000, 3),      # onResume [0.2, 0.7] ms: began before tracing (0.5 ms)
    (1_000_000, 300_000, 7000, 2),    # inflate [1.0, 1.3], inside onCreate
    (800_000, 1_000_000, 7000, 1),    # onCreate [0.8, 1.8]
    (900_000, 2_000_000, 7012, 4),    # Worker.run [0.9, 2.9]
    (3_000_000, 100_000, 7012, 99),   # an id the mapping does not name [3.0, 3.1]
    (1_500_000, 2_000_000, 7012, 5),  # Worker.load [1.5, 3.5]: ends after its caller
]


def rhea_record(start_rel, dur, tid, mid):
    """w0 = start << 19 | dur >> 26; w1 = (dur & 0x3FFFFFF) << 38 | tid << 23 | mid."""
    return struct.pack("<QQ", (start_rel << 19) | (dur >> 26), ((dur & 0x3FFFFFF) << 38) | (tid << 23) | mid)


def rhea_v2_bin():
    head = struct.pack("<IIQQQ", 5, RHEA_PID, RHEA_BOOT_NS, RHEA_MONO_NS, RHEA_BEGIN_NS)
    return head + b"".join(rhea_record(*r) for r in RHEA_RECORDS) + bytes(16)


# The sampling dump: pid 9000; samples taken from 50 s on the boot clock (ns).
SAMPLING_PID = 9000
SAMPLING_T0 = 50_000_000_000
LOOP, DRAW, MEASURE, RUN, FETCH, UNMAPPED = 0x70001000, 0x70002000, 0x70003000, 0x70004000, 0x70005000, 0x70009000
SAMPLING_METHODS = [(LOOP, "void android.os.Looper.loop()"),
                    (DRAW, "void com.example.app.Main.onDraw(android.graphics.Canvas)"),
                    (MEASURE, "int com.example.app.Main.measure(int, int)"),
                    (RUN, "void java.lang.Thread.run()"),
                    (FETCH, "boolean com.example.app.Net.fetch(java.lang.String)")]
SAMPLING_THREADS = [(9000, b"ample.app"), (9010, b"OkHttp Dispatch\n")]  # /proc comm, read with fgets
# (tid, begin ns after T0, end ns after T0 or None for an instant sample, frames leaf first,
# saved depth, actual depth): in the order the ring buffer held them.
SAMPLING_RECORDS = [
    (9000, 0, None, [DRAW, LOOP], 2, 2),
    (9000, 1_000_000, None, [MEASURE, DRAW, LOOP], 3, 3),
    (9010, 500_000, 2_500_000, [FETCH, RUN], 2, 2),               # a sample with a duration
    (9000, 3_000_000, None, [LOOP], 1, 1),                        # the thread's last: its previous gap
    (9000, 3_500_000, None, [MEASURE, DRAW], 2, 3),               # saved != actual depth: no valid stack
    (9010, 4_000_000, 4_300_000, [UNMAPPED, RUN], 2, 2),          # a frame the mapping does not name
]


def sampling_record(tid, begin, end, frames, saved, actual):
    """u16 type (5: TraceStack), u16 tid, u32 message, u64 begin, u64 end (0: instant), u64 x2
    thread CPU, u64 x2 allocations (v4), u32 x3 faults and switches (v5), u32 saved, u32 actual
    depth, then the frames' ArtMethod* leaf first."""
    head = struct.pack("<HHIQQQQ", 5, tid, 0, SAMPLING_T0 + begin, 0 if end is None else SAMPLING_T0 + end, 0, 0)
    return (head + struct.pack("<QQIII", 0, 0, 0, 0, 0) + struct.pack("<II", saved, actual)
            + b"".join(struct.pack("<Q", f) for f in frames))


def sampling_bin():
    extra = b'{"processId":9000}'
    head = struct.pack("<IIIQIi", 0x01020304, 0, 5, SAMPLING_T0 // 1_000_000 + 60_000, len(SAMPLING_RECORDS),
                       len(extra))
    return head + extra + b"".join(sampling_record(*r) for r in SAMPLING_RECORDS)


def sampling_mapping():
    """u64 0, u32 version 1, u32 count, {u64 pointer, u16 length, text}, then {i16 tid, u8 length, name}."""
    out = struct.pack("<QII", 0, 1, len(SAMPLING_METHODS))
    for ptr, text in SAMPLING_METHODS:
        out += struct.pack("<QH", ptr, len(text)) + text.encode()
    for tid, name in SAMPLING_THREADS:
        out += struct.pack("<hB", tid, len(name)) + name
    return out


def capture_ctrace(source_dir):
    with open(os.path.join(source_dir, "systrace", "capture.txt"), "rb") as f:
        text = f.read()
    return b"capturing trace... done\nTRACE:\n" + zlib.compress(text, 9)


# ---- art-v2/writer-bug.trace: ART format V2, Android 16 layout (ART.md 5.2), ns, streaming 0xF5 ----
# Thread 70000 "main" (a tid above 65535: V2 writes u32 tids); A.run (0x7100000000) calls B.leaf
# (0x7100000010, no source file: ART 16 writes ""). One flush split into two blocks the way
# FlushEntriesFormatV2's bug writes them: the second block goes on from the first's accumulators
# and declares the cumulative count 4. Records (wall ns from the header start, thread CPU ns):
# enter A 1000/500, enter B 3000/2000 | exit B 7000/5000, exit A 9000/6000.


def leb(v, signed):
    out = bytearray()
    while True:
        byte = v & 0x7F
        v >>= 7
        if (not signed and not v) or (signed and ((v == 0 and not byte & 0x40) or (v == -1 and byte & 0x40))):
            return bytes(out + bytes([byte]))
        out.append(byte | 0x80)


def v2_writer_bug():
    def packet_text(kind, ident, fmt, text):
        return bytes([kind]) + struct.pack(fmt, ident, len(text)) + text

    def block(n, records):
        payload = b"".join(leb(dm, True) + leb(dw, False) + leb(dc, False) for dm, dw, dc in records)
        return bytes([2]) + struct.pack("<I", 70000) + n.to_bytes(3, "little") + struct.pack("<I", len(payload)) + payload

    a, b = 0x7100000000, 0x7100000010
    summary = (b"*version\n5\ndata-file-overflow=false\nclock=dual\nelapsed-time-nsec=10000\n"
               b"clock-call-overhead-nsec=250\nvm=art\npid=70000\n*end\n")
    return (b"SLOW" + struct.pack("<HQ", 0xF5, 2_000_000_000_000) + bytes(18)
            + packet_text(0, 70000, "<IH", b"main")
            + packet_text(1, a, "<QH", b"com.ex.A\trun\t()V\tA.java\n")
            + packet_text(1, b, "<QH", b"com.ex.B\tleaf\t(I)V\t\n")
            + block(2, [(a, 1000, 500), (b - a, 2000, 1500)])
            + block(4, [((b | 1) - b, 4000, 3000), ((a | 1) - (b | 1), 2000, 1000)])
            + bytes([3]) + struct.pack("<H", len(summary)) + summary)
# ---- ART long-running-method dumps (ART.md §6, §11) ----
# Packets: 0x02 chunk (u32 tid, u24 records, u32 payload size, payload), 0x00 thread (u32 tid,
# u16 len, name), 0x01 method (u64 ArtMethod*, u16 len, "class\tname\tsig\tsource\n").
# Record: sleb128 delta of (time_ns << 1 | is_exit), then on an entry sleb128 delta of the
# method pointer; both deltas from 0 at each chunk's start.
LR_START = 1_000_000_000
LR_ONCREATE, LR_FETCH, LR_UNKNOWN = 0x70001000, 0x70001040, 0x70002000
# (tid, [(ns after LR_START, method or None for an exit)]) in file order: main's records in two
# chunks with thread 200's between them
LR_CHUNKS = [(100, [(100, None), (1000, LR_ONCREATE), (2000, LR_FETCH)]),
             (200, [(3000, LR_UNKNOWN)]),
             (100, [(5000, None), (9000, None)])]


def sleb128(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if (v == 0 and not b & 0x40) or (v == -1 and b & 0x40):
            return bytes(out + bytes([b]))
        out.append(b | 0x80)


def lr_chunk(tid, records, start):
    payload, prev_t, prev_m = b"", 0, 0
    for t, method in records:
        word = (start + t) << 1 | (method is None)
        payload += sleb128(word - prev_t)
        prev_t = word
        if method is not None:
            payload += sleb128(method - prev_m)
            prev_m = method
    return struct.pack("<BI", 2, tid) + len(records).to_bytes(3, "little") + struct.pack("<I", len(payload)) + payload


def lr_named(kind, key, text):
    data = text.encode()
    return struct.pack("<BI" if kind == 0 else "<BQ", kind, key) + struct.pack("<H", len(data)) + data


def slow_header(start):
    return b"SLOW" + struct.pack("<HQ", 0xF6, start) + bytes(18)


def longrun_anr():
    """art-longrun/anr-slow.txt: the SLOW 0xF6 form with the summary record, as base64 on one
    line after a marker line, inside a few lines of an ANR report."""
    dump = slow_header(LR_START) + struct.pack("<BQQ", 3, LR_START, LR_START + 9000)
    dump += b"".join(lr_chunk(tid, recs, LR_START) for tid, recs in LR_CHUNKS)
    dump += lr_named(0, 100, "main")  # no thread packet for 200
    dump += lr_named(1, LR_ONCREATE, "Lcom/example/Main;\tonCreate\t(Landroid/os/Bundle;)V\tMain.java\n")
    dump += lr_named(1, LR_FETCH, "com.example.Net\tfetch\t()V\t\n")  # no packet for LR_UNKNOWN
    return (b"----- pid 100 at 2026-01-01 00:00:00 -----\nCmd line: com.example\n\n"
            b"Long running methods (base64):\n" + base64.b64encode(dump) + b"\n\n----- end 100 -----\n")


def pb_len(field, data):
    return pb_varint(field << 3 | 2) + pb_varint(len(data)) + data


def pb_varint(v):
    out = bytearray()
    while True:
        out.append((v & 0x7F) | (0x80 if v > 0x7F else 0))
        v >>= 7
        if not v:
            return bytes(out)


def longrun_pftrace():
    """pftrace/two-processes.pftrace: a Perfetto Trace of two TracePackets carrying dumps of two
    processes whose methods share one pointer, under two placeholder field numbers, the second
    with process_name before payload."""
    start = 2_000_000_000
    a = slow_header(start) + lr_chunk(301, [(10, 0x1000), (20, None)], start)
    a += lr_named(0, 301, "main") + lr_named(1, 0x1000, "La/A;\trun\t()V\tA.java\n")
    b = slow_header(start) + lr_chunk(401, [(15, 0x1000), (30, None)], start)
    b += lr_named(0, 401, "worker") + lr_named(1, 0x1000, "Lb/B;\tgo\t()V\tB.java\n")
    other = pb_varint(8 << 3) + pb_varint(start)  # a packet with only a timestamp
    pa = pb_varint(79 << 3) + pb_varint(300) + pb_len(1001, pb_len(1, a) + pb_len(2, b"com.a"))
    pb = pb_varint(8 << 3) + pb_varint(start) + pb_varint(79 << 3) + pb_varint(400) + \
        pb_len(2000, pb_len(5, b"com.b") + pb_len(3, b))
    return pb_len(1, other) + pb_len(1, pa) + pb_len(1, pb)


def files(source_dir=HERE):
    """{path relative to tests/golden: bytes}."""
    return {os.path.join("rhea", "v2-appTrace.bin"): rhea_v2_bin(),
            os.path.join("rhea", "v3-sampling.bin"): sampling_bin(),
            os.path.join("rhea", "v3-sampling-mapping.bin"): sampling_mapping(),
            os.path.join("systrace", "capture.ctrace"): capture_ctrace(source_dir),
            os.path.join("art-v2", "writer-bug.trace"): v2_writer_bug(),
            os.path.join("art-longrun", "anr-slow.txt"): longrun_anr(),
            os.path.join("pftrace", "two-processes.pftrace"): longrun_pftrace()}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    for rel, data in files().items():
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
