"""The library as users get it: `cmake --install` into a temporary prefix, then
consumer programs that include only <traceconv.h> are built the three ways a
user would and each converts a corpus trace; the output must equal what the
traceconv command writes for the same input:
  - a CMake project with find_package(traceconv), against the shared and the
    static library (traceconv::traceconv);
  - plain cc with `pkg-config traceconv` (shared) and `pkg-config --static`;
  - a program that defines its own symbols named like one of our generated
    protobuf-c descriptors and like an internal tci_ function, linked with the
    static library: no clash, and each side keeps its own.
The version agrees everywhere: header macros, tc_version_*(), CMake's
package version file and pkg-config's --modversion. pkg-config --cflags
names only the install's include directory (no protobuf-c/cJSON paths)."""
import glob
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

PROGRAM = r'''
#include <traceconv.h>
#include <stdio.h>
#include <string.h>
int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (tc_version_number() != TC_VERSION_NUMBER || strcmp(tc_version_string(), TC_VERSION_STRING) != 0) {
        fprintf(stderr, "version mismatch: header %s, library %s\n", TC_VERSION_STRING, tc_version_string());
        return 3;
    }
    if (!strcmp(argv[2], "version")) {
        printf("%s %d\n", tc_version_string(), tc_version_number());
        return 0;
    }
    tc_conv *c = tc_conv_new();
    int rc = tc_conv_open(c, argv[1], NULL);
    if (rc == TC_OK)
        rc = tc_conv_write(c, argv[2], stdout);
    if (rc != TC_OK)
        fprintf(stderr, "%s\n", tc_conv_error(c));
    tc_conv_free(c);
    return rc == TC_OK ? 0 : 1;
}
'''

# A caller with its own globals named like ours: one protobuf-c descriptor of
# the perfetto writer and one internal function. Linked statically with
# libtraceconv.a they must not clash, and a perfetto conversion still uses ours.
CLASH = r'''
#include <traceconv.h>
#include <stdio.h>
#include <string.h>
const char DESCRIPTOR[] = "the caller's own";
int tci_error(int x) { return x + 1; }
int main(int argc, char **argv)
{
    if (argc != 2 || strcmp(DESCRIPTOR, "the caller's own") != 0 || tci_error(41) != 42)
        return 2;
    tc_conv *c = tc_conv_new();
    int rc = tc_conv_open(c, argv[1], NULL);
    FILE *out = fopen("/dev/null", "w");
    if (rc == TC_OK)
        rc = tc_conv_write(c, "perfetto", out);
    fclose(out);
    if (rc != TC_OK)
        fprintf(stderr, "%s\n", tc_conv_error(c));
    tc_conv_free(c);
    printf("ok %d\n", tci_error(1));
    return rc == TC_OK ? 0 : 1;
}
'''

CMAKELISTS = '''cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(traceconv {version} EXACT REQUIRED)
add_executable(consumer {source})
target_link_libraries(consumer PRIVATE traceconv::traceconv)
'''


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def main():
    ctx = tclib.Ctx()
    build = os.path.dirname(os.path.abspath(ctx.traceconv))
    prefix = os.path.join(ctx.work, "prefix")
    shutil.rmtree(prefix, ignore_errors=True)
    r = run(["cmake", "--install", build, "--prefix", prefix])
    if not ctx.check(r.returncode == 0, f"cmake --install failed: {r.stderr}"):
        ctx.done()
    pcs = glob.glob(os.path.join(prefix, "**", "traceconv.pc"), recursive=True)
    if not ctx.check(len(pcs) == 1, f"one traceconv.pc installed, found {pcs}"):
        ctx.done()
    header = os.path.join(prefix, "include", "traceconv.h")
    ctx.check(os.path.exists(header), "traceconv.h installed")
    ctx.check(not glob.glob(os.path.join(prefix, "include", "tc_*.h")), "no internal header is installed")
    libdir = os.path.dirname(os.path.dirname(pcs[0]))
    configs = glob.glob(os.path.join(libdir, "cmake", "traceconv", "traceconvConfig*.cmake"))
    ctx.check(len(configs) == 2, f"traceconvConfig.cmake and its version file installed: {configs}")

    # one version everywhere
    macros = dict(re.findall(r"#define TC_VERSION_(MAJOR|MINOR|PATCH) (\d+)", open(header).read()))
    version = f"{macros.get('MAJOR')}.{macros.get('MINOR')}.{macros.get('PATCH')}"
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.dirname(pcs[0]))
    modversion = run(["pkg-config", "--modversion", "traceconv"], env=env).stdout.strip()
    ctx.eq(modversion, version, "pkg-config --modversion equals the header's version")
    version_file = os.path.join(libdir, "cmake", "traceconv", "traceconvConfigVersion.cmake")
    m = re.search(r'set\(PACKAGE_VERSION "([^"]*)"\)', open(version_file).read()) if os.path.exists(version_file) else None
    ctx.eq(m.group(1) if m else None, version, "CMake's package version equals the header's version")
    ctx.eq(run([ctx.traceconv, "--version"]).stdout.splitlines()[0].split()[-1:], [version], "traceconv --version (its first line)")

    # the installed command runs its subcommands, which are programs of their own in
    # LIBEXECDIR/traceconv (src/cli/subcommand.c), and its conversions load no archive or
    # HTTP library
    exe = os.path.join(prefix, "bin", "traceconv")
    for sub in ("batch", "serve"):
        r = run([exe, sub, "--help"])
        ctx.check(r.returncode == 0 and f"usage: traceconv {sub}" in r.stdout,
                  f"installed traceconv {sub} --help: {r.returncode} {r.stdout[:80]!r} {r.stderr.strip()[:200]}")
    src = os.path.join(ctx.corpus, "app-startup.trace")
    outdir = os.path.join(ctx.work, "batch-out")
    r = run([exe, "batch", "-q", "-o", "folded", "-O", outdir, src])
    ctx.check(r.returncode == 0 and os.path.exists(os.path.join(outdir, "app-startup.folded")),
              f"installed traceconv batch converts: {r.returncode} {r.stderr.strip()[:200]}")
    linked = run(["ldd", exe]).stdout
    ctx.check("libarchive" not in linked and "libmicrohttpd" not in linked,
              f"traceconv itself links neither libarchive nor libmicrohttpd:\n{linked}")

    cflags = run(["pkg-config", "--cflags", "traceconv"], env=env).stdout.split()
    ctx.eq([os.path.realpath(f[2:]) for f in cflags], [os.path.realpath(os.path.join(prefix, "include"))],
           f"pkg-config --cflags names only the install's include directory: {cflags}")
    cflags = run(["pkg-config", "--cflags", "--static", "traceconv"], env=env).stdout.split()
    ctx.check(len(cflags) == 1, f"pkg-config --cflags --static adds no private include path: {cflags}")

    sanitize = []
    cache = os.path.join(build, "CMakeCache.txt")
    cache_text = open(cache).read() if os.path.exists(cache) else ""
    if "TC_SANITIZE:BOOL=ON" in cache_text:
        sanitize = ["-fsanitize=address,undefined"]
    if "TC_TSAN:BOOL=ON" in cache_text:
        sanitize = ["-fsanitize=thread"]
    trace = os.path.join(ctx.corpus, "app-startup.trace")
    want = ctx.run(["-o", "folded", trace, "-"], check_rc=0).stdout
    run_env = dict(os.environ, LD_LIBRARY_PATH=libdir)

    def check_program(kind, exe):
        r = subprocess.run([exe, trace, "folded"], capture_output=True, env=run_env)
        ctx.eq(r.returncode, 0, f"{kind} program exit ({r.stderr.decode(errors='replace').strip()})")
        ctx.check(r.stdout == want and want, f"{kind} program output equals traceconv -o folded")
        r = subprocess.run([exe, trace, "version"], capture_output=True, text=True, env=run_env)
        ctx.eq(r.stdout.split()[:1], [version], f"{kind} program: tc_version_string()")
        return r

    src = os.path.join(ctx.work, "use_lib.c")
    with open(src, "w") as f:
        f.write(PROGRAM)

    # (a) find_package(traceconv): the shared library, then the static one
    for kind, extra in (("shared", []), ("static", ["-DTRACECONV_STATIC=ON"])):
        proj = os.path.join(ctx.work, f"cmake_{kind}")
        shutil.rmtree(proj, ignore_errors=True)
        os.makedirs(proj)
        with open(os.path.join(proj, "CMakeLists.txt"), "w") as f:
            f.write(CMAKELISTS.format(version=version, source=src))
        flags = " ".join(["-Wall", "-Wextra", "-Werror", *sanitize])
        cfg = run(["cmake", "-S", proj, "-B", os.path.join(proj, "b"), f"-DCMAKE_PREFIX_PATH={prefix}",
                   f"-DCMAKE_C_FLAGS={flags}", *extra])
        bld = cfg.returncode == 0 and run(["cmake", "--build", os.path.join(proj, "b")])
        if not ctx.check(cfg.returncode == 0 and bld.returncode == 0,
                         f"find_package(traceconv) consumer, {kind}: {cfg.stderr}{bld and bld.stdout + bld.stderr}"):
            continue
        exe = os.path.join(proj, "b", "consumer")
        linked = run(["ldd", exe]).stdout
        ctx.check(("libtraceconv.so" in linked) == (kind == "shared"), f"cmake {kind} consumer links the {kind} library")
        check_program(f"cmake {kind}", exe)

    # (b) pkg-config: shared, and --static with the archive
    for kind, pc_args in (("shared", []), ("static", ["--static"])):
        flags = run(["pkg-config", "--cflags", "--libs", *pc_args, "traceconv"], env=env)
        if not ctx.check(flags.returncode == 0, f"pkg-config {kind}: {flags.stderr}"):
            continue
        exe = os.path.join(ctx.work, f"use_lib_{kind}")
        link = flags.stdout.split()
        if kind == "static":  # prefer the archive over the .so of the same name
            link = [os.path.join(libdir, "libtraceconv.a") if a == "-ltraceconv" else a for a in link]
        cc = run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", *sanitize, src, "-o", exe, *link])
        if not ctx.check(cc.returncode == 0, f"building against the {kind} library: {cc.stderr}"):
            continue
        check_program(f"pkg-config {kind}", exe)

    # (c) the caller's own symbols named like our protobuf-c descriptor and a tci_ function
    archive = os.path.join(libdir, "libtraceconv.a")
    glob_syms = run(["nm", "-g", "--defined-only", archive]).stdout.split("\n")
    leaked = [ln.split()[-1] for ln in glob_syms if len(ln.split()) == 3 and not ln.split()[-1].startswith("tc_")]
    ctx.eq(leaked, [], "libtraceconv.a defines no global symbol but tc_*")
    descriptors = sorted(set(re.findall(r"\b(perfetto__protos__\w+__descriptor)\b", run(["nm", archive]).stdout)))
    if ctx.check(descriptors, "libtraceconv.a has protobuf-c descriptors (perfetto__protos__*__descriptor)"):
        clash = os.path.join(ctx.work, "clash.c")
        with open(clash, "w") as f:
            f.write(CLASH.replace("DESCRIPTOR", descriptors[0]))
        flags = run(["pkg-config", "--cflags", "--libs", "--static", "traceconv"], env=env).stdout.split()
        flags = [archive if a == "-ltraceconv" else a for a in flags]
        exe = os.path.join(ctx.work, "clash")
        cc = run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-missing-prototypes", *sanitize, clash,
                  "-o", exe, *flags])
        if ctx.check(cc.returncode == 0, f"a caller defining {descriptors[0]} and tci_error links: {cc.stderr}"):
            r = run([exe, trace])
            ctx.eq((r.returncode, r.stdout.strip()), (0, "ok 2"), f"the clashing caller runs ({r.stderr.strip()})")
    ctx.done()


if __name__ == "__main__":
    main()
