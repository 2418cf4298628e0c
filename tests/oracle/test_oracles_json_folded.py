#!/usr/bin/env python3
"""JSON and folded outputs pass third-party readers (Python json,
check_chrome_json.py, check_folded.py, flamegraph.pl), and per thread the folded
total equals the summed top-level slice durations of the JSON output.
Inputs: every project corpus case (art, and the rhea and systrace traces), and every valid
trace of TC_EXTRA_CORPUS when it is set."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

BROKEN = ("perflib-header.trace", "studio-perflib-basic-special_char.trace")
FLAMEGRAPH = "/usr/share/perl5/Devel/NYTProf/flamegraph.pl"


def meant_to_fail(name, facts):
    if facts:
        try:
            with open(facts, encoding="utf-8") as f:
                doc = json.load(f)
            if doc.get("expect_error") or doc.get("expect_fail") or doc.get("error"):
                return True
        except (OSError, ValueError):
            pass
    return any(w in name for w in ("broken", "invalid", "reject"))


def check_folded_oracles(ctx, label, path):
    r = ctx.oracle(["python3", ctx.checker("check_folded.py"), path])
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: check_folded.py exit ({r.stdout.decode(errors='replace')[-600:]})")
    if not ctx.check(os.path.exists(FLAMEGRAPH), f"oracle {FLAMEGRAPH} is not installed (libdevel-nytprof-perl)"):
        return
    r = ctx.oracle(["perl", FLAMEGRAPH, "--countname=us", path])
    if r is not None:
        err = r.stderr.decode(errors="replace")
        ctx.eq(r.returncode, 0, f"{label}: flamegraph.pl exit ({err[-400:]})")
        ctx.check("Ignored" not in err, f"{label}: flamegraph.pl ignored lines: {err[-400:]}")
        ctx.check(r.stdout.startswith(b"<?xml"), f"{label}: flamegraph.pl produced no SVG")


def thread_of_root(root):
    """'name-tid' -> tid (int) or None."""
    _, _, tid = root.rpartition("-")
    return int(tid) if tid.isdigit() else None


def check_input(ctx, label, src):
    # JSON
    js, figs = ctx.convert(src, "json")
    if js is None:
        print(f"   ^ {label}: conversion to json failed")
        return
    try:
        with open(js, "rb") as f:
            json.load(f)
        ctx.check(True, "")
    except ValueError as e:
        ctx.fail(f"{label}: json output does not load with Python json: {e}")
        return
    r = ctx.oracle(["python3", ctx.checker("check_chrome_json.py"), js])
    if r is not None:
        ctx.eq(r.returncode, 0, f"{label}: check_chrome_json.py exit ({r.stdout.decode(errors='replace')[-600:]}"
               f"{r.stderr.decode(errors='replace')[-300:]})")
    jt = tclib.json_thread_totals(js)
    json_by_tid = {}
    for (pid, tid), (_cnt, ns) in jt.items():
        json_by_tid[int(tid)] = json_by_tid.get(int(tid), 0) + ns

    # folded, per thread
    fo, _ = ctx.convert(src, "folded")
    if fo is None:
        return
    check_folded_oracles(ctx, label + " folded", fo)
    ft = tclib.folded_thread_totals(fo)
    fold_by_tid = {}
    for root, us in ft.items():
        tid = thread_of_root(root)
        if not ctx.check(tid is not None, f"{label}: folded first frame {root!r} is not 'name-tid'"):
            continue
        fold_by_tid[tid] = fold_by_tid.get(tid, 0) + us
    want = {tid: round(ns / 1000) for tid, ns in json_by_tid.items() if round(ns / 1000) > 0}
    ctx.eq(sorted(fold_by_tid), sorted(want), f"{label}: threads with time in folded vs json")
    for tid in sorted(set(fold_by_tid) & set(want)):
        ctx.eq(fold_by_tid[tid], want[tid], f"{label}: thread {tid}: folded total µs vs json top-level sum")

    # --no-thread: one merged flame graph with the same total
    nt, _ = ctx.convert(src, "folded", out=os.path.join(ctx.work, os.path.basename(src) + ".nothread.folded"),
                        extra=["--no-thread"])
    if nt is not None:
        check_folded_oracles(ctx, label + " folded --no-thread", nt)
        total_nt = sum(tclib.read_folded(nt).values())
        ctx.eq(total_nt, sum(fold_by_tid.values()), f"{label}: --no-thread folded total vs sum over threads")
        roots = set(tclib.folded_thread_totals(nt))
        ctx.check(not (roots & set(ft)), f"{label}: --no-thread output still has thread frames: {sorted(roots & set(ft))[:3]}")
    return figs


def clock_of(stderr):
    for line in stderr.splitlines():
        if " -> " in line and "clock " in line:
            return line.split("clock ", 1)[1].split()[0].rstrip(",")  # "clock wall, gzip -> ..."
    return None


def check_cpu_weight(ctx, label, src):
    r = ctx.run(["-o", "ir", src, "-"])
    if r.returncode != 0:
        return  # already reported by check_input
    clock = clock_of(r.stderr.decode(errors="replace"))
    out = os.path.join(ctx.work, os.path.basename(src) + ".cpu.folded")
    if os.path.exists(out):
        os.remove(out)
    r = ctx.run(["-f", "-o", "folded", "--weight", "cpu", src, out])
    err = r.stderr.decode(errors="replace")
    if clock in ("dual", "thread-cpu"):
        if ctx.eq(r.returncode, 0, f"{label}: --weight cpu on clock={clock} exit ({err.strip()})"):
            check_folded_oracles(ctx, label + " folded --weight cpu", out)
    elif clock == "wall":
        ctx.eq(r.returncode, 1, f"{label}: --weight cpu on a wall-only input: exit ({err.strip()})")
        ctx.check("cpu" in err.lower() and "wall" in err.lower(),
                  f"{label}: --weight cpu on wall-only input: message does not explain (cpu/wall): {err.strip()!r}")
        ctx.check(not os.path.exists(out), f"{label}: --weight cpu failure left {out}")
    else:
        ctx.fail(f"{label}: cannot tell the input clock from the summary line: {err.strip()!r}")


def main():
    ctx = tclib.Ctx()
    inputs = [(label, p) for label, p in ctx.extra_files("art") if p.endswith(".trace")
              and os.path.basename(p) not in BROKEN]
    cases = ctx.project_cases()
    ctx.check(cases, f"{ctx.corpus} holds the project's traces")
    for name, trace, facts in cases:
        if meant_to_fail(name, facts):
            print(f"note: corpus/{name} is meant to fail; not checked here")
            continue
        inputs.append(("corpus/" + name + tclib.known_bug(name), trace))
    for sub in ("rhea", "systrace"):  # with slices: the JSON of a sampling dump has samples, no slices
        inputs += [(label, p) for label, p, f in ctx.corpus_inputs(sub)
                   if not f.get("sched_only") and f.get("variant") != "v3-sampling"]
    for label, src in inputs:
        check_input(ctx, label, src)
        check_cpu_weight(ctx, label, src)
    ctx.done()


if __name__ == "__main__":
    main()
