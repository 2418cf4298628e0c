"""Replays every fuzz target (built without libFuzzer as replay_*, from
tests/fuzz/replay.c) over the seeds (the corpus, tests/json, tests/ir and the
inputs of the reader goldens), each through every writer with a few
option sets (replay_convert with the defaults, replay_deobf over the mapping
seeds), and over every past crash in tests/fuzz/regressions/, each as
the fuzzer ran it (its control block picks writer and options) and its trace
through every writer. Under the ASan+UBSan run of make test, a regression
that comes back fails here, and the failure names the file, writer and
options (replay.c runs each file in a child process). replay_merge (tests/fuzz/fuzz_merge.c:
batch --merge-summaries) runs the regressions as summaries. TC_REPLAY_SETS=K (make test's
ASan run: 3) gives each seed and writer the defaults and K of the other option sets,
rotating with the file and TC_REPLAY_SEED (printed, default the time), so one run still
reaches every writer with every set and the next run other pairs."""
import glob
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def main():
    ctx = tclib.Ctx()
    build = os.path.dirname(os.path.abspath(ctx.traceconv))
    replays = sorted(glob.glob(os.path.join(build, "replay_*")))
    ctx.check(len(replays) >= 2, f"replay programs built in {build}: {replays}")
    seeds = sorted(glob.glob(os.path.join(ctx.corpus, "*.trace")))
    seeds += sorted(glob.glob(os.path.join(ctx.corpus, "art-v2", "*.trace")))  # V2 and their v3 twins
    seeds += sorted(glob.glob(os.path.join(ctx.source, "tests", "ir", "*.ir.txt")))
    seeds += sorted(glob.glob(os.path.join(ctx.source, "tests", "json", "*.json")))
    seeds += sorted(glob.glob(os.path.join(ctx.source, "tests", "fuzz", "deobf-seeds", "*")))  # mappings: replay_deobf
    for sub in ("systrace", "rhea"):
        seeds += ctx.corpus_files(sub)
    seeds += sorted(p for p in glob.glob(os.path.join(ctx.corpus, "art-longrun", "*"))  # its dumps, not
                    if not p.endswith((".scn", ".py", ".json", ".md")))          # scenarios or facts
    # every reader golden's input (tests/golden/<reader>/X beside X.ir): hand-made edge cases,
    # run through every writer here so that the sanitizer pass meets them too
    seeds += sorted(p[:-len(".ir")] for p in glob.glob(os.path.join(ctx.source, "tests", "golden", "*", "*.ir"))
                    if os.path.isfile(p[:-len(".ir")]))
    for sub in ("art", "systrace", "rhea"):
        seeds += [p for _, p in ctx.extra_files(sub)]
    regressions = os.path.join(ctx.source, "tests", "fuzz", "regressions")
    mappings = [s for s in seeds if "deobf-seeds" in s]
    env = dict(os.environ)
    if os.environ.get("TC_REPLAY_SETS"):
        seed = os.environ.get("TC_REPLAY_SEED") or str(int.from_bytes(os.urandom(4), "little"))
        env.update(REPLAY_SETS=os.environ["TC_REPLAY_SETS"], REPLAY_SEED=seed)
        print(f"TC_REPLAY_SETS={env['REPLAY_SETS']} TC_REPLAY_SEED={seed} (replay with these)")
    for exe in replays:
        name = os.path.basename(exe)
        # replay_convert probes the format, then does what the reader's own replay did with
        # every option set: the defaults are enough for what it adds. replay_deobf's input is
        # a mapping: the mapping seeds only (malformed mappings are test_deobf_mutations').
        if name == "replay_convert":
            seed_args = ["--seeds-default", *seeds]
        elif name == "replay_deobf":
            seed_args = ["--seeds", *mappings]
        elif name == "replay_merge":  # its input is summaries: test_summary_mutations makes and mutates them
            seed_args = []
        else:
            seed_args = ["--seeds", *seeds]
        r = subprocess.run([exe, *seed_args, "--fuzz", regressions], capture_output=True, text=True,
                           timeout=1200, env=env)
        lines = r.stderr.splitlines()
        failed = [l for l in lines if l.startswith("replay: FAILED ")]
        rest = "\n".join(l for l in lines if not l.startswith("replay: FAILED "))
        detail = "\n".join(failed) + f"\n{r.stdout.strip()}\nthe end of the sanitizers' reports:\n{rest[-3000:]}"
        ctx.check(r.returncode == 0, f"{name}: exit {r.returncode}, failing inputs:\n{detail}")
        print(name, r.stdout.strip())
    ctx.done()


if __name__ == "__main__":
    main()
