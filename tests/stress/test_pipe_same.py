"""Both cores on one file (issue 26 goal 2): `-j 2` (the reading and the writing of a
conversion on two threads) writes exactly what `-j 1` (one thread, today's path: no thread
started) writes. The oracle is the one-thread run of the same command: stdout bytes, every
output file, exit status and stderr must be equal.

Each run takes a random seed and prints it; TC_PIPE_SEED=N replays run N exactly. Per run:
every input of the project corpus (those of test_mutations: art, art-v2, art-longrun, rhea,
systrace, tests/json, tests/ir) through two writers chosen by the seed (all writers over
the runs), then the option sets (--thread main, --since/--until, --reverse, --strict,
--max-output 2K, several formats in one pass: -o perfetto,json,pprof) on a sample of
inputs, then TC_PIPE_MUTANTS seeded mutants (default 80, 20 in a sanitized build; made as
test_mutations makes its own) each with a writer in turn, six of them with five formats in
one pass (-j 2 and -j 4: the outputs over several writing threads). A full stdout (/dev/full: the writer fails mid-way) is
compared too. Kept under 20 s on the shared 2-core machine."""
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, HERE)
import tclib  # noqa: E402
import test_mutations  # noqa: E402  (its sources and its mutations)

OPTION_SETS = (["--thread", "main"], ["--since", "1ms", "--until", "40ms"], ["--reverse"], ["--strict"],
               ["--max-output", "2K"], ["--ignore-idle", "--max-depth", "3"])
TREE_WRITERS = ("folded", "report", "flamegraph", "pprof")  # --reverse is theirs


def run(ctx, argv, cwd=None, stdout=subprocess.PIPE):
    r = subprocess.run([os.path.abspath(ctx.traceconv), *argv], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE, timeout=120)
    return r.returncode, r.stdout or b"", r.stderr


def same(ctx, what, argv):
    """argv with -j 1 and with -j 2: equal stdout, exit status and stderr."""
    one = run(ctx, ["-j", "1", *argv])
    two = run(ctx, ["-j", "2", *argv])
    if one[0] == 2:  # a usage error on both (a traceconv without -j) would compare equal
        ctx.fail(f"{what}: exit 2 (usage): {one[2][-300:]!r}")
    if one != two:
        ctx.fail(f"{what}: -j 1 and -j 2 differ: exit {one[0]}/{two[0]}, stdout {len(one[1])}/{len(two[1])} "
                 f"bytes{' (not equal)' if one[1] != two[1] else ''}\n  stderr -j1: {one[2][-300:]!r}\n"
                 f"  stderr -j2: {two[2][-300:]!r}\n  command: traceconv -j N {' '.join(argv)}")
    return one == two


def same_files(ctx, what, src, formats, threads="2"):
    """Several formats in one pass, written beside a copy of src: the same files and messages
    (with -j 2 or more, the outputs are split over several writing threads)."""
    got = []
    for j in ("1", threads):
        d = os.path.join(ctx.work, f"multi-j{j}")
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        copy = os.path.join(d, os.path.basename(src))
        shutil.copyfile(src, copy)
        rc, _, err = run(ctx, ["-j", j, "-o", formats, copy], cwd=d)
        files = {f: open(os.path.join(d, f), "rb").read() for f in sorted(os.listdir(d))}
        got.append((rc, err.replace(d.encode(), b"DIR"), files))
    ctx.check(got[0] == got[1], f"{what}: -o {formats} {src}: -j 1 and -j {threads} differ "
              f"(exit {got[0][0]}/{got[1][0]}, files {sorted(got[0][2])} / {sorted(got[1][2])})")


def full_disk(ctx, src, writer):
    """stdout is /dev/full: the output fails mid-way, with one message and the exit of -j 1."""
    res = []
    for j in ("1", "2"):
        with open("/dev/full", "wb") as full:
            rc, _, err = run(ctx, ["-j", j, "-o", writer, src, "-"], stdout=full)
        res.append((rc, err))
    ctx.check(res[0] == res[1] and res[0][0] == 1, f"{writer} {src} > /dev/full: -j 1 and -j 2: {res}")


def main():
    ctx = tclib.Ctx()
    env_seed = os.environ.get("TC_PIPE_SEED", "").strip()
    seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1 << 32)
    # a sanitized build runs each conversion several times slower: fewer mutants there
    n_mutants = int(os.environ.get("TC_PIPE_MUTANTS", "20" if tclib.is_sanitized(ctx.traceconv) else "80"))
    print(f"pipe seed: {seed} (replay with TC_PIPE_SEED={seed})", flush=True)
    rnd = random.Random(seed)
    writers = [w for w in test_mutations.tables(ctx)[0] if not w.startswith("diff:")]
    ctx.check(len(writers) >= 10 and "perfetto" in writers, f"--list-formats --json: {writers}")
    srcs = test_mutations.sources(ctx)
    jobs = []
    for src in srcs:  # every input, two writers each
        for w in rnd.sample(writers, 2):
            jobs.append((f"{src} -> {w}", ["-o", w, src, "-"]))
    inputs = [p for p in srcs if p.endswith((".trace", ".json", ".txt", ".html"))]
    for opts in OPTION_SETS:
        for src in rnd.sample(inputs, 4):
            w = rnd.choice(TREE_WRITERS if "--reverse" in opts else writers)
            jobs.append((f"{src} -> {w} {' '.join(opts)}", ["-o", w, *opts, src, "-"]))
    mutants = []
    blobs = {p: open(p, "rb").read() for p in srcs}
    for k in range(n_mutants):
        src = rnd.choice(srcs)
        d = bytearray(blobs[src])
        what = "; ".join(test_mutations.mutate_once(d, rnd) for _ in range(rnd.choice((1, 1, 2, 3))))
        path = os.path.join(ctx.work, f"m{k}-{os.path.basename(src)}")
        with open(path, "wb") as f:
            f.write(d)
        mutants.append(path)
        w = writers[k % len(writers)]
        jobs.append((f"mutant {path} of {src} ({what}) -> {w}", ["-o", w, path, "-"]))
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda j: same(ctx, *j), jobs))
    ctx.check(all(results), f"seed {seed}: {results.count(False)} of {len(jobs)} commands differ (above)")
    for src in rnd.sample(inputs, 2):
        same_files(ctx, "several formats", src, "perfetto,json,pprof")
    for k, p in enumerate(rnd.sample(mutants, min(6, len(mutants)))):  # several writing threads on bad input
        same_files(ctx, "several formats, a mutant", p, "json,perfetto,ir,folded,systrace", "2" if k % 2 else "4")
    full_disk(ctx, os.path.join(ctx.corpus, "app-startup.trace"), "json")
    full_disk(ctx, os.path.join(ctx.corpus, "app-startup.trace"), "pprof")
    for p in mutants:
        os.remove(p)
    print(f"{len(jobs)} commands compared with -j 1 and -j 2 ({n_mutants} mutants)")
    ctx.done()


if __name__ == "__main__":
    main()
