#!/usr/bin/env python3
"""Writes the reader goldens' binary inputs from their models, so that a reviewer reads the
model here rather than a hex dump (test_reader_goldens.py checks that this reproduces the
committed files byte for byte):

  rhea/v2-appTrace.bin     a RheaTrace 2.x binary method trace (RHEA.md §2.2 of the format
                           notes): the 32-byte header, then one 16-byte record per method
                           return, inner calls first, then the mmapped file's zero tail;
  systrace/capture.ctrace  `atrace -z` output: adb's "capturing trace... done" line,
                           "TRACE:", then systrace/capture.txt deflated with zlib.

    python3 tests/golden/gen.py [OUTDIR]      (default: the directory of this script)
"""
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


def capture_ctrace(source_dir):
    with open(os.path.join(source_dir, "systrace", "capture.txt"), "rb") as f:
        text = f.read()
    return b"capturing trace... done\nTRACE:\n" + zlib.compress(text, 9)


def files(source_dir=HERE):
    """{path relative to tests/golden: bytes}."""
    return {os.path.join("rhea", "v2-appTrace.bin"): rhea_v2_bin(),
            os.path.join("systrace", "capture.ctrace"): capture_ctrace(source_dir)}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    for rel, data in files().items():
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
