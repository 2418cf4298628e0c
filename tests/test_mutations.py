"""Seeded mutation test: every project corpus trace and every input file of
../shared/corpus (art, rhea, systrace) is mutated a few hundred times (bit flips, truncations,
splices, overwritten runs). Each conversion must end in success (exit 0) or
one clean error (exit 1) - never a signal, a sanitizer report or a hang -
and an error must leave no output file. Writers rotate across runs.
The seed is fixed, so a failure reproduces; TC_MUTATIONS changes the count."""
import concurrent.futures
import glob
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import tclib  # noqa: E402

WRITERS = ["json", "folded", "perfetto", "pprof"]


def mutate(data, rnd):
    d = bytearray(data)
    op = rnd.choice(("flip", "truncate", "splice", "overwrite"))
    if not d:
        return bytes(rnd.randrange(256) for _ in range(rnd.randrange(64))), op
    if op == "flip":
        for _ in range(rnd.randint(1, 8)):
            i = rnd.randrange(len(d))
            d[i] ^= 1 << rnd.randrange(8)
    elif op == "truncate":
        d = d[: rnd.randrange(len(d))]
    elif op == "splice":
        i, j = rnd.randrange(len(d)), rnd.randrange(len(d))
        d = d[:i] + d[j:]
    else:
        i = rnd.randrange(len(d))
        d[i:i + 4] = bytes(rnd.randrange(256) for _ in range(4))
    return bytes(d), op


def run_one(ctx, job):
    idx, src, data, writer = job
    path = os.path.join(ctx.work, f"m{idx}.trace")
    out = os.path.join(ctx.work, f"m{idx}.out")
    with open(path, "wb") as f:
        f.write(data)
    try:
        r = subprocess.run([ctx.traceconv, "-q", "-f", "-o", writer, path, out], capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return f"{src} ({writer}): hang (over 120 s); input kept as {path}"
    err = r.stderr.decode(errors="replace")
    problem = None
    if r.returncode not in (0, 1):
        problem = f"exit {r.returncode}"
    elif "Sanitizer" in err or "runtime error" in err:
        problem = "sanitizer report"
    elif r.returncode == 1 and os.path.exists(out):
        problem = "output file left after an error"
    elif r.returncode == 1 and len([l for l in err.splitlines() if l.strip()]) != 1:
        problem = "an error must be one line"
    if problem:
        return f"{src} ({writer}): {problem}; input kept as {path}\n{err[-2000:]}"
    for p in (path, out):
        if os.path.exists(p):
            os.remove(p)
    return None


def main():
    ctx = tclib.Ctx()
    per_file = int(os.environ.get("TC_MUTATIONS", "250"))
    sources = [p for _, p, _ in ctx.project_cases()]
    shared = ctx.shared_corpus("art")
    if shared:  # every input there, whatever its format: unknown ones must be refused cleanly too
        for sub in ("art", "rhea", "systrace"):
            for p in sorted(glob.glob(os.path.join(ctx.shared, "corpus", sub, "*"))):
                if not p.endswith((".md", ".py")) and "LICENSE" not in p:
                    sources.append(p)
    else:
        print("note: ../shared/corpus is absent: mutating the project corpus only")
    rnd = random.Random(20261120)
    jobs = []
    for src in sources:
        with open(src, "rb") as f:
            data = f.read()
        n = per_file if len(data) < 200_000 else max(20, per_file // 10)  # big files cost more per run
        for _ in range(n):
            m, _op = mutate(data, rnd)
            jobs.append((len(jobs), os.path.basename(src), m, WRITERS[len(jobs) % len(WRITERS)]))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda j: run_one(ctx, j), jobs))
    bad = [r for r in results if r]
    for r in bad[:10]:
        ctx.fail(r)
    ctx.check(not bad, f"{len(bad)} of {len(jobs)} mutated inputs misbehaved")
    print(f"{len(jobs)} mutated inputs converted or refused cleanly" if not bad else "")
    ctx.done()


if __name__ == "__main__":
    main()
