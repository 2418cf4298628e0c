"""Sampled stacks in Chrome JSON (issue 35, items 5 and 6): perf's stackFrames + samples,
DevTools' Profile/ProfileChunk and .cpuprofile; and every input record converted or counted.

1. The inputs tests/json/{samples-*,devtools-*}.json and node.cpuprofile are what
   gen_json_samples.py writes (regenerated here: the same bytes).
2. Each case against its model (gen_json_samples.CASES: what the generator put in, worked out
   from the values it wrote), and against this file's own reading of the document with
   Python's json (reference(): the rules of doc/formats.md, "Conversion rules", written apart from
   json.c): the same samples, stacks and weights. Then every aggregating output of traceconv:
   -o ir (each sample's stack and value; meta sample-type/sample-unit for counts), folded
   (every line: the stack's summed weight: counts, or µs), pprof decoded by protoc with the
   upstream profile.proto (sample type cycles:HG/count, or wall/nanoseconds; each (thread,
   stack) value), speedscope (each sampled profile's stacks and weights), report --csv (each
   thread's and all threads' exclusive time per function, their sum), flamegraph (the total).
3. Nothing dropped in silence: for every JSON input of the repository (tests/json, tests/golden/
   json, the cases above; TC_EXTRA_CORPUS's json/ too when set), reference() classifies each
   record (an element of traceEvents or samples, a sample of a CPU profile, a systemTraceEvents
   text) as converted, bad (no numeric ts) or not converted by kind, and the summary line must
   say exactly that: its records (the IR records the converted ones make), bad-line, and
   "not converted: KIND N, ..." with the figure not-converted; converted + bad + not converted
   = the records of the input.
4. Bounded memory: perf samples before their stackFrames and their traceEvents, n and 4n of
   them: peak RSS grows far less than the file (the samples wait on disk, not in memory).
"""
import gzip
import html
import json
import math
import os
import random
import re
import sys
from collections import Counter, defaultdict

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import gen_json_samples as gen  # noqa: E402  (tests/golden is on the path through tclib)

# ---- an independent reading of the document -------------------------------------------------


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def number(v):
    """A JSON number, or a string that holds one (as json.c's tci_jspan_number reads them)."""
    if is_num(v):
        return float(v) if math.isfinite(v) else None
    if isinstance(v, str) and v.strip() == v and v:
        try:
            x = float(v)
            return x if math.isfinite(x) else None
        except ValueError:
            return None
    return None


def llround(x):
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def fnv_id(text):
    h = 1469598103934665603
    for b in text.encode("utf-8", "surrogatepass"):
        h = ((h ^ b) * 1099511628211) & (2 ** 64 - 1)
    return (h >> 2) | (1 << 60)


def an_id(v):
    """pid/tid: a number (cut toward 0), a decimal string, any other string (an id of its own); absent 0."""
    if is_num(v):
        return int(v) if abs(v) < 9e18 else 0
    if isinstance(v, str):
        if re.fullmatch(r"[ \t\n]*[+-]?\d+", v) and abs(int(v)) < 2 ** 63:
            return int(v)
        return ("text", v)
    return 0


def fkey(v):
    """A stackFrames id or an sf: the number 7 and the text "7" are one id (object keys)."""
    if is_num(v):
        return int(v) if v >= 0 and v == int(v) and v < 9.2e18 else ("lit", json.dumps(v))
    if isinstance(v, str):
        if re.fullmatch(r"0|[1-9]\d{0,17}", v):
            return int(v)
        return ("lit", v)
    return None


def node_key(v):
    x = number(v)
    return int(x) if x is not None and 0 <= x < 2 ** 40 and x == int(x) else None


def kind(prefix, text):
    return (prefix + text).encode("utf-8")[:31].decode("utf-8", "ignore")


class Model:
    """What traceconv should make of a document: samples, records, not-converted kinds."""

    def __init__(self):
        self.nc = Counter()
        self.bad = 0
        self.records = 0        # IR records (the summary's records figure)
        self.slices = 0         # slices: X and B events (a count profile's aggregates do not weigh them)
        self.inputs = 0         # input records
        self.threads = []       # (pid, tid) in order of creation
        self.index = {}         # (pid, tid) -> thread index
        self.names = {}         # thread index -> (rank, name)
        self.sort = {}          # thread index -> [value, events]
        self.samples = []       # (thread index, frames tuple, value as the IR carries it)

    def thread(self, pid, tid):
        k = (pid, tid)
        if k not in self.index:
            self.index[k] = len(self.threads)
            self.threads.append(k)
        return self.index[k]

    def name(self, th, name, rank):
        if th not in self.names or rank >= self.names[th][0]:
            self.names[th] = (rank, name)

    def label(self, th):
        tid = self.threads[th][1]
        name = self.names.get(th, (0, ""))[1] or f"Thread-{tid if isinstance(tid, int) else '?'}"
        return f"{name}-{tid}"


def has_cookie(e):
    """An event's async id, as the reader finds it: id2's local or global when id2 is an object
    (an object without either is no id), else id (any value)."""
    id2 = e.get("id2")
    if isinstance(id2, dict):
        return "local" in id2 or "global" in id2
    return "id" in e


def frame_names(frames, key, space_root):
    """The names of the stack of frame key (root first), or None when its chain breaks (a frame
    missing, a loop). frames: key -> (name, parent key or None, named "(root)"). A profile's
    head (space_root: a node "(root)" without a parent) is above its frames and none of them;
    a sample in the head itself is "(root)"."""
    chain, seen, k = [], set(), key
    while True:
        if k not in frames or k in seen:
            return None
        seen.add(k)
        name, parent, root = frames[k]
        chain.append((name, root))
        if parent is None:
            break
        k = parent
    if space_root and chain[-1][1] and len(chain) > 1:
        chain.pop()
    return tuple(n for n, _ in reversed(chain))


def profile_weights(times, end):
    return gen.profile_weights(times, end)


def reference(doc):
    """Model of traceconv's reading of a parsed document (json.c's rules, written apart)."""
    m = Model()
    events = doc if isinstance(doc, list) else doc.get("traceEvents") if isinstance(doc.get("traceEvents"), list) else []
    obj = doc if isinstance(doc, dict) else {}
    profiles = {}    # key -> dict(thread, start, srank, end, erank, ts, cum, samples: [(rel, order, node, at)], nodes)
    order = [0]
    pend_p = []      # P samples: (th, key, ts)
    counters = []

    def profile(key):
        return profiles.setdefault(key, {"thread": None, "start": None, "srank": 0, "end": None, "erank": 0,
                                         "ts": None, "cum": 0, "samples": [], "nodes": {}})

    def times(p, start, end, rank):
        s, e = number(start), number(end)
        if s is not None and abs(s) <= 4.6e15 and rank >= p["srank"]:
            p["start"], p["srank"] = llround(s * 1000), rank
        if e is not None and abs(e) <= 4.6e15 and rank >= p["erank"]:
            p["end"], p["erank"] = llround(e * 1000), rank

    def read_nodes(p, nodes):
        for n in nodes if isinstance(nodes, list) else []:
            if not isinstance(n, dict):
                continue
            k = node_key(n.get("id"))
            if k is None:
                continue
            e = p["nodes"].setdefault(k, {"name": None, "parent": None})
            if e["name"] is None:
                cf = n.get("callFrame") if "callFrame" in n else n
                cf = cf if isinstance(cf, dict) else {}
                fn = cf.get("functionName")
                e["name"] = fn if isinstance(fn, str) and fn else "(anonymous)"
                e["root"] = fn == "(root)"
            pk = node_key(n.get("parent"))
            if e["parent"] is None and pk is not None:
                e["parent"] = pk
            for c in n.get("children") or [] if isinstance(n.get("children"), list) else []:
                ck = node_key(c)
                if ck is not None:
                    ce = p["nodes"].setdefault(ck, {"name": None, "parent": None})
                    if ce["parent"] is None:
                        ce["parent"] = k

    def read_samples(p, samples, deltas):
        deltas = deltas if isinstance(deltas, list) else []
        for i, s in enumerate(samples if isinstance(samples, list) else []):
            m.inputs += 1
            d = number(deltas[i]) if i < len(deltas) else None
            if d is not None and abs(d) < 4.6e12:
                p["cum"] = max(-4.6e18, min(4.6e18, p["cum"] + llround(d * 1000)))
            if d is None or abs(d) >= 4.6e12 or number(s) is None:
                m.bad += 1
                continue
            p["samples"].append((p["cum"], order[0], node_key(s)))
            order[0] += 1

    for e in events:
        m.inputs += 1
        if not isinstance(e, dict):
            m.nc["not an object"] += 1
            continue
        ph = e.get("ph")
        phb = ph.encode("utf-8") if isinstance(ph, str) else b""
        if not phb:
            m.nc["no ph"] += 1
            continue
        if len(phb) != 1:
            m.nc[phb[:8].decode("utf-8", "ignore")] += 1
            continue
        name = e.get("name") if isinstance(e.get("name"), str) else None
        pid, tid = an_id(e.get("pid")), an_id(e.get("tid"))
        if ph == "M":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            if name is None:
                m.nc["M"] += 1
            elif name == "thread_sort_index":
                v = args.get("sort_index")
                if not is_num(v) or abs(v) > 9e18:
                    m.nc[kind("M ", name)] += 1
                else:
                    th = m.thread(pid, tid)
                    m.sort.setdefault(th, [0, 0])
                    m.sort[th] = [int(v), m.sort[th][1] + 1]
            elif name in ("process_name", "thread_name"):
                if not isinstance(args.get("name"), str):
                    m.nc[kind("M ", name)] += 1
                elif name == "thread_name":
                    m.name(m.thread(pid, tid), args["name"], 2)
            else:
                m.nc[kind("M ", name)] += 1
            continue
        if ph == "P":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            data = args.get("data")
            pkey = None
            if name in ("Profile", "ProfileChunk"):
                i = e.get("id")
                pkey = (pid, ("s", i) if isinstance(i, str) else ("n", i) if number(i) is not None and not isinstance(i, str)
                        else ("tid", tid))
                m.inputs -= 1  # a container: its samples are the records
            if name == "Profile":
                p = profile(pkey)
                if p["thread"] is None:
                    p["thread"] = m.thread(pid, tid)
                    ts = number(e.get("ts"))
                    if ts is not None and abs(ts) <= 4.6e15:
                        p["ts"] = llround(ts * 1000)
                    d = data if isinstance(data, dict) else {}
                    times(p, d.get("startTime"), d.get("endTime"), 2)
            elif name == "ProfileChunk":
                if isinstance(data, dict):
                    p = profile(pkey)
                    cp = data.get("cpuProfile") if isinstance(data.get("cpuProfile"), dict) else {}
                    times(p, cp.get("startTime"), cp.get("endTime"), 1)
                    times(p, data.get("startTime"), data.get("endTime"), 3)
                    read_nodes(p, cp.get("nodes"))
                    read_samples(p, cp.get("samples"), data["timeDeltas"] if "timeDeltas" in data else cp.get("timeDeltas"))
            elif fkey(e.get("sf")) is None and (not name or name == "V8Sample" or name.startswith("Profile")):
                m.nc["P"] += 1  # V8's legacy samples (stacks of addresses), or no name to show
            elif fkey(e.get("sf")) is None:  # a mark named after the event: an instant, no sample
                ts = number(e.get("ts"))
                if ts is None or abs(ts) > 4.6e15:
                    m.bad += 1
                else:
                    m.thread(pid, tid)
                    m.records += 1
            else:  # a sample of its sf's stack (catapult's rule)
                ts = number(e.get("ts"))
                if ts is None or abs(ts) > 4.6e15:
                    m.bad += 1
                else:
                    pend_p.append((m.thread(pid, tid), fkey(e.get("sf")), llround(ts * 1000)))
            continue
        if ph not in "BEXiICbeSFTpnR" or ph == "\0":
            m.nc[ph.replace("\0", "?")] += 1
            continue
        if ph in "STpFn" and not has_cookie(e):  # legacy async and nestable instants are keyed by their id
            m.nc[ph + " without id"] += 1
            continue
        ts = number(e.get("ts"))
        if ts is None or abs(ts) > 4.6e15:
            m.bad += 1
            continue
        th = m.thread(pid, tid)
        if name == "CpuProfile":
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            data = args.get("data") if isinstance(args.get("data"), dict) else {}
            cp = data.get("cpuProfile")
            if isinstance(cp, dict):
                p = profile(("whole", len(profiles)))
                p["thread"] = th
                times(p, cp.get("startTime"), cp.get("endTime"), 2)
                read_nodes(p, cp.get("nodes"))
                read_samples(p, cp.get("samples"), cp["timeDeltas"] if "timeDeltas" in cp else data.get("timeDeltas"))
        m.slices += ph in "XB"
        if ph == "X":
            m.records += 2
        elif ph == "C":
            args = e.get("args")
            series = [v for v in (args.values() if isinstance(args, dict) else args if isinstance(args, list) else [])
                      if is_num(v)]
            if series:
                m.records += len(series)
            else:
                m.nc["C"] += 1
            counters.append(len(series))
        else:
            m.records += 1
    # stackFrames
    frames = {}
    sf = obj.get("stackFrames")
    for k, f in (sf.items() if isinstance(sf, dict) else []):
        key = fkey(k)
        if key is None or not isinstance(f, dict) or key in frames:
            continue
        nm = f.get("name") if isinstance(f.get("name"), str) else "[unnamed]"
        frames[key] = (nm, fkey(f.get("parent")), False)
    # top-level samples
    tops, first_name, sthreads = [], None, {}
    samples = obj.get("samples")
    if isinstance(samples, list) and samples and isinstance(samples[0], dict):
        for s in samples:
            m.inputs += 1
            if not isinstance(s, dict):
                m.nc["not an object"] += 1
                continue
            nm = s.get("name") if isinstance(s.get("name"), str) else ""
            if first_name is None:
                first_name = nm
            elif nm != first_name:
                m.nc[kind("sample ", nm) if nm else "sample"] += 1
                continue
            ts = number(s.get("ts"))
            if ts is None or abs(ts) > 4.6e15:
                m.bad += 1
                continue
            w = 1.0
            if "weight" in s:
                w = number(s["weight"])
                if w is None or not 0 <= w <= 2 ** 50:
                    m.bad += 1
                    continue
            key = fkey(s.get("sf"))
            if key is None:
                m.nc["sample without frame"] += 1
                continue
            st = ("pid" in s, an_id(s["pid"]) if "pid" in s else 0, an_id(s.get("tid")))
            if st not in sthreads:
                sthreads[st] = None
            comm = s.get("comm")
            if isinstance(comm, str) and comm:
                sthreads[st] = comm
            tops.append((st, key, llround(ts * 1000), math.floor(w * 1000 + 0.5)))
    elif isinstance(obj.get("nodes"), list) and "traceEvents" not in obj and not tops:  # a .cpuprofile
        th = m.thread("cpuprofile", 1)
        m.names[th] = (2, "main")
        p = profile(("whole", "doc"))
        p["thread"] = th
        times(p, obj.get("startTime"), obj.get("endTime"), 2)
        read_nodes(p, obj.get("nodes"))
        read_samples(p, obj.get("samples"), obj.get("timeDeltas"))
    if "systemTraceEvents" in obj and obj["systemTraceEvents"] != "":
        m.inputs += 1
        m.nc["systemTraceEvents"] += 1
    # the samples, once the document is read: one unit
    time_class = any(p["samples"] for p in profiles.values())
    if tops and not time_class:
        by_tid = {}
        for i, (pid, tid) in enumerate(m.threads):
            by_tid.setdefault(tid, i)
        for st, comm in sthreads.items():
            has_pid, pid, tid = st
            th = m.thread(pid, tid) if has_pid else by_tid[tid] if tid in by_tid else m.thread(tid, tid)
            by_tid.setdefault(tid, th)
            sthreads[st] = (th, comm)
            if comm:
                m.name(th, comm, 1)
    for st, key, ts, w in tops:
        if time_class:
            m.nc[kind("sample ", first_name) if first_name else "sample"] += 1
            continue
        stack = frame_names(frames, key, False)
        if stack is None:
            m.nc["sample without frame"] += 1
        else:
            m.samples.append((sthreads[st][0], stack, w))
    for th, key, ts in pend_p:
        if time_class or tops:
            m.nc["P"] += 1
            continue
        stack = (key[1],) if isinstance(key, tuple) and key[0] == "named" else frame_names(frames, key, False)
        if stack is None:
            m.nc["sample without frame"] += 1
        else:
            m.samples.append((th, stack, 1000))
    for p in profiles.values():
        if not p["samples"]:
            continue
        if p["thread"] is None:
            m.nc["sample without Profile"] += len(p["samples"])
            continue
        start = p["start"] if p["srank"] else p["ts"] if p["ts"] is not None else 0
        ss = sorted(p["samples"])
        ts_abs = [start + rel for rel, _, _ in ss]
        end = p["end"] if p["end"] is not None and p["erank"] >= p["srank"] else None
        lo, hi = min(r for r, _, _ in ss), max(r for r, _, _ in ss)
        weights = [b - a for a, b in zip(ts_abs, ts_abs[1:])]
        if end is not None and end >= ts_abs[-1]:
            weights.append(end - ts_abs[-1])
        elif len(ss) > 1:
            weights.append(math.floor((hi - lo) / (len(ss) - 1) + 0.5))
        else:
            weights.append(1000000)
        nodes = {k: (v["name"], v["parent"], v.get("root", False)) for k, v in p["nodes"].items() if v["name"] is not None}
        for (rel, _, node), w in zip(ss, weights):
            stack = frame_names(nodes, node, True) if node is not None else None
            if stack is None:
                m.nc["sample without frame"] += 1
            else:
                m.samples.append((p["thread"], stack, w))
    m.records += len(m.samples)
    # thread_sort_index: kept when it orders its process's threads as they appear
    last, state = {}, {}
    for th in range(len(m.threads)):
        if th in m.sort:
            proc = m.threads[th][0]
            if proc in state and m.sort[th][0] < last[proc]:
                state[proc] = 2
            elif state.get(proc) != 2:
                state[proc] = 1
            last[proc] = m.sort[th][0]
    for th, (v, n) in m.sort.items():
        if state.get(m.threads[th][0]) == 2:
            m.nc["M thread_sort_index"] += n
    m.unit = "count" if (tops or pend_p) and not time_class else "ns"
    m.type = (first_name or "samples") if tops and not time_class else "samples" if pend_p and not time_class else "wall"
    return m


def load(path):
    with open(path, "rb") as f:
        data = f.read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    return json.loads(data)


# ---- traceconv's outputs ---------------------------------------------------------------------------

NC_RE = re.compile(r"; not converted: (.*?)(?:; hint: |$)")


def summary(err):
    """(figures, {kind: n}) from the summary line."""
    figs = tclib.parse_figures(err)
    kinds = {}
    for line in err.splitlines():
        m = NC_RE.search(line) if " -> " in line else None
        if m:
            for part in m.group(1).split(", "):
                if part.endswith(" of other kinds"):  # past the 12 kinds named
                    kinds["(other kinds)"] = int(part.split(" ", 1)[0])
                    continue
                k, _, n = part.rpartition(" ")
                kinds[k] = int(n)
    return figs, kinds


def ir_samples(path):
    """From -o ir: meta, thread names, and [(thread label, frames, value)] of each P line."""
    meta, threads, methods, stacks, out = {}, {}, {}, {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("meta "):
                k, v = json.loads("[" + line[5:].replace('" "', '", "', 1) + "]")
                meta[k] = v
            elif line.startswith("thread "):
                mm = re.match(r'thread (\d+) tid=(\d+) .*name=(".*")$', line.rstrip("\n"))
                threads[int(mm.group(1))] = f"{json.loads(mm.group(3))}-{mm.group(2)}"
            elif line.startswith("method "):
                mm = re.match(r'method (\d+) .* name=(".*")$', line.rstrip("\n"))
                methods[int(mm.group(1))] = json.loads(mm.group(2))
            elif line.startswith("stack "):
                mm = re.match(r"stack (\d+) parent=(-|\d+) m=(\d+)", line)
                stacks[int(mm.group(1))] = (None if mm.group(2) == "-" else int(mm.group(2)), int(mm.group(3)))
            elif line.startswith("P "):
                mm = re.match(r"P t=(\d+) m=(\d+) .* id=(\d+) value=(\S+)", line)
                frames, s = [], int(mm.group(3))
                while s is not None:
                    frames.append(methods[stacks[s][1]])
                    s = stacks[s][0]
                out.append((threads[int(mm.group(1))], tuple(reversed(frames)), float(mm.group(4))))
    return meta, out


def short(name):
    """The name flame graphs show of a full one: "render: (https://x/app.js:41:3)" -> "render"."""
    return name.split(": (", 1)[0]


def pb_string(v):
    """A string of protoc's text form ("...", C escapes, octal bytes) as text."""
    raw, out, i = v[1:-1].encode("utf-8"), bytearray(), 0
    simple = {ord("n"): 10, ord("t"): 9, ord("r"): 13, ord('"'): 34, ord("'"): 39, ord("\\"): 92}
    while i < len(raw):
        c = raw[i]
        if c != 92:
            out.append(c)
            i += 1
        elif raw[i + 1] in simple:
            out.append(simple[raw[i + 1]])
            i += 2
        elif raw[i + 1] == ord("x"):
            j = i + 2
            while j < len(raw) and j < i + 4 and chr(raw[j]) in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(raw[i + 2:j], 16))
            i = j
        else:
            j = i + 1
            while j < len(raw) and j < i + 4 and chr(raw[j]) in "01234567":
                j += 1
            out.append(int(raw[i + 1:j], 8))
            i = j
    return out.decode("utf-8", "replace")


def parse_protobuf_text(text):
    """protoc --decode's text form -> nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if line.endswith("{"):
            node = {}
            cur.setdefault(line[:-1].strip(), []).append(node)
            stack.append(cur)
            cur = node
        elif line == "}":
            cur = stack.pop()
        elif ":" in line:
            k, v = line.split(":", 1)
            v = v.strip()
            cur.setdefault(k, []).append(pb_string(v) if v.startswith('"') else int(v) if v[0] in "-0123456789" else v)
    return root


def pprof_stacks(ctx, path, what):
    """(sample types [(type, unit)], {(thread, frames root first): [values]}) of a pprof file."""
    with open(path, "rb") as f:
        body = gzip.decompress(f.read())
    r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("profile.proto"),
                    "--decode=perftools.profiles.Profile", "profile.proto"], input=body)
    if r is None or not ctx.check(r.returncode == 0, f"{what}: protoc --decode: {r.stderr.decode(errors='replace')}"):
        return None, {}
    p = parse_protobuf_text(r.stdout.decode("utf-8", "replace"))
    st = p.get("string_table", [])
    types = [(st[t.get("type", [0])[0]], st[t.get("unit", [0])[0]]) for t in p.get("sample_type", [])]
    fn = {f["id"][0]: st[f.get("name", [0])[0]] for f in p.get("function", [])}
    loc = {l["id"][0]: fn[l["line"][0]["function_id"][0]] for l in p.get("location", [])}
    out = defaultdict(lambda: [0] * len(types))
    for s in p.get("sample", []):
        labels = {st[lb["key"][0]]: (st[lb["str"][0]] if "str" in lb else lb.get("num", [0])[0]) for lb in s.get("label", [])}
        key = (f"{labels.get('thread')}-{labels.get('tid')}", tuple(reversed([loc[i] for i in s.get("location_id", [])])))
        for i, v in enumerate(s.get("value", [])):
            out[key][i] += v
    out["default"] = st[p.get("default_sample_type", [0])[0]]
    return types, dict(out)


def expected(model_samples, slices=()):
    """{(thread, frames): summed weight}, samples and slices."""
    out = Counter()
    for th, frames, w in model_samples:
        out[(th, tuple(frames))] += w
    for th, frames, w in slices:
        out[(th, tuple(frames))] += w
    return out


def aggregated(model, scale):
    """[(thread, stack, weight)] of the samples as the aggregates weigh them: under the slices open
    at each (the model's "under"), weights scaled to the IR's ns (a count: 1000)."""
    under = model.get("under") or [()] * len(model["samples"])
    return [(th, tuple(u) + tuple(fr), w * scale) for (th, fr, w), u in zip(model["samples"], under)]


def svg_titles(svg):
    """[(name, count, unit, pct)] of every tooltip of a flame graph, 'NAME (1,234 UNIT, 5.00%)'."""
    out = []
    for t in re.findall(r"<title>([^<]*)</title>", svg):
        m = re.match(r"^(.*) \(([\d,]+) (.+), ([\d.]+)%\)$", html.unescape(t))
        if m:
            out.append((m.group(1), int(m.group(2).replace(",", "")), m.group(3), m.group(4)))
    return out


def check_case(ctx, name, path, model):
    """Case `name` (input at path) against its model: every aggregating output. A count profile
    (doc/formats.md, "Conversion rules: Samples") weighs its samples only, under the slices open at each,
    and every output names its counts after the event, never µs or ms."""
    doc = load(path)
    ref = reference(doc)
    count = model["unit"] == "count"
    kind = model["type"]
    scale = 1000 if count else 1  # the IR carries a count as 1000 ns
    want = expected([(th, fr, w * scale) for th, fr, w in model["samples"]])
    got_ref = expected([(ref.label(th), fr, w) for th, fr, w in ref.samples])
    ctx.eq(dict(got_ref), dict(want), f"{name}: this test's reading of the document agrees with the generator's model")
    ctx.eq(dict(ref.nc), {k: v for k, v in model["nc"].items() if v}, f"{name}: not converted, by the reading")
    ctx.eq(ref.bad, model["bad"], f"{name}: bad records, by the reading")

    base = os.path.join(ctx.work, name)
    # -o ir: each sample's stack and value; the unit in the metadata
    r = ctx.run(["-f", "-o", "ir", path, base + ".ir.txt"], check_rc=0)
    if r.returncode:
        return
    meta, got = ir_samples(base + ".ir.txt")
    ctx.eq(dict(expected([(th, tuple(short(f) for f in fr), w) for th, fr, w in got])), dict(want),
           f"{name}: -o ir: every sample's stack and value")
    for full in model.get("full_names", ()):  # where a frame is, in its full name (pprof's system_name)
        ctx.check(any(full in fr for _, fr, _ in got), f"{name}: -o ir: a frame named {full!r}")
    ctx.eq((meta.get("sample-type"), meta.get("sample-unit")), (kind, "count") if count else (None, None),
           f"{name}: -o ir: metadata sample-type and sample-unit")
    figs, kinds = summary(r.stderr.decode(errors="replace"))
    ctx.eq(figs.get("samples", 0), len(model["samples"]), f"{name}: the summary's samples")
    ctx.eq(kinds, {k: v for k, v in model["nc"].items() if v}, f"{name}: the summary's not converted")
    ctx.eq(figs.get("bad-line", 0), model["bad"], f"{name}: the summary's bad-line")

    # what the aggregates weigh: a count profile's samples only (its slices weigh nothing, and
    # say so: note slices-not-weighed); time: samples and slices' own time
    slices = [(th, fr, w) for th, fr, w in model.get("slices", [])]
    agg = expected(aggregated(model, scale), [] if count else slices)
    want_us = Counter({";".join((th,) + fr): w // 1000 for (th, fr), w in agg.items()})
    # folded: µs of self time, so a count is one
    r = ctx.run(["-f", "-o", "folded", path, base + ".folded"], check_rc=0)
    if os.path.exists(base + ".folded"):
        ctx.eq(tclib.read_folded(base + ".folded"), {k: v for k, v in want_us.items() if v},
               f"{name}: folded: every stack's {'counts (slices weigh nothing)' if count else 'µs'}")
        figs, _ = summary(r.stderr.decode(errors="replace"))
        ctx.eq(figs.get("slices-not-weighed", 0), ref.slices if count else 0,
               f"{name}: folded: the note slices-not-weighed counts the slices a count profile leaves out")

    # pprof: counts named after the event (no slice time in it), or wall nanoseconds
    ctx.run(["-f", "-o", "pprof", path, base + ".pb.gz"], check_rc=0)
    if os.path.exists(base + ".pb.gz"):
        types, stacks = pprof_stacks(ctx, base + ".pb.gz", name)
        default = stacks.pop("default", None)
        if count:
            ctx.eq(types, [(kind, "count")], f"{name}: pprof sample type named after the event")
            ctx.eq(default, kind, f"{name}: pprof default sample type")
            ctx.eq({k: v[0] for k, v in stacks.items()}, {k: v // 1000 for k, v in agg.items()},
                   f"{name}: pprof: each stack's counts")
            ctx.eq(sum(v[0] for v in stacks.values()), sum(w for _, _, w in model["samples"]),
                   f"{name}: pprof: the total is the samples' weights")
        else:
            ctx.eq(types[:1], [("wall", "nanoseconds")], f"{name}: pprof: time samples stay wall nanoseconds")
            ctx.eq({(th, tuple(short(f) for f in fr)): v[0] for (th, fr), v in stacks.items()},
                   dict(agg), f"{name}: pprof: each stack's wall ns")

    # speedscope: each thread's sampled profile, its stacks and weights (ns; a count profile's:
    # unit none, named after the event, the counts); the slices stay in evented profiles
    ss_path = base + ".speedscope.json"
    ctx.run(["-f", "-o", "speedscope", path, ss_path], check_rc=0)
    if os.path.exists(ss_path):
        chk = ctx.oracle(["python3", os.path.join(ctx.source, "tests", "lib", "check_speedscope.py"), ss_path])
        ctx.check(chk is not None and chk.returncode == 0,
                  f"{name}: speedscope: check_speedscope.py: {chk and chk.stdout.decode(errors='replace')[-400:]}")
        with open(ss_path, encoding="utf-8") as f:
            ss = json.load(f)
        frames = ss["shared"]["frames"]
        got_ss, opened = Counter(), 0
        for p in ss["profiles"]:
            if p["type"] == "evented":
                opened += sum(e["type"] == "O" for e in p["events"])
                continue
            if count:
                ctx.check(p["unit"] == "none" and p["name"].endswith(") " + kind),
                          f"{name}: speedscope: a sampled profile of counts: unit none, named after {kind}: "
                          f"{p['unit']} {p['name']!r}")
                ctx.eq((p["startValue"], p["endValue"]), (0, sum(p["weights"])),
                       f"{name}: speedscope: {p['name']}: from 0 to its total count, no gap")
            mult = {"nanoseconds": 1, "microseconds": 1000, "milliseconds": 10 ** 6, "none": 1000}[p["unit"]]
            th = re.match(r"(.*) \(tid (\d+)\)", p["name"])
            for st, w in zip(p["samples"], p["weights"]):
                if st:
                    got_ss[(f"{th.group(1)}-{th.group(2)}", tuple(short(frames[i]["name"]) for i in st))] += w * mult
        ctx.eq(dict(got_ss), dict(expected(aggregated(model, scale))),
               f"{name}: speedscope: each sampled profile's stacks and weights")
        ctx.eq(opened, ref.slices, f"{name}: speedscope: the slices are in the evented profiles")

    # report --csv: each function's exclusive time (µs: a count is one), per thread and in all
    ctx.run(["-f", "-o", "report", "--csv", path, base + ".csv"], check_rc=0)
    if os.path.exists(base + ".csv"):
        import reportlib
        header, rows = reportlib.read_csv(base + ".csv")
        got_r, want_r = Counter(), Counter()
        for row in rows:
            if row["thread"] == "all" and row["excl_wall_us"]:
                got_r[short(row["method"])] += row["excl_wall_us"]
        for (th, fr), w in agg.items():
            want_r[fr[-1]] += w // 1000
        ctx.eq(dict(got_r), {k: v for k, v in want_r.items() if v}, f"{name}: report: each function's exclusive "
                                                                       f"{'count' if count else 'time'}")
        ctx.eq(header, f"thread,tid,method,calls,incl_{kind},excl_{kind},incl_cpu_us,excl_cpu_us" if count
               else reportlib.CSV_HEADER, f"{name}: report --csv: the figures' columns")
        if count:
            ctx.check(all(row["incl_cpu_us"] is None for row in rows), f"{name}: report --csv: counts have no CPU time")
    total = sum(want_us.values())
    if count:
        check_count_labels(ctx, name, path, base, kind, total)

    # flamegraph: its total, in µs or counts of the event
    ctx.run(["-f", "-o", "flamegraph", path, base + ".svg"], check_rc=0)
    if os.path.exists(base + ".svg"):
        with open(base + ".svg", encoding="utf-8") as f:
            svg = f.read()
        titles = svg_titles(svg)
        root = [t for t in titles if t[0] == "all"]
        ctx.eq(root[:1], [("all", total, kind if count else "us", "100")], f"{name}: flamegraph: the total")
        ctx.eq({t[2] for t in titles}, {kind if count else "us"}, f"{name}: flamegraph: every tooltip's unit")
        sub = re.search(r'<text id="subtitle"[^>]*>([^<]*)</text>', svg)
        ctx.check(sub and (f"{kind} counts" in html.unescape(sub.group(1)) if count else "time in µs" in sub.group(1)),
                  f"{name}: flamegraph: the subtitle says what the widths are: {sub and sub.group(1)!r}")


def check_count_labels(ctx, name, path, base, kind, total):
    """A count profile's report (text, HTML) and call graph name its counts after the event, no µs or ms."""
    ctx.run(["-f", "-o", "report", path, base + ".txt"], check_rc=0)
    if os.path.exists(base + ".txt"):
        with open(base + ".txt", encoding="utf-8") as f:
            text = f.read()
        head, _, body = text.partition("=" * 70)
        ctx.check(re.search(r"^counts +" + re.escape(kind) + "$", head, re.M),
                  f"{name}: report: the header names the counts ({kind})")
        ctx.check(re.search(r"^  span +" + f"{total:,}" + " " + re.escape(kind) + "$", body, re.M),
                  f"{name}: report: all threads' span is the total count {total} {kind}")
        ctx.check("incl-count" in body and "excl-count" in body and "incl-wall" not in body,
                  f"{name}: report: the table's columns are counts")
        ctx.check(not re.search(r"\bus\b|usecs|µs", body), f"{name}: report: no µs in its sections")
    ctx.run(["-f", "-o", "report", "--html", path, base + ".report.html"], check_rc=0)
    if os.path.exists(base + ".report.html"):
        with open(base + ".report.html", encoding="utf-8") as f:
            page = f.read()
        ctx.check(f'<th scope="row">counts</th><td>{html.escape(kind)}</td>' in page and ">incl count</th>" in page,
                  f"{name}: report --html: the facts name the counts, the table's columns are counts")
        ctx.check(f"Flame graph: {html.escape(kind)} counts" in page and f'"count":"{kind}"' in page,
                  f"{name}: report --html: the flame graph and the call trees' data name the counts")
    ctx.run(["-f", "-o", "dot", "--threshold", "0", path, base + ".dot"], check_rc=0)
    if os.path.exists(base + ".dot"):
        with open(base + ".dot", encoding="utf-8") as f:
            dot = f.read()
        ctx.check(" ms" not in dot and f"of {total} {kind}" in dot, f"{name}: dot: the graph's total in {kind}, no ms")
        labels = re.findall(r"\\nincl (\d+) (\S+) \(", dot)
        ctx.check(labels and all(u == kind for _, u in labels), f"{name}: dot: every node's counts are {kind}")


def regenerated(ctx):
    """The committed inputs are the generator's: the same bytes."""
    out = os.path.join(ctx.work, "gen")
    os.makedirs(out, exist_ok=True)
    for name, (text, _) in gen.build().items():
        committed = os.path.join(ctx.source, "tests", "json", name)
        with open(committed, encoding="utf-8") as f:
            ctx.eq(f.read() == text, True, f"tests/json/{name} is what gen_json_samples.py writes")


def accounting(ctx):
    """Every record of every JSON input: converted, bad or not converted by kind, as the summary says."""
    paths = sorted(p for d in (os.path.join(ctx.source, "tests", "json"), os.path.join(ctx.source, "tests", "golden", "json"))
                   for p in (os.path.join(d, f) for f in os.listdir(d)) if p.endswith((".json", ".cpuprofile")))
    paths += [p for _, p in ctx.extra_files("json")]
    for path in paths:
        what = os.path.relpath(path, ctx.source)
        try:
            doc = load(path)
        except ValueError:
            continue  # not JSON (a cut file): the reader refuses it; not this test's
        m = reference(doc)
        r = ctx.run(["-f", "-o", "ir", path, os.path.join(ctx.work, os.path.basename(path) + ".acc.ir.txt")])
        err = r.stderr.decode(errors="replace")
        converted = m.inputs - m.bad - sum(m.nc.values())
        if not m.records:
            ctx.check(r.returncode != 0 and "no trace events" in err, f"{what}: nothing converts: refused ({err.strip()})")
            continue
        if not ctx.check(r.returncode == 0, f"{what}: {err.strip()[:300]}"):
            continue
        figs, kinds = summary(err)
        print(f"{what}: {m.inputs} records: {converted} converted ({m.records} IR records), {m.bad} bad, "
              f"{sum(m.nc.values())} not converted {dict(m.nc)}")
        ctx.eq(figs.get("records", 0), m.records, f"{what}: IR records of the converted ones")
        ctx.eq(figs.get("bad-line", 0), m.bad, f"{what}: bad-line")
        ctx.eq(figs.get("not-converted", 0), sum(m.nc.values()), f"{what}: the figure not-converted")
        named = dict(m.nc) if len(m.nc) <= 12 else None
        if named is not None:
            ctx.eq(kinds, named, f"{what}: not converted, by kind")
        ctx.eq(converted + m.bad + figs.get("not-converted", 0), m.inputs, f"{what}: every record accounted for")


SAMPLE_MAX_FRAMES = 1024  # doc/formats.md, "Conversion rules": a sampled stack's frames kept


def deep_stacks(ctx):
    """A sampled stack deeper than 1024 frames keeps its outermost 1024 (as every depth limit
    keeps them), its weight on the deepest kept frame; each such sample is counted (depth-limit)
    and the warning says how many frames went. A chain f1 (root) .. f1100 and samples at five depths."""
    depth = 1100
    frames = {str(k): dict({"name": f"f{k}", "category": "deep"}, **({"parent": k - 1} if k > 1 else {}))
              for k in range(1, depth + 1)}
    at = {1100: 3, 1030: 5, 1024: 7, 500: 11, 1: 13}  # leaf depth: weight
    samples = [{"name": "cycles:u", "sf": d, "ts": 10.0 + i, "pid": 7, "tid": 7, "weight": w}
               for i, (d, w) in enumerate(at.items())]
    path = os.path.join(ctx.work, "deep-samples.json")
    with open(path, "w") as f:
        json.dump({"traceEvents": [], "stackFrames": frames, "samples": samples}, f)
    want = Counter()
    for d, w in at.items():
        kept = min(d, SAMPLE_MAX_FRAMES)
        want[";".join(["Thread-7-7"] + [f"f{k}" for k in range(1, kept + 1)])] += w
    cut = [d for d in at if d > SAMPLE_MAX_FRAMES]
    out = os.path.join(ctx.work, "deep-samples.folded")
    r = ctx.run(["-f", "-o", "folded", path, out], check_rc=0)
    if r.returncode:
        return
    ctx.eq(tclib.read_folded(out), dict(want), "deep sampled stacks: the outermost 1024 frames, the weight on the last")
    err = r.stderr.decode(errors="replace")
    figs, _ = summary(err)
    ctx.eq(figs.get("depth-limit", 0), len(cut), "deep sampled stacks: depth-limit counts each sample cut")
    dropped = sum(d - SAMPLE_MAX_FRAMES for d in cut)
    ctx.check(f"their {dropped} deeper frames were dropped" in err, f"deep sampled stacks: the warning says the "
                                                                    f"{dropped} frames dropped: {err.strip()[:300]}")


def memory(ctx):
    """n and 4n perf samples before their frames and events: the samples wait on disk."""
    if tclib.is_sanitized(ctx.traceconv):
        print("SKIPPED CHECK: sanitized build, peak RSS not compared")
        return
    rss, size = {}, {}
    for n in (100000, 400000):
        path = os.path.join(ctx.work, f"many-samples{n}.json")
        rng = random.Random(n)
        with open(path, "w") as f:  # line by line: this process's size is the child's until it execs
            f.write('{"samples":[\n')
            for i in range(n):
                f.write('%s{"sf":%d,"ts":%d.5,"tid":%d,"weight":%d,"name":"cycles:HG"}\n'
                        % ("," if i else "", rng.randint(1, 200), i, 1 + i % 8, 1000 + i % 77))
            f.write('],"stackFrames":{"1":{"name":"root","category":"c"}')
            for k in range(2, 201):
                f.write(',"%d":{"name":"f%d","category":"c","parent":%d}' % (k, k, k // 2))
            f.write('},"traceEvents":[]}\n')
        rc, err, rss[n] = tclib.run_measured([ctx.traceconv, "-q", "-f", "-o", "folded", path, os.devnull])
        size[n] = os.path.getsize(path) // 1024
        print(f"{n} samples: {size[n]} KiB of JSON, peak RSS {rss[n]} KiB")
        ctx.check(rc == 0, f"{n} samples: {err.strip()}")
    ctx.check(rss[400000] - rss[100000] <= (size[400000] - size[100000]) // 4,
              f"peak RSS grows with the samples: {rss[100000]} KiB for 100000, {rss[400000]} KiB for 400000")


def main():
    ctx = tclib.Ctx()
    regenerated(ctx)
    for name, model in gen.CASES.items():
        check_case(ctx, name, os.path.join(ctx.source, "tests", "json", name), model)
    accounting(ctx)
    deep_stacks(ctx)
    memory(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
