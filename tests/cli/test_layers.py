#!/usr/bin/env python3
"""The layers stay layers (CONTRIBUTING.md, Layers; issue 23 item 3, issue 37
item 6).

src/ is in layers, lowest first: util (bytes), hub (the IR and the stages of a conversion),
then parsers (the readers' shared grammars), analysis (what writers compute), transform
(passes between reading and writing), readers and writers, engine (what assembles a
conversion: conv.c, join.c, diffconv.c, the registry of formats) and cli (the commands). A
file names only its own layer and the layers below it (BELOW), never one above, and no files
name each other in a circle, in any layer. Two readings of "names", both checked:

- includes: a file includes the headers of the layers it may see, never another's (that is
  how a reader ends up seeing flame palettes and diff rows, and how every change to one
  header rebuilds everything); cli includes no internal tc_*.h header (traceconv.h and the
  util files it compiles in are all it sees);
- calls: the build's objects say which file defines each global symbol (a function or a
  table; nm) and which uses it: a use of a symbol that a higher layer's file defines fails,
  and so does any circle of files that use each other's symbols (two files both ways, or
  a longer loop), whatever their layer. cli uses the library's public tc_* API and util's
  compiled-in functions, no other tci_ symbol. The inline code of a header counts as its
  includer's (its calls are in the includer's object); static functions are no edges. A
  file's code (comments and strings aside) names no symbol that a higher layer's file
  defines either: a declaration, a macro or an inline function that no object uses.

KNOWN_UPWARD lists the edges kept outside those rules, each with its reason: a new one fails
this test, and so does a listed one that is gone (the list stays true). It is empty.

Also: no internal header over 400 lines and no file includes the old single header."""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

LAYERS = ["util", "hub", "parsers", "analysis", "transform", "readers", "writers", "engine", "cli"]
BELOW = {  # the layers a layer's files name (include, call), besides their own
    "util": [],
    "hub": ["util"],
    "parsers": ["util", "hub"],
    "analysis": ["util", "hub"],
    "transform": ["util", "hub"],
    "readers": ["util", "hub", "parsers"],
    "writers": ["util", "hub", "analysis"],
    "engine": ["util", "hub", "parsers", "analysis", "transform", "readers", "writers"],
    "cli": ["util", "hub", "parsers", "analysis", "transform", "readers", "writers", "engine"],
}
# (file, header or file it names): the edges outside BELOW, each with its reason. None.
KNOWN_UPWARD = set()
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)
OBJECT = re.compile(r"/CMakeFiles/[^/]+\.dir/(src/[^/]+/[^/]+\.c)\.o$")  # CMake's object of src/LAYER/FILE.c


def layer_of(rel):
    parts = rel.split("/")
    return parts[1] if len(parts) == 3 and parts[0] == "src" and parts[1] in BELOW else None


def check_includes(ctx, src):
    home = {}  # header name -> its layer
    for layer in LAYERS:
        for h in glob.glob(os.path.join(src, layer, "*.h")):
            home[os.path.basename(h)] = layer
    ctx.check(len(home) >= 15, f"the layers' headers are found: {sorted(home)}")
    upward = set()
    for layer in LAYERS:
        for f in sorted(glob.glob(os.path.join(src, layer, "*.[ch]"))):
            rel = os.path.relpath(f, ctx.source)
            text = open(f, encoding="utf-8").read()
            ctx.check('"tc_internal.h"' not in text, f"{rel} includes no tc_internal.h (split by audience)")
            for inc in INCLUDE.findall(text):
                name = os.path.basename(inc)
                if name in home and home[name] != layer and home[name] not in BELOW[layer]:
                    upward.add((rel, name))
                if layer == "cli" and name.startswith("tc_") and home.get(name) not in (None, "cli", "util"):
                    upward.add((rel, name))  # the library's internals: cli sees traceconv.h
            if f.endswith(".h") and os.path.basename(f).startswith("tc_"):
                n = text.count("\n")
                ctx.check(n <= 400, f"{rel}: {n} lines, at most 400")
    return upward


def read_objects(ctx, build):
    """{source file: (symbols it defines, symbols it uses)} from the build's objects of src/."""
    nm = shutil.which("nm")
    if not nm:
        ctx.fail("nm (binutils) is not installed: the calls cannot be read")
        return {}
    files = {}
    for o in sorted(glob.glob(os.path.join(build, "CMakeFiles", "*.dir", "src", "*", "*.c.o"))):
        m = OBJECT.search(o.replace(os.sep, "/"))
        if not m or not layer_of(m.group(1)) or not os.path.exists(os.path.join(ctx.source, m.group(1))):
            continue  # not a layer's file, or the object of a source since moved (a stale object)
        out = subprocess.run([nm, "-P", o], capture_output=True, text=True)
        ctx.check(out.returncode == 0, f"nm {o}: {out.stderr.strip()}")
        defines, uses = files.setdefault(m.group(1), (set(), set()))
        for line in out.stdout.splitlines():
            fields = line.split()
            if len(fields) < 2:
                continue
            name, kind = fields[0], fields[1]
            if kind == "U":
                uses.add(name)
            elif kind in "TDRBCGSVW":  # global: a function or a table (lower case: static)
                defines.add(name)
    return files


def call_edges(files):
    """{(user, definer): names}: a file uses a global symbol that one other file alone defines."""
    owner = {}
    for f, (defines, _) in files.items():
        for name in defines:
            owner.setdefault(name, set()).add(f)
    edges = {}
    for f, (_, uses) in files.items():
        for name in uses:
            defs = owner.get(name, set())
            if len(defs) == 1 and f not in defs:  # main (defined twice) is nobody's callee
                edges.setdefault((f, next(iter(defs))), set()).add(name)
    return edges, owner


def circles(nodes, edges):
    """The strongly connected sets of more than one file (Tarjan, iterative)."""
    succ = {n: sorted(b for (a, b) in edges if a == n) for n in nodes}
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            v, i = work.pop()
            if i == 0:
                index[v] = low[v] = counter[0]
                counter[0] += 1
                stack.append(v)
                on.add(v)
            if i < len(succ[v]):
                work.append((v, i + 1))
                w = succ[v][i]
                if w not in index:
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            for w in succ[v]:
                if w in on:
                    low[v] = min(low[v], low[w])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"", re.S)
NAME = re.compile(r"\btci?_\w+")


def check_declarations(ctx, src, owner):
    """A name that a higher layer's file defines, in a file's code (a declaration, a macro, a
    call in an inline function that no object shows): out of comments and strings."""
    upward = set()
    for layer in LAYERS:
        for f in sorted(glob.glob(os.path.join(src, layer, "*.[ch]")) + glob.glob(os.path.join(src, layer, "*.def"))):
            rel = os.path.relpath(f, ctx.source)
            code = COMMENT.sub(" ", open(f, encoding="utf-8").read())
            for name in sorted(set(NAME.findall(code))):
                defs = owner.get(name, set())
                if len(defs) != 1:
                    continue
                b = next(iter(defs))
                lb = layer_of(b)
                if lb != layer and lb not in BELOW[layer] and (rel, b) not in KNOWN_UPWARD:
                    upward.add((rel, b))
                    ctx.fail(f"{rel} ({layer}) names {name}, which {b} ({lb}) defines: a layer above it")
    return upward


def check_calls(ctx, build):
    files = read_objects(ctx, build)
    found = {layer_of(f) for f in files}
    ctx.check({"util", "hub", "analysis", "readers", "writers", "engine", "cli"} <= found,
              f"the build's objects of every layer are read ({build}: {sorted(found)})")
    edges, owner = call_edges(files)
    # the reading is the build's: a call everyone knows is seen, or the test reads nothing
    ctx.check(any("tci_normalize_run" in names for names in edges.values()) and len(edges) > 100,
              f"the calls are read ({len(edges)} pairs of files; tci_normalize_run's caller among them)")
    upward = set()
    for (a, b), names in sorted(edges.items()):
        la, lb = layer_of(a), layer_of(b)
        if la != lb and lb not in BELOW[la]:
            upward.add((a, b))
            if (a, b) not in KNOWN_UPWARD:
                ctx.fail(f"{a} ({la}) names {b} ({lb}), a layer above it: {', '.join(sorted(names))}")
        if la == "cli" and lb not in ("cli", "util"):
            inner = sorted(n for n in names if n.startswith("tci_"))
            ctx.check(not inner, f"{a} uses the library's internals (tci_) of {b}: {', '.join(inner)}")
    for comp in circles(set(files), edges):
        ties = [f"{a} -> {b}: {', '.join(sorted(names))}" for (a, b), names in sorted(edges.items())
                if a in comp and b in comp]
        more = f"; and {len(ties) - 40} more" if len(ties) > 40 else ""
        ctx.fail(f"a circle of {len(comp)} files that name each other: " + "; ".join(ties[:40]) + more)
    return upward | check_declarations(ctx, os.path.join(ctx.source, "src"), owner)


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.source, "src")
    build = os.path.dirname(os.path.abspath(ctx.traceconv))  # the build tree (its objects)
    upward = check_includes(ctx, src) | check_calls(ctx, build)
    for edge in sorted(upward - KNOWN_UPWARD):
        if not edge[1].startswith("src/"):  # an include (calls are said where found)
            ctx.fail(f"{edge[0]} includes {edge[1]}, a header of a layer it may not see (CONTRIBUTING.md, Layers)")
    for edge in sorted(KNOWN_UPWARD - upward):
        ctx.fail(f"{edge[0]} no longer names {edge[1]}: take it off KNOWN_UPWARD")
    ctx.done()


if __name__ == "__main__":
    main()
