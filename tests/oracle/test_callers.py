#!/usr/bin/env python3
"""--callers METHOD (issue 36, item 4): every call of METHOD with its whole inclusive time, as a
tree of its callers rooted at it (pprof's -peek, speedscope's sandwich), in folded, the flame
graph, the report (text, CSV, HTML).

The model is computed apart from the code under test: the -o ir dump's enters and exits (the
events every writer is given) walked here in Python, a stack per thread; a frame of a method
the pattern names (doc/cli.md, "Selection": the model reads the pattern by its rules)
that no frame of such a method encloses (its outermost call: recursion counted once) adds
its wall and thread-CPU time to the path METHOD <- caller <- ... <- the thread's top-level
frame. Checks, on the corpus' app start (real-shaped: framework, app, libraries, six
threads), its direct and mutual recursion case and generated traces with recursion:

1. folded --callers: the model's lines, root first ("METHOD;caller;...;thread count"), wall
   and thread CPU, with --no-thread too; their sum is --focus METHOD's (the same time).
2. pprof -peek on our pprof output (the forward stacks, read by go tool pprof): the callers
   it lists with their times are the first level of our tree (for methods never inside
   themselves, where pprof and the outermost rule agree).
3. flamegraph --callers: the frames flamegraph.pl draws from folded --callers, titled
   "Callers of METHOD".
4. report --csv --callers: every row of the all-threads tree and of each thread's tree is the
   model's node (calls, incl wall/cpu, and excl: the chain ending at the top level).
5. report (text) and report-html: the callers section's lines are the model's merged tree
   (depth, name, µs, share of the method's time), 0.1% and more, by time.
6. Errors: a pattern that names no method (exit 2, closest names), --callers with --reverse
   (exit 2), a method never called in the selected threads (exit 1, one line).
"""
import collections
import csv
import fnmatch
import html.parser
import os
import random
import re
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_flamegraph  # noqa: E402  (our SVG's frames, flamegraph.pl's)
import test_selection  # noqa: E402  (its generated traces: recursion, overloads, idle waits)


# ---- the IR dump, read here ---------------------------------------------------------------

IR_FIELD = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def unquote(v):
    return bytes(v[1:-1], "utf-8").decode("unicode_escape").encode("latin-1").decode("utf-8") if v[:1] == '"' else v


class Ir:
    """Threads, methods and each thread's enters and exits of an -o ir dump."""

    def __init__(self, path):
        self.threads, self.methods, self.events = {}, {}, collections.defaultdict(list)
        with open(path, encoding="utf-8") as f:
            for line in f:
                kind = line.split(" ", 1)[0]
                if kind not in ("thread", "method", "B", "E"):
                    continue
                fields = {k: unquote(v) for k, v in IR_FIELD.findall(line)}
                if kind == "thread":
                    self.threads[int(line.split()[1])] = (fields["name"], int(fields["tid"]), int(fields["records"]))
                elif kind == "method":
                    self.methods[int(line.split()[1])] = fields["name"]
                else:
                    cpu = fields.get("cpu")
                    self.events[int(fields["t"])].append((kind, int(fields["m"]), int(fields["ts"]),
                                                          int(cpu) if cpu not in (None, "-") else None))

    def short(self, m):
        return self.methods[m].split(": (", 1)[0]


def pattern_matches(short, full, glob):
    """doc/cli.md, "Selection": a glob on pkg.Class.method or the full name; without a '.' in its name
    part, on the method's own name; with one, from a package boundary; a signature or not."""
    if "(" in glob and ": (" not in glob:
        glob = glob.replace("(", ": (", 1)
    sig = "(" in glob
    name_part = re.split(r"[:(]", glob, maxsplit=1)[0]
    signature = full[len(short):] if full.startswith(short) else ""  # ": (sig)ret"
    parts = short.split(".")
    tails = [".".join(parts[k:]) for k in range(len(parts))]  # the whole, then from each boundary
    if "." not in name_part:
        tails = tails[:1] + tails[-1:]
    for t in tails:
        if (not sig and fnmatch.fnmatchcase(t, glob)) or fnmatch.fnmatchcase(t + signature, glob):
            return True
    return False


class NestedDict(collections.defaultdict):
    nested = False


def model(ir, glob, cpu=False):
    """{(thread index, (method, caller, ..., top-level frame) as method ids): [calls, time ns]},
    and the methods the pattern names; out.nested: whether a call of them is inside another."""
    marked = {m for m, full in ir.methods.items() if pattern_matches(ir.short(m), full, glob)}
    out = NestedDict(lambda: [0, 0])
    for t, evs in ir.events.items():
        stack = []  # (method, enter ts, enter cpu)
        for kind, m, ts, c in evs:
            if kind == "B":
                stack.append((m, ts, c))
                continue
            if not stack:
                continue
            m, ts0, c0 = stack.pop()
            if m not in marked:
                continue
            if any(f[0] in marked for f in stack):
                out.nested = True
                continue  # inside an outer call of it: counted there
            path = (m,) + tuple(f[0] for f in reversed(stack))
            node = out[(t, path)]
            node[0] += 1
            node[1] += (c - c0 if c is not None and c0 is not None else 0) if cpu else ts - ts0
    return out, marked


def folded_name(ir, m):
    """The folded writer's frame text of a method (names in these traces need no sanitizing)."""
    return ir.short(m)


def model_folded(ir, glob, cpu=False, thread=True):
    paths, _ = model(ir, glob, cpu)
    out = collections.Counter()
    for (t, path), (_, ns) in paths.items():
        frames = [folded_name(ir, m) for m in path]
        if thread:
            name, tid, _ = ir.threads[t]
            frames.append(f"{name}-{tid}")
        out[";".join(frames)] += ns
    return {k: v // 1000 for k, v in out.items() if v // 1000}  # ART clocks: whole µs, exact


def read_folded(path):
    out = collections.Counter()
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, count = line.rstrip("\n").rsplit(" ", 1)
            out[stack] += int(count)
    return dict(out)


def merged_tree(ir, glob, cpu=False, thread=None):
    """The model's tree of all threads (or one): {path of short names... as full names: [calls, ns, self ns]}
    for every prefix of every path (the nodes), paths as tuples of full names."""
    paths, _ = model(ir, glob, cpu)
    nodes = collections.defaultdict(lambda: [0, 0, 0])
    for (t, path), (calls, ns) in paths.items():
        if thread is not None and t != thread:
            continue
        names = tuple(ir.methods[m] for m in path)
        for k in range(1, len(names) + 1):
            n = nodes[names[:k]]
            n[0] += calls
            n[1] += ns
        nodes[names][2] += ns
    return nodes


# ---- the checks -------------------------------------------------------------------------------

class Run:
    def __init__(self, ctx, env):
        self.ctx, self.env, self.n = ctx, env, 0

    def conv(self, src, fmt, args, ext):
        self.n += 1
        out = os.path.join(self.ctx.work, f"c{self.n}.{ext}")
        r = self.ctx.run(["-q", "-f", "-o", fmt, *args, src, out])
        if not self.ctx.check(r.returncode == 0, f"{os.path.basename(src)} -o {fmt} {' '.join(args)}: exit "
                                                 f"{r.returncode}: {r.stderr.decode(errors='replace')[-300:]}"):
            return None
        return out


def check_folded(run, label, src, ir, glob):
    ctx = run.ctx
    for cpu in (False, True):
        weight = ["--weight", "cpu"] if cpu else []
        out = run.conv(src, "folded", ["--callers", glob, *weight], "folded")
        if out:
            got = read_folded(out)
            ctx.eq(got, model_folded(ir, glob, cpu), f"{label} {glob} {'cpu' if cpu else 'wall'}: folded --callers")
            focus = run.conv(src, "folded", ["--focus", glob, *weight], "folded")
            if focus:
                ctx.eq(sum(got.values()), sum(read_folded(focus).values()),
                       f"{label} {glob}: the callers' total is --focus's (the time in the method)")
    out = run.conv(src, "folded", ["--callers", glob, "--no-thread"], "folded")
    if out:
        ctx.eq(read_folded(out), model_folded(ir, glob, thread=False), f"{label} {glob}: folded --callers --no-thread")


PEEK_CALLER = re.compile(r"^\s+(\d+)us\s+[\d.]+%\s+\|\s{3}(\S.*?)\s*$")
PEEK_SELF = re.compile(r"^\s+\S+\s+\S+%\s+\S+%\s+\S+\s+\S+%\s+\|\s(\S.*?)\s*$")


def pprof_callers(ctx, env, pb, short):
    """The callers go tool pprof -peek lists for a function: {caller: µs}."""
    r = ctx.oracle(["go", "tool", "pprof", "-peek", "^" + re.escape(short) + "$", "-sample_index=wall", "-unit=us",
                    pb], env=env)
    if r is None or not ctx.check(r.returncode == 0, f"pprof -peek {short}: {r.stderr.decode(errors='replace')[-300:]}"):
        return None
    callers, lines = {}, r.stdout.decode().splitlines()
    for i, line in enumerate(lines):
        m = PEEK_SELF.match(line)
        if m and m.group(1) == short:
            k = i - 1
            while k >= 0 and PEEK_CALLER.match(lines[k]):
                c = PEEK_CALLER.match(lines[k])
                callers[c.group(2)] = callers.get(c.group(2), 0) + int(c.group(1))
                k -= 1
            return callers
    ctx.fail(f"pprof -peek {short}: the function's line is not found")
    return None


def check_pprof(run, label, src, ir, targets):
    ctx = run.ctx
    pb = run.conv(src, "pprof", [], "pb.gz")
    if not pb:
        return
    for short in targets:
        glob = short
        paths, marked = model(ir, glob)
        nested = paths.nested or any(ir.short(m) == short for m in set(ir.methods) - marked)
        if nested or len(marked) != 1:
            continue  # pprof counts each edge of a recursive stack; the outermost rule does not
        want = collections.Counter()
        for (_, path), (_, ns) in paths.items():
            if len(path) > 1:
                want[ir.short(path[1])] += ns // 1000
        want = {k: v for k, v in want.items() if v}
        got = pprof_callers(ctx, run.env, pb, short)
        if got is not None:
            ctx.eq(got, dict(want), f"{label}: pprof -peek {short}: its callers and their times are our first level")
            run.peeked += 1


def check_flamegraph(run, label, src, glob):
    ctx = run.ctx
    folded = run.conv(src, "folded", ["--callers", glob], "folded")
    svg = run.conv(src, "flamegraph", ["--callers", glob], "svg")
    if not (folded and svg):
        return
    root, ours = test_flamegraph.our_frames(ctx, label, svg)
    theirs = test_flamegraph.run_flamegraph_pl(ctx, folded, [])
    if ours is not None and theirs is not None:
        test_flamegraph.compare(ctx, f"{label} flamegraph --callers {glob}", ours, theirs)
    title = next((t for t in root.iter(test_flamegraph.SVG + "text") if t.get("id") == "title"), None) if root else None
    ctx.eq(title.text if title is not None else None, f"Callers of {glob}", f"{label}: the flame graph's title")


def csv_trees(path):
    """{thread key: {path of method fields: (calls, incl wall, excl wall, incl cpu, excl cpu)}} of a
    callers CSV (rows hang from their callee's id)."""
    trees, by_id = collections.defaultdict(dict), {}
    with open(path, encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            key = "all" if row["thread"] == "all" and not row["tid"] else int(row["tid"])
            path_ = (by_id[row["callee"]] if row["callee"] else ()) + (row["method"],)
            by_id[row["id"]] = path_
            trees[key][path_] = tuple(int(row[k]) for k in ("calls", "incl_wall_us", "excl_wall_us", "incl_cpu_us",
                                                              "excl_cpu_us"))
    return trees


def csv_method(full):
    """The report's name of a method: "pkg.Class.method (sig)ret"."""
    return full.replace(": (", " (", 1)


def model_csv(ir, glob, thread=None):
    wall, cpu = merged_tree(ir, glob, False, thread), merged_tree(ir, glob, True, thread)
    return {tuple(csv_method(n) for n in p): (w[0], w[1] // 1000, w[2] // 1000, cpu[p][1] // 1000, cpu[p][2] // 1000)
            for p, w in wall.items()}


def check_csv(run, label, src, ir, glob):
    out = run.conv(src, "report-csv", ["--callers", glob], "csv")
    if not out:
        return
    got = csv_trees(out)
    run.ctx.eq(got.get("all"), model_csv(ir, glob), f"{label} {glob}: report CSV, all threads' callers tree")
    for t, (name, tid, _) in ir.threads.items():
        want = model_csv(ir, glob, t)
        run.ctx.eq(got.get(tid, {}), want, f"{label} {glob}: report CSV, thread {name}'s callers tree")


def tie_order(full):
    """The report's order among equal times: class, name, signature (bytes; doc/diff-and-reports.md, "The profile report")."""
    short, _, sig = full.partition(": ")
    cls, _, name = short.rpartition(".")
    return (cls.encode(), name.encode(), sig.encode())


def model_lines(ir, glob):
    """The text section's lines: (depth, name, µs, share ‰ of the method's time), depth-first,
    siblings by time then name, 0.1% of the methods' time and more."""
    nodes = merged_tree(ir, glob)
    total = sum(v[1] for p, v in nodes.items() if len(p) == 1)
    floor = -(-total // 1000)
    kids = collections.defaultdict(list)
    for p in nodes:
        kids[p[:-1]].append(p)
    out = []

    def walk(prefix, depth):
        shown = [p for p in kids[prefix] if nodes[p][1] > 0 and nodes[p][1] >= floor]
        for p in sorted(shown, key=lambda p: (-nodes[p][1], tie_order(p[-1]))):
            out.append((depth, csv_method(p[-1]), nodes[p][1] // 1000, round(1000 * nodes[p][1] / total)))
            walk(p, depth + 1)
    walk((), 0)
    return out


def text_lines(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    part = text.split("\nCallers of ", 1)[1].split("\n%/method", 1)[1].split("\n", 1)[1].split("\n\n", 1)[0]
    out = []
    for line in part.splitlines():
        m = re.match(r"^\s*([\d.]+)%\s+([\d,]+)\s+([\d,]+)\s+([\d,]+)  (\s*)(\S.*)$", line)
        out.append((int(m.group(4).replace(",", "")), m.group(6), int(m.group(2).replace(",", "")),
                    round(10 * float(m.group(1)))) if m else line)
    return out


class CallersTable(html.parser.HTMLParser):
    """The rows of the HTML report's callers section: (depth, name, µs, share ‰)."""

    def __init__(self):
        super().__init__()
        self.inside, self.rows, self.cells, self.cell = False, [], None, None

    def handle_starttag(self, tag, attrs):
        if tag == "section" and dict(attrs).get("id") == "callers":
            self.inside = True
        elif self.inside and tag == "tr":
            self.cells = []
        elif self.inside and tag == "td" and self.cells is not None:
            self.cell = ""

    def handle_endtag(self, tag):
        if tag == "section":
            self.inside = False
        elif self.inside and tag == "td" and self.cell is not None:
            self.cells.append(self.cell)
            self.cell = None
        elif self.inside and tag == "tr" and self.cells:
            name, us, share, _calls, depth = self.cells
            self.rows.append((int(depth), name.strip("\u00a0"), int(us.replace(",", "")),
                              round(10 * float(share.rstrip("%")))))
            self.cells = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell += data


def check_sections(run, label, src, ir, glob):
    want = model_lines(ir, glob)
    out = run.conv(src, "report", ["--callers", glob], "txt")
    if out:
        run.ctx.eq(text_lines(out), want, f"{label} {glob}: the text report's callers section")
    out = run.conv(src, "report-html", ["--callers", glob], "report.html")
    if out:
        p = CallersTable()
        with open(out, encoding="utf-8") as f:
            p.feed(f.read())
        run.ctx.eq(p.rows, want, f"{label} {glob}: the HTML report's callers section")


def check_input(run, label, src, globs, peek=()):
    ir_path = run.conv(src, "ir", [], "ir")
    if not ir_path:
        return
    ir = Ir(ir_path)
    for glob in globs:
        run.ctx.check(model(ir, glob)[1], f"{label}: {glob} names a method of the trace (the test's own choice)")
        check_folded(run, label, src, ir, glob)
        check_csv(run, label, src, ir, glob)
        check_sections(run, label, src, ir, glob)
    check_flamegraph(run, label, src, globs[0])
    check_pprof(run, label, src, ir, peek)


def check_errors(run, src):
    ctx = run.ctx
    out = os.path.join(ctx.work, "err.folded")
    cases = [
        (["--callers", "inflat"], 2, "closest: android.view.LayoutInflater.inflate"),
        (["--callers", "nowhere.at.all"], 2, "none of the"),
        (["--callers", "inflate", "--reverse"], 2, "not with --reverse"),
        (["--callers", "okhttp3.OkHttpClient.<init>", "--thread", "pool-2-thread-1"], 1, "never called"),
    ]
    for args, rc, says in cases:
        for fmt in ("folded", "flamegraph", "report"):
            r = ctx.run(["-f", "-o", fmt, *args, src, out])
            err = r.stderr.decode(errors="replace").strip().splitlines()
            ctx.check(r.returncode == rc and len(err) == 1 and says in err[0] and "--callers" in err[0],
                      f"-o {fmt} {' '.join(args)}: exit {rc}, one line saying {says!r}: exit {r.returncode} {err}")
            ctx.check(not os.path.exists(out), f"-o {fmt} {' '.join(args)}: no output left")
    r = ctx.run(["-f", "-o", "json", "--callers", "inflate", src, os.path.join(ctx.work, "x.json")])
    ctx.check(r.returncode == 0 and b"unused" in r.stderr, "--callers with -o json: an unused option, said")


def check_kernel_names(run):
    """A system capture names its kernel events (binder_transaction, ...) and counters in the
    same table as its slices, but they are on no call path: a pattern never matches them, nor
    are they offered as the closest names; a capture with no call path at all is an empty
    selection (exit 1, the input's fact), not a mistyped name (exit 2)."""
    ctx = run.ctx
    cap = os.path.join(ctx.corpus, "systrace", "kernel-events.txt")
    out = os.path.join(ctx.work, "kern.folded")
    with open(cap, encoding="utf-8") as f:
        text = f.read()
    events = set(re.findall(r"\] [d.]\S* +[0-9.]+: (\w+):", text)) - {"tracing_mark_write"}
    slices = set(re.findall(r"tracing_mark_write: B\|\d+\|([^\n]*)", text))
    ctx.check({"binder_transaction", "sched_switch"} <= events and slices, f"the capture's kernel events {sorted(events)}")
    for flag in ("--focus", "--callers"):
        r = ctx.run(["-f", "-o", "folded", flag, "binder_transactio", cap, out])
        err = r.stderr.decode(errors="replace").strip()
        named = set(err.split("closest: ")[1].split(", ")) if "closest: " in err else set()
        ctx.check(r.returncode == 2 and not named & events and named <= slices,
                  f"{flag} binder_transactio: exit 2, closest only slices, no kernel event: {r.returncode} {err}")
        r = ctx.run(["-f", "-o", "folded", flag, "sched_switch", cap, out])
        ctx.check(r.returncode == 2 and not os.path.exists(out), f"{flag} sched_switch: a kernel event is no method")
    kernel_only = os.path.join(ctx.work, "kernel-only.txt")
    with open(kernel_only, "w", encoding="utf-8") as f:
        f.write("# tracer: nop\n" + "".join(l + "\n" for l in text.splitlines()
                                             if not l.startswith("#") and "tracing_mark_write" not in l))
    r = ctx.run(["-f", "-o", "folded", "--focus", "x", kernel_only, out])
    err = r.stderr.decode(errors="replace").strip().splitlines()
    ctx.check(r.returncode == 1 and len(err) == 1 and "no call, slice or sampled frame" in err[0],
              f"kernel events only, --focus x: exit 1, the input has no call: {r.returncode} {err}")


def main():
    ctx = tclib.Ctx()
    seed = os.environ.get("TC_CALLERS_SEED")
    seed = int(seed) if seed else random.SystemRandom().randrange(1 << 32)
    print(f"seed {seed} (replay: TC_CALLERS_SEED={seed})")
    rng = random.Random(seed)
    home = tempfile.mkdtemp(prefix="pprof-home-", dir=ctx.work)
    env = dict(os.environ, HOME=home, GOFLAGS="-mod=mod", GOTOOLCHAIN="local")
    run = Run(ctx, env)
    run.peeked = 0
    app = os.path.join(ctx.corpus, "app-startup.trace")
    # the questions of an app start: who inflates, who builds the HTTP client, who loads classes;
    # as people type them (a method's name, Class.method, a glob, a signature)
    check_input(run, "app-startup", app,
                ["inflate", "OkHttpClient.<init>", "dalvik.system.BaseDexClassLoader.findClass", "Looper.loop*",
                 "onCreate", "measure: (II)V", "*.get"],
                peek=["android.view.LayoutInflater.inflate", "okhttp3.OkHttpClient.<init>",
                      "dalvik.system.BaseDexClassLoader.findClass", "android.view.View.measure",
                      "com.example.shop.ui.ProductAdapter.onBindViewHolder"])
    # direct and mutual recursion, overloads, frames open before tracing and at the end
    rec = os.path.join(ctx.corpus, "recursion-mutual.trace")
    rir = Ir(run.conv(rec, "ir", [], "ir"))
    called = {m for evs in rir.events.values() for _, m, _, _ in evs}
    names = sorted({rir.short(m).rsplit(".", 1)[-1] for m in called})
    ctx.check(run.peeked >= 4, f"app-startup: pprof -peek compared on {run.peeked} methods (at least 4)")
    check_input(run, "recursion-mutual", rec, names[:6])
    # generated traces: Fib's recursion, Parser.parse's overloads, idle waits, random shapes
    for i in range(2):
        src = os.path.join(ctx.work, f"gen{i}.trace")
        test_selection.Trace(rng, src)
        check_input(run, f"gen{i}", src, ["fib", "Parser.parse", "run", "Object.wait", "dispatchMessage"],
                    peek=["com.example.app.Worker.step", "java.lang.String.hashCode"])
    print(f"pprof -peek compared on {run.peeked} methods")
    check_errors(run, app)
    check_kernel_names(run)
    if ctx.failures:
        print(f"seed {seed} (replay: TC_CALLERS_SEED={seed})")
    ctx.done()


if __name__ == "__main__":
    main()
