#!/usr/bin/env python3
"""Shared ART corpus: traceconv's summary figures equal the facts table in
../shared/corpus/CORPUS.md (an independent decode by artrace_inspect.py), and the
two broken fixtures are rejected cleanly (exit 1, one-line message, no output)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tclib  # noqa: E402

BROKEN = ("perflib-header.trace", "studio-perflib-basic-special_char.trace")


def parse_facts_table(md_path):
    """Rows of the facts table (the one whose header has 'records'), keyed by file."""
    rows = {}
    header = None
    with open(md_path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if not line.startswith("|"):
                if header:
                    break
                continue
            cells = [c.strip() for c in line.strip("|").split("|")]
            if header is None:
                if "records" in cells and "file" in cells:
                    header = cells
                continue
            if set(line) <= set("|-: "):
                continue
            rows[cells[0]] = dict(zip(header, cells))
    return rows


def main():
    ctx = tclib.Ctx()
    art = ctx.need_shared_corpus("art")
    table = parse_facts_table(os.path.join(ctx.shared, "corpus", "CORPUS.md"))
    if not ctx.check(len(table) >= 5, f"CORPUS.md facts table: parsed only {len(table)} rows"):
        ctx.done()
    cols = {  # CORPUS.md column -> traceconv figure name
        "records": "records",
        "threads with events": "threads",
        "exits w/o enter": "exit-without-enter",
        "open at end": "open-at-end",
        "unknown ids": "unknown-method-id",
    }
    for fname, row in sorted(table.items()):
        src = os.path.join(art, fname)
        if not ctx.check(os.path.exists(src), f"{fname}: listed in CORPUS.md but missing from {art}"):
            continue
        for fmt in ("json", "folded"):
            out, figs = ctx.convert(src, fmt)
            if out is None:
                continue
            ctx.check(os.path.getsize(out) > 0, f"{fname} -> {fmt}: empty output")
            for col, fig in cols.items():
                want = int(row[col])
                ctx.eq(figs.get(fig, 0), want, f"{fname} -> {fmt}: figure '{fig}' vs CORPUS.md '{col}'")

    for fname in BROKEN:
        src = os.path.join(art, fname)
        if not ctx.check(os.path.exists(src), f"{fname}: broken fixture missing"):
            continue
        d = os.path.join(ctx.work, "broken-" + fname)
        os.makedirs(d, exist_ok=True)
        for fmt in ("json", "folded"):
            out = os.path.join(d, "out." + fmt)
            if os.path.exists(out):
                os.remove(out)
            r = ctx.run(["-o", fmt, src, out])
            err = r.stderr.decode(errors="replace")
            lines = [l for l in err.splitlines() if l.strip()]
            ctx.eq(r.returncode, 1, f"{fname} -> {fmt}: exit status")
            ctx.eq(len(lines), 1, f"{fname} -> {fmt}: number of stderr lines ({err!r})")
            msg = lines[0] if lines else ""
            ctx.check(fname in msg, f"{fname} -> {fmt}: message does not name the file: {msg!r}")
            ctx.check(": art:" in msg, f"{fname} -> {fmt}: message does not name the 'art' module: {msg!r}")
            ctx.check("offset 0x" in msg, f"{fname} -> {fmt}: message has no offset: {msg!r}")
            ctx.check(not os.path.exists(out), f"{fname} -> {fmt}: output {out} was left behind")
            stray = [n for n in os.listdir(d) if ".tmp-" in n]
            ctx.eq(stray, [], f"{fname} -> {fmt}: stray temp files in {d}")
            ctx.eq(r.stdout, b"", f"{fname} -> {fmt}: stdout")
    ctx.done()


if __name__ == "__main__":
    main()
