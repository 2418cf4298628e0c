#!/usr/bin/env python3
"""The README and the documentation pages say what the code does, and the README stays a
page for users.

Pages: README.md, CONTRIBUTING.md and every doc/*.md found (CHANGELOG.md for its links).

1. Examples run. Every line starting with `traceconv ` in a ```sh block of a page is run as
   written (bash, `traceconv` the build's; `traceconv serve` aside), one page after another,
   each page in a fresh folder holding app.trace, before.trace, after.trace, release.trace
   and its mapping.txt (tracegen --obfuscate), atrace.txt (an atrace capture of app.trace's
   run), traces/ (two traces), more.zip and corpus/merge/ (the repository's merge pair): it
   exits 0 and writes the file its comment names (`# app.svg: ...`, `> FILE`, an OUTPUT
   operand). A failure names the page and the line. ```console and ```text blocks are
   illustrations, never run; a block that holds a `traceconv` line says which it is (sh,
   console or text), so no example escapes the run by its fence. The README has a "Common
   tasks" section whose commands run (five at least) and whose batch task writes under out/.
2. No example block has two commands writing one file (`> FILE`, `-o FILE` of curl, a
   traceconv OUTPUT operand, or the default output its comment names): the README's blocks,
   the other pages' sh blocks.
3. No example streams a trace through `adb shell cat` into traceconv: on older adb the
   shell's terminal turns LF into CRLF in the binary data, and traceconv refuses such a
   trace, advising `adb pull` or `adb exec-out`; the README says the same.
4. Links: every relative link (inline or a reference definition, images too) of a page or of
   CHANGELOG.md names a file of the repository, relative to the linking file, and every
   `#anchor` a heading (or an <a id/name>) of the file it points into; no path points into the
   team's shared notes folder (a clone has none), there or in the man page.
5. The README is for users: 250 lines at most, no internal issue numbers, no source paths
   (`src/...`).
6. Serve: the multipart fields and API options that a running `traceconv serve` lists
   (GET /api/formats) are exactly the ones doc/serve.md names in its sentence "... a fixed
   list, each the library option of the same name: `a`, `b`, ... The body is ... `trace`,
   `deobfuscate` ... . The trace ..."; an example there sends each field; the man page's
   SERVE section names every field too.
7. Install: the README's line for each platform installs exactly the build packages of that
   platform in scripts/packages.txt (the table CMake's messages and setup.sh read), so that
   the README cannot drift from what the build asks for.
"""
import glob
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import urllib.parse
import urllib.request
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402

NOTES = "sha" + "red"  # the sibling folder's name, spelled so that this file does not match a search for it
OUT_EXT = r"(?:json|svg|txt|html|dot|pftrace|pb\.gz|folded|csv|ir\.txt)"
FILE_RE = re.compile(r"^[\w.@/-]+\." + OUT_EXT + r"$")
README_MAX_LINES = 250
RUN_KIND = "sh"                        # the fence of an example that is run
SHOWN_KINDS = ("console", "text")      # the fences of illustrations, never run


def read(ctx, *path):
    with open(os.path.join(ctx.source, *path), encoding="utf-8") as f:
        return f.read()


def pages(ctx):
    """[(name relative to the source, text)]: README.md, CONTRIBUTING.md, doc/*.md found."""
    names = ["README.md"]
    if os.path.exists(os.path.join(ctx.source, "CONTRIBUTING.md")):
        names.append("CONTRIBUTING.md")
    names += sorted(os.path.relpath(p, ctx.source) for p in glob.glob(os.path.join(ctx.source, "doc", "*.md")))
    return [(n, read(ctx, n)) for n in names]


def fences(text):
    """[(kind, line number of the block's first line, body)] of the fenced blocks of a text."""
    out, kind, start, body, close = [], None, 0, [], None
    for n, line in enumerate(text.splitlines(), 1):
        if kind is None:
            m = re.match(r"^\s{0,3}(`{3,}|~{3,})\s*([\w+-]*)", line)
            if m:
                kind, start, body = m.group(2).lower(), n + 1, []
                close = re.compile(r"^\s{0,3}" + re.escape(m.group(1)[0]) + "{%d,}\\s*$" % len(m.group(1)))
        elif close.match(line):
            out.append((kind, start, "\n".join(body) + "\n"))
            kind = None
        else:
            body.append(line)
    return out


def unfenced(text):
    """The text with its fenced blocks blanked (line numbers kept)."""
    lines, inside = text.splitlines(), False
    for i, line in enumerate(lines):
        if re.match(r"^\s{0,3}(```|~~~)", line):
            inside = not inside
            lines[i] = ""
        elif inside:
            lines[i] = ""
    return "\n".join(lines)


def sections(text):
    """[(heading level, title, body)] of a Markdown text, code blocks kept whole."""
    out, title, level, body, fence = [], "", 0, [], False
    for line in text.splitlines():
        if re.match(r"^\s{0,3}(```|~~~)", line):
            fence = not fence
        m = None if fence else re.match(r"^(#{1,6}) (.*?)\s*#*\s*$", line)
        if m:
            out.append((level, title, "\n".join(body)))
            level, title, body = len(m.group(1)), m.group(2).strip(), []
        else:
            body.append(line)
    out.append((level, title, "\n".join(body)))
    return out


def slug(title):
    """GitHub's anchor for a heading: its text as shown, lowercased, punctuation dropped."""
    t = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", title)  # a link shows its text
    t = re.sub(r"<[^>]+>", "", t).replace("`", "")
    s = re.sub(r"[^\w\- ]", "", t.strip().lower())
    return s.replace(" ", "-")


def anchors(text):
    """Every anchor a page has: its headings' (GitHub numbers repeats: x, x-1, x-2) and
    those of <a id=...>/<a name=...>."""
    out, seen = set(), {}
    for level, title, _ in sections(text):
        if not level:
            continue
        s = slug(title)
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    out.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", text))
    return out


def commands(block, first_line=1):
    """(command, comment, line number) per line of an example block, continuation lines joined."""
    out, cur, start = [], "", None
    for n, line in enumerate(block.splitlines(), first_line):
        if start is None:
            start = n
        if line.rstrip().endswith("\\"):
            cur += line.rstrip()[:-1] + " "
            continue
        cur += line
        code, _, comment = cur.partition("  #") if "  #" in cur else (cur, "", "")
        if code.strip() and not code.lstrip().startswith("#"):
            out.append((code.strip(), comment.strip(), start))
        cur, start = "", None
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


def is_traceconv_line(cmd):
    return cmd.startswith("traceconv ")


# -- 1. the examples run ------------------------------------------------------------------

def fixture(ctx, d):
    """A folder holding every file the examples name."""
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
    merge = os.path.join(d, "corpus", "merge")
    os.makedirs(merge)
    for f in sorted(os.listdir(os.path.join(corpus, "merge"))):
        if os.path.isfile(os.path.join(corpus, "merge", f)):
            shutil.copy(os.path.join(corpus, "merge", f), merge)
    r = subprocess.run([ctx.tracegen, os.path.join(corpus, "app-startup.scn"), os.path.join(d, "release.trace"),
                        "--obfuscate", os.path.join(d, "mapping.txt")], capture_output=True)
    ctx.eq(r.returncode, 0, f"tracegen --obfuscate: {r.stderr.decode(errors='replace')[-300:]}")


def command_path(ctx):
    """A folder whose `traceconv` runs the build's (batch and serve find their programs
    beside the real path)."""
    b = os.path.join(ctx.work, "bin")
    if not os.path.isdir(b):
        os.makedirs(b)
        with open(os.path.join(b, "traceconv"), "w") as f:
            f.write(f"#!/bin/sh\nexec {shlex.quote(os.path.abspath(ctx.traceconv))} \"$@\"\n")
        os.chmod(os.path.join(b, "traceconv"), 0o755)
    return b


def run_examples(ctx, page, text):
    """Runs the page's sh examples in a fresh folder: (folder, commands run)."""
    d = os.path.join(ctx.work, "examples", re.sub(r"[^\w.-]", "_", page))
    fixture(ctx, d)
    env = dict(os.environ, PATH=command_path(ctx) + os.pathsep + os.environ.get("PATH", ""))
    ran = []
    for kind, first, block in fences(text):
        has = [c for c in commands(block, first) if is_traceconv_line(c[0])]
        if has and kind != RUN_KIND and kind not in SHOWN_KINDS:
            ctx.fail(f"{page}:{first - 1}: a block of `traceconv` lines fenced ```{kind}: say ```{RUN_KIND} "
                     f"(run by this test) or ```{'/```'.join(SHOWN_KINDS)} (an illustration)")
        if kind != RUN_KIND:
            continue
        for cmd, comment, line in has:
            try:
                words = shlex.split(cmd)
            except ValueError:
                words = cmd.split()
            if words[1:2] == ["serve"]:
                continue
            r = subprocess.run(["bash", "-c", cmd], cwd=d, env=env, stdin=subprocess.DEVNULL,
                               capture_output=True, timeout=300)
            err = r.stderr.decode(errors="replace").strip()[-300:]
            ctx.eq(r.returncode, 0, f"{page}:{line}: `{cmd}`: exit ({err}); the examples' folder has "
                                    f"{', '.join(sorted(os.listdir(d)))}")
            for f in written_files(cmd, comment):
                ctx.check(os.path.exists(os.path.join(d, f)), f"{page}:{line}: `{cmd}`: {f} written as its comment says")
            ran.append(cmd)
    return d, ran


def examples_run(ctx, all_pages):
    total = 0
    for page, text in all_pages:
        d, ran = run_examples(ctx, page, text)
        total += len(ran)
        print(f"{page}: {len(ran)} examples run")
        if page == "README.md":
            common_tasks(ctx, text, d)
    ctx.check(total > 0, "some examples run")


def common_tasks(ctx, readme, d):
    secs = sections(readme)
    titles = [t for lvl, t, _ in secs if lvl == 2]
    if not ctx.check("Common tasks" in titles, f"README: a 'Common tasks' section: {titles}"):
        return
    body = next(b for lvl, t, b in secs if t == "Common tasks")
    cmds = [c for kind, first, block in fences(body) if kind == RUN_KIND
            for c, _, _ in commands(block) if is_traceconv_line(c) and c.split()[1:2] != ["serve"]]
    ctx.check(len(cmds) >= 5, f"README: {len(cmds)} common tasks run (in ```{RUN_KIND} blocks), 5 at least")
    ctx.check(os.path.isdir(os.path.join(d, "out")) and any(f.endswith(".pftrace") for _, _, fs in
                                                          os.walk(os.path.join(d, "out")) for f in fs),
              "README: the batch task wrote its outputs under out/")


# -- 2. and 3. the example blocks ---------------------------------------------------------

def example_blocks(ctx, all_pages):
    for page, text in all_pages:
        for kind, first, block in fences(text):
            if page == "README.md" or kind == RUN_KIND:
                seen = {}
                for cmd, comment, line in commands(block, first):
                    for f in written_files(cmd, comment):
                        ctx.check(f not in seen, f"{page}:{line}: {f} written by `{seen.get(f)}` and by `{cmd}`")
                        seen.setdefault(f, cmd)
            ctx.check(not re.search(r"adb\s+shell\s+cat[^|\n]*\|\s*\S*traceconv", block),
                      f"{page}:{first}: a trace piped from `adb shell cat` (not binary-safe)")
    readme = dict(all_pages)["README.md"]
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


# -- 4. links -----------------------------------------------------------------------------

def link_targets(text):
    """(line number, target) of every inline link, image and reference definition outside code."""
    text = unfenced(text)
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        line = re.sub(r"(`+).*?\1", "", line)  # code spans
        for t in re.findall(r"\]\(\s*(<[^>]*>|[^)\s]+)", line):
            out.append((n, t))
        m = re.match(r"^\s{0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", line)
        if m:
            out.append((n, m.group(1)))
    return [(n, t.strip("<>")) for n, t in out]


def links(ctx, all_pages):
    texts = dict(all_pages)
    if os.path.exists(os.path.join(ctx.source, "CHANGELOG.md")):
        texts["CHANGELOG.md"] = read(ctx, "CHANGELOG.md")
    src = os.path.realpath(ctx.source)
    for page, text in texts.items():
        here = os.path.dirname(os.path.join(src, page))
        for line, target in link_targets(text):
            if re.match(r"[a-zA-Z][\w+.-]*:", target) or target.startswith("//"):
                continue  # https:, mailto:
            path, _, anchor = target.partition("#")
            path = urllib.parse.unquote(path)
            full = os.path.normpath(os.path.join(src, path.lstrip("/")) if path.startswith("/")
                                    else os.path.join(here, path)) if path else os.path.join(src, page)
            where = f"{page}:{line}: link {target}"
            if not ctx.check(os.path.exists(full), f"{where}: no such file ({os.path.relpath(full, src)})"):
                continue
            ctx.check(os.path.commonpath([src, os.path.realpath(full)]) == src, f"{where}: outside the repository")
            if anchor and full.endswith(".md") and os.path.isfile(full):
                with open(full, encoding="utf-8") as f:
                    have = anchors(f.read())
                ctx.check(anchor in have, f"{where}: no heading #{anchor} in {os.path.relpath(full, src)}")
    for name, text in list(texts.items()) + [("doc/traceconv.1", read(ctx, "doc", "traceconv.1"))]:
        hits = re.findall(r".*(?:\.\./" + NOTES + r"\b|\b" + NOTES + r"/(?:docs|oracle|tools|corpus)\b).*", text)
        ctx.eq(hits, [], f"{name}: paths into the shared notes folder")


# -- 5. the README is for users -------------------------------------------------------------

def readme_for_users(ctx, readme):
    n = len(readme.splitlines())
    ctx.check(n <= README_MAX_LINES, f"README.md has {n} lines, {README_MAX_LINES} at most: "
                                     f"the details go to doc/*.md")
    for pattern, what in ((r"(?i)\bissues?\s*#?\d+", "an internal issue number"),
                          (r"(?<![\w/.-])src/", "a source path")):
        for i, line in enumerate(readme.splitlines(), 1):
            m = re.search(pattern, line)
            ctx.check(not m, f"README.md:{i}: {what} ({m.group(0) if m else ''}): {line.strip()[:120]}")


# -- 6. serve -----------------------------------------------------------------------------

def backticked(text):
    return set(re.findall(r"`([a-z][a-z-]*)`", text))


def serve_fields(ctx):
    path = os.path.join("doc", "serve.md")
    if not ctx.check(os.path.exists(os.path.join(ctx.source, path)), f"{path}: the page on traceconv serve"):
        return
    body = read(ctx, path)
    srv = serve_lib.Server(ctx.traceconv, ctx.work)
    try:
        with urllib.request.urlopen(srv.url + "api/formats", timeout=30) as resp:
            formats = json.load(resp)
    finally:
        srv.stop()
    m = re.search(r"fixed\s+list,\s+each\s+the\s+library\s+option\s+of\s+the\s+same\s+name:(.*?)\.\s+The\s+body\s+is"
                  r"(.*?)\.\s+The\s+trace", body, re.S)
    if not ctx.check(m, f"{path} lists the API's options and the body's fields (\"... a fixed list, each the "
                        f"library option of the same name: ... The body is ... . The trace ...\")"):
        return
    formats = formats["serve"]  # the rest is `traceconv --list-formats --json`
    ctx.eq(sorted(backticked(m.group(1))), sorted(formats["options"]), f"{path}: the API options it lists")
    ctx.eq(sorted(backticked(m.group(2))), sorted(formats["fields"]), f"{path}: the multipart fields it names")
    for field in formats["fields"]:
        ctx.check(f"-F {field}=@" in body or field == "trace", f"{path}: an example sends the `{field}` field")
    man = read(ctx, "doc", "traceconv.1")
    serve = man[man.index(".SH SERVE"):].split("\n.SH ", 1)[0] if ".SH SERVE" in man else ""
    for field in formats["fields"]:
        ctx.check(f"\\fB{field}\\fR" in serve, f"man page SERVE: the multipart field {field} is named")


# -- 7. install lines ---------------------------------------------------------------------------

INSTALL_COMMANDS = {  # platform column of scripts/packages.txt -> how its README line starts
    "debian": "sudo apt-get install ", "fedora": "sudo dnf install ", "arch": "sudo pacman -S --needed ",
    "alpine": "sudo apk add ", "brew": "brew install "}


def build_packages(ctx):
    """{platform column: set of packages} of the rows setup.sh installs in every mode (build)."""
    rows = [line.split() for line in read(ctx, "scripts", "packages.txt").splitlines()
            if line.strip() and not line.startswith("#")]
    header = [line.split()[1:] for line in read(ctx, "scripts", "packages.txt").splitlines()
              if line.startswith("# name")][0]
    out = {}
    for col in INSTALL_COMMANDS:
        i = header.index(col)
        out[col] = {p for r in rows if "build" in r[1].split(",") and r[i] not in "-?" for p in r[i].split(",")}
    return out


def install_lines(ctx, readme):
    for col, packages in build_packages(ctx).items():
        start = INSTALL_COMMANDS[col]
        lines = [m.group(1) for m in re.finditer(r"`" + re.escape(start) + r"([^`]*)`", readme)]
        if ctx.check(len(lines) == 1, f"README: one `{start}...` line for {col} ({len(lines)} found)"):
            ctx.eq(sorted(lines[0].split()), sorted(packages),
                   f"README: {col}'s packages are scripts/packages.txt's build rows")


def main():
    ctx = tclib.Ctx()
    all_pages = pages(ctx)
    readme = all_pages[0][1]
    readme_for_users(ctx, readme)
    links(ctx, all_pages)
    example_blocks(ctx, all_pages)
    examples_run(ctx, all_pages)
    serve_fields(ctx)
    install_lines(ctx, readme)
    ctx.done()


if __name__ == "__main__":
    main()
