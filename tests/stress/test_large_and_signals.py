"""Two properties of the command that need big inputs:
1. Offsets are 64-bit everywhere: a sparse streaming file of more than 4 GiB
   (two large skipped items) puts a record past 4 GiB; the warning about it
   must name its exact offset, and the records around it must convert.
2. SIGINT and SIGTERM during a conversion remove the temporary output and
   leave no OUTPUT behind; the process still ends by that signal."""
import glob
import os
import re
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def item_method(line):
    return b"\0\0\x01" + struct.pack("<H", len(line)) + line


def record(tid, method_action, cpu, wall):
    return struct.pack("<HIII", tid, method_action, cpu, wall)


def big_sparse_stream(path):
    head = b"SLOW" + struct.pack("<HHQH", 0xF3, 32, 1000, 14) + b"\0" * 14
    head += item_method(b"0x4\tcom.example.A\trun\t()V\tA.java\n")
    head += b"\0\0\x02" + struct.pack("<HH", 1, 4) + b"main"
    head += record(1, 0x4, 0, 0)                        # enter
    skip = 2_200_000_000
    items = []
    for _ in range(2):                                  # two items the reader steps over
        items.append(b"\0\0\x03" + struct.pack("<I", skip))
    summary = b"*version\n3\nclock=dual\nelapsed-time-usec=100\nvm=art\npid=1\n*threads\n1\tmain\n*methods\n*end\n"
    with open(path, "wb") as f:
        f.write(head)
        pos = len(head)
        for it in items:
            f.write(it)
            pos += len(it)
            f.seek(skip, os.SEEK_CUR)               # a hole: no disk used
            pos += skip
        invalid_at = pos
        tail = record(1, 0x4 | 3, 5, 5) + record(1, 0x4 | 1, 9, 9)   # action 3, then the exit
        tail += b"\0\0\x03" + struct.pack("<I", len(summary)) + summary
        f.write(tail)
    return invalid_at


def check_large(ctx):
    path = os.path.join(ctx.work, "sparse-4g.trace")
    invalid_at = big_sparse_stream(path)
    ctx.check(os.path.getsize(path) > (1 << 32), "the sparse file is larger than 4 GiB")
    r = ctx.run(["-o", "json", "-f", path, os.path.join(ctx.work, "sparse.json")])
    err = r.stderr.decode(errors="replace")
    ctx.eq(r.returncode, 0, f"a trace larger than 4 GiB converts ({err.strip()[:300]})")
    m = re.search(r"offset 0x([0-9a-f]+): record with action 3", err)
    ctx.check(m and int(m.group(1), 16) == invalid_at,
              f"the warning names the record's offset 0x{invalid_at:x} past 4 GiB: {err.strip()[:400]}")
    figs = tclib.parse_figures(err)
    ctx.eq(figs.get("records"), 3, "records on both sides of the 4 GiB mark")
    os.remove(path)


def check_signal(ctx, sig):
    big = os.path.join(ctx.work, "big.trace")
    if not os.path.exists(big):
        subprocess.run([ctx.tracegen, "--bench", "150", big], check=True, capture_output=True)
    out = os.path.join(ctx.work, f"out-{sig.name}.json")
    pattern = os.path.join(ctx.work, ".tc-??????")  # outfile.c's temporary name
    for stale in glob.glob(pattern):  # from an earlier failed run: it would be seen at once
        os.remove(stale)
    p = subprocess.Popen([ctx.traceconv, "-q", "-f", "-o", "json", big, out], stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while not glob.glob(pattern) and p.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    seen = bool(glob.glob(pattern))
    p.send_signal(sig)
    p.wait(timeout=60)
    if not ctx.check(seen, f"{sig.name}: the temporary output appeared while converting "
                           f"(exit {p.returncode}: {p.stderr.read().decode(errors='replace').strip()})"):
        return
    ctx.eq(p.returncode, -sig, f"{sig.name}: traceconv ends by the signal")
    ctx.check(not glob.glob(pattern), f"{sig.name}: temporary output removed")
    ctx.check(not os.path.exists(out), f"{sig.name}: no OUTPUT left")


def main():
    ctx = tclib.Ctx()
    check_large(ctx)
    if ctx.tracegen:
        for sig in (signal.SIGTERM, signal.SIGINT):
            check_signal(ctx, sig)
        big = os.path.join(ctx.work, "big.trace")
        if os.path.exists(big):
            os.remove(big)
    else:
        ctx.fail("tracegen is not built")
    ctx.done()


if __name__ == "__main__":
    main()
