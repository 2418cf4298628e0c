"""Replays every fuzz target (built without libFuzzer as replay_*) over its
seeds and every past crash in tests/fuzz/regressions/. Under the ASan+UBSan
run of make test, a regression that comes back aborts the replay."""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import tclib  # noqa: E402


def main():
    ctx = tclib.Ctx()
    build = os.path.dirname(os.path.abspath(ctx.traceconv))
    replays = sorted(glob.glob(os.path.join(build, "replay_*")))
    ctx.check(len(replays) >= 2, f"replay programs built in {build}: {replays}")
    seeds = sorted(glob.glob(os.path.join(ctx.corpus, "*.trace")))
    seeds += sorted(glob.glob(os.path.join(ctx.source, "tests", "ir", "*.ir.txt")))
    seeds += sorted(glob.glob(os.path.join(ctx.source, "tests", "json", "*.json")))
    shared = ctx.shared_corpus("art")
    if shared:
        seeds += sorted(glob.glob(os.path.join(shared, "*")))
        systrace = ctx.shared_corpus("systrace")
        if systrace:
            seeds += sorted(f for f in glob.glob(os.path.join(systrace, "*")) if "LICENSE" not in f)
    else:
        print(f"note: {os.path.join(ctx.shared, 'corpus')} is absent: replaying the project corpus only")
    rhea = ctx.shared_corpus("rhea")
    if rhea:
        seeds += sorted(glob.glob(os.path.join(rhea, "*")))
    regressions = os.path.join(ctx.source, "tests", "fuzz", "regressions")
    for exe in replays:
        r = subprocess.run([exe, *seeds, regressions], capture_output=True, text=True, timeout=1200)
        ctx.check(r.returncode == 0, f"{os.path.basename(exe)}: exit {r.returncode}\n{r.stdout[-500:]}{r.stderr[-3000:]}")
        print(os.path.basename(exe), r.stdout.strip())
    ctx.done()


if __name__ == "__main__":
    main()
