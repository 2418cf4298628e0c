#!/usr/bin/env python3
"""Chrome JSON inputs with sampled stacks (issue 35), written from a model: tests/json/*.

    python3 tests/golden/gen_json_samples.py [OUTDIR]     (default: tests/json)

Deterministic (seeded): the same bytes every run; test_json_samples.py regenerates them and
compares, then checks traceconv against each case's model (CASES[name]["model"]). Each model
is what the input says, worked out here from the values written, not by reading the file:

  samples: [(thread label, (frame, ..., leaf), weight)] of every sample that must be converted
           (a thread label is "name-tid", as folded writes it; frames are the names flame
           graphs show; weight in the unit of the case: "count" or "ns")
  under:   [(slice, ...)] beside samples: the slices open on its thread at each sample,
           outermost first, which the aggregates show above its frames (absent: none)
  slices:  [(thread label, path, self ns)]: the input's slices and their own time; a count
           profile's aggregates weigh its samples only (doc/formats.md, "Conversion rules: Samples"),
           so there they weigh nothing
  unit:    "count" (sample-type = type) or "ns" (wall time)
  type:    the pprof sample type
  nc:      {kind: n} of the input records that are not converted; bad: bad-line records
  full_names: frames' full names (pprof's system_name, the report's): "name: (url:line:column)"

Cases:
  samples-perf.json            Linux perf's converter (catapult profile_chrome): traceEvents,
                               then stackFrames (string ids, numeric parents, categories), then
                               332 cycles:HG samples without pid on 3 threads (two named by
                               thread_name, one only by its comm), perf's weights (periods);
                               5 samples of another event; other phases and M events
  samples-before-events.json   samples first, then stackFrames (parents defined after their
                               children), then traceEvents; pid, tid and ts as strings, weights
                               absent (1) or given, cpu-clock
  samples-missing-frame.json   a stackFrames map cut short: samples whose sf is missing, whose
                               chain of parents breaks, without sf, without ts, with a negative
                               weight, and an element that is not an object
  devtools-profile-chunks.json Chrome DevTools' array form: Profile + 3 ProfileChunks (from the
                               sampler thread) whose nodes are spread over the chunks, negative
                               timeDeltas, endTime in the last chunk; a second profile (2 chunks,
                               no endTime: the last sample weighs the mean interval) on a worker;
                               a chunk without data; flows, objects, contexts, marks
  node.cpuprofile              node --cpu-prof: nodes with children, (root)/(program)/(idle)/
                               (garbage collector), anonymous functions, a negative delta
  samples-in-slices.json       catapult's perf+trace file (profile_chrome): Chrome's X and B/E
                               slices on two threads, perf's cycles:HG samples without pid on
                               them (inside slices, between them) and on a thread of perf's own
"""
import json
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_OUT = os.path.join(HERE, "..", "json")


def dumps(doc):
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False) + "\n"


def label(name, tid):
    return f"{name}-{tid}"


# ---- perf: stackFrames + samples -------------------------------------------------------------

# (name, category) of each frame, and the call paths the samples hit (index paths, root first)
PERF_FRAMES = [
    ("start_thread", "libc.so"), ("__libc_start_main", "libc.so"), ("main", "app"),
    ("MessageLoop::Run", "libchrome.so"), ("MessageLoop::RunTask", "libchrome.so"),
    ("cc::LayerTreeHost::UpdateLayers", "libchrome.so"), ("SkCanvas::drawRect", "libskia.so"),
    ("memcpy", "libc.so"), ("[unknown]", "libc.so"), ("[unknown]", "Kernel"),
    ("do_futex", "Kernel"), ("__schedule", "Kernel"), ("gpu::CommandBuffer::Flush", "libchrome.so"),
    ("v8::internal::Execution::Call", "libv8.so"), ("Builtins_InterpreterEntryTrampoline", "libv8.so"),
    ("write", "libc.so"), ("sys_write", "Kernel"), ("perf_event_output", "Kernel"),
]
PERF_PATHS = [
    (1, 2, 3, 4, 5), (1, 2, 3, 4, 5, 6), (1, 2, 3, 4, 5, 6, 7), (1, 2, 3, 4, 13, 14),
    (1, 2, 3, 4, 13, 14, 8), (1, 2, 3, 4, 9, 10, 11), (0, 3, 4, 12), (0, 3, 4, 12, 9, 10),
    (0, 3, 4, 12, 7), (0, 3), (1, 2, 15, 16), (1, 2, 15, 16, 17), (0, 8),
]


def frames_tree(paths):
    """The stackFrames nodes of the paths: one node per distinct path prefix (as perf's
    converter writes them: a node is a frame under a parent), {prefix: id}."""
    ids = {}
    for p in paths:
        for k in range(1, len(p) + 1):
            if p[:k] not in ids:
                ids[p[:k]] = len(ids) + 1
    return ids


def perf_case(rng):
    pid = 4242
    threads = {4242: "main", 4250: "RenderThread"}  # named by thread_name
    comm_only = {7777: "perf"}  # only in the samples: process 7777, named by its comm
    ids = frames_tree(PERF_PATHS)
    stack_frames = {}
    for prefix, i in ids.items():
        name, cat = PERF_FRAMES[prefix[-1]]
        f = {"category": cat, "name": name}
        if len(prefix) > 1:
            f["parent"] = ids[prefix[:-1]]
        stack_frames[str(i)] = f
    events = [
        {"ph": "M", "pid": pid, "tid": pid, "name": "process_name", "args": {"name": "com.example.app"}},
        {"ph": "M", "pid": pid, "tid": 4242, "name": "thread_name", "args": {"name": "main"}},
        {"ph": "M", "pid": pid, "tid": 4242, "name": "thread_sort_index", "args": {"sort_index": 0}},
        {"ph": "M", "pid": pid, "tid": 4250, "name": "thread_name", "args": {"name": "RenderThread"}},
        {"ph": "M", "pid": pid, "tid": 4250, "name": "thread_sort_index", "args": {"sort_index": 1}},
        {"ph": "M", "pid": pid, "tid": pid, "name": "process_sort_index", "args": {"sort_index": -1}},
        {"ph": "M", "pid": pid, "tid": pid, "name": "process_labels", "args": {"labels": "perf"}},
        {"ph": "O", "pid": pid, "tid": 4242, "ts": 1000.0, "name": "cc::LayerTreeHostImpl", "id": "0x1",
         "args": {"snapshot": {}}},
        {"ph": "s", "pid": pid, "tid": 4242, "ts": 1001.0, "name": "ipc", "cat": "ipc", "id": 7},
        {"ph": "f", "pid": pid, "tid": 4250, "ts": 1002.0, "name": "ipc", "cat": "ipc", "id": 7, "bp": "e"},
        {"ph": "BX", "pid": pid, "tid": 4242, "ts": 1003.0, "name": "two letters"},
        12345,
        {"pid": pid, "tid": 4242, "ts": 1004.0, "name": "no phase"},
    ]
    nc = {"M process_sort_index": 1, "M process_labels": 1, "O": 1, "s": 1, "f": 1, "BX": 1,
          "not an object": 1, "no ph": 1}
    samples, model = [], []
    t = 1000000.0
    tids = [4242] * 200 + [4250] * 92 + [7777] * 40
    rng.shuffle(tids)
    for n, tid in enumerate(tids):
        t += rng.randint(500, 1500) + rng.randint(0, 999) / 1000
        path = rng.choice(PERF_PATHS[:12] if tid != 7777 else PERF_PATHS[9:])
        weight = rng.randint(100000, 4000000)
        name = threads.get(tid) or comm_only[tid]
        s = {"name": "cycles:HG", "weight": weight, "ts": round(t, 3), "sf": ids[path], "comm": name,
             "tid": tid, "cpu": n % 4}
        samples.append(s)
        model.append((label(name, tid), tuple(PERF_FRAMES[i][0] for i in path), weight))
    for k in range(5):  # another event of the same run: not the profile's unit
        t += 700
        samples.insert(17 * k + 3, {"name": "instructions", "weight": 999, "ts": round(t, 3), "sf": 1,
                                    "tid": 4242, "cpu": 0})
    nc["sample instructions"] = 5
    doc = {"traceEvents": events, "stackFrames": stack_frames, "samples": samples}
    return doc, {"samples": model, "unit": "count", "type": "cycles:HG", "nc": nc, "bad": 0}


def before_case(rng):
    """samples, then stackFrames (children before their parents, string parents), then traceEvents."""
    names = ["root_task", "run", "parse", "tokenize", "layout", "paint", "idle_wait"]
    # id: (name index, parent id or None); ids not in path order on purpose
    frames = {"10": (0, None), "3": (1, "10"), "7": (2, "3"), "21": (3, "7"), "5": (4, "3"), "8": (5, "5"),
              "99": (6, None)}

    def path(fid):
        out = []
        while fid is not None:
            out.append(names[frames[fid][0]])
            fid = frames[fid][1]
        return tuple(reversed(out))

    stack_frames = {}
    for fid in sorted(frames, key=lambda x: -int(x)):  # the deepest ids first: parents come later
        ni, parent = frames[fid]
        f = {"name": names[ni], "category": "app"}
        if parent is not None:
            f["parent"] = parent
        stack_frames[fid] = f
    samples, model = [], []
    t = 5000.0
    for n in range(60):
        t += rng.randint(900, 1100)
        tid = 301 if n % 3 else 302
        fid = rng.choice(sorted(frames))
        s = {"cpu": "-1", "name": "cpu-clock", "ts": str(t), "pid": "300", "tid": str(tid), "sf": int(fid)}
        weight = 1
        if n % 4 == 0:
            weight = rng.randint(2, 9)
            s["weight"] = str(weight) if n % 8 == 0 else weight
        samples.append(s)
        model.append((label("worker" if tid == 301 else "Thread-302", tid), path(fid), weight))
    events = [
        {"ph": "M", "pid": 300, "tid": 301, "name": "thread_name", "args": {"name": "worker"}},
        {"ph": "B", "pid": 300, "tid": 301, "ts": 1000.0, "name": "job"},  # before the samples: not around them
        {"ph": "i", "pid": 300, "tid": 301, "ts": 1050.0, "name": "tick", "s": "t"},
        {"ph": "E", "pid": 300, "tid": 301, "ts": 1100.0},
    ]
    text = '{"samples":%s,"stackFrames":%s,"traceEvents":%s}\n' % (
        json.dumps(samples, separators=(",", ":")), json.dumps(stack_frames, separators=(",", ":")),
        json.dumps(events, separators=(",", ":")))
    return text, {"samples": model, "unit": "count", "type": "cpu-clock", "nc": {}, "bad": 0,
                  "slices": [(label("worker", 301), ("job",), 100000)]}


def missing_case(rng):
    """A stackFrames map cut short: what is there converts, what is not is counted, never guessed."""
    stack_frames = {"1": {"name": "main", "category": "app"},
                    "2": {"name": "loop", "category": "app", "parent": 1},
                    "3": {"name": "work", "category": "app", "parent": 2},
                    "4": {"name": "orphan", "category": "app", "parent": 40},   # parent missing
                    "5": {"name": "below_orphan", "category": "app", "parent": 4},
                    "6": {"name": "loop_a", "category": "app", "parent": 7},    # a loop of parents
                    "7": {"name": "loop_b", "category": "app", "parent": 6}}
    paths = {1: ("main",), 2: ("main", "loop"), 3: ("main", "loop", "work")}
    samples, model = [], []
    t = 100.0
    nc = {"sample without frame": 0, "not an object": 1}
    bad = 0
    for n in range(40):
        t += 10
        sf = [1, 2, 3, 3, 50, 4, 5, 6][n % 8]
        s = {"name": "cycles:u", "ts": t, "tid": 9, "pid": 9, "sf": sf, "weight": 3}
        if n % 13 == 5:
            del s["ts"]
            bad += 1
        elif n % 13 == 7:
            s["weight"] = -2
            bad += 1
        elif n % 13 == 11:
            del s["sf"]
            nc["sample without frame"] += 1
        elif sf in paths:
            model.append((label("Thread-9", 9), paths[sf], 3))
        else:
            nc["sample without frame"] += 1
        samples.append(s)
    samples.insert(20, "not a sample")
    doc = {"traceEvents": [], "stackFrames": stack_frames, "samples": samples}
    return doc, {"samples": model, "unit": "count", "type": "cycles:u", "nc": nc, "bad": bad}


# ---- DevTools: Profile + ProfileChunk ------------------------------------------------------------

def call_frame(name, url="", line=-1, col=-1, script=0):
    return {"functionName": name, "scriptId": script, "url": url, "lineNumber": line, "columnNumber": col,
            "codeType": "JS" if url else "other"}


def shown(cf):
    return cf["functionName"] or "(anonymous)"


def profile_weights(times, end):
    """Each sample's weight in ns: to the next one in time order (ties: file order), the last to
    end (ns) when given and not before it, else the mean interval (rounded), else 1 ms."""
    order = sorted(range(len(times)), key=lambda i: (times[i], i))
    w = [0] * len(times)
    for a, b in zip(order, order[1:]):
        w[a] = times[b] - times[a]
    last = order[-1]
    if end is not None and end >= times[last]:
        w[last] = end - times[last]
    elif len(times) > 1:
        w[last] = int((times[order[-1]] - times[order[0]]) / (len(times) - 1) + 0.5)
    else:
        w[last] = 1000000
    return w


def devtools_case(rng):
    pid, main, worker, sampler = 500, 501, 510, 520
    url = "https://example.com/app.js"
    # node id: (call frame, parent id)
    nodes = {1: (call_frame("(root)"), None), 2: (call_frame("(program)"), 1), 3: (call_frame("(idle)"), 1),
             4: (call_frame("(garbage collector)"), 1), 5: (call_frame("main", url, 0, 9, 17), 1),
             6: (call_frame("render", url, 40, 2, 17), 5), 7: (call_frame("", url, 88, 14, 17), 5),
             8: (call_frame("", url, 88, 30, 17), 7), 9: (call_frame("layout", url, 120, 0, 17), 6)}
    spread = [[1, 2, 3, 4, 5], [6, 7], [8, 9]]  # the nodes of each chunk; node 9's parent 6 comes in chunk 2

    def path(nid):
        out = []
        while nid is not None and nid != 1:
            out.append(shown(nodes[nid][0]))
            nid = nodes[nid][1]
        return tuple(reversed(out))

    start = 2_000_000  # µs
    ids = [rng.choice([2, 3, 4, 5, 6, 7, 8, 9]) for _ in range(90)]
    deltas = [rng.randint(80, 160) for _ in ids]
    for k in (10, 33, 34, 61):  # the sampler's clock goes back now and then: samples out of order
        deltas[k] = -rng.randint(20, 60)
    times, cum = [], 0
    for d in deltas:
        cum += d
        times.append((start + cum) * 1000)
    end_us = start + cum + 123
    weights = profile_weights(times, end_us * 1000)
    model = [(label("CrRendererMain", main), path(n), w) for n, w in zip(ids, weights)]
    events = [
        {"ph": "M", "pid": pid, "tid": 0, "name": "process_name", "args": {"name": "Renderer"}},
        {"ph": "M", "pid": pid, "tid": main, "name": "thread_name", "args": {"name": "CrRendererMain"}},
        {"ph": "M", "pid": pid, "tid": worker, "name": "thread_name", "args": {"name": "DedicatedWorker thread"}},
        {"ph": "M", "pid": pid, "tid": sampler, "name": "thread_name", "args": {"name": "v8:ProfEvntProc"}},
        {"ph": "M", "pid": pid, "tid": 0, "name": "process_uptime_seconds", "args": {"uptime": 12}},
        {"ph": "M", "pid": pid, "tid": 0, "name": "num_cpus", "args": {"number": 8}},
        {"ph": "X", "pid": pid, "tid": main, "ts": start - 1000, "dur": 400.0, "tts": 1000, "tdur": 300,
         "name": "RunTask", "cat": "toplevel"},  # slices before and after the samples: not around them
        {"ph": "P", "pid": pid, "tid": main, "ts": start + 1, "id": "0x1", "name": "Profile",
         "cat": "disabled-by-default-v8.cpu_profiler", "args": {"data": {"startTime": start}}},
        {"ph": "s", "pid": pid, "tid": main, "ts": start + 2, "id": 3, "name": "flow", "cat": "x"},
        {"ph": "f", "pid": pid, "tid": worker, "ts": start + 3, "id": 3, "name": "flow", "cat": "x"},
        {"ph": "N", "pid": pid, "tid": main, "ts": start + 4, "id": "0x9", "name": "Frame"},
        {"ph": "O", "pid": pid, "tid": main, "ts": start + 5, "id": "0x9", "name": "Frame", "args": {"snapshot": {}}},
        {"ph": "D", "pid": pid, "tid": main, "ts": start + 6, "id": "0x9", "name": "Frame"},
        {"ph": "(", "pid": pid, "tid": main, "ts": start + 7, "id": "0x5", "name": "FrameBlameContext"},
        {"ph": ")", "pid": pid, "tid": main, "ts": start + 8, "id": "0x5", "name": "FrameBlameContext"},
        {"ph": "R", "pid": pid, "tid": main, "ts": start + 9, "name": "navigationStart"},
        {"ph": "(", "pid": pid, "tid": main, "ts": start + 10, "id": "0x6", "name": "FrameBlameContext"},
    ]
    nc = {"M process_uptime_seconds": 1, "M num_cpus": 1, "s": 1, "f": 1, "N": 1, "O": 1, "D": 1, "(": 2, ")": 1}
    cut = [0, 25, 60, len(ids)]
    for c in range(3):
        data = {"cpuProfile": {"nodes": [dict({"id": n, "callFrame": nodes[n][0]},
                                              **({"parent": nodes[n][1]} if nodes[n][1] else {}))
                                         for n in spread[c]],
                               "samples": ids[cut[c]:cut[c + 1]]},
                "timeDeltas": deltas[cut[c]:cut[c + 1]]}
        if c == 2:
            data["endTime"] = end_us
        events.append({"ph": "P", "pid": pid, "tid": sampler, "ts": start + 100 * (c + 1), "id": "0x1",
                       "name": "ProfileChunk", "cat": "disabled-by-default-v8.cpu_profiler", "args": {"data": data}})
        events.append({"ph": "X", "pid": pid, "tid": main, "ts": start + 50000 + 2000 * c, "dur": 50.0,
                       "tts": 2000 * (c + 1), "tdur": 40, "name": "RunTask", "cat": "toplevel"})
    events.append({"ph": "P", "pid": pid, "tid": sampler, "ts": start + 500, "id": "0x1", "name": "ProfileChunk",
                   "cat": "disabled-by-default-v8.cpu_profiler", "args": {}})  # no data: nothing in it
    # the worker's profile: a regular 250 µs grid sampled out of order, no endTime
    w_start = start + 300
    grid = list(range(1, 41))
    rng.shuffle(grid)
    w_nodes = {1: (call_frame("(root)"), None), 2: (call_frame("onmessage", "https://example.com/w.js", 3, 0, 30), 1),
               3: (call_frame("crunch", "https://example.com/w.js", 10, 4, 30), 2)}
    w_ids = [rng.choice([2, 3, 3]) for _ in grid]
    w_times = [(w_start + 250 * g) * 1000 for g in grid]
    w_deltas = [250 * grid[0]] + [250 * (b - a) for a, b in zip(grid, grid[1:])]
    w_weights = profile_weights(w_times, None)
    w_path = {2: ("onmessage",), 3: ("onmessage", "crunch")}
    model += [(label("DedicatedWorker thread", worker), w_path[n], w) for n, w in zip(w_ids, w_weights)]
    events.append({"ph": "P", "pid": pid, "tid": worker, "ts": w_start, "id": "0x2", "name": "Profile",
                   "args": {"data": {"startTime": w_start}}})
    for c, (a, b) in enumerate(((0, 15), (15, 40))):
        cp = {"samples": w_ids[a:b]}
        if c == 0:
            cp["nodes"] = [dict({"id": n, "callFrame": w_nodes[n][0]}, **({"parent": w_nodes[n][1]} if w_nodes[n][1] else {}))
                           for n in w_nodes]
        events.append({"ph": "P", "pid": pid, "tid": sampler, "ts": w_start + 10 * (c + 1), "id": "0x2",
                       "name": "ProfileChunk", "args": {"data": {"cpuProfile": cp, "timeDeltas": w_deltas[a:b]}}})
    return events, {"samples": model, "unit": "ns", "type": "wall", "nc": nc, "bad": 0,
                    "slices": [(label("CrRendererMain", main), ("RunTask",), 550000)],
                    "full_names": ["render: (https://example.com/app.js:41:3)", "(anonymous): (https://example.com/app.js:89:15)",
                                   "(anonymous): (https://example.com/app.js:89:31)", "(program)", "(idle)",
                                   "(garbage collector)", "crunch: (https://example.com/w.js:11:5)"]}


def cpuprofile_case(rng):
    """node --cpu-prof: {nodes (children), startTime, endTime, samples, timeDeltas}."""
    url = "file:///srv/app/server.js"
    nodes = {1: (call_frame("(root)", "", -1, -1, 0), [2, 3, 4, 5]), 2: (call_frame("(program)"), []),
             3: (call_frame("(idle)"), []), 4: (call_frame("(garbage collector)"), []),
             5: (call_frame("", url, 0, 0, 61), [6, 7]), 6: (call_frame("handle", url, 12, 17, 61), [8]),
             7: (call_frame("", url, 30, 5, 61), []), 8: (call_frame("JSON.parse", "", -1, -1, 0), [])}
    parent = {c: p for p, (_, cs) in nodes.items() for c in cs}

    def path(n):
        out = []
        while n != 1:
            out.append(shown(nodes[n][0]))
            n = parent[n]
        return tuple(reversed(out))

    start = 7_000_000_000
    ids = [rng.choice([2, 3, 4, 5, 6, 7, 8]) for _ in range(50)]
    deltas = [rng.randint(900, 1100) for _ in ids]
    deltas[0] = 2500  # the first from startTime
    deltas[20] = -300
    times, cum = [], 0
    for d in deltas:
        cum += d
        times.append((start + cum) * 1000)
    end = start + max(0, cum) + 1500
    weights = profile_weights(times, end * 1000)
    doc = {"nodes": [{"id": n, "callFrame": cf, "hitCount": ids.count(n), "children": cs}
                     for n, (cf, cs) in nodes.items()],
           "startTime": start, "endTime": end, "samples": ids, "timeDeltas": deltas}
    model = [(label("main", 1), path(n), w) for n, w in zip(ids, weights)]
    return doc, {"samples": model, "unit": "ns", "type": "wall", "nc": {}, "bad": 0,
                 "full_names": ["(anonymous): (file:///srv/app/server.js:1:1)", "handle: (file:///srv/app/server.js:13:18)",
                                "JSON.parse"]}


def in_slices_case(rng):
    """Chrome's trace events and Linux perf's samples in one file, as catapult's profile_chrome
    writes them: the samples (no pid) are on the events' threads of their tid, many inside
    slices. Slices end on whole µs, samples fall on half ones: no sample is at a slice's edge."""
    pid, main, io, perf = 100, 100, 101, 555
    names = {main: "CrBrowserMain", io: "Chrome_IOThread"}
    base = 3_000_000  # µs
    # (tid, name, start, end) in µs from base, nested where they overlap on a thread
    slices = [(main, "MessageLoop::RunTask", 1000, 5000), (main, "LayerTreeHost::UpdateLayers", 1500, 3000),
              (main, "Paint", 2000, 2600), (main, "MessageLoop::RunTask", 6000, 9000), (main, "GC", 7000, 7500),
              (io, "IOHandler::OnRead", 1200, 8000), (io, "URLRequest::Read", 4000, 4100)]
    events = [{"ph": "M", "pid": pid, "tid": t, "name": "thread_name", "args": {"name": n}} for t, n in names.items()]
    for k, (tid, name, a, b) in enumerate(slices):
        if k == 2:  # one as B/E
            events.append({"ph": "B", "pid": pid, "tid": tid, "ts": base + a, "name": name, "cat": "cc"})
            events.append({"ph": "E", "pid": pid, "tid": tid, "ts": base + b, "name": name, "cat": "cc"})
        else:
            events.append({"ph": "X", "pid": pid, "tid": tid, "ts": base + a, "dur": b - a, "name": name,
                           "cat": "toplevel", "tts": a // 2, "tdur": (b - a) // 2})
    rng.shuffle(events)
    frames = [("main", "app"), ("MessageLoop::Run", "libchrome.so"), ("base::TaskAnnotator::RunTask", "libchrome.so"),
              ("SkCanvas::drawPath", "libskia.so"), ("memcpy", "libc.so"), ("net::Socket::Read", "libchrome.so"),
              ("sys_read", "Kernel"), ("perf_event_output", "Kernel")]
    paths = [(0, 1, 2), (0, 1, 2, 3), (0, 1, 2, 3, 4), (0, 1, 5), (0, 1, 5, 6), (7,)]
    ids = frames_tree(paths)
    stack_frames = {str(i): dict({"name": frames[pre[-1]][0], "category": frames[pre[-1]][1]},
                                 **({"parent": ids[pre[:-1]]} if len(pre) > 1 else {})) for pre, i in ids.items()}
    samples, model, under = [], [], []
    for n in range(120):
        tid = [main, main, io, perf][n % 4]
        ts = rng.randint(500, 9999) + 0.5
        path = rng.choice(paths[:5]) if tid != perf else paths[5]
        weight = rng.randint(10000, 900000)
        samples.append({"name": "cycles:HG", "weight": weight, "ts": base + ts, "sf": ids[path], "tid": tid,
                        "comm": names.get(tid, "perf"), "cpu": n % 4})
        model.append((label(names.get(tid, "perf"), tid), tuple(frames[i][0] for i in path), weight))
        # the slices open at ts on its thread, outermost (earliest) first
        under.append(tuple(nm for t, nm, a, b in sorted(slices, key=lambda x: (x[2], -x[3])) if t == tid and a < ts < b))
    rng.shuffle(samples)  # perf's order is not time order across threads
    doc = {"traceEvents": events, "samples": samples, "stackFrames": stack_frames}

    def inside(x, y):  # slice x within slice y (another one), on one thread
        return x[0] == y[0] and y[2] <= x[2] and x[3] <= y[3] and x != y

    self_ns = []
    for sl in slices:  # each slice's own time: its length less its direct children's
        above = sorted((y for y in slices if inside(sl, y)), key=lambda y: y[2])
        children = [x for x in slices if inside(x, sl) and not any(inside(x, y) and inside(y, sl) for y in slices)]
        self_ns.append((label(names[sl[0]], sl[0]), tuple(y[1] for y in above) + (sl[1],),
                        (sl[3] - sl[2] - sum(x[3] - x[2] for x in children)) * 1000))
    return doc, {"samples": model, "under": under, "unit": "count", "type": "cycles:HG", "nc": {}, "bad": 0,
                 "slices": self_ns, "n_slices": len(slices)}


BUILDERS = {
    "samples-perf.json": perf_case,
    "samples-before-events.json": before_case,
    "samples-missing-frame.json": missing_case,
    "devtools-profile-chunks.json": devtools_case,
    "node.cpuprofile": cpuprofile_case,
    "samples-in-slices.json": in_slices_case,
}


def build():
    """{file name: (text, model)}: every case, each from its own seeded generator."""
    out = {}
    for i, (name, fn) in enumerate(BUILDERS.items()):
        doc, model = fn(random.Random(3500 + i))
        out[name] = (doc if isinstance(doc, str) else dumps(doc), model)
    return out


CASES = {name: model for name, (_, model) in build().items()}


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else DEFAULT_OUT
    os.makedirs(out, exist_ok=True)
    for name, (text, _) in build().items():
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(text)
        print(f"{name}: {len(text)} bytes")


if __name__ == "__main__":
    main()
