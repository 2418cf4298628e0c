"""Shared helpers for traceconv's oracle and CLI tests (run by ctest).

Every test script takes the same arguments (see tests/CMakeLists.txt), runs
the real `traceconv` command, and checks its output with readers we did not
write: protoc with the upstream schemas (third_party/), go tool pprof, Python's
json, flamegraph.pl, Graphviz, headless Chromium, and our independent checkers
(tests/checkers/). Everything a test reads is in the repository or installed by
scripts/setup.sh: a missing oracle program is a failure, never a skip (make test
installs the oracles), and no test skips on a fresh clone.

Inputs: the project's corpus (corpus/: ART traces from tracegen, corpus/rhea and
corpus/systrace from their gen.py, each with facts computed from the model it was
written from), tests/json, tests/ir, and what a test generates. More real traces
can be added to the corpus tests with TC_EXTRA_CORPUS=DIR (its art/, rhea/ and
systrace/ subfolders: Ctx.extra_corpus); they are never looked for elsewhere.
"""
import argparse
import hashlib
import json
import os
import pickle
import re
import shutil
import subprocess
import sys

SKIP = 77

# The layers' folders on the import path (after tests/lib, which each test puts first): a test
# may use another's helpers across layers (test_perfetto's protoc decoder, test_flamegraph's SVG
# parsing, test_mutations' mutators).
TESTS_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
for _folder in ("golden", "cli", "oracle", "stress", "browser"):
    if os.path.join(TESTS_DIR, _folder) not in sys.path:
        sys.path.append(os.path.join(TESTS_DIR, _folder))


def oracle_key(exe, argv, kw):
    """What an oracle's result depends on: the program (path, size, mtime), its arguments with
    every file among them taken by content (the same bytes under another work directory match)
    and its standard input. The environment is left out: the tests set only HOME there."""
    h = hashlib.sha256()
    st = os.stat(exe)
    h.update(f"{exe}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())
    for a in argv[1:]:
        if os.path.isfile(a):
            with open(a, "rb") as f:
                h.update(b"F" + hashlib.file_digest(f, "sha256").digest())
        else:
            h.update(b"A" + a.encode())
        h.update(b"\0")
    if kw.get("input") is not None:
        h.update(b"I" + kw["input"])
    if kw.get("stdin") is not None:
        f = kw["stdin"]
        pos = f.tell()
        h.update(b"S" + f.read())
        f.seek(pos)
    return h.hexdigest()


class Ctx:
    def __init__(self):
        p = argparse.ArgumentParser()
        p.add_argument("--traceconv", required=True)
        p.add_argument("--tracegen", default="")
        p.add_argument("--source", required=True, help="project source dir")
        p.add_argument("--work", required=True, help="scratch dir for this test")
        a, _ = p.parse_known_args()
        self.traceconv = a.traceconv
        self.tracegen = a.tracegen
        self.source = a.source
        self.corpus = os.path.join(a.source, "corpus")
        self.work = a.work
        # every run starts from an empty scratch dir: an output left by an earlier run would
        # be refused (traceconv never overwrites a trace) or, lacking the writer's extension,
        # read as a second input and converted beside the first (into the corpus)
        shutil.rmtree(self.work, ignore_errors=True)
        os.makedirs(self.work, exist_ok=True)
        self.failures = 0
        self.checks = 0
        self.oracles_reused = 0
        extra = os.environ.get("TC_EXTRA_CORPUS")
        if extra and not os.path.isdir(os.path.join(self.source, extra)):  # asked for: never left out unsaid
            self.fail(f"TC_EXTRA_CORPUS={extra}: no such directory (absolute, or relative to {self.source})")

    # -- locations -------------------------------------------------------
    def schema_dir(self, proto):
        """The folder holding an upstream schema for protoc's --proto_path: perfetto_trace.proto
        or profile.proto (third_party/, vendored with their licenses)."""
        return os.path.join(self.source, "third_party", SCHEMA_DIRS[proto])

    def checker(self, name):
        """An independent checker (tests/checkers/): check_chrome_json.py, check_folded.py,
        check_systrace_html.py, artrace_inspect.py."""
        return os.path.join(self.source, "tests", "checkers", name)

    def extra_corpus(self, sub):
        """TC_EXTRA_CORPUS/<sub> (art, rhea, systrace): real traces to run the corpus tests
        on as well, when that variable names them; None otherwise. Never found by itself.
        A relative TC_EXTRA_CORPUS is taken from the source directory (where make runs;
        ctest runs each test elsewhere)."""
        root = os.environ.get("TC_EXTRA_CORPUS")
        d = os.path.join(self.source, root, sub) if root else None
        return d if d and os.path.isdir(d) else None

    def extra_files(self, sub):
        """(label, path) of every file of TC_EXTRA_CORPUS/<sub>, its notes and licenses left out."""
        d = self.extra_corpus(sub)
        if not d:
            return []
        return [(f"extra/{sub}/{f}", os.path.join(d, f)) for f in sorted(os.listdir(d))
                if os.path.isfile(os.path.join(d, f)) and not f.startswith("LICENSE")
                and not f.endswith((".md", ".py"))]

    def corpus_facts(self, sub):
        """{file name: facts} of the project's corpus/<sub> (rhea, systrace): written by its
        gen.py from the model each file was made from."""
        with open(os.path.join(self.corpus, sub, "facts.json"), encoding="utf-8") as f:
            return json.load(f)

    def corpus_files(self, sub):
        """Every file of the project's corpus/<sub> (rhea, systrace) but its generator and facts:
        the traces, the side files (mappings) and the inputs that are not traces at all."""
        d = os.path.join(self.corpus, sub)
        return [os.path.join(d, f) for f in sorted(os.listdir(d))
                if f not in ("gen.py", "facts.json", "README.md")]

    def corpus_inputs(self, sub, refused=False):
        """(label, path, facts) of the project's corpus/<sub> traces: every file whose facts say
        "input", without those the reader must refuse unless refused=True."""
        return [(f"corpus/{sub}/{name}", os.path.join(self.corpus, sub, name), facts)
                for name, facts in sorted(self.corpus_facts(sub).items())
                if facts.get("input") and (refused or "refused" not in facts)]

    def project_cases(self):
        """(name, trace path, facts path or None) for every generated corpus trace."""
        out = []
        if not os.path.isdir(self.corpus):
            return out
        for f in sorted(os.listdir(self.corpus)):
            if f.endswith(".trace"):
                stem = f[: -len(".trace")]
                facts = os.path.join(self.corpus, stem + ".facts.json")
                out.append((stem, os.path.join(self.corpus, f), facts if os.path.exists(facts) else None))
        return out

    # -- running -----------------------------------------------------------
    def run(self, args, stdin=None, check_rc=None, env=None, exe=None):
        r = subprocess.run([exe or self.traceconv] + list(args), input=stdin, capture_output=True, env=env)
        if check_rc is not None and r.returncode != check_rc:
            self.fail(f"traceconv {' '.join(args)}: exit {r.returncode}, expected {check_rc}\n"
                      f"stderr: {r.stderr.decode(errors='replace')}")
        return r

    def reference_run(self, args, **kw):
        """traceconv run to compute what another traceconv command must give (batch against
        single-file conversions). In the sanitizer pass of make test, TC_REFERENCE_TRACECONV
        names the normal build's: its outputs are the same bytes, at a fraction of the cost,
        and the command under test still runs sanitized."""
        ref = os.environ.get("TC_REFERENCE_TRACECONV")
        return self.run(args, exe=ref if ref and os.access(ref, os.X_OK) else None, **kw)

    def convert(self, src, fmt, out=None, extra=()):
        """Convert src to fmt; returns (output path, figures dict) or (None, stderr) on failure."""
        if out is None:  # with the writer's own extension: an existing OUTPUT without it is an INPUT
            base = os.path.basename(src)
            out = os.path.join(self.work, f"{base}.{WRITER_EXT.get(fmt, fmt)}")
        r = self.run(["-f", "-o", fmt, *extra, src, out])
        if r.returncode != 0:
            self.fail(f"{src} -> {fmt}: exit {r.returncode}: {r.stderr.decode(errors='replace').strip()}")
            return None, r.stderr.decode(errors="replace")
        return out, parse_figures(r.stderr.decode(errors="replace"))

    def cpu_time(self, args, runs=3):
        """The least CPU time (user + system) of a few runs of traceconv: steadier than wall
        time on a busy machine. None (and a failure) if a run fails."""
        best = None
        for _ in range(runs):
            p = subprocess.Popen([self.traceconv] + list(args), stderr=subprocess.PIPE)
            err = p.stderr.read()
            _, status, usage = os.wait4(p.pid, 0)
            if os.waitstatus_to_exitcode(status) != 0:
                self.fail(f"traceconv {' '.join(args)}: {err.decode(errors='replace')[-300:]}")
                return None
            dt = usage.ru_utime + usage.ru_stime
            best = dt if best is None else min(best, dt)
        return best

    def oracle(self, argv, **kw):
        """Run a third-party reader. Within one `make test` (TC_ORACLE_CACHE names a directory
        made empty at its start), a run of the same program on the same bytes is not repeated:
        the sanitizer pass writes the same outputs as the normal pass, and gets the readers'
        results for them from there. Any byte of difference runs the reader again."""
        if argv[0] == "python3":  # the interpreter running this test, not a version manager's
            argv = [sys.executable] + list(argv[1:])  # shim: pyenv's costs 0.3 s a start
        exe = shutil.which(argv[0])
        if not exe:
            self.fail(f"oracle {argv[0]} is not installed (make test installs it)")
            return None
        cache = os.environ.get("TC_ORACLE_CACHE")
        if not cache or not os.path.isdir(cache):
            return subprocess.run(argv, capture_output=True, **kw)
        path = os.path.join(cache, oracle_key(exe, argv, kw))
        try:
            with open(path, "rb") as f:
                rc, out, err = pickle.load(f)
            self.oracles_reused += 1
            return subprocess.CompletedProcess(argv, rc, out, err)
        except (OSError, EOFError, pickle.UnpicklingError, ValueError):
            pass
        r = subprocess.run(argv, capture_output=True, **kw)
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "wb") as f:
            pickle.dump((r.returncode, r.stdout, r.stderr), f)
        os.replace(tmp, path)  # whole or absent: tests run in parallel
        return r

    # -- results ----------------------------------------------------------
    def fresh(self, name):
        """An empty folder NAME in the scratch dir (emptied if an earlier step used it)."""
        d = os.path.join(self.work, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def check(self, cond, msg):
        self.checks += 1
        if not cond:
            self.fail(msg)
        return cond

    def eq(self, got, want, what):
        return self.check(got == want, f"{what}: got {got!r}, want {want!r}")

    def fail(self, msg):
        self.failures += 1
        print("FAIL:", msg)

    def done(self):
        if self.oracles_reused:
            print(f"{self.oracles_reused} reader results reused from an earlier run on the same bytes (TC_ORACLE_CACHE)")
        print(f"{self.checks} checks, {self.failures} failures")
        print(f"cpu {cpu_seconds():.2f} s (this test and the programs it ran)")  # read by scripts/test-times.py
        sys.exit(1 if self.failures else 0)


def cpu_seconds():
    """User + system CPU time of this process and of every child it waited for (theirs
    include their own children): what a test cost, whatever else loads the machine."""
    import resource
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def is_sanitized(exe):
    """Whether exe was built with a sanitizer (ASan, UBSan or TSan): its memory and speed
    bounds do not hold there."""
    try:
        with open(exe, "rb") as f:
            data = f.read()
    except OSError:
        return False
    return b"__asan_init" in data or b"__ubsan_handle" in data or b"__tsan_init" in data


def run_measured(argv):
    """(returncode, stderr, peak RSS of that child in KiB: wait4's ru_maxrss)."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    err = p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    return os.waitstatus_to_exitcode(status), err.decode(errors="replace"), usage.ru_maxrss


# The upstream schemas protoc decodes our protobuf output with (third_party/README.md).
SCHEMA_DIRS = {"perfetto_trace.proto": "perfetto", "profile.proto": "pprof"}

# Each writer's default extension (traceconv --list-formats).
WRITER_EXT = {"json": "json", "folded": "folded", "perfetto": "pftrace", "pprof": "pb.gz",
              "systrace": "html", "ir": "ir.txt", "flamegraph": "svg", "report": "txt", "dot": "dot",
              "speedscope": "speedscope.json",
              # the writers' other output variants (-o report-html, or -o report --html)
              "report-csv": "csv", "report-html": "report.html", "systrace-text": "systrace.txt"}

FIG_RE = re.compile(r"(\d+) ([a-z][a-z0-9-]*)")


def parse_figures(stderr):
    """Figures from traceconv's summary line: {'records': 9, 'exit-without-enter': 3, ...}."""
    figs = {}
    for line in stderr.splitlines():
        if " -> " in line and line.startswith("traceconv: ") and "):" in line:
            tail = line.split("):", 1)[1]
            for n, name in FIG_RE.findall(tail):
                figs[name] = int(n)
    return figs


def json_thread_totals(path):
    """Per (pid, tid): (slice count, summed top-level B/E duration in ns), computed from the JSON."""
    with open(path, "rb") as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    stacks, out = {}, {}
    for e in events:
        ph = e.get("ph")
        if ph not in ("B", "E", "X"):
            continue
        key = (e["pid"], e["tid"])
        cnt, tot = out.get(key, (0, 0))
        ts = round(float(e["ts"]) * 1000)
        if ph == "X":
            if not stacks.get(key):
                tot += round(float(e["dur"]) * 1000)
            out[key] = (cnt + 1, tot)
            continue
        st = stacks.setdefault(key, [])
        if ph == "B":
            st.append(ts)
            out[key] = (cnt + 1, tot)
        else:
            start = st.pop()
            if not st:
                tot += ts - start
            out[key] = (cnt, tot)
    return out


def folded_thread_totals(path):
    """Per first frame (thread): summed counts."""
    out = {}
    for stack, count in read_folded(path).items():
        root = stack.split(";", 1)[0]
        out[root] = out.get(root, 0) + count
    return out


def read_folded(path):
    out = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            stack, _, count = line.rstrip("\n").rpartition(" ")
            out[stack] = out.get(stack, 0) + int(count)
    return out


# Bugs found by the tests and reported (tests never patch src/ or corpus/). The checks
# still run and fail; this label only makes the failure say what is known about it.
KNOWN_BUGS = {
    # "case-name": "what is wrong, where (traceconv or corpus)",
}


def known_bug(name):
    """' [KNOWN BUG ...]' for a corpus case with a reported traceconv bug, else ''."""
    return f" [{KNOWN_BUGS[name]}]" if name in KNOWN_BUGS else ""


# -- go tool pprof -raw --------------------------------------------------------

SAMPLE_RE = re.compile(r"^\s+(-?\d+)(?:\s+(-?\d+))?: ([\d ]*)$")
LABEL_RE = re.compile(r"^\s+(\w+):\[(.*)\]$")
LOC_RE = re.compile(r"^\s*(\d+): 0x0 M=1 (.*) (\S*):(-?\d+) s=-?\d+(?:\(.*\))?$")


def pprof_raw(text):
    """-raw output -> (sample types, [(wall, cpu|None, [loc ids leaf first], {label: value})], {loc: name})."""
    samples, locs, types = [], {}, []
    section = None
    for line in text.splitlines():
        if line in ("Samples:", "Locations", "Mappings"):
            section = line
            continue
        if section == "Samples:":
            if not types:
                types = [t.split("/")[0] for t in line.split()]
                continue
            m = SAMPLE_RE.match(line)
            if m:
                samples.append([int(m.group(1)), int(m.group(2)) if m.group(2) else None,
                                [int(x) for x in m.group(3).split()], {}])
                continue
            m = LABEL_RE.match(line)
            if m and samples:
                samples[-1][3][m.group(1)] = m.group(2)
        elif section == "Locations":
            m = LOC_RE.match(line)
            if m:
                locs[int(m.group(1))] = m.group(2)
    return types, samples, locs


# A temporary output of traceconv (outfile.c): ".tc-" and six letters or digits, beside
# the output, whatever its name (a fixed short name: a legal 255-byte output name works).
TEMP_NAME = re.compile(r"\.tc-[A-Za-z0-9]{6}")


def is_temp_name(path):
    return TEMP_NAME.fullmatch(os.path.basename(path)) is not None


def terminal_safe(data):
    """Whether bytes a command wrote to a terminal are all UTF-8 with no control character
    but the newline (no C0, DEL or C1): what cli_say promises for every message."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return not any((ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f for c in text)


def json_slice_names(path):
    """The B/X slice names of a Chrome JSON file, read by Python's json, sorted ([] when it is not one)."""
    try:
        with open(path, "rb") as f:
            doc = json.load(f)
        return sorted(e.get("name") for e in doc["traceEvents"] if e.get("ph") in ("B", "X"))
    except (OSError, ValueError, KeyError, TypeError):
        return []


def run_limited(argv, cwd=None, limit_fsize=None, env=None):
    """argv run to completion (output captured), under `ulimit -f` limit_fsize bytes when given."""
    pre = None
    if limit_fsize is not None:
        def pre():
            import resource
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit_fsize, limit_fsize))
    return subprocess.run(argv, cwd=cwd, capture_output=True, preexec_fn=pre, env=env)


# -- the views' order of threads (issue 36 item 2), as doc/cli.md, "Selection" and "Thread order"
# state it, computed here from a trace's own events (never from traceconv's order)

IDLE_WAITS = [  # doc/cli.md, Selection: --ignore-idle's list
    "android.os.MessageQueue.nativePollOnce", "java.lang.Object.wait", "java.lang.Thread.sleep",
    "android.os.SystemClock.sleep", "java.lang.VMThread.sleep", "sun.misc.Unsafe.park",
    "jdk.internal.misc.Unsafe.park", "java.util.concurrent.locks.LockSupport.park*",
    "java.util.concurrent.*BlockingQueue.take", "java.util.concurrent.*BlockingDeque.take*",
    "java.util.concurrent.SynchronousQueue.take", "java.util.concurrent.DelayQueue.take",
    "java.lang.Thread.parkFor$"]


def is_idle_wait(short_name):
    import fnmatch
    return any(fnmatch.fnmatchcase(short_name, g) for g in IDLE_WAITS)


def busy_times(events):
    """Per thread: (time in frames outside idle waits, time in idle waits), from its enters and
    exits in order: events (kind 'B'|'E', thread, short method name, ts), well nested."""
    depth, idle_depth, since, idle_since, framed, idle = {}, {}, {}, {}, {}, {}
    for kind, t, name, ts in events:
        d, i = depth.get(t, 0), idle_depth.get(t, 0)
        waits = is_idle_wait(name)
        if kind == "B":
            if d == 0:
                since[t] = ts
            if waits and i == 0:
                idle_since[t] = ts
            depth[t], idle_depth[t] = d + 1, i + (1 if waits else 0)
        elif kind == "E" and d:
            if waits and i:
                idle_depth[t] = i - 1
                if i == 1:
                    idle[t] = idle.get(t, 0) + ts - idle_since[t]
            depth[t] = d - 1
            if d == 1:
                framed[t] = framed.get(t, 0) + ts - since[t]
    return {t: (max(framed.get(t, 0) - idle.get(t, 0), 0), idle.get(t, 0)) for t in set(framed) | set(idle)}


def views_order(threads, pid, busy):
    """Thread indexes in the views' order. threads: [(tid, name, records)] in table order;
    busy: {index: time outside idle waits}. Main first (the thread named main, else the one
    whose tid is the pid, else the busiest; among threads with records), then by busy time
    (more first), then tid; threads without records last."""
    live = [i for i, t in enumerate(threads) if t[2] > 0]
    main = next((i for i in live if threads[i][1] == "main"), None)
    if main is None:
        main = next((i for i in live if threads[i][0] == pid), None)
    if main is None and live:
        main = max(live, key=lambda i: (busy.get(i, 0), -i))
    return sorted(range(len(threads)), key=lambda i: (i != main, threads[i][2] == 0, -busy.get(i, 0), threads[i][0], i))
