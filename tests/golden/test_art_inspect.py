#!/usr/bin/env python3
"""ART traces against an independent decoder: traceconv's summary figures (records,
threads with events, exits without enter, frames open at the end, unknown method ids)
equal what tests/checkers/artrace_inspect.py finds in every project corpus trace (a
decoder written from the format notes that shares no code with traceconv). With
TC_EXTRA_CORPUS=DIR, the same for every trace of DIR/art, and, when DIR holds the team's
CORPUS.md, its facts table too. Two broken traces (a key section followed by text where
the binary part should be; a trace whose binary part was re-encoded as UTF-8, as an
editor or a text-mode transfer does) are refused cleanly: exit 1, one line naming the
file, the art module and an offset, no output."""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

# traceconv's summary figure -> artrace_inspect.py's field
INSPECTED = {
    "records": "records",
    "threads": "threads_with_events",
    "exit-without-enter": "exit_without_enter_total",
    "open-at-end": "still_on_stack_at_end_total",
    "unknown-method-id": "unknown_method_ids",
}
# Where the inspector's rule differs from DESIGN.md §4 (corpus/README.md says why): it pops
# the top of the stack for every action that is not an enter, action 3 too, so its stack
# figures differ on this case; its record, thread and id counts still hold.
STACK_RULE_DIFFERS = {"mismatched-exit-and-action3": ("exit-without-enter", "open-at-end")}
# TC_EXTRA_CORPUS/art: the two traces CORPUS.md says must be rejected
EXTRA_BROKEN = ("perflib-header.trace", "studio-perflib-basic-special_char.trace")
# CORPUS.md's facts table column -> traceconv's figure
TABLE = {"records": "records", "threads with events": "threads", "exits w/o enter": "exit-without-enter",
         "open at end": "open-at-end", "unknown ids": "unknown-method-id"}


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


def inspect(ctx, src):
    r = ctx.oracle(["python3", ctx.checker("artrace_inspect.py"), src])
    if not ctx.check(r is not None and r.returncode == 0,
                     f"{src}: artrace_inspect.py: {r and r.stderr.decode(errors='replace')[-400:]}"):
        return None
    return json.loads(r.stdout)


def check_trace(ctx, label, src, table_row=None, skip=()):
    facts = inspect(ctx, src)
    if facts is None:
        return
    for fmt in ("json", "folded"):
        out, figs = ctx.convert(src, fmt, os.path.join(ctx.work, os.path.basename(src) + "." + fmt))
        if out is None:
            continue
        ctx.check(os.path.getsize(out) > 0, f"{label} -> {fmt}: empty output")
        for fig, field in INSPECTED.items():
            if fig not in skip:
                ctx.eq(figs.get(fig, 0), facts[field], f"{label} -> {fmt}: figure '{fig}' vs artrace_inspect '{field}'")
        for col, fig in (TABLE.items() if table_row else ()):
            ctx.eq(figs.get(fig, 0), int(table_row[col]), f"{label} -> {fmt}: figure '{fig}' vs CORPUS.md '{col}'")


def check_broken(ctx, src):
    fname = os.path.basename(src)
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
        stray = [n for n in os.listdir(d) if tclib.is_temp_name(n)]
        ctx.eq(stray, [], f"{fname} -> {fmt}: stray temp files in {d}")
        ctx.eq(r.stdout, b"", f"{fname} -> {fmt}: stdout")


def make_broken(ctx):
    """From a project trace: its key section followed by text; its binary part re-encoded as
    UTF-8 (each byte >= 0x80 read as Latin-1), so the header's start time and record size
    are garbage."""
    with open(os.path.join(ctx.corpus, "v3-dual.trace"), "rb") as f:
        key, _, data = f.read().partition(b"*end\n")
    out = []
    for name, body in (("header-only.trace", b"data section follows..\n"),
                       ("reencoded-utf8.trace", data.decode("latin-1").encode("utf-8"))):
        path = os.path.join(ctx.work, name)
        with open(path, "wb") as f:
            f.write(key + b"*end\n" + body)
        out.append(path)
    return out


def main():
    ctx = tclib.Ctx()
    cases = ctx.project_cases()
    ctx.check(len(cases) >= 20, f"{ctx.corpus}: {len(cases)} traces")
    for name, trace, _facts in cases:
        check_trace(ctx, f"corpus/{name}", trace, skip=STACK_RULE_DIFFERS.get(name, ()))
    for src in make_broken(ctx):
        check_broken(ctx, src)

    extra = ctx.extra_corpus("art")
    if extra:
        md = os.path.join(os.path.dirname(extra), "CORPUS.md")
        table = parse_facts_table(md) if os.path.exists(md) else {}
        for label, src in ctx.extra_files("art"):
            if os.path.basename(src) in EXTRA_BROKEN:
                check_broken(ctx, src)
            else:
                check_trace(ctx, label, src, table.get(os.path.basename(src)))
        for fname in table:
            ctx.check(os.path.exists(os.path.join(extra, fname)), f"{fname}: listed in CORPUS.md but missing from {extra}")
    ctx.done()


if __name__ == "__main__":
    main()
