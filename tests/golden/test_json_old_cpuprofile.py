#!/usr/bin/env python3
"""The old .cpuprofile (Node 10 and older, Chrome's first DevTools profiles; doc/formats.md, json):
{"head": the call tree, each node's "children" the nodes themselves (nested, not ids),
"startTime"/"endTime" in seconds, "samples": node ids, "timestamps": µs on the clock itself}.
speedscope's sample node/10.11.0/example.cpuprofile (real, MIT) was refused ("no trace events").

1. Generated profiles (seeded, printed): folded stacks equal to the model's, computed here from
   the tree and samples written: each sample weighs the time to the next one in time order, the
   last one to endTime when that is not before it, else the profile's mean interval; (root) is
   left out and an unnamed function is "(anonymous)", as DevTools shows them.
2. A tree 400 deep (the JSON nesting limit, 1000 containers as cJSON's, holds 499 nodes of
   this form): converted, the deepest stack whole, walked without recursion.
   Deeper than that limit (600 nodes): one line that says so (exit 1), not "not valid JSON".
3. The first sample's time is the first timestamp itself (no start added): `-o ir`'s start_ns.
"""
import json
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def make_tree(rng, n_nodes):
    """(head, {id: path of names}), ids 1..n, names from a small set (shared between paths)."""
    head = {"functionName": "(root)", "url": "", "lineNumber": -1, "id": 1, "hitCount": 0, "children": []}
    nodes, paths = [head], {1: ()}
    for i in range(2, n_nodes + 1):
        parent = rng.choice(nodes)
        name = rng.choice(["", "a", "b", "c", "render", "(garbage collector)", "tick"])
        node = {"functionName": name, "url": "app.js" if name else "", "lineNumber": rng.randrange(0, 50),
                "id": i, "callUID": i, "hitCount": 0, "children": []}
        parent["children"].append(node)
        nodes.append(node)
        paths[i] = paths[parent["id"]] + (name or "(anonymous)",)
    return head, paths


def model(paths, samples, stamps, end_sec):
    pairs = sorted(zip(stamps, range(len(samples))))
    weights = {}
    for k, (ts, i) in enumerate(pairs):
        if k + 1 < len(pairs):
            w = pairs[k + 1][0] - ts
        elif end_sec * 1e6 >= ts:
            w = end_sec * 1e6 - ts
        else:
            w = round((pairs[-1][0] - pairs[0][0]) / (len(pairs) - 1))
        key = ";".join(paths[samples[i]])
        if key:  # a sample of (root) alone shows no frame
            weights[key] = weights.get(key, 0) + w
    return {k: round(v) for k, v in weights.items()}


def folded(ctx, path):
    out = path + ".folded"
    r = subprocess.run([ctx.traceconv, "-q", "-f", "-o", "folded", path, out], capture_output=True)
    got = {}
    if r.returncode == 0:
        for line in open(out, encoding="utf-8"):
            stack, _, weight = line.rstrip("\n").rpartition(" ")
            got[stack.split(";", 1)[1] if ";" in stack else ""] = int(weight)
    return r, got


def main():
    ctx = tclib.Ctx()
    seed = int(os.environ.get("TC_OLD_CPUPROFILE_SEED") or int.from_bytes(os.urandom(4), "little"))
    print(f"TC_OLD_CPUPROFILE_SEED={seed} (replay with it)")
    rng = random.Random(seed)
    for case in range(6):
        head, paths = make_tree(rng, rng.randrange(2, 60))
        n = rng.randrange(2, 200)
        t0 = rng.randrange(10**9, 10**11)
        stamps, t = [], t0
        for _ in range(n):
            t += rng.randrange(1, 3000)
            stamps.append(t)
        if case % 2:
            rng.shuffle(stamps)  # the file's order is not time order
        samples = [rng.randrange(2, len(paths) + 1) if len(paths) > 1 else 1 for _ in range(n)]
        # endTime in whole seconds (cut, as Node writes it: before the last sample) or a later time
        end_sec = t // 10**6 if case < 3 else (t + 1500) / 1e6
        doc = {"head": head, "startTime": t0 // 10**6, "endTime": end_sec, "samples": samples, "timestamps": stamps}
        path = os.path.join(ctx.work, f"old-{case}.cpuprofile")
        with open(path, "w") as f:
            json.dump(doc, f)
        r, got = folded(ctx, path)
        ctx.eq(r.returncode, 0, f"case {case}: exit ({r.stderr.decode(errors='replace').strip()})")
        ctx.eq(got, model(paths, samples, stamps, end_sec), f"case {case} (seed {seed}): the model's stacks")

    depth = 400  # written as text: Python's json recurses
    opens = "".join(f'{{"functionName":"f{d}","id":{d + 1},"children":[' for d in range(1, depth + 1))
    head = '{"functionName":"(root)","id":1,"children":[' + opens + "]}" * (depth + 1)
    path = os.path.join(ctx.work, "deep.cpuprofile")
    with open(path, "w") as f:
        f.write('{"head":' + head + ',"startTime":1,"endTime":1,"samples":[' + str(depth + 1) +
                ',2],"timestamps":[1000000,1000500]}')
    out = path + ".folded"
    r = subprocess.run([ctx.traceconv, "-q", "-f", "--max-depth", str(depth + 10), "-o", "folded", path, out],
                       capture_output=True)
    ctx.eq(r.returncode, 0, f"a tree {depth} deep: exit ({r.stderr.decode(errors='replace').strip()[-300:]})")
    if r.returncode == 0:
        lines = open(out, encoding="utf-8").read().splitlines()
        ctx.check(any(line.count(";") == depth and line.endswith(f"f{depth} 500") for line in lines),
                  f"a tree {depth} deep: the deepest stack whole: {[line[-40:] for line in lines]}")

    deeper = 600
    opens = "".join(f'{{"functionName":"f{d}","id":{d + 1},"children":[' for d in range(1, deeper + 1))
    too_deep = os.path.join(ctx.work, "too-deep.cpuprofile")
    with open(too_deep, "w") as f:
        f.write('{"head":{"functionName":"(root)","id":1,"children":[' + opens + "]}" * (deeper + 1) +
                ',"samples":[2],"timestamps":[1]}')
    r = subprocess.run([ctx.traceconv, "-q", "-o", "folded", too_deep, too_deep + ".folded"], capture_output=True)
    err = r.stderr.decode(errors="replace").strip()
    ctx.check(r.returncode == 1 and len(err.splitlines()) == 1 and "nested deeper than 1000" in err
              and not os.path.exists(too_deep + ".folded"), f"a tree {deeper} deep: one line that says why ({err})")

    r = subprocess.run([ctx.traceconv, "-q", "-f", "-o", "ir", path, path + ".ir.txt"], capture_output=True)
    start = [w for line in open(path + ".ir.txt") for w in line.split() if w.startswith("start_ns=")] \
        if r.returncode == 0 else []
    ctx.eq(start, ["start_ns=1000000000"], "the first sample at its timestamp itself")
    ctx.done()


if __name__ == "__main__":
    main()
