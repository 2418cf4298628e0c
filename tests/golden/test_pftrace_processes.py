#!/usr/bin/env python3
"""Issue 38, item 4: the pftrace reader keeps every process's methods its own, however many
processes a trace holds. Each dump of a Perfetto trace is a process (its packet's
trusted_pid), and two processes' ArtMethod* values may coincide: the reader once told them
apart by XORing the pointer with `process index << 56`, which wraps at 256 processes, so
process 256's method definitions renamed process 0's (and a pointer with high bits set could
meet another process's anyway).

The input, built here with tests/golden/gen.py's helpers: 300 processes (pid 1000 + k), each
one thread (tid 5000 + k) entering and leaving one method; every process's method is at the
same pointer 0x1000, named `p<k>.C.m` by its own dump, and a second method at a pointer with
its top byte set (0x0100000000002000 in process 1, 0x2000 in process 0: what XOR with 1 << 56
makes them meet) named `q<k>.D.n`. Expected from the model: in `-o ir`, each thread's events
name its own process's methods, and there are 600 methods.
"""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import gen  # noqa: E402  (tests/golden/gen.py: the dump's and protobuf's encoders)

N = 300
START = 2_000_000_000
SHARED = 0x1000


def high_pointer(k):
    """Process k's second method: 0x2000 in process 0, 0x2000 | 1 << 56 in process 1 (what the
    old salt of process 1 turns into process 0's 0x2000), 0x2000 + k elsewhere."""
    return {0: 0x2000, 1: 0x2000 | 1 << 56}.get(k, 0x2000 + 16 * k)


def dump(k):
    tid = 5000 + k
    d = gen.slow_header(START) + gen.lr_chunk(tid, [(10, SHARED), (20, high_pointer(k)), (30, None), (40, None)], START)
    d += gen.lr_named(0, tid, f"t{k}")
    d += gen.lr_named(1, SHARED, f"Lp{k}/C;\tm\t()V\tC.java\n")
    d += gen.lr_named(1, high_pointer(k), f"Lq{k}/D;\tn\t()V\tD.java\n")
    return d


def trace():
    out = b""
    for k in range(N):
        packet = gen.pb_varint(79 << 3) + gen.pb_varint(1000 + k) + \
            gen.pb_len(1001, gen.pb_len(1, dump(k)) + gen.pb_len(2, f"com.p{k}".encode()))
        out += gen.pb_len(1, packet)
    return out


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.work, "many.pftrace")
    with open(src, "wb") as f:
        f.write(trace())
    out, figs = ctx.convert(src, "ir", extra=["-i", "pftrace"])
    if out:
        with open(out, encoding="utf-8") as f:
            lines = f.read().splitlines()
        methods = {}  # ir method index -> name
        thread_tid = {}  # ir thread index -> tid
        for line in lines:
            m = re.match(r'method (\d+) .* name="(.*)"$', line)
            if m:
                methods[m.group(1)] = m.group(2)
            m = re.match(r"thread (\d+) tid=(\d+) ", line)
            if m:
                thread_tid[m.group(1)] = int(m.group(2))
        ctx.eq(len(methods), 2 * N, "methods: two per process, none shared")
        entered = {}  # tid -> names of the methods its B events enter, in order
        for line in lines:
            m = re.match(r"B t=(\d+) m=(\d+) ", line)
            if m:
                entered.setdefault(thread_tid.get(m.group(1)), []).append(methods.get(m.group(2)))
        wrong = [(tid, got) for tid, got in sorted(entered.items())
                 if got != [f"p{tid - 5000}.C.m: ()V", f"q{tid - 5000}.D.n: ()V"]]
        ctx.eq(len(entered), N, "threads with events")
        ctx.check(not wrong, f"threads entering another process's methods (tid, names): {wrong[:4]}")
    ctx.done()


if __name__ == "__main__":
    main()
