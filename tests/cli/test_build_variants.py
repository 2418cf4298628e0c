#!/usr/bin/env python3
"""The other build a user may make: with clang, without the optional libraries. One more
configure and build of the command (only the traceconv target: the library, traceconv,
traceconv-batch; -j2, -O0: the warnings are the point, not the speed), with clang and
-Werror, TC_WITH_LIBARCHIVE=OFF and TC_WITH_MICROHTTPD=OFF, both left out at once: each
only takes code out (its #if branches are independent), and one build costs half of two in
make test's 12 minutes. test_clang_warnings compiles every file of the normal build with
clang already (-fsyntax-only); this build adds clang's configure and link, and the branches
only a build without those libraries compiles, which gcc compiles here too (-fsyntax-only).

Then the command as such a user meets it: --version says which parts are built; batch
converts a directory's plain trace and lists an archive in it (zip, tar, tar.gz, or on stdin)
as failed, saying archives need libarchive, exit 1; traceconv serve says it was not built,
exit 2, in one line; --help says so too."""
import json
import os
import shlex
import shutil
import subprocess
import sys
import tarfile
import time
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

NO_ARCHIVES = "archives need libarchive, which this traceconv was built without"


def build_lean(ctx):
    """The clang build without libarchive and libmicrohttpd: its directory, or None."""
    d = os.path.join(ctx.work, "clang-lean")
    env = dict(os.environ, CC="clang")
    env.pop("MAKEFLAGS", None)  # ctest's -j is not this build's
    start = time.monotonic()
    r = subprocess.run(["cmake", "-S", ctx.source, "-B", d, "-DCMAKE_BUILD_TYPE=Debug", "-DCMAKE_C_FLAGS_DEBUG=-O0",
                        "-DTC_WERROR=ON", "-DTC_BUILD_TESTS=OFF", "-DTC_WITH_LIBARCHIVE=OFF",
                        "-DTC_WITH_MICROHTTPD=OFF"], capture_output=True, text=True, env=env)
    if not ctx.eq(r.returncode, 0, f"configure with clang, without libarchive and libmicrohttpd: {r.stderr[-1500:]}"):
        return None
    for line in ("-- traceconv: batch without archives (TC_WITH_LIBARCHIVE=OFF)",
                 "-- traceconv: no serve (TC_WITH_MICROHTTPD=OFF)"):
        ctx.check(line in r.stdout.splitlines(), f"the configure says {line!r}: {r.stdout[-800:]}")
    cache = open(os.path.join(d, "CMakeCache.txt")).read()
    ctx.check("CMAKE_C_COMPILER_ID:" not in cache or "Clang" in cache, "the build's compiler is clang")
    r = subprocess.run(["cmake", "--build", d, "-j2", "--target", "traceconv"], capture_output=True, text=True, env=env)
    if not ctx.eq(r.returncode, 0, f"clang -Werror build of traceconv: {r.stdout[-3000:]}{r.stderr[-1500:]}"):
        return None
    print(f"configure and build: {time.monotonic() - start:.1f} s")
    ctx.check(not os.path.exists(os.path.join(d, "traceconv-serve")), "traceconv-serve is not built")
    return d


def gcc_branches(ctx, d):
    """gcc -fsyntax-only -Werror on the files with TC_WITH_ branches, with this build's flags."""
    gcc = shutil.which("gcc")
    if not ctx.check(gcc is not None, "gcc is installed"):
        return
    seen = set()
    for e in json.load(open(os.path.join(d, "compile_commands.json"))):
        f = e["file"]
        f = os.path.join(e["directory"], f)
        if f in seen or not os.path.abspath(f).startswith(os.path.join(os.path.abspath(ctx.source), "src")) or \
                "TC_WITH_" not in open(f).read():
            continue
        seen.add(f)
        args = shlex.split(e["command"]) if "command" in e else list(e["arguments"])
        out, skip = [gcc, "-fsyntax-only", "-O2"], False
        for a in args[1:]:
            if skip:
                skip = False
            elif a in ("-o", "-MF", "-MT", "-MQ"):
                skip = True
            elif a not in ("-c", "-MD", "-MMD"):
                out.append(a)
        r = subprocess.run(out, cwd=e["directory"], capture_output=True, text=True)
        ctx.eq(r.returncode, 0, f"gcc: {os.path.relpath(f, ctx.source)} without libarchive and libmicrohttpd: "
                                f"{r.stderr[-1500:]}")
    ctx.check(len(seen) >= 2, f"the files with TC_WITH_ branches: {sorted(seen)}")


def run(exe, args, cwd, stdin=None):
    """The command's result; a command still running after 60 s (a serve that was built
    after all, listening) is stopped and reads as exit -1."""
    try:
        return subprocess.run([exe, *args], cwd=cwd, capture_output=True, text=True, stdin=stdin, timeout=60)
    except subprocess.TimeoutExpired as e:
        text = [x.decode(errors="replace") if isinstance(x, bytes) else x or "" for x in (e.stdout, e.stderr)]
        return subprocess.CompletedProcess(e.cmd, -1, *text)


def check_command(ctx, d):
    tc = os.path.join(d, "traceconv")
    w = os.path.join(ctx.work, "run")
    os.makedirs(os.path.join(w, "in"))
    trace = os.path.join(w, "in", "app-startup.trace")
    shutil.copy(os.path.join(ctx.corpus, "app-startup.trace"), trace)
    with zipfile.ZipFile(os.path.join(w, "in", "traces.zip"), "w") as z:
        z.write(trace, "a.trace")
    with tarfile.open(os.path.join(w, "traces.tar"), "w") as t:
        t.add(trace, "a.trace")
    with tarfile.open(os.path.join(w, "traces.tar.gz"), "w:gz") as t:
        t.add(trace, "a.trace")

    r = run(tc, ["--version"], w)
    ctx.eq(r.stdout.splitlines()[1:], ["batch archives: no (built without libarchive)",
                                       "serve: no (built without libmicrohttpd)"], "--version's parts")
    r = run(tc, ["-q", "-o", "folded", trace, os.path.join(w, "one.folded")], w)
    ctx.check(r.returncode == 0 and os.path.getsize(os.path.join(w, "one.folded")) > 0,
              f"a conversion: {r.stderr}")

    # a directory: its trace converted, its archive failed with why; exit 1 (one failed)
    r = run(tc, ["batch", "-o", "folded", "-O", "out", "in"], w)
    ctx.eq(r.returncode, 1, f"batch over a directory with an archive: exit ({r.stderr})")
    ctx.check(os.path.getsize(os.path.join(w, "out", "in", "app-startup.folded")) > 0,
              "batch converts the directory's plain trace")
    lines = [x for x in r.stderr.splitlines() if "traces.zip" in x]
    ctx.check(len(lines) == 1 and NO_ARCHIVES in lines[0], f"batch says the zip needs libarchive, one line: {r.stderr}")
    summary = json.load(open(os.path.join(w, "out", "traceconv-batch.json")))
    text = json.dumps(summary)
    ctx.check('"failed"' in text and NO_ARCHIVES in text, "the summary lists the archive as failed, with why")
    r = run(tc, ["batch", "-o", "folded", "-O", "out-plain", "in/app-startup.trace"], w)
    ctx.eq(r.returncode, 0, f"batch over a plain trace: exit ({r.stderr})")
    for name in ("in/traces.zip", "traces.tar", "traces.tar.gz"):
        r = run(tc, ["batch", "-o", "folded", "-O", "out-" + os.path.basename(name), name], w)
        ctx.check(r.returncode == 1 and NO_ARCHIVES in r.stderr, f"batch {name}: exit 1, archives need libarchive: "
                                                                 f"{r.returncode} {r.stderr}")
    with open(os.path.join(w, "in", "traces.zip"), "rb") as f:
        r = run(tc, ["batch", "-o", "folded", "-O", "out-stdin", "-"], w, stdin=f)
    ctx.check(r.returncode == 1 and NO_ARCHIVES in r.stderr, f"batch - (stdin): {r.returncode} {r.stderr}")
    r = run(tc, ["batch", "--help"], w)
    ctx.check("built\nwithout libarchive" in r.stdout, f"batch --help says archives are not read: {r.stdout[:600]}")

    # serve: one line, exit 2, whatever its arguments
    for args in (["serve"], ["serve", "--listen", "127.0.0.1:0"], ["serve", "--help"]):
        r = run(tc, args, w)
        ctx.check(r.returncode == 2 and r.stdout == "" and len(r.stderr.splitlines()) == 1
                  and "traceconv serve: not built" in r.stderr and "libmicrohttpd" in r.stderr,
                  f"traceconv {' '.join(args)}: one line, exit 2: {r.returncode} {r.stderr!r}")
    r = run(tc, ["--help"], w)
    ctx.check("built without libmicrohttpd" in r.stdout, "--help says serve is not in this build")


def main():
    ctx = tclib.Ctx()
    if not ctx.check(shutil.which("clang") is not None, "clang is not installed (scripts/setup.sh test installs it)"):
        ctx.done()
    d = build_lean(ctx)
    if d:
        gcc_branches(ctx, d)
        check_command(ctx, d)
    ctx.done()


if __name__ == "__main__":
    main()
