"""The library as users get it: `cmake --install` into a temporary prefix,
then a program that includes only <traceconv.h> is built with the flags
`pkg-config traceconv` gives (shared and static) and converts a corpus trace.
Its output must equal what the traceconv command writes for the same input."""
import glob
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(__file__))
import tclib  # noqa: E402

PROGRAM = r'''
#include <traceconv.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    tc_conv *c = tc_conv_new();
    int rc = tc_conv_open(c, argv[1], NULL);
    if (rc == TC_OK)
        rc = tc_conv_write(c, "folded", stdout);
    if (rc != TC_OK)
        fprintf(stderr, "%s\n", tc_conv_error(c));
    tc_conv_free(c);
    return rc == TC_OK ? 0 : 1;
}
'''


def main():
    ctx = tclib.Ctx()
    build = os.path.dirname(os.path.abspath(ctx.traceconv))
    prefix = os.path.join(ctx.work, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    r = subprocess.run(["cmake", "--install", build, "--prefix", prefix], capture_output=True, text=True)
    if not ctx.check(r.returncode == 0, f"cmake --install failed: {r.stderr}"):
        ctx.done()
    pcs = glob.glob(os.path.join(prefix, "**", "traceconv.pc"), recursive=True)
    if not ctx.check(len(pcs) == 1, f"one traceconv.pc installed, found {pcs}"):
        ctx.done()
    ctx.check(os.path.exists(os.path.join(prefix, "include", "traceconv.h")), "traceconv.h installed")
    ctx.check(not glob.glob(os.path.join(prefix, "include", "tc_internal.h")), "the internal header is not installed")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
    src = os.path.join(ctx.work, "use_lib.c")
    with open(src, "w") as f:
        f.write(PROGRAM)
    sanitize = []
    cache = os.path.join(build, "CMakeCache.txt")
    if os.path.exists(cache) and "TC_SANITIZE:BOOL=ON" in open(cache).read():
        sanitize = ["-fsanitize=address,undefined"]
    trace = os.path.join(ctx.corpus, "app-startup.trace")
    want = ctx.run(["-o", "folded", trace, "-"], check_rc=0).stdout
    libdir = os.path.dirname(os.path.dirname(pcs[0]))
    for kind, pc_args in (("shared", []), ("static", ["--static"])):
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", *pc_args, "traceconv"], env=env,
                               capture_output=True, text=True)
        if not ctx.check(flags.returncode == 0, f"pkg-config {kind}: {flags.stderr}"):
            continue
        exe = os.path.join(ctx.work, f"use_lib_{kind}")
        link = flags.stdout.split()
        if kind == "static":  # prefer the archive over the .so of the same name
            link = [os.path.join(libdir, "libtraceconv.a") if a == "-ltraceconv" else a for a in link]
        cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", *sanitize, src, "-o", exe, *link],
                            capture_output=True, text=True)
        if not ctx.check(cc.returncode == 0, f"building against the {kind} library: {cc.stderr}"):
            continue
        run = subprocess.run([exe, trace], capture_output=True, env=dict(os.environ, LD_LIBRARY_PATH=libdir))
        ctx.eq(run.returncode, 0, f"{kind} program exit ({run.stderr.decode(errors='replace').strip()})")
        ctx.check(run.stdout == want and want, f"{kind} program output equals traceconv -o folded")
    ctx.done()


if __name__ == "__main__":
    main()
