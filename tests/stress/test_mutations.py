"""Seeded mutation test: every trace of the project corpus (art, rhea, systrace),
tests/json, tests/ir and TC_EXTRA_CORPUS when set is mutated: bit flips,
truncations, cut ranges, random bytes, and the bytes that break text formats
(NUL, 0xFF, quotes, backslashes, '|', '\\n', '\\r') inserted or written over
one, lines duplicated; one to three of these per mutant. Each mutant is
converted with a writer taken in turn from `traceconv --list-formats --json`
(so a new writer is covered by itself), or diffed against its original
(`traceconv diff -o FORMAT ORIGINAL MUTANT` for each of the diff's formats, in
the same rotation), with a random set of the options that writer reads, their
values from the option's row (each enum choice, a range's ends, a hostile
title...: a new option is mutated with by itself), one of --max-depth,
--max-string, --max-output at most, and --strict. Each conversion must end in success (exit 0) or one
clean error (exit 1, one line, no output file) - never a signal, a sanitizer
report or a hang.

Each run takes a fresh random seed and prints it; TC_MUTATION_SEED=N replays
run N exactly (same mutants, writers and options), TC_MUTATIONS sets how many
mutants (default 3000, about 100 s on 2 cores in a release build; the sanitizer
pass of make test runs 800 more with its own seed). The seed changes on every
run, so every CI run tries mutants no earlier run tried. A failure prints the seed, the source file,
the mutations, the command, and keeps the mutant in the work dir."""
import concurrent.futures
import glob
import json
import os
import random
import shlex
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

SPECIAL = (b"\0", b"\xff", b'"', b"\\", b"|", b"\n", b"\r")
# Where names start in the text formats: a special byte put right after one of
# these lands inside a name or a field, where it does harm, more often than at
# a random place.
FIELD_STARTS = b'|:" =,(\t'
BIG = 200_000  # bytes: a source this size costs several small ones per conversion
# Every writer and the diff take the core's options: one of these small bounds at most
# (a limit stops most inputs early). --max-output: every writer (and diff) stopping at
# its first failed write.
CORE_LIMITS = (("--max-depth", "3"), ("--max-string", "16"), ("--max-output", "2K"))
HOSTILE_TEXT = "<&>]]>"


def option_values(o):
    """The values a mutant is converted with for one option, from its row of the tables: a
    flag, each choice of an enum, the ends of a range, a hostile text; none for a path (a
    file to give) or a number without a range (the core's limits, above)."""
    t = o["type"]
    if t == "bool":
        return [None]
    if t == "enum":
        return o["choices"]
    if t in ("int", "size") and "max" in o:
        return [str(o["min"]), str(o["max"])]
    if t == "float":
        return ["0", o["default"] or "1"]
    if t == "string" and o.get("arg") == "METHOD":
        # a method pattern that names no method is a usage error (exit 2, issue 36): every
        # method, whose names the mutants make hostile
        return ["*"]
    if t == "string":
        return [HOSTILE_TEXT]
    return []


def tables(ctx):
    """From `traceconv --list-formats --json`: the writers in order, then the diff's formats
    ("diff:text": `traceconv diff -o text ORIGINAL MUTANT`); per each, the options it reads
    with their values (an option a writer ignores is an unused-option warning, an error
    under --strict, so each gets its own), and the groups of options of which one conversion
    takes one at most (those that pick two variants of one writer: report's csv and html;
    callers and reverse)."""
    d = json.loads(ctx.run(["--list-formats", "--json"], check_rc=0).stdout)
    names = {o["name"] for o in d["options"]}
    ctx.check(all(k[2:] in names for k, _ in CORE_LIMITS), f"the core limits are options of every conversion: {names}")
    # --callers is a bottom-up view already: with --reverse a usage error (select.c)
    outs, options, exclusive = [], {}, [{"callers", "reverse"}]
    for kind, prefix in (("writers", ""), ("diff", "diff:")):
        for f in d[kind]:
            outs.append(prefix + f["name"])
            options[prefix + f["name"]] = [(o["name"], option_values(o)) for o in f["options"]
                                           if option_values(o)]
            picks = [v["option"] for v in f.get("variants", ()) if v["option"]]
            if len(picks) > 1:
                exclusive.append(set(picks))
    return outs, options, exclusive


def line_spans(d):
    """(start, end) of each line of d, its newline included."""
    spans, start = [], 0
    while start < len(d):
        end = d.find(b"\n", start)
        end = len(d) if end < 0 else end + 1
        spans.append((start, end))
        start = end
    return spans


def field_position(d, i, rnd):
    """A position inside the field that follows the first field start at or
    after i (i itself when there is none near)."""
    for k in range(i, min(len(d), i + 256)):
        if d[k] in FIELD_STARTS:
            return min(len(d), k + 1 + rnd.randrange(3))
    return i


def mutate_once(d, rnd):
    """Changes bytearray d in place; returns what it did, in words."""
    if not d:
        d.extend(b"".join(rnd.choice(SPECIAL) for _ in range(rnd.randint(1, 16))))
        return "filled an empty file"
    op = rnd.choice(("flip", "truncate", "cut", "random", "insert", "overwrite", "insert", "overwrite", "dup"))
    i = rnd.randrange(len(d))
    if op == "flip":
        bits = []
        for _ in range(rnd.randint(1, 8)):
            k, b = rnd.randrange(len(d)), rnd.randrange(8)
            d[k] ^= 1 << b
            bits.append(f"{k}.{b}")
        return "flipped bits " + ",".join(bits)
    if op == "truncate":
        del d[i:]
        return f"truncated at {i}"
    if op == "cut":
        j = min(len(d), i + rnd.randint(1, 256))
        del d[i:j]
        return f"cut bytes {i}..{j}"
    if op == "random":
        new = bytes(rnd.randrange(256) for _ in range(rnd.randint(1, 4)))
        d[i:i + len(new)] = new
        return f"wrote {new!r} at {i}"
    if op in ("insert", "overwrite"):
        b = rnd.choice(SPECIAL + (b"\0",))  # NUL twice as often: C strings are where it hurts
        if rnd.random() < 0.5:
            i = field_position(d, i, rnd)
        if op == "insert":
            d[i:i] = b
        else:
            d[i:i + 1] = b
        return f"{op} {b!r} at {i}"
    spans = line_spans(d)
    s, e = spans[rnd.randrange(len(spans))]
    times = rnd.choice((1, 1, 2, 3, 10, 100))
    line = bytes(d[s:e]) if d[e - 1:e] == b"\n" else bytes(d[s:e]) + b"\n"
    d[e:e] = line * times
    return f"duplicated the line at {s} ({e - s} bytes) {times}x"


def make_job(seed, idx, src, data, writer, tabs, rnd, work):
    _, options, exclusive = tabs
    d = bytearray(data)
    what = [mutate_once(d, rnd) for _ in range(rnd.choice((1, 1, 1, 2, 3)))]
    opts, picked = [], set()
    if rnd.random() < 0.6:
        if rnd.random() < 0.35:
            opts += rnd.choice(CORE_LIMITS)
        for name, values in options[writer]:
            if rnd.random() < 0.35 and not any(name in g and picked & g for g in exclusive):
                value = rnd.choice(values)
                opts += [f"--{name}"] + ([] if value is None else [value])
                picked.add(name)
        if rnd.random() < 0.25:  # rarely: most mutants carry a warning, and --strict stops at the first
            opts.append("--strict")
    # the source's name stays at the end: some readers probe by extension
    path = os.path.join(work, f"m{seed}-{idx}-{os.path.basename(src)}")
    return {"idx": idx, "src": src, "data": bytes(d), "writer": writer, "opts": opts,
            "what": "; ".join(what), "path": path}


def visible(text):
    """text with its control characters but newlines and tabs escaped, to print."""
    return "".join(c if c >= " " and c != "\x7f" or c in "\n\t" else repr(c)[1:-1] for c in text)


def excerpt(err):
    """A sanitizer's finding and the top of its stack, or the end of stderr."""
    lines = err.split("\n")
    first = next((k for k, l in enumerate(lines) if "ERROR:" in l or "runtime error" in l), None)
    if first is None:
        return "\n".join(lines[-20:])
    summary = [l for l in lines if l.startswith("SUMMARY:")]
    return "\n".join(lines[first:first + 12] + summary[-1:])


def run_and_judge(cmd, out):
    """Runs one conversion of a mutant: (what went wrong or None, exit status, stderr).
    It must convert or fail with one clean line and no output, never crash or hang."""
    try:
        r = subprocess.run(cmd, capture_output=True, timeout=120)
    except subprocess.TimeoutExpired:
        return "hang (over 120 s)", None, ""
    err = r.stderr.decode(errors="replace")
    problem = None
    if r.returncode not in (0, 1):
        problem = f"exit {r.returncode}"
    elif "Sanitizer" in err or "runtime error" in err:
        problem = "sanitizer report"
    elif r.returncode == 1 and os.path.exists(out):
        problem = "output file left after an error"
    elif r.returncode == 1 and len([l for l in err.split("\n") if l.strip()]) != 1:
        problem = "an error must be one line"
    elif any(c < " " and c not in "\t\n" or c == "\x7f" for c in err):
        # input bytes quoted raw: a CR rewrites the line, an ESC drives the terminal
        problem = "a control character in the message (input quoted without escaping)"
    return problem, r.returncode, err


def run_one(ctx, seed, job):
    path, out = job["path"], job["path"] + ".out"
    with open(path, "wb") as f:
        f.write(job["data"])
    if job["writer"].startswith("diff:"):
        cmd = [ctx.traceconv, "diff", "-q", "-f", "-o", job["writer"][5:], *job["opts"], job["src"], path, out]
    else:
        cmd = [ctx.traceconv, "-q", "-f", "-o", job["writer"], *job["opts"], path, out]
    problem, _, err = run_and_judge(cmd, out)
    if problem:
        return (f"{problem}\n  mutation seed {seed}, mutant {job['idx']} of {job['src']}: {job['what']}\n"
                f"  command: {shlex.join(cmd)}\n  input kept as {path}\n{visible(excerpt(err))}")
    for p in (path, out):
        if os.path.exists(p):
            os.remove(p)
    return None


def sources(ctx):
    out = [p for _, p, _ in ctx.project_cases()]
    out += sorted(glob.glob(os.path.join(ctx.corpus, "art-v2", "*[!3].trace")))  # ART V2 (their v3 twins add nothing)
    out += sorted(glob.glob(os.path.join(ctx.source, "tests", "json", "*.json")))
    out += sorted(glob.glob(os.path.join(ctx.source, "tests", "ir", "*.ir.txt")))
    # every file there, whatever its format: unknown ones must be refused cleanly too
    for sub in ("rhea", "systrace"):
        out += ctx.corpus_files(sub)
    out += sorted(p for p in glob.glob(os.path.join(ctx.corpus, "art-longrun", "*"))  # long-running dumps
                  if not p.endswith((".scn", ".py", ".json", ".md")))
    for sub in ("art", "rhea", "systrace"):
        out += [p for _, p in ctx.extra_files(sub)]
    return out


def main():
    ctx = tclib.Ctx()
    env_seed = os.environ.get("TC_MUTATION_SEED", "").strip()
    seed = int(env_seed) if env_seed else random.SystemRandom().randrange(1 << 32)
    total = int(os.environ.get("TC_MUTATIONS", "3000"))
    print(f"mutation seed: {seed} (replay with TC_MUTATION_SEED={seed})", flush=True)
    tabs = tables(ctx)
    outs = tabs[0]
    ctx.check(len(outs) >= 6 and "systrace" in outs and "diff:text" in outs, f"--list-formats --json: {outs}")
    srcs = sources(ctx)
    blobs = []
    for src in srcs:
        with open(src, "rb") as f:
            blobs.append(f.read())
    # a big source gets a fifth of a small one's share: it costs several times more per run
    weights = [1 if len(b) >= BIG else 5 for b in blobs]
    rnd = random.Random(seed)
    jobs = []
    for k in range(total):  # every writer in turn; the sources by weight, from the seed alone
        i = rnd.choices(range(len(srcs)), weights)[0]
        jobs.append(make_job(seed, k, srcs[i], blobs[i], outs[k % len(outs)], tabs, rnd, ctx.work))
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda j: run_one(ctx, seed, j), jobs))
    bad = [r for r in results if r]
    for r in bad[:10]:
        ctx.fail(r)
    ctx.check(not bad, f"{len(bad)} of {len(jobs)} mutants misbehaved (mutation seed {seed}; "
                       f"replay with TC_MUTATION_SEED={seed})")
    if not bad:
        print(f"{len(jobs)} mutants of {len(srcs)} traces converted or refused cleanly (seed {seed})")
    ctx.done()


if __name__ == "__main__":
    main()
