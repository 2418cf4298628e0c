#!/usr/bin/env python3
"""A Chrome trace JSON written the way Chrome writes one, for `make bench` (issue 26: the
JSON reader against Perfetto's JSON import) and for comparing two builds' outputs:

    bench/gen_chrome_json.py SIZE_MB OUT [--seed N] [--edges]

What Chrome's traces have and our own JSON writer's output has not: "X" complete events
with dur (and tts/tdur on some threads), written when they end, so that a thread's events
come in end order and threads interleave out of time order; "B"/"E" pairs on other
threads; args on most events; "M" metadata (process_name, thread_name,
thread_sort_index) at the start and some at the end; pid/tid as numbers, as numeric
strings and, for one thread, as a name; ts with 0 to 3 decimals; instants ("i", "I"),
counters ("C", one and several series) and async slices ("b"/"e" with "id" or
"id2": {"local": ...}); names with escapes. --edges adds, once each, the forms a fast
path must leave to the general one: exponents, long mantissas, -0, quoted numbers,
escaped keys, duplicate keys, \\u escapes (a NUL, half a surrogate pair), equal-time and
overlapping slices, ends that close nothing, a B never closed, deep args.
Deterministic for a given seed and size."""
import argparse
import random

CLASSES = ["ThreadControllerImpl", "TaskQueueImpl", "MessagePumpForUI", "V8", "Blink", "LayerTreeHost",
           "RenderFrameImpl", "ResourceLoader", "SkiaRenderer", "Compositor", "GpuChannel", "ScriptRunner"]
VERBS = ["RunTask", "DoWork", "Execute", "Paint", "Layout", "Commit", "Draw", "Dispatch", "Parse",
         "Compile", "Flush", "Schedule", "UpdateLifecycle", "BeginFrame", "Raster", "Decode"]
JAVA = ["android.view.Choreographer.doFrame: (J)V", "com.example.app.MainActivity.onCreate: (Landroid/os/Bundle;)V",
        "android.os.Looper.loop: ()V", "okhttp3.internal.http2.Http2Stream.takeHeaders: ()Lokhttp3/Headers;"]


def names(rng, n):
    out = []
    for i in range(n):
        r = rng.random()
        if r < 0.08:
            out.append(rng.choice(JAVA))
        elif r < 0.1:
            out.append('%s::%s \\"quoted\\" \\u00e9%d' % (rng.choice(CLASSES), rng.choice(VERBS), i))
        else:
            out.append("%s::%s%s" % (rng.choice(CLASSES), rng.choice(VERBS), "" if r < 0.5 else str(i)))
    return out


def us(ns, decimals):
    """ns as Chrome's µs text: 0 to 3 decimals (exact, as Chrome rounds to the ns)."""
    if decimals == 0:
        return str(ns // 1000)
    q = 10 ** (3 - decimals)
    v = ns // q
    s = str(v).rjust(decimals + 1, "0")
    return s[:-decimals] + "." + s[-decimals:]


class Thread:
    def __init__(self, rng, pid, tid, style, has_cpu, decimals, idx):
        self.rng, self.pid, self.tid, self.style = rng, pid, tid, style
        self.has_cpu, self.decimals, self.idx = has_cpu, decimals, idx
        self.t = 1_000_000_000 + rng.randrange(1_000_000)  # ns
        self.cpu = 500_000_000
        self.stack = []  # (name, start, cpu_start)

    def ids(self):
        pid = '"%d"' % self.pid if self.idx % 5 == 3 else str(self.pid)
        tid = '"%s"' % self.tid if isinstance(self.tid, str) else ('"%d"' % self.tid if self.idx % 7 == 4 else str(self.tid))
        return pid, tid


def step(th, pool, out):
    """One event or more of thread th, appended as (time, thread, line)."""
    rng = th.rng
    adv = rng.randrange(1, 40_000)
    th.t += adv
    th.cpu += adv * 3 // 4
    pid, tid = th.ids()
    d = th.decimals
    cpu = ',"tts":%s' % us(th.cpu, d) if th.has_cpu else ""
    if th.stack and (len(th.stack) > 40 or rng.random() < 0.48):
        name, start, cstart = th.stack.pop()
        if th.style == "X":
            dur = ',"dur":%s' % us(th.t - start, d)
            if th.has_cpu:
                dur += ',"tts":%s,"tdur":%s' % (us(cstart, d), us(th.cpu - cstart, d))
            out.append((th.t, th.idx, '{"pid":%s,"tid":%s,"ts":%s,"ph":"X","cat":"toplevel","name":"%s"%s,'
                              '"args":{"src_file":"../../base/task/%s.cc","src_func":"%s"}}'
                        % (pid, tid, us(start, d), name, dur, name.split("::")[0][:20], "Run")))
        else:
            out.append((th.t, th.idx, '{"pid":%s,"tid":%s,"ts":%s,"ph":"E","cat":"toplevel"%s,"args":{}}'
                        % (pid, tid, us(th.t, d), cpu)))
        return
    r = rng.random()
    if r < 0.02:
        out.append((th.t, th.idx, '{"pid":%s,"tid":%s,"ts":%s,"ph":"i","s":"t","cat":"input","name":"Input%d"}'
                    % (pid, tid, us(th.t, d), rng.randrange(5))))
    elif r < 0.03:
        if rng.random() < 0.5:
            args = '{"value":%d}' % rng.randrange(1000)
        else:
            args = '{"used":%d,"free":%d.5}' % (rng.randrange(10**6), rng.randrange(10**6))
        out.append((th.t, th.idx, '{"pid":%s,"tid":%s,"ts":%s,"ph":"C","name":"Memory","args":%s}'
                    % (pid, tid, us(th.t, d), args)))
    elif r < 0.035:
        cookie = rng.randrange(1, 50)
        idm = '"id":"0x%x"' % cookie if rng.random() < 0.5 else '"id2":{"local":"0x%x"}' % cookie
        ph = "b" if rng.random() < 0.5 else "e"
        out.append((th.t, th.idx, '{"pid":%s,"tid":%s,"ts":%s,"ph":"%s","cat":"loading","name":"Load",%s}'
                    % (pid, tid, us(th.t, d), ph, idm)))
    else:
        name = rng.choice(pool)
        th.stack.append((name, th.t, th.cpu))
        if th.style == "B":
            out.append((th.t, th.idx, '{"pid":%s,"tid":%s,"ts":%s,"ph":"B","cat":"toplevel","name":"%s"%s,'
                              '"args":{"depth":%d}}' % (pid, tid, us(th.t, d), name, cpu, len(th.stack))))


EDGES = [
    '{"ph":"X","pid":1,"tid":1,"ts":1.5e3,"dur":2E1,"name":"exponent"}',
    '{"ph":"X","pid":1,"tid":1,"ts":1500.0000001,"dur":0.0000001,"name":"seven decimals"}',
    '{"ph":"X","pid":1,"tid":1,"ts":12345678901234567890,"dur":1,"name":"long mantissa"}',
    '{"ph":"X","pid":1,"tid":1,"ts":9007199254740993,"dur":1,"name":"2^53+1"}',
    '{"ph":"X","pid":1,"tid":1,"ts":-0,"dur":-0.0,"name":"minus zero"}',
    '{"ph":"X","pid":1,"tid":1,"ts":"1600.25","dur":"3","name":"quoted numbers"}',
    '{"ph":"X","pid":1,"tid":1,"ts":" 1600","dur":"3x","name":"quoted not numbers"}',
    '{"p\\u0068":"X","pid":1,"tid":1,"\\u0074s":1700,"dur":5,"name":"escaped keys"}',
    '{"ph":"X","ph":"B","pid":1,"tid":1,"ts":1800,"ts":1,"dur":5,"name":"duplicate keys"}',
    '{"ph":"X","pid":1,"tid":1,"ts":1900,"dur":5,"name":"nul \\u0000 and half \\ud800 pair \\ud83d\\ude00"}',
    '{"ph":"X","pid":1,"tid":2,"ts":2000,"dur":10,"name":"outer"}',
    '{"ph":"X","pid":1,"tid":2,"ts":2000,"dur":10,"name":"same span"}',
    '{"ph":"X","pid":1,"tid":2,"ts":2000,"dur":0,"name":"zero at start"}',
    '{"ph":"X","pid":1,"tid":2,"ts":2005,"dur":20,"name":"overlapping"}',
    '{"ph":"X","pid":1,"tid":2,"ts":2010,"dur":0,"name":"zero at end"}',
    '{"ph":"E","pid":1,"tid":3,"ts":2100,"name":"closes nothing"}',
    '{"ph":"B","pid":1,"tid":3,"ts":2200,"name":"never closed"}',
    '{"ph":"i","pid":1,"tid":2,"ts":2010,"name":"instant at an end"}',
    '{"ph":"C","pid":1,"tid":2,"ts":2010,"name":"ctr","args":{"a":1,"b":"2","c":[3],"d":-4.25e1}}',
    '{"ph":"X","pid":1,"tid":1,"ts":2300,"dur":1,"name":"deep args","args":{"a":[[[[{"b":[1,2,{"c":null}]}]]]],"t":true,"f":false}}',
    '{"ph":"X","pid":1,"tid":1,"ts":2400,"dur":1,"name":"numbers that end oddly","args":{"x":1.5,"y":-12,"z":0.1e-2}}',
    '{"ph":"X" , "pid" : 1 ,\t"tid":1,\n"ts" : 2500.5 , "dur" : 1 , "name" : "spaced" }',
    '{"ph":"X","pid":1.7,"tid":1e2,"ts":2600,"dur":1,"name":"fractional ids"}',
    '{"ph":"X","pid":1,"tid":1,"ts":2700.123456789012345678,"dur":1,"name":"many decimals"}',
    '{"ph":"X","pid":1,"tid":1,"ts":0.1,"dur":0.001,"name":"small"}',
    '{"ph":"X","pid":1,"tid":1,"ts":00012,"dur":1,"name":"leading zeros"}',
    '{"ph":"X","pid":1,"tid":1,"ts":4611686018427387.9,"dur":1,"name":"near the limit"}',
    '{"ph":"X","pid":1,"tid":1,"ts":2800,"dur":1,"name":"' + "long name " * 40 + '"}',
    '{"ph":"b","pid":1,"tid":1,"ts":2900,"name":"async","id":12.5}',
    '{"ph":"e","pid":1,"tid":1,"ts":2950,"name":"async","id":"12.5"}',
]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("size_mb", type=float)
    p.add_argument("out")
    p.add_argument("--seed", type=int, default=26)
    p.add_argument("--edges", action="store_true")
    o = p.parse_args()
    rng = random.Random(o.seed)
    pool = names(rng, 3000)
    threads, meta = [], []
    for pi, pid in enumerate((1234, 5678, 91011)):
        meta.append('{"pid":%d,"tid":0,"ph":"M","name":"process_name","args":{"name":"%s"}}'
                    % (pid, ["Browser", "Renderer", "GPU Process"][pi]))
        for k in range(6):
            tid = "CrBrowserMain" if pi == 0 and k == 0 else pid + 1 + k * 13
            idx = len(threads)
            threads.append(Thread(rng, pid, tid, "B" if idx % 3 == 2 else "X", idx % 2 == 0, idx % 4, idx))
            tname = '"%s"' % tid if isinstance(tid, str) else str(tid)
            meta.append('{"pid":%d,"tid":%s,"ph":"M","name":"thread_name","args":{"name":"Thread%d"}}'
                        % (pid, tname, idx))
            if idx % 2:
                meta.append('{"pid":%d,"tid":%s,"ph":"M","name":"thread_sort_index","args":{"sort_index":%d}}'
                            % (pid, tname, idx))
    limit = int(o.size_mb * 1e6)
    written = 0
    with open(o.out, "w") as f:
        f.write('{"traceEvents":[\n' + ",\n".join(meta[:-3]))
        pending = []
        while written < limit:
            for _ in range(2000):
                step(rng.choice(threads), pool, pending)
            # written as Chrome flushes its per-thread buffers: each thread's events in
            # its own order, the threads' interleaved out of time order (a skew per thread)
            skew = {}
            pending.sort(key=lambda e: e[0] + skew.setdefault(e[1], rng.randrange(200_000)))
            cut = len(pending) * 3 // 4
            chunk = "".join(",\n" + e[-1] for e in pending[:cut])
            pending = pending[cut:]
            f.write(chunk)
            written += len(chunk)
        f.write("".join(",\n" + e[-1] for e in pending))
        if o.edges:
            f.write("".join(",\n" + e for e in EDGES))
        f.write("".join(",\n" + m for m in meta[-3:]))
        f.write('\n],"displayTimeUnit":"ms","metadata":{"command_line":"chrome --trace-startup"}}\n')


if __name__ == "__main__":
    main()
