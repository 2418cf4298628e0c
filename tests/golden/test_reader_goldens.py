#!/usr/bin/env python3
"""Reader goldens: a small input per format and the IR dump (`-o ir`) it must give, both
written by hand from the format's specification, never copied from traceconv's output
(tests/golden/README.md works out each expected dump line by line from its input).

1. Every reader that `traceconv --list-formats` lists has goldens in tests/golden/<reader>/
   (a new reader without them fails here): art's are tests/golden/art/<case>.ir of the
   corpus traces (test_ir_goldens.py); every other reader's are inputs with their
   expected dump beside them, <input>.ir.
2. Each input converts to exactly its expected dump, whether its reader is found by probing
   or named with -i. A method named by its text (every reader but art) has the id the IR
   documents for it: FNV-1a 64 of the name with the top bit set (src/hub/trace.c), which
   the expected files write as id=HASH and this test computes.
3. tests/golden/gen.py reproduces the binary inputs from their models (the RheaTrace 2.x
   records byte for byte; the zlib capture inflates to systrace/capture.txt).

There is no --regen: an expected dump that no longer matches is either a bug in traceconv
or a change of the rules, to be worked out again by hand in tests/golden/README.md.
"""
import importlib.util
import json
import os
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def name_hash(name):
    """The id of a method named by its text: FNV-1a 64 over its UTF-8 bytes, top bit set."""
    h = 0xcbf29ce484222325
    for b in name.encode("utf-8"):
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h | 1 << 63


def expected(path):
    """The expected dump, id=HASH replaced by the hash of the line's name."""
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines():
            if line.startswith("method ") and " id=HASH " in line:
                name = json.loads(line.split(" name=", 1)[1])
                line = line.replace(" id=HASH ", f" id=0x{name_hash(name):x} ", 1)
            out.append(line)
    return "\n".join(out) + "\n"


def readers(ctx):
    """Reader names from `traceconv --list-formats` (the lines under "readers")."""
    text = ctx.run(["--list-formats"], check_rc=0).stdout.decode()
    names, section = [], None
    for line in text.splitlines():
        if not line.startswith(" "):
            section = line.split()[0] if line.strip() else None
        elif section == "readers":
            names.append(line.split()[0])
    return names


def first_difference(got, want):
    g, w = got.splitlines(), want.splitlines()
    for i, (a, b) in enumerate(zip(g, w)):
        if a != b:
            return f"line {i + 1}:\n   got:  {a}\n   want: {b}"
    return f"line counts differ: got {len(g)}, want {len(w)}"


def check_golden(ctx, reader, golden):
    src = golden[:-len(".ir")]
    label = os.path.relpath(src, HERE)
    if not ctx.check(os.path.isfile(src), f"{label}.ir: its input {label} is missing"):
        return
    want = expected(golden)
    for how, args in (("probed", []), (f"-i {reader}", ["-i", reader])):
        r = ctx.run([*args, "-o", "ir", src, "-"])
        err = r.stderr.decode(errors="replace").strip()
        if not ctx.eq(r.returncode, 0, f"{label} ({how}): exit ({err})"):
            continue
        got = r.stdout.decode("utf-8", errors="replace")
        ctx.check(got == want, f"{label} ({how}): IR differs from {label}.ir at {first_difference(got, want)}")


def check_generated(ctx):
    spec = importlib.util.spec_from_file_location("golden_gen", os.path.join(HERE, "gen.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    for rel, data in gen.files(HERE).items():
        with open(os.path.join(HERE, rel), "rb") as f:
            committed = f.read()
        if rel.endswith(".ctrace"):  # zlib's bytes vary with its version: compare what they inflate to
            head = b"capturing trace... done\nTRACE:\n"
            ctx.check(committed.startswith(head), f"{rel}: does not start with adb's lines and TRACE:")
            with open(os.path.join(HERE, "systrace", "capture.txt"), "rb") as f:
                ctx.check(zlib.decompress(committed[len(head):]) == f.read(), f"{rel}: does not inflate to capture.txt")
        else:
            ctx.check(committed == data, f"{rel}: gen.py writes other bytes (run it and review the difference)")


def main():
    ctx = tclib.Ctx()
    names = readers(ctx)
    ctx.check(len(names) >= 5, f"--list-formats lists the readers: {names}")
    for reader in names:
        d = os.path.join(HERE, reader)
        goldens = sorted(f for f in os.listdir(d) if f.endswith(".ir")) if os.path.isdir(d) else []
        if not ctx.check(goldens, f"reader {reader}: no goldens in tests/golden/{reader}/ (an input and its <input>.ir)"):
            continue
        if reader == "art":
            continue  # corpus traces' goldens: test_ir_goldens.py
        for g in goldens:
            check_golden(ctx, reader, os.path.join(d, g))
    check_generated(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
