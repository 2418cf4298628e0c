#!/usr/bin/env python3
"""Seeded mutation test of the second untrusted input, the --deobfuscate mapping
(test_mutations.py mutates traces; this mutates mappings, with its mutations:
bit flips, truncations, cut ranges, random bytes, NUL/0xFF/quotes/'|'/newlines
inserted where fields start, lines duplicated). Mappings: the one tracegen
--obfuscate writes for tests/deobf/feed.scn, and the seeds of fuzz_deobf
(tests/fuzz/deobf-seeds). Each mutant is applied to the obfuscated feed trace
(whose classes the mappings name, so member lines are parsed) with a writer
taken in turn from --list-formats, sometimes with --strict or --max-string.
Each conversion must succeed or fail with one clean line naming the mapping,
no output file - never a signal, a sanitizer report or a hang.

A fresh seed each run, printed; TC_MUTATION_SEED=N replays it, TC_DEOBF_MUTATIONS
sets how many mutants (default 600; apart from TC_MUTATIONS, which the sanitizer
pass sets for the trace mutations)."""
import concurrent.futures
import glob
import os
import random
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_mutations as tm  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def run_one(ctx, trace, seed, job):
    mp, out = job["path"], job["path"] + ".out"
    with open(mp, "wb") as f:
        f.write(job["data"])
    cmd = [ctx.traceconv, "-q", "-f", "-o", job["writer"], *job["opts"], "--deobfuscate", mp, trace, out]
    problem, rc, err = tm.run_and_judge(cmd, out)
    if not problem and rc == 1 and ": deobfuscate: " in err and "under --strict" not in err and mp not in err:
        problem = "an error in the mapping must name the mapping"
    if problem:
        return (f"{problem}\n  mutation seed {seed}, mutant {job['idx']} of {job['src']}: {job['what']}\n"
                f"  command: {shlex.join(cmd)}\n  mapping kept as {mp}\n{tm.visible(tm.excerpt(err))}")
    for p in (mp, out):
        if os.path.exists(p):
            os.remove(p)
    return None


def main():
    ctx = tclib.Ctx()
    if not ctx.tracegen:
        ctx.fail("tracegen was not built")
        ctx.done()
    trace, feed_map = os.path.join(ctx.work, "feed.trace"), os.path.join(ctx.work, "feed-mapping.txt")
    r = subprocess.run([ctx.tracegen, os.path.join(HERE, "deobf", "feed.scn"), trace, "--obfuscate", feed_map],
                       capture_output=True)
    if not ctx.check(r.returncode == 0, f"tracegen: {r.stderr.decode(errors='replace')}"):
        ctx.done()
    sources = [feed_map] + sorted(glob.glob(os.path.join(HERE, "fuzz", "deobf-seeds", "*")))
    writers = [w for w in tm.tables(ctx)[0] if not w.startswith("diff:")]  # the writers, in the tables' order
    seed = int(os.environ.get("TC_MUTATION_SEED", random.SystemRandom().randrange(1 << 31)))
    count = int(os.environ.get("TC_DEOBF_MUTATIONS", "600"))
    print(f"mutation seed {seed} (TC_MUTATION_SEED={seed} replays this run), {count} mutated mappings")
    rnd = random.Random(seed)
    datas = {s: open(s, "rb").read() for s in sources}
    jobs = []
    for idx in range(count):
        src = sources[idx % len(sources)]
        d = bytearray(datas[src])
        what = [tm.mutate_once(d, rnd) for _ in range(rnd.choice((1, 1, 1, 2, 3)))]
        opts = []
        if rnd.random() < 0.2:
            opts.append("--strict")
        if rnd.random() < 0.1:
            opts += ["--max-string", "40"]
        jobs.append({"idx": idx, "src": src, "data": bytes(d), "writer": writers[idx % len(writers)], "opts": opts,
                     "what": "; ".join(what), "path": os.path.join(ctx.work, f"m{seed}-{idx}-mapping.txt")})
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for problem in pool.map(lambda j: run_one(ctx, trace, seed, j), jobs):
            ctx.check(problem is None, problem or "")
    ctx.done()


if __name__ == "__main__":
    main()
