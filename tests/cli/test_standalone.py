#!/usr/bin/env python3
"""The suite stands alone (issue 22, item 22): a clone has nothing beside it.

1. No test, script, CMake or make file names a path into the team's shared notes
   folder (the sibling directory the project was developed next to), whatever the form
   (relative to the source, or its oracle/, tools/ or corpus/ folders), nor uses the
   tclib helpers that looked for it (gone; TC_EXTRA_CORPUS replaces them).
2. What the tests use instead is here: the upstream schemas protoc decodes our
   protobuf with (third_party/, each with its LICENSE) and the checkers
   (tests/checkers/); each checker imports only the standard library, so it shares
   no code with traceconv.
3. The corpus generators reproduce the committed files: corpus/rhea/gen.py and
   corpus/systrace/gen.py, run into a scratch folder, write the same facts.json and
   the same bytes (compressed files compared by their content), so the facts the tests
   check against are the model's and no file was edited by hand.
"""
import gzip
import os
import re
import subprocess
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

# the sibling folder's name, spelled so that this file does not match its own search
NOTES = "sha" + "red"
FORBIDDEN = re.compile(r"\.\./" + NOTES + r"\b|\b" + NOTES + r"/(oracle|tools|corpus)\b"
                       # and tclib's helpers that found it, gone: Ctx.extra_corpus takes TC_EXTRA_CORPUS
                       r"|\bctx\." + NOTES + r"\b|\b(need_)?" + NOTES + r"_corpus\(")
SCANNED = ("tests", "scripts", "cmake", "bench", "corpus", "third_party", "CMakeLists.txt", "Makefile")
SKIP_DIRS = {"node_modules", "__pycache__", ".git"}


def scanned_files(root):
    for top in SCANNED:
        path = os.path.join(root, top)
        if os.path.isfile(path):
            yield path
            continue
        for d, dirs, files in os.walk(path):
            dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
            for f in sorted(files):
                yield os.path.join(d, f)


def check_no_path_outside(ctx):
    hits = []
    for path in scanned_files(ctx.source):
        if os.path.getsize(path) > 4 << 20:  # the vendored schema is text, but no test reads paths from it
            continue
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", errors="replace")
        for n, line in enumerate(text.splitlines(), 1):
            if FORBIDDEN.search(line):
                hits.append(f"{os.path.relpath(path, ctx.source)}:{n}: {line.strip()[:120]}")
    ctx.eq(hits, [], "paths into the shared notes folder")


def check_oracles_here(ctx):
    for proto, d in tclib.SCHEMA_DIRS.items():
        folder = ctx.schema_dir(proto)
        ctx.check(os.path.isfile(os.path.join(folder, proto)), f"third_party/{d}/{proto} is there")
        ctx.check(os.path.isfile(os.path.join(folder, "LICENSE")), f"third_party/{d}/LICENSE is there")
        # protoc reads it (the schema the tests decode with)
        r = subprocess.run(["protoc", "--proto_path=" + folder, "--descriptor_set_out=/dev/null", proto],
                           capture_output=True)
        ctx.eq((r.returncode, r.stderr.decode(errors="replace")[-300:]), (0, ""), f"protoc compiles {proto}")
    stdlib = set(sys.stdlib_module_names)
    folder = os.path.join(ctx.source, "tests", "checkers")
    checkers = sorted(f for f in os.listdir(folder) if f.endswith(".py")) if os.path.isdir(folder) else []
    for name in ("check_chrome_json.py", "check_folded.py", "check_systrace_html.py", "artrace_inspect.py"):
        ctx.check(name in checkers, f"tests/checkers/{name} is there")
    for name in checkers:
        with open(ctx.checker(name), encoding="utf-8") as f:
            mods = set(re.findall(r"^\s*(?:import|from)\s+([A-Za-z_][\w]*)", f.read(), re.M))
        ctx.eq(sorted(mods - stdlib), [], f"tests/checkers/{name}: modules outside the standard library")


def content(name, data):
    """A file's content: compressed ones inflated (the compressor's bytes may differ by zlib version)."""
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data)
    if data.startswith(b"TRACE:\n"):
        return data[:7] + zlib.decompress(data[7:])
    return data


def check_generators(ctx):
    for sub in ("rhea", "systrace"):
        here = os.path.join(ctx.corpus, sub)
        out = os.path.join(ctx.work, sub)
        os.makedirs(out, exist_ok=True)
        r = subprocess.run([sys.executable, os.path.join(here, "gen.py"), out], capture_output=True)
        if not ctx.eq(r.returncode, 0, f"corpus/{sub}/gen.py: exit ({r.stderr.decode(errors='replace')[-300:]})"):
            continue
        made = sorted(os.listdir(out))
        committed = sorted(f for f in os.listdir(here) if f not in ("gen.py", "README.md"))
        ctx.eq(made, committed, f"corpus/{sub}: the files gen.py writes vs the committed ones")
        for f in made:
            if f not in committed:
                continue
            with open(os.path.join(out, f), "rb") as a, open(os.path.join(here, f), "rb") as b:
                ctx.check(content(f, a.read()) == content(f, b.read()), f"corpus/{sub}/{f}: gen.py writes other bytes")


def main():
    ctx = tclib.Ctx()
    check_no_path_outside(ctx)
    check_oracles_here(ctx)
    check_generators(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
