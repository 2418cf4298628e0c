#!/usr/bin/env python3
"""Every C file of the build compiles without a warning under clang too, with the build's own
flags (-Wall -Wextra -Werror, from its compile_commands.json): make fuzz builds the library
with clang, whose warnings differ from gcc's (a table with partial initializers built with gcc
and stopped make fuzz). -fsyntax-only, two at a time: seconds, not a second build."""
import concurrent.futures
import json
import os
import shlex
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def clang_args(entry):
    args = entry.get("arguments") or shlex.split(entry["command"])
    out, skip = ["clang", "-fsyntax-only", "-Wall", "-Wextra", "-Werror"], False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a.startswith("-fsanitize") or a.startswith("-fno-sanitize"):
            continue
        out.append(a)
    return out


def main():
    ctx = tclib.Ctx()
    clang = shutil.which("clang")
    if not clang:
        ctx.fail("clang is not installed (scripts/setup.sh test installs it)")
        ctx.done()
    build = os.path.dirname(os.path.abspath(ctx.traceconv))
    db = os.path.join(build, "compile_commands.json")
    if not ctx.check(os.path.exists(db), f"{db}: the build writes its compile commands (CMAKE_EXPORT_COMPILE_COMMANDS)"):
        ctx.done()
    src = os.path.join(ctx.source, "src") + os.sep
    entries = [e for e in json.load(open(db)) if os.path.abspath(e["file"]).startswith(src)]
    seen, jobs = set(), []
    for e in entries:
        if e["file"] in seen:
            continue
        seen.add(e["file"])
        jobs.append(e)
    ctx.check(len(jobs) >= 60, f"the library's and the command's files: {len(jobs)}")

    def run(e):
        r = subprocess.run(clang_args(e), cwd=e["directory"], capture_output=True, text=True)
        return e["file"], r.returncode, r.stderr

    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        for path, rc, err in pool.map(run, jobs):
            ctx.check(rc == 0, f"clang: {os.path.relpath(path, ctx.source)}: {err.strip()[:800]}")
    ctx.done()


if __name__ == "__main__":
    main()
