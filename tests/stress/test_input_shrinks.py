"""Issue 22 item 9: an input that shrinks while it is converted (its mapped pages vanish:
SIGBUS) ends as a clean error for that input, never as a death by SIGBUS.

1. The command: a large trace is truncated once the conversion has begun (its temporary
   output exists, so the input is mapped); traceconv must exit 1 with one line naming the
   file and saying "input changed while reading", and leave no output or temporary file.
2. batch over an uncompressed tar, whose members are converted in place (mapped from the
   archive): the archive is cut under the last, large member; that member fails with the
   reason, the one before it converted, the summary is written and no temporary file is left.
tests/unit/input_shrinks.c checks the library calls themselves (the file cut from the
progress callback, so the moment is exact; a caller's own mapping; a conversion of an intact
file in another thread at the same time; a SIGBUS outside every watched mapping chained to
the application's own handler).

Before the fix traceconv died by SIGBUS (exit -7) in 1 and 2."""
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

MESSAGE = "input changed while reading"


def make_big(ctx, path, mb=120):
    subprocess.run([ctx.tracegen, "--bench", str(mb), path], check=True, capture_output=True)


def temps_in(d):
    """traceconv's temporary outputs in d (tclib.is_temp_name: the one output-file module's names)."""
    try:
        return [os.path.join(d, f) for f in os.listdir(d) if tclib.is_temp_name(f)]
    except FileNotFoundError:
        return []


def wait_for(d, p, after=None, seconds=120):
    """Until a temporary output exists in d (the input is mapped and being converted), and
    the file after, when given, exists too (an earlier member's output is in place). after
    is looked for first: then a temporary output is a later member's. Looked for the other
    way round, the earlier member's own temporary output, renamed to after between the two
    looks, passed; and the answer was looked for again after the loop, when that temporary
    output was gone and the later one not yet made (an ASan run failed so)."""
    def begun():
        return (after is None or os.path.exists(after)) and bool(temps_in(d))
    deadline = time.time() + seconds
    while p.poll() is None and time.time() < deadline:
        if begun():
            return True
        time.sleep(0.002)
    return begun()


def check_cli(ctx):
    big = os.path.join(ctx.work, "big.trace")
    out = os.path.join(ctx.work, "big.json")
    make_big(ctx, big)
    p = subprocess.Popen([ctx.traceconv, "-f", "-o", "json", big, out], stderr=subprocess.PIPE)
    seen = wait_for(ctx.work, p)
    os.truncate(big, 1 << 16)  # the records past 64 KiB are gone while they are read
    _, err = p.communicate(timeout=300)
    err = err.decode(errors="replace")
    if not ctx.check(seen, f"the conversion began before the input was cut (exit {p.returncode}: {err.strip()})"):
        return
    ctx.eq(p.returncode, 1, f"exit status after the input shrank ({err.strip()[:300]})")
    lines = [l for l in err.splitlines() if l.strip()]
    ctx.eq(len(lines), 1, f"one line on stderr: {lines}")
    ctx.check(lines and lines[0].startswith(f"traceconv: {big}: input: offset 0x") and MESSAGE in lines[0],
              f"the line names the file, the offset and what happened: {lines}")
    ctx.eq(temps_in(ctx.work), [], "temporary output removed")
    ctx.check(not os.path.exists(out), "no output left")
    os.remove(big)


def check_batch(ctx):
    small = os.path.join(ctx.corpus, "app-startup.trace")
    big = os.path.join(ctx.work, "big.trace")
    make_big(ctx, big)
    tar = os.path.join(ctx.work, "traces.tar")
    with tarfile.open(tar, "w", format=tarfile.USTAR_FORMAT) as t:
        t.add(small, arcname="a/small.trace")
        t.add(big, arcname="a/z-big.trace")
    os.remove(big)
    with tarfile.open(tar) as t:
        cut = t.getmember("a/z-big.trace").offset_data + (1 << 16)
    outdir = os.path.join(ctx.work, "out")
    os.makedirs(outdir)
    p = subprocess.Popen([ctx.traceconv, "batch", "-j", "1", "-o", "json", "-O", outdir, tar],
                         stderr=subprocess.PIPE)
    a = os.path.join(outdir, "traces", "a")
    seen = wait_for(a, p, after=os.path.join(a, "small.json"))  # -j 1: small's is done, so the temp is z-big's
    os.truncate(tar, cut)  # the big member's bytes past its first 64 KiB are gone
    _, err = p.communicate(timeout=300)
    err = err.decode(errors="replace")
    if not ctx.check(seen, f"the big member's conversion began before the archive was cut "
                           f"(exit {p.returncode}: {err.strip()[-300:]})"):
        return
    ctx.eq(p.returncode, 1, f"batch exits 1 (a member failed), not by a signal ({err.strip()[-300:]})")
    summary = os.path.join(outdir, "traceconv-batch.json")
    if not ctx.check(os.path.exists(summary), "the summary is written"):
        return
    with open(summary) as f:
        doc = json.load(f)
    by_member = {m.get("member"): m for m in doc.get("members", [])}
    sm, bg = by_member.get("a/small.trace"), by_member.get("a/z-big.trace")
    ctx.check(sm is not None and sm.get("status") == "ok", f"the member before it converted: {sm}")
    ctx.check(bg is not None and bg.get("status") == "failed" and MESSAGE in (bg.get("error") or ""),
              f"the cut member failed with the reason: {bg}")
    left = [os.path.join(d, f) for d, _, fs in os.walk(outdir) for f in fs if tclib.is_temp_name(f)]
    ctx.check(not left, f"no temporary file left: {left}")
    ctx.check(os.path.exists(os.path.join(outdir, "traces", "a", "small.json")), "the good member's output is there")
    ctx.check(not os.path.exists(os.path.join(outdir, "traces", "a", "z-big.json")), "no output for the cut member")
    os.remove(tar)
    shutil.rmtree(outdir)


def main():
    ctx = tclib.Ctx()
    if not ctx.tracegen:
        ctx.fail("tracegen is not built")
        ctx.done()
    check_cli(ctx)
    check_batch(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
