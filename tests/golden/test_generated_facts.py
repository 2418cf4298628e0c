#!/usr/bin/env python3
"""Project corpus (traces written by tracegen from corpus/*.scn): traceconv's
figures, per-thread totals and folded stacks equal the generator's facts file
(corpus/CASE.facts.json), which tracegen computes from the scenario, not from
traceconv.  Also generates corpus/millions.scn (if present) with tracegen and
checks its record/thread figures."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

FIGS = {  # facts key -> traceconv summary figure
    "records": "records",
    "threads_with_events": "threads",
    "exit_without_enter": "exit-without-enter",
    "open_at_end": "open-at-end",
    "unknown_method_ids": "unknown-method-id",
}

def label_for(name):
    return f"corpus/{name}" + tclib.known_bug(name)


def check_case(ctx, name, trace, facts):
    lab = label_for(name)
    clock = facts.get("clock")
    js, figs = ctx.convert(trace, "json", out=os.path.join(ctx.work, name + ".json"))
    if js is None:
        if tclib.known_bug(name):
            print(f"FAIL: {lab}: see the line above")
        return
    for key, fig in FIGS.items():
        if key in facts:
            ctx.eq(figs.get(fig, 0), facts[key] or 0, f"{lab}: figure '{fig}' vs facts '{key}'")
    # DESIGN §4: an exit that is not top of stack either closes frames (mismatched-exit)
    # or is ignored (ignored-exit); both are what the generator counts as mismatched.
    if "mismatched_exits" in facts:
        ctx.eq(figs.get("mismatched-exit", 0) + figs.get("ignored-exit", 0), facts["mismatched_exits"],
               f"{lab}: figures mismatched-exit + ignored-exit vs facts 'mismatched_exits'")
    if "invalid_actions" in facts:
        ctx.eq(figs.get("invalid-action", 0), facts["invalid_actions"], f"{lab}: figure 'invalid-action' vs facts 'invalid_actions'")
    if facts.get("truncated_bytes"):
        ctx.check(figs.get("truncated-input", 0) >= 1,
                  f"{lab}: facts say {facts['truncated_bytes']} truncated bytes, but no truncated-input warning ({figs})")

    # per-thread totals (json top-level slices); a thread-cpu-only input's timeline is CPU time
    want_key = "cpu_total_us" if clock == "thread-cpu" else "wall_total_us"
    jt = tclib.json_thread_totals(js)
    by_tid = {}
    for (_pid, tid), (_cnt, ns) in jt.items():
        by_tid[int(tid)] = by_tid.get(int(tid), 0) + ns
    for t in facts.get("threads", []):
        want = t.get(want_key)
        if want is None:
            continue
        got = by_tid.get(int(t["tid"]), 0)
        ctx.eq(round(got / 1000), want, f"{lab}: thread {t['tid']} ({t.get('name')}): json top-level total µs vs facts {want_key}")
    want_tids = sorted(int(t["tid"]) for t in facts.get("threads", []) if t.get("records"))
    ctx.eq(sorted(tid for tid, ns in by_tid.items() if ns > 0 or tid in want_tids),
           want_tids, f"{lab}: threads with slices in json vs facts threads with records")

    # folded stacks, exactly
    if facts.get("folded") is not None:
        fo, _ = ctx.convert(trace, "folded", out=os.path.join(ctx.work, name + ".folded"))
        if fo is not None:
            got = tclib.read_folded(fo)
            want = {k: v for k, v in facts["folded"].items() if v}
            if not ctx.eq(got == want, True, f"{lab}: folded output vs facts['folded']"):
                for k in sorted(set(got) | set(want)):
                    if got.get(k) != want.get(k):
                        print(f"   {k}: got {got.get(k)}, want {want.get(k)}")
            if "folded_total_us" in facts:
                ctx.eq(sum(got.values()), facts["folded_total_us"], f"{lab}: folded total vs facts folded_total_us")

    # cpu weight when the facts have cpu totals and the input has a CPU clock
    cpu = {int(t["tid"]): t.get("cpu_total_us") for t in facts.get("threads", [])}
    if clock == "dual" and all(v is not None for v in cpu.values()):
        fo, _ = ctx.convert(trace, "folded", out=os.path.join(ctx.work, name + ".cpu.folded"), extra=["--weight", "cpu"])
        if fo is not None:
            per_root = tclib.folded_thread_totals(fo)
            got = {}
            for root, us in per_root.items():
                tid = root.rpartition("-")[2]
                if tid.isdigit():
                    got[int(tid)] = got.get(int(tid), 0) + us
            for tid, want in sorted(cpu.items()):
                if want:
                    ctx.eq(got.get(tid, 0), want, f"{lab}: thread {tid}: folded --weight cpu total vs facts cpu_total_us")


def main():
    ctx = tclib.Ctx()
    cases = [(n, t, f) for n, t, f in ctx.project_cases() if f]
    if not cases:
        print(f"SKIP: {ctx.corpus} has no generated cases with facts yet")
        sys.exit(tclib.SKIP)
    for name, trace, fpath in cases:
        with open(fpath, encoding="utf-8") as f:
            facts = json.load(f)
        check_case(ctx, name, trace, facts)

    scn = os.path.join(ctx.corpus, "millions.scn")
    if ctx.tracegen and os.path.exists(scn):
        out = os.path.join(ctx.work, "millions.trace")
        fpath = os.path.join(ctx.work, "millions.facts.json")
        r = subprocess.run([ctx.tracegen, scn, out, "--facts", fpath], capture_output=True)
        if ctx.eq(r.returncode, 0, f"tracegen millions.scn: exit ({r.stderr.decode(errors='replace').strip()})"):
            with open(fpath, encoding="utf-8") as f:
                facts = json.load(f)
            ctx.check(facts.get("records", 0) >= 1_000_000, f"millions.scn: only {facts.get('records')} records")
            js, figs = ctx.convert(out, "folded", out=os.path.join(ctx.work, "millions.folded"))
            print(f"millions.scn: generated {facts.get('records')} records; traceconv reports {figs.get('records') if js else '-'}")
            if js is not None:
                for key in ("records", "threads_with_events", "open_at_end", "exit_without_enter"):
                    if key in facts:
                        ctx.eq(figs.get(FIGS[key], 0), facts[key], f"millions: figure '{FIGS[key]}' vs facts '{key}'")
                if facts.get("folded_total_us") is not None:
                    ctx.eq(sum(tclib.read_folded(js).values()), facts["folded_total_us"], "millions: folded total")
            for p in (out, js):
                if p and os.path.exists(p):
                    os.remove(p)
    elif not os.path.exists(scn):
        print("note: corpus/millions.scn not present; large generated case not checked")
    else:
        print("note: tracegen not built; large generated case not checked")
    ctx.done()


if __name__ == "__main__":
    main()
