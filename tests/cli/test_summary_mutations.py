#!/usr/bin/env python3
"""`traceconv batch --merge-summaries` over mutants of real shard summaries (issue 38).

Summaries made by batch itself from a few small corpus traces (with a non-trace, a corrupt
trace and an INPUT that does not exist): two shards, three shards, an unsharded run, and the
two shards run again (their members kept: "existing"). Each mutant takes one run's summaries
and changes one to three things: bytes flipped, a file cut short, a key deleted, a number
changed (to its neighbours, negative, fractional, 2^53 and past it, 2^64, 1e300, a string,
null), members dropped, swapped or duplicated into another shard (its totals made to count
it, so that only the rule "a member is one shard's" can refuse it), totals shifted. Then
--merge-summaries, into --summary FILE or onto stdout. What must hold:

- the exit status is 0 or 1, never a signal (the merge of `{` died of SIGSEGV);
- on 1: exactly one line on stderr, naming a summary given (or FILE); nothing on stdout; no
  FILE and no other new file in its folder;
- on 0: the merged summary's totals are what its members add up to (members, ok, failed,
  skipped, existing, bytes_in, bytes_out);
- a member duplicated into another shard (its totals counting it) is refused.

The seed changes on every run and is printed: TC_SUMMARY_SEED=N replays it, and
TC_SUMMARY_MUTATIONS sets how many mutants (default 400; 150 under the sanitizers).
"""
import concurrent.futures
import copy
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

ctx = tclib.Ctx()
W = ctx.work
FORMATS = "json,folded"
NUMBERS = [-1, 0, 0.5, 1.5, 2**53, 2**53 + 1, 2**64, 1e300, "1", None, True, [], {}]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def make_runs():
    """{name: [summary bytes, ...]}: the summaries batch wrote for each run."""
    src = os.path.join(W, "in")
    os.makedirs(src, exist_ok=True)
    traces = sorted((p for p in os.listdir(ctx.corpus) if p.endswith(".trace")),
                    key=lambda p: os.path.getsize(os.path.join(ctx.corpus, p)))[:6]
    for p in traces:
        shutil.copy(os.path.join(ctx.corpus, p), os.path.join(src, p))
    with open(os.path.join(src, "notes.txt"), "wb") as f:
        f.write(b"not a trace\n")
    with open(os.path.join(src, "bad.trace"), "wb") as f:
        f.write(b"SLOW\x03\x00\x10\x00" + b"x" * 64)
    inputs = [src, os.path.join(W, "no-such-input.zip")]
    runs = {}

    def batch(outdir, summary, extra):
        r = ctx.reference_run(["batch", "-q", "-j", "1", "-o", FORMATS, "-O", outdir, "--summary", summary] +
                              extra + inputs)
        ctx.check(r.returncode == 1, f"batch {extra} (a corrupt trace, a missing input): exit {r.returncode}: "
                                     f"{r.stderr.decode(errors='replace')}")
        return read(summary)

    for n in (2, 3):
        out = os.path.join(W, f"out{n}")
        runs[f"{n} shards"] = [batch(out, os.path.join(W, f"s{n}-{i}.json"), ["--shard", f"{i}/{n}"])
                               for i in range(n)]
    runs["2 shards again"] = [batch(os.path.join(W, "out2"), os.path.join(W, f"s2-{i}.json"), ["--shard", f"{i}/2"])
                              for i in range(2)]
    ctx.check(any(e.get("existing") for s in runs["2 shards again"] for e in json.loads(s)["members"]),
              "the shards run again keep their members' outputs (existing)")
    runs["unsharded"] = [batch(os.path.join(W, "out1"), os.path.join(W, "u.json"), [])]
    for name, summaries in runs.items():  # each run's summaries merge as they are
        paths = write_summaries(os.path.join(W, "base-" + name.replace(" ", "-")), summaries, "")
        r = ctx.run(["batch", "--merge-summaries"] + paths)
        ctx.eq(r.returncode, 0, f"{name}: the summaries batch wrote merge ({r.stderr!r})")
        if r.returncode == 0:
            ctx.eq(count_errors(json.loads(r.stdout)), [], f"{name}: the merged totals")
    return runs


# ---- what the totals are (doc/batch.md, batch.c) ----

def counted(members):
    t = dict.fromkeys(("members", "ok", "failed", "skipped", "existing", "bytes_in", "bytes_out"), 0)
    for e in members:
        t["members"] += 1
        t[e["status"]] += 1
        t["existing"] += e.get("existing") is True
        t["bytes_in"] += e["size"]
        if e.get("existing") is not True:
            t["bytes_out"] += sum(o["size"] for o in e.get("outputs", []) if o["size"] > 0)
    return t


def count_errors(merged):
    """The totals of a merged summary that are not what its members add up to."""
    try:
        want = counted(merged["members"])
    except (KeyError, TypeError) as e:
        return [f"a member the totals cannot count: {e!r}"]
    return [f"totals.{k} is {merged['totals'].get(k)!r}, its members add up to {v}" for k, v in want.items()
            if merged["totals"].get(k) != v or isinstance(merged["totals"].get(k), bool)]


# ---- mutations ----

def as_text(summary):
    """A summary as batch lays it out: the header, a member a line, the totals."""
    head = {k: v for k, v in summary.items() if k not in ("members", "totals")}
    rest = {k: v for k, v in summary.items() if k == "totals"}
    members = summary.get("members", [])
    body = ",\n".join(json.dumps(m, separators=(",", ":")) for m in members) if isinstance(members, list) else \
        json.dumps(members)
    text = json.dumps(head, separators=(",", ":"))[:-1]
    text += ("," if head else "") + '\n"members":' + ("[\n" + body + "\n]" if isinstance(members, list) else body)
    if rest:
        text += ',\n"totals":' + json.dumps(rest["totals"], separators=(",", ":"))
    return (text + "}\n").encode()


def places(obj, path=()):
    """Every (container, key) of a parsed summary, depth first."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield obj, k
            yield from places(v, path + (k,))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield obj, i
            yield from places(v, path + (i,))


def mutate(rnd, texts):
    """One to three changes to a run's summaries: (the new texts, what was done, a duplicate)."""
    texts = list(texts)
    done = []
    duplicate = False
    for _ in range(rnd.choice((1, 1, 1, 2, 3))):
        i = rnd.randrange(len(texts))
        kind = rnd.choice(("flip", "flip", "cut", "delete", "number", "number", "number", "drop", "swap",
                           "duplicate", "duplicate", "totals"))
        data = texts[i]
        if kind == "flip":
            b = bytearray(data)
            for _ in range(rnd.randint(1, 4)):
                if b:
                    b[rnd.randrange(len(b))] = rnd.choice((rnd.randrange(256), *b'{}[],:"0-9e. \n'))
            texts[i] = bytes(b)
            done.append(f"bytes of summary {i} flipped")
            continue
        if kind == "cut":  # anywhere, or in its first bytes (a summary holding only "{" crashed the merge)
            texts[i] = data[:rnd.randrange(len(data) + 1) if rnd.random() < 0.7 else rnd.randrange(min(len(data), 12) + 1)]
            done.append(f"summary {i} cut at byte {len(texts[i])}")
            continue
        try:
            s = json.loads(data)
        except ValueError:  # damaged by an earlier change: damage it more
            texts[i] = data[:rnd.randrange(len(data) + 1)]
            done.append(f"summary {i} cut")
            continue
        if not isinstance(s, dict):
            continue
        members = s.get("members") if isinstance(s.get("members"), list) else []
        if kind == "delete":
            spots = [(c, k) for c, k in places(s) if isinstance(c, dict)]
            c, k = rnd.choice(spots)
            del c[k]
            done.append(f"key {k!r} deleted from summary {i}")
        elif kind == "number":
            spots = [(c, k) for c, k in places(s) if isinstance(c[k], (int, float)) and not isinstance(c[k], bool)]
            if not spots:
                continue
            c, k = rnd.choice(spots)
            old = c[k]
            c[k] = rnd.choice(NUMBERS + [old + 1, old - 1, old * 2])
            done.append(f"{k!r} {old!r} -> {c[k]!r} in summary {i}")
        elif kind in ("drop", "swap") and len(members) >= 2:
            a, b = rnd.sample(range(len(members)), 2)
            if kind == "drop":
                del members[a]
            else:
                members[a], members[b] = members[b], members[a]
            done.append(f"members {kind} in summary {i}")
        elif kind == "duplicate" and len(texts) > 1:
            j = rnd.choice([x for x in range(len(texts)) if x != i])
            try:
                other = json.loads(texts[j])["members"]
                e = copy.deepcopy(rnd.choice(other))
                at = sum(1 for m in members if m["index"] < e["index"])
                if at < len(members) and members[at]["index"] == e["index"]:
                    continue  # the member every shard lists: already there
                members.insert(at, e)
                add = counted([e])
                for k, v in add.items():
                    s["totals"][k] += v
            except (ValueError, KeyError, TypeError, IndexError, AttributeError):
                continue
            duplicate = len(done) == 0
            done.append(f"member at index {e['index']} of summary {j} duplicated into summary {i}, counted")
        elif kind == "totals" and isinstance(s.get("totals"), dict):
            k = rnd.choice([k for k in s["totals"] if k != "seconds"] or ["members"])
            s["totals"][k] = s["totals"].get(k, 0) + rnd.choice((-1, 1, 2**63))
            done.append(f"totals.{k} shifted in summary {i}")
        else:
            continue
        texts[i] = as_text(s)
    return texts, done, duplicate and len(done) == 1


def write_summaries(d, texts, prefix):
    """Each summary text as d/PREFIXi.json; their paths."""
    os.makedirs(d, exist_ok=True)
    paths = [os.path.join(d, f"{prefix}{i}.json") for i in range(len(texts))]
    for path, t in zip(paths, texts):
        with open(path, "wb") as f:
            f.write(t)
    return paths


def run_one(seed, k, texts, done, duplicate, to_file):
    d = os.path.join(W, "m", str(k))
    paths = write_summaries(d, texts, "shard-")
    out = os.path.join(d, "merged.json")
    args = [ctx.traceconv, "batch", "--merge-summaries"] + (["--summary", out] if to_file else []) + paths
    what = f"mutant {k} (seed {seed}: {'; '.join(done) or 'unchanged'}), {' '.join(args[1:])}"
    try:
        r = subprocess.run(args, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return f"{what}: timed out"
    err = r.stderr.decode(errors="replace")
    if r.returncode not in (0, 1):
        return f"{what}: exit {r.returncode}: {err[-2000:]}"
    left = sorted(set(os.listdir(d)) - {os.path.basename(p) for p in paths})
    if r.returncode == 1:
        lines = err.splitlines()
        if len(lines) != 1:
            return f"{what}: exit 1 with {len(lines)} lines on stderr: {err[-2000:]!r}"
        if not any(os.path.basename(p) in lines[0] for p in paths + [out]):
            return f"{what}: exit 1, but the line names no summary: {lines[0]!r}"
        if r.stdout or left:
            return f"{what}: exit 1, but written: stdout {len(r.stdout)} bytes, files {left}"
        shutil.rmtree(d)
        return 1
    if duplicate:
        return f"{what}: a member listed by two shards was merged"
    if left != (["merged.json"] if to_file else []):
        return f"{what}: exit 0, files left beside the summaries: {left}"
    try:
        # the bytes of names pass through as the shards wrote them (batch writes a member's path as it is)
        merged = json.loads((read(out) if to_file else r.stdout).decode("utf-8", "surrogateescape"))
    except ValueError as e:
        return f"{what}: exit 0, but the merged summary is not JSON: {e}"
    errors = count_errors(merged)
    if errors:
        return f"{what}: exit 0, but {'; '.join(errors)}"
    shutil.rmtree(d)
    return 0


def main():
    env_seed = os.environ.get("TC_SUMMARY_SEED", "").strip()
    seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1 << 32)
    total = int(os.environ.get("TC_SUMMARY_MUTATIONS", "150" if tclib.is_sanitized(ctx.traceconv) else "400"))
    print(f"summary mutation seed: {seed} (replay with TC_SUMMARY_SEED={seed})", flush=True)
    runs = make_runs()
    names = sorted(runs)
    rnd = random.Random(seed)
    jobs = []
    for k in range(total):
        texts, done, duplicate = mutate(rnd, runs[names[k % len(names)]])
        jobs.append((seed, k, texts, done, duplicate, rnd.random() < 0.5))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda j: run_one(*j), jobs))
    bad = [r for r in results if isinstance(r, str)]
    for r in bad[:10]:
        ctx.fail(r)
    ctx.check(not bad, f"{len(bad)} of {len(jobs)} mutants misbehaved (replay with TC_SUMMARY_SEED={seed})")
    dups = sum(1 for j in jobs if j[4])
    ctx.check(dups > 0 or total < 50, f"no mutant duplicated a member into another shard (seed {seed})")
    if not bad:
        print(f"{len(jobs)} mutants of {len(names)} runs' summaries: {results.count(0)} merged, {results.count(1)} "
              f"refused cleanly, {dups} with a member duplicated (seed {seed})")
    ctx.done()


main()
