#!/usr/bin/env python3
"""The library's layers stay layers (README, Layout; issue 23 item 3).

src/ is in layers: util (bytes), hub (the IR and the conversion), then parsers (the readers'
shared grammars), analysis (what writers compute), transform (passes between reading and
writing), readers and writers. A file includes the tc_*.h headers of the layers it may see
(BELOW), never another's: that is how a reader ends up seeing flame palettes and diff rows,
and how every change to one header rebuilds everything. The edges that remain outside those
rules are listed, each with its reason: a new one fails this test, and so does a listed one
that is gone (the list stays true).

Also: no internal header over 400 lines, no file includes the old single header, and no
cycle between the writers' files."""
import glob
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

LAYERS = ["util", "hub", "parsers", "analysis", "transform", "readers", "writers", "engine"]
BELOW = {  # the layers whose headers a layer's files include, besides its own
    "util": [],
    "hub": ["util"],
    "parsers": ["util", "hub"],
    "analysis": ["util", "hub"],
    "transform": ["util", "hub"],
    "readers": ["util", "hub", "parsers"],
    "writers": ["util", "hub", "analysis"],
    "engine": ["util", "hub", "parsers", "analysis", "transform", "readers", "writers"],
}
KNOWN_UPWARD = set()
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.source, "src")
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
            if f.endswith(".h") and os.path.basename(f).startswith("tc_"):
                n = text.count("\n")
                ctx.check(n <= 400, f"{rel}: {n} lines, at most 400")
    for edge in sorted(upward - KNOWN_UPWARD):
        ctx.fail(f"{edge[0]} includes {edge[1]}, a header of a layer it may not see (README, Layout)")
    for edge in sorted(KNOWN_UPWARD - upward):
        ctx.fail(f"{edge[0]} no longer includes {edge[1]}: take it off KNOWN_UPWARD")

    # no cycle between the writers' files: shared code is in a module of its own (report_view.c)
    writers = sorted(glob.glob(os.path.join(src, "writers", "*.c")))
    defined = {}
    for f in writers:
        for name in re.findall(r"^[a-z_][\w \*]*?\b(tci_\w+)\s*\([^;]*$", open(f, encoding="utf-8").read(), re.M):
            defined.setdefault(name, f)
    calls = {f: set() for f in writers}
    for f in writers:
        text = open(f, encoding="utf-8").read()
        for name, owner in defined.items():
            if owner != f and re.search(rf"\b{name}\s*\(", text):
                calls[f].add(owner)

    def reaches(a, b, seen):
        return any(n == b or (n not in seen and not seen.add(n) and reaches(n, b, seen)) for n in calls[a])
    for f in writers:
        for g in calls[f]:
            ctx.check(not reaches(g, f, set()), f"{os.path.basename(f)} and {os.path.basename(g)} call each other")
    ctx.done()


if __name__ == "__main__":
    main()
