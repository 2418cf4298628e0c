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
import struct
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


# ---- pass 1 on two threads: ART v1-v3 records cut in two halves (normalize.c, pass_one) ----

def art_v3(records, threads=((1, "main"), (2, "worker"), (3, "binder"), (4, "pad"))):
    """An ART v3 non-streaming trace (dual clock): records are (tid, method id, action, wall, cpu)."""
    key = ["*version", "3", "data-file-overflow=false", "clock=dual", "vm=art", "pid=1", "*threads"]
    key += ["%d\t%s" % t for t in threads]
    key.append("*methods")
    key += ["0x%x\tcom.x.C%d\tm%d\t()V\tC.java" % (m, m, m) for m in (0x4, 0x8, 0xc, 0x10, 0x14, 0x18)]
    key.append("*end")
    body = bytearray("\n".join(key).encode() + b"\n")
    body += struct.pack("<IHHQH", 0x574F4C53, 3, 32, 1_000_000_000, 14) + b"\0" * 14
    for tid, mid, action, wall, cpu in records:
        body += struct.pack("<HIII", tid, mid | action, cpu & 0xFFFFFFFF, wall & 0xFFFFFFFF)
    return bytes(body)


def halves(first, second, pad=40):
    """Records (tid, method, action) of both halves, padded with balanced pairs on thread 4 to
    the same length, a multiple of 256 (TCI_RAW_BATCH), so that the reader's cut (half the
    records, down to a multiple of the batch normalize reads: art.c art_split) falls between
    them. Times: the record's index (both clocks), unless a record gives its own (wall, cpu)."""
    n = max(len(first), len(second)) + pad
    n = -(-n // 256) * 256
    out = []
    for half in (first, second):
        half = list(half)
        if (n - len(half)) % 2:
            half.append((4, 0x18, 0))  # one frame left open on the pad thread
        while len(half) < n:
            half += [(4, 0x14, 0), (4, 0x14, 1)]
        out += half
    return [r if len(r) == 5 else (*r, i * 10, i * 10) for i, r in enumerate(out)]


def split_cases():
    """(name, records, options, expected path): each reaches the stitch or one of its fallbacks."""
    E, X = 0, 1
    open_frames = ([(1, 0x4, E), (1, 0x8, E), (3, 0xc, X), (3, 0x10, E), (3, 0x10, X)],
                   [(1, 0xc, E), (1, 0xc, X), (1, 0x8, X), (1, 0x4, X), (1, 0x10, X),  # pops, then before-trace
                    (2, 0x8, X), (2, 0x4, X), (2, 0x10, E),  # a thread that starts in the second half
                    (3, 0x14, X), (1, 0x8, 2)])  # exits of frames open before the trace; an unwind
    deep = ([(1, m, E) for m in (0x4, 0x8, 0xc, 0x10)], [(1, 0x14, E), (1, 0x18, E), (1, 0x18, X), (1, 0x14, X)])
    wrap = halves([(1, 0x4, E)], [(1, 0x4, X)])
    n = len(wrap)
    wrap = [(t, m, a, w + (0xFFFFF000 if i < n // 2 else 0), c) for i, (t, m, a, w, c) in enumerate(wrap)]
    back = halves([(4, 0x14, E), (4, 0x14, X)] * 5 + [(1, 0x4, E)], [(1, 0x4, X)])
    k = len(back) // 2
    t, m, a, w, c = back[k]
    back[k] = (t, m, a, 0, c)  # thread 1's first record after the cut goes back in time
    events = halves([(1, 0x4, E)], [(1, 0x4, X)])
    # 768 records: half is 384, inside the batch [256, 512) of one thread's reading. Warnings
    # on both sides of 384 in that batch (normalize's at 300, the reader's at 400) come out in
    # one thread's order only if the cut is at a batch's end (256; at 384 they were swapped).
    mixed = [(4, 0x14, E if i % 2 == 0 else X) for i in range(768)]
    mixed[290], mixed[291], mixed[292], mixed[293] = (1, 0x4, E), (1, 0x8, E), (4, 0x14, E), (4, 0x14, X)
    mixed[300], mixed[301] = (1, 0x4, X), (4, 0x18, E)  # an exit one frame below the top; a pad
    mixed[400], mixed[401] = (9, 0x4, E), (4, 0x18, E)  # a thread id not in the thread list
    mixed = [(*r, i * 10, i * 10) for i, r in enumerate(mixed)]
    return [
        ("warnings of the reader and of normalize on both sides of the middle, in one batch", mixed, [],
         "fell back"),
        ("open frames across the cut, exits of frames open before the trace", halves(*open_frames), [], "stitched"),
        ("max-depth not reached", halves(*deep), ["--max-depth", "6"], "stitched"),
        ("max-depth crossed after the cut", halves(*deep), ["--max-depth", "5"], "fell back"),
        ("an exit after the cut that is not the top frame",
         halves([(1, 0x4, E), (1, 0x8, E)], [(1, 0x4, X), (1, 0x8, X)]), [], "fell back"),
        ("an exit after the cut of a method not on the stack",
         halves([(1, 0x4, E)], [(1, 0xc, X), (1, 0x4, X)]), [], "fell back"),
        ("more exits without enter than max-depth, a thread that starts after the cut",
         halves([(1, 0x4, E), (1, 0x4, X)], [(2, m, X) for m in (0x4, 0x8, 0xc, 0x10)]), ["--max-depth", "3"],
         "fell back"),
        ("more exits without enter than max-depth, across the cut",
         halves([(3, 0x4, X)], [(3, m, X) for m in (0x8, 0xc, 0x10)]), ["--max-depth", "3"], "fell back"),
        ("exits without enter up to max-depth, across the cut",
         halves([(3, 0x4, X)], [(3, m, X) for m in (0x8, 0xc)]), ["--max-depth", "3"], "stitched"),
        ("a clock wrap across the cut", wrap, [], "fell back"),
        ("time steps back across the cut", back, [], "fell back"),
        ("a thread id not in the thread list after the cut", halves([(1, 0x4, E)], [(9, 0x4, E), (1, 0x4, X)]),
         [], "fell back"),
        ("an unknown method id after the cut", halves([(1, 0x4, E)], [(1, 0x40, E), (1, 0x4, X)]), [], "fell back"),
        ("a corrupt record (action 3) after the cut", halves([(1, 0x4, E)], [(1, 0x4, 3), (1, 0x4, X)]), [],
         "fell back"),
        ("max-events crossed after the cut", events, ["--max-events", str(len(events) - 2)], "fell back"),
    ]


def same_split(ctx, what, argv, expect):
    """-j 1 and -j 2 equal (as same()), and -j 2 took the expected path of the split."""
    env = dict(os.environ, TC_DEBUG_SPLIT="1")
    res = []
    for j in ("1", "2"):
        r = subprocess.run([os.path.abspath(ctx.traceconv), "-j", j, *argv], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=120, env=env)
        lines = r.stderr.splitlines(keepends=True)
        said = [x.decode() for x in lines if x.startswith(b"split: ")]
        res.append(((r.returncode, r.stdout, b"".join(x for x in lines if not x.startswith(b"split: "))), said))
    ctx.check(res[0][0][0] != 2, f"{what}: usage error {res[0][0][2][-300:]!r}")
    ctx.check(res[0][0] == res[1][0], f"{what}: -j 1 and -j 2 differ: exit {res[0][0][0]}/{res[1][0][0]}, "
              f"stdout equal: {res[0][0][1] == res[1][0][1]}, stderr {res[0][0][2][-200:]!r} / {res[1][0][2][-200:]!r}")
    ctx.check(not res[0][1], f"{what}: -j 1 split the pass: {res[0][1]}")
    ctx.check(len(res[1][1]) == 1 and res[1][1][0].startswith("split: " + expect),
              f"{what}: expected 'split: {expect}', -j 2 said {res[1][1]}")


def test_split(ctx):
    n = 0
    for name, records, opts, expect in split_cases():
        path = os.path.join(ctx.work, "split.trace")
        with open(path, "wb") as f:
            f.write(art_v3(records))
        for w in ("perfetto", "folded", "json", "report"):
            same_split(ctx, f"split: {name} -> {w}", ["-o", w, *opts, path, "-"], expect)
            n += 1
        os.remove(path)
    print(f"{n} split cases compared with -j 1 and -j 2")


def main():
    ctx = tclib.Ctx()
    test_split(ctx)
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
