#!/usr/bin/env python3
"""The README says what the code does (issue 22, item 23).

1. "Common tasks" comes before everything but the introduction, and its commands run:
   each `traceconv` line is run as written (serve aside) in a folder holding the files it
   names (app.trace, before/after.trace, a release build's trace and its mapping.txt from
   tracegen --obfuscate, a folder and a zip of traces), and exits 0 and writes the file
   its comment names.
2. No example block has two commands writing one file (`> FILE`, `-o FILE` of curl, a
   traceconv OUTPUT operand, or the default output its comment names).
3. No example streams a trace through `adb shell cat` into traceconv: on older adb the
   shell's terminal turns LF into CRLF in the binary data, and traceconv refuses such a
   trace, advising `adb pull` or `adb exec-out`; the README says the same.
4. Links: every relative link names a file of the repository and every `#anchor` a
   heading of the README; no path points into the team's shared notes folder (a clone
   has none), here or in the man page.
5. Serve: the multipart fields and API options that a running `traceconv serve` lists
   (GET /api/formats) are exactly the ones the Serve section names; the man page's
   SERVE section names every field too.
"""
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import urllib.request
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402

NOTES = "sha" + "red"  # the sibling folder's name, spelled so that this file does not match a search for it
OUT_EXT = r"(?:json|svg|txt|html|dot|pftrace|pb\.gz|folded|csv|ir\.txt)"
FILE_RE = re.compile(r"^[\w.@/-]+\." + OUT_EXT + r"$")


def read(ctx, *path):
    with open(os.path.join(ctx.source, *path), encoding="utf-8") as f:
        return f.read()


def sections(text):
    """[(heading level, title, body)] of a Markdown text, code blocks kept whole."""
    out, title, level, body, fence = [], "", 0, [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,6}) (.*)$", line)
        if m:
            out.append((level, title, "\n".join(body)))
            level, title, body = len(m.group(1)), m.group(2).strip(), []
        else:
            body.append(line)
    out.append((level, title, "\n".join(body)))
    return out


def code_blocks(text):
    return re.findall(r"^```[a-z]*\n(.*?)^```", text, re.M | re.S)


def slug(title):
    """GitHub's anchor for a heading."""
    s = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return s.replace(" ", "-")


def commands(block):
    """(command, comment) per line of an example block, continuation lines joined."""
    out, cur = [], ""
    for line in block.splitlines():
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        code, _, comment = cur.partition("  #") if "  #" in cur else (cur, "", "")
        if code.strip() and not code.lstrip().startswith("#"):
            out.append((code.strip(), comment.strip()))
        cur = ""
    return out


def written_files(cmd, comment):
    """The files an example command writes, as far as its words and comment say."""
    out = set(re.findall(r"(?<![\d&2])>\s*([^\s;&|]+)", cmd))
    for part in re.split(r"\s*(?:&&|\|)\s*", cmd):
        try:
            words = shlex.split(part)
        except ValueError:
            continue
        if not words:
            continue
        if words[0] == "curl" and "-o" in words:
            out.add(words[words.index("-o") + 1])
        if words[0].endswith("traceconv") and words[1:2] == ["merge"]:  # TRACE SYSTRACE: both inputs
            if "--output-file" in words:
                out.add(words[words.index("--output-file") + 1])
            continue
        if words[0].endswith("traceconv") and "-o" in words and words[-1] != "-" and FILE_RE.match(words[-1]) \
                and len([w for w in words if not w.startswith("-")]) >= 4:
            out.add(words[-1])  # INPUT OUTPUT: the last operand has a writer's extension
    first = comment.split(" ", 2)
    name = first[1] if first[0] == "writes" and len(first) > 1 else first[0]
    name = name.rstrip(":,")
    if FILE_RE.match(name) and "traceconv" in cmd:
        out.add(name)
    return out - {"/dev/null"}


# -- 1. common tasks ------------------------------------------------------------------------

def common_tasks(ctx, readme):
    secs = sections(readme)
    titles = [t for lvl, t, _ in secs if lvl == 2]
    if not ctx.check("Common tasks" in titles, f"a 'Common tasks' section: {titles}"):
        return
    ctx.eq(titles.index("Common tasks"), 0, "'Common tasks' is the first section after the introduction")
    body = next(b for lvl, t, b in secs if t == "Common tasks")
    blocks = code_blocks(body + "\n")
    if not ctx.check(blocks, "Common tasks has an example block"):
        return
    d = os.path.join(ctx.work, "tasks")
    os.makedirs(os.path.join(d, "traces"))
    corpus = ctx.corpus
    shutil.copy(os.path.join(corpus, "app-startup.trace"), os.path.join(d, "app.trace"))
    shutil.copy(os.path.join(corpus, "v3-dual.trace"), os.path.join(d, "before.trace"))
    shutil.copy(os.path.join(corpus, "v3-dual.trace"), os.path.join(d, "after.trace"))
    # traceconv merge: an atrace capture of the same run as app.trace (app-startup: pid 1234, its
    # main thread 1234, start 6203.944512 s): another run's is refused (it shares no process)
    with open(os.path.join(d, "atrace.txt"), "w") as f:
        f.write("# tracer: nop\n#\n"
                "            main-1234  ( 1234) [000] ...1  6203.944512: tracing_mark_write: "
                "trace_event_clock_sync: parent_ts=6203.944512\n"
                "            main-1234  ( 1234) [000] ...1  6203.950000: tracing_mark_write: B|1234|bindApplication\n"
                "            main-1234  ( 1234) [000] ...1  6204.010000: tracing_mark_write: E|1234\n")
    for f in ("v2-wall.trace", "open-at-end.trace"):
        shutil.copy(os.path.join(corpus, f), os.path.join(d, "traces", f))
    with zipfile.ZipFile(os.path.join(d, "more.zip"), "w") as z:
        z.write(os.path.join(corpus, "recursion-mutual.trace"), "recursion-mutual.trace")
    r = subprocess.run([ctx.tracegen, os.path.join(corpus, "app-startup.scn"), os.path.join(d, "release.trace"),
                        "--obfuscate", os.path.join(d, "mapping.txt")], capture_output=True)
    ctx.eq(r.returncode, 0, f"tracegen --obfuscate: {r.stderr.decode(errors='replace')[-300:]}")
    ran = 0
    for cmd, comment in commands(blocks[0]):
        words = shlex.split(cmd)
        if words[0] != "traceconv" or words[1:2] == ["serve"]:
            continue
        r = subprocess.run([ctx.traceconv] + words[1:], cwd=d, capture_output=True, timeout=300)
        ctx.eq(r.returncode, 0, f"common task `{cmd}`: exit ({r.stderr.decode(errors='replace').strip()[-300:]})")
        for f in written_files(cmd, comment):
            ctx.check(os.path.exists(os.path.join(d, f)), f"common task `{cmd}`: {f} written as its comment says")
        ran += 1
    ctx.check(ran >= 5, f"{ran} common tasks run")
    ctx.check(os.path.isdir(os.path.join(d, "out")) and any(f.endswith(".pftrace") for _, _, fs in
                                                          os.walk(os.path.join(d, "out")) for f in fs),
              "the batch task wrote its outputs under out/")


# -- 2. and 3. the examples ----------------------------------------------------------------------

def examples(ctx, readme):
    for n, block in enumerate(code_blocks(readme)):
        seen = {}
        for cmd, comment in commands(block):
            for f in written_files(cmd, comment):
                ctx.check(f not in seen, f"example block {n + 1}: {f} written by `{seen.get(f)}` and by `{cmd}`")
                seen.setdefault(f, cmd)
        ctx.check(not re.search(r"adb\s+shell\s+cat[^|\n]*\|\s*\S*traceconv", block),
                  f"example block {n + 1}: a trace piped from `adb shell cat` (not binary-safe)")
    ctx.check("adb exec-out" in readme and "adb pull" in readme, "the README shows adb pull and adb exec-out")
    # what the tool itself says of a CRLF-damaged trace
    bad = os.path.join(ctx.work, "crlf.trace")
    with open(os.path.join(ctx.corpus, "v3-dual.trace"), "rb") as f:
        data = f.read()
    with open(bad, "wb") as f:
        f.write(data.replace(b"\n", b"\r\n"))
    r = ctx.run(["-o", "json", bad, os.path.join(ctx.work, "crlf.json")])
    err = r.stderr.decode(errors="replace")
    ctx.check(r.returncode == 1 and "adb exec-out" in err and "adb pull" in err,
              f"a CRLF-damaged trace: the advice the README repeats: {err.strip()}")


# -- 4. links ---------------------------------------------------------------------------------

def links(ctx, readme):
    anchors = {slug(t) for lvl, t, _ in sections(readme) if lvl}
    text = re.sub(r"^```.*?^```", "", readme, flags=re.M | re.S)
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target):
            continue
        path, _, anchor = target.partition("#")
        if path:
            ctx.check(os.path.exists(os.path.join(ctx.source, path)), f"README link {target}: no such file")
        elif anchor:
            ctx.check(anchor in anchors, f"README link #{anchor}: no such heading")
    for name, text in (("README.md", readme), ("doc/traceconv.1", read(ctx, "doc", "traceconv.1"))):
        hits = re.findall(r".*(?:\.\./" + NOTES + r"\b|\b" + NOTES + r"/(?:docs|oracle|tools|corpus)\b).*", text)
        ctx.eq(hits, [], f"{name}: paths into the shared notes folder")


# -- 5. serve ---------------------------------------------------------------------------------

def backticked(text):
    return set(re.findall(r"`([a-z][a-z-]*)`", text))


def serve_fields(ctx, readme):
    body = next((b for lvl, t, b in sections(readme) if t == "Serve"), "")
    if not ctx.check(body, "a Serve section"):
        return
    srv = serve_lib.Server(ctx.traceconv, ctx.work)
    try:
        with urllib.request.urlopen(srv.url + "api/formats", timeout=30) as resp:
            formats = json.load(resp)
    finally:
        srv.stop()
    m = re.search(r"fixed\s+list,\s+each\s+the\s+library\s+option\s+of\s+the\s+same\s+name:(.*?)\.\s+The\s+body\s+is"
                  r"(.*?)\.\s+The\s+trace", body, re.S)
    if not ctx.check(m, "the Serve section lists the API's options and the body's fields"):
        return
    formats = formats["serve"]  # the rest is `traceconv --list-formats --json`
    ctx.eq(sorted(backticked(m.group(1))), sorted(formats["options"]), "Serve: the API options the README lists")
    ctx.eq(sorted(backticked(m.group(2))), sorted(formats["fields"]), "Serve: the multipart fields the README names")
    for field in formats["fields"]:
        ctx.check(f"-F {field}=@" in body or field == "trace", f"Serve: an example sends the `{field}` field")
    man = read(ctx, "doc", "traceconv.1")
    serve = man[man.index(".SH SERVE"):].split("\n.SH ", 1)[0] if ".SH SERVE" in man else ""
    for field in formats["fields"]:
        ctx.check(f"\\fB{field}\\fR" in serve, f"man page SERVE: the multipart field {field} is named")


def main():
    ctx = tclib.Ctx()
    readme = read(ctx, "README.md")
    common_tasks(ctx, readme)
    examples(ctx, readme)
    links(ctx, readme)
    serve_fields(ctx, readme)
    ctx.done()


if __name__ == "__main__":
    main()
