#!/usr/bin/env python3
"""What a newcomer meets before traceconv builds: scripts/setup.sh installs the missing
packages with the platform's package manager, and a build (make, cmake) that misses one says
which in one line, with the command that installs it. Both read scripts/packages.txt.

setup.sh runs with --dry-run (it says the commands, runs none) on a PATH holding only the
tools it uses and a stub package manager: apt-get (and a dpkg-query saying nothing is
installed), dnf, pacman, apk, brew, brew on macOS (a uname saying Darwin, apt-get there too),
none. The packages it would install are checked against the lists written here by hand for
each platform (the table's columns: a wrong name in the table fails here).

CMake runs with PKG_CONFIG_LIBDIR holding the system's .pc files but some (a library
"missing"): its configure stops with one line naming the missing libraries and the command
for the platform (-DTC_PLATFORM), make build shows that line alone, and an optional library
missing (libarchive, AUTO) is said and left out."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

BUILD = {
    "apt-get": "cmake make gcc pkg-config python3 libprotobuf-c-dev protobuf-c-compiler libcjson-dev zlib1g-dev "
               "libarchive-dev libmicrohttpd-dev libxxhash-dev",
    "dnf": "cmake make gcc pkgconf-pkg-config python3 protobuf-c-devel protobuf-c-compiler cjson-devel zlib-devel "
           "libarchive-devel libmicrohttpd-devel xxhash-devel",
    "pacman": "cmake make gcc pkgconf python protobuf-c cjson zlib libarchive libmicrohttpd xxhash",
    "apk": "cmake make gcc musl-dev pkgconf python3 protobuf-c-dev protobuf-c-compiler cjson-dev zlib-dev "
           "libarchive-dev libmicrohttpd-dev xxhash-dev",
    "brew": "cmake pkg-config protobuf-c cjson libarchive libmicrohttpd xxhash",
}
COMMAND = {  # the install command before the packages
    "apt-get": "apt-get install -y -qq --no-install-recommends", "dnf": "dnf install -y -q",
    "pacman": "pacman -S --needed --noconfirm", "apk": "apk add -q", "brew": "brew install",
}
# Debian's test and fuzz modes: the packages the script installed before it read a table
# (CI runs make test on a fresh Debian: every oracle must come), node and npm absent
DEBIAN_TEST = BUILD["apt-get"] + (" protobuf-compiler golang-go libdevel-nytprof-perl zstd xz-utils libxml2-utils "
                                  "chromium parallel time clang nodejs npm graphviz")
DEBIAN_FUZZ = BUILD["apt-get"] + " protobuf-compiler golang-go libdevel-nytprof-perl clang libclang-rt-14-dev"
TOOLS = ["bash", "env", "awk", "grep", "sed", "id", "uname", "dirname", "cat"]


def fake_path(ctx, name, stubs, uname=None):
    """A directory for PATH: the tools setup.sh uses and stub programs (exit 0, or the given script)."""
    d = os.path.join(ctx.work, "path-" + name)
    os.makedirs(d)
    for t in TOOLS:
        real = shutil.which(t)
        if real and not (t == "uname" and uname):
            os.symlink(real, os.path.join(d, t))
    scripts = dict(stubs)
    if uname:
        scripts["uname"] = f"echo {uname}"
    for stub, body in scripts.items():
        with open(os.path.join(d, stub), "w") as f:
            f.write("#!/bin/sh\n" + (body or "exit 0") + "\n")
        os.chmod(os.path.join(d, stub), 0o755)
    return d


def dry_run(ctx, path, mode):
    bash = shutil.which("bash")
    return subprocess.run([bash, os.path.join(ctx.source, "scripts", "setup.sh"), "--dry-run", mode],
                          capture_output=True, text=True, env={"PATH": path, "HOME": ctx.work})


def installs(ctx, out, manager):
    """The packages of the install command setup.sh said it would run (set), or None."""
    prefix = COMMAND[manager]
    for line in out.splitlines():
        m = re.match(r"setup: would run: (?:sudo )?(.*)$", line)
        if m and m.group(1).startswith(prefix + " "):
            return set(m.group(1)[len(prefix) + 1:].split())
    return None


def check_setup(ctx):
    for manager in ("apt-get", "dnf", "pacman", "apk", "brew"):
        stubs = {manager: None}
        if manager == "apt-get":
            stubs["dpkg-query"] = "exit 1"  # nothing installed
        r = dry_run(ctx, fake_path(ctx, manager, stubs), "build")
        ctx.eq(r.returncode, 0, f"setup.sh --dry-run build with {manager}: exit ({r.stderr})")
        ctx.eq(installs(ctx, r.stdout, manager), set(BUILD[manager].split()),
               f"setup.sh --dry-run build with {manager}: the packages ({r.stdout})")
        want = len(BUILD[manager].split())
        ctx.check(f"setup: installing {want} packages ({manager}): " in r.stdout,
                  f"setup.sh with {manager} says what it installs: {r.stdout!r}")
        if manager == "apt-get":
            ctx.check(re.search(r"^setup: would run: (sudo )?apt-get update -qq$", r.stdout, re.M) is not None,
                      f"apt-get update comes first: {r.stdout!r}")
    apt = fake_path(ctx, "apt-test", {"apt-get": None, "dpkg-query": "exit 1"})
    for mode, want in (("test", DEBIAN_TEST), ("fuzz", DEBIAN_FUZZ)):
        r = dry_run(ctx, apt, mode)
        ctx.eq(installs(ctx, r.stdout, "apt-get"), set(want.split()), f"setup.sh --dry-run {mode} on Debian")
    r = dry_run(ctx, fake_path(ctx, "apt-node", {"apt-get": None, "dpkg-query": "exit 1", "node": None,
                                                 "npm": None}), "test")
    got = installs(ctx, r.stdout, "apt-get") or set()
    ctx.check("nodejs" not in got and "npm" not in got, f"a node and npm on PATH are used as they are: {got}")
    # dpkg says everything is installed: nothing to do, nothing said
    r = dry_run(ctx, fake_path(ctx, "apt-all", {"apt-get": None, "dpkg-query": "echo 'install ok installed'"}),
                "build")
    ctx.eq((r.returncode, r.stdout), (0, ""), "setup.sh with everything installed")
    # macOS: brew, even where apt-get is found too
    r = dry_run(ctx, fake_path(ctx, "darwin", {"apt-get": None, "brew": None}, uname="Darwin"), "build")
    ctx.eq(installs(ctx, r.stdout, "brew"), set(BUILD["brew"].split()), f"setup.sh on macOS uses brew: {r.stdout}")
    ctx.check("sudo" not in r.stdout, "brew runs without sudo")
    r = dry_run(ctx, fake_path(ctx, "brew-test", {"brew": None}), "test")
    # (flamegraph.pl is probed by its file, which this machine may have)
    ctx.check(re.search(r"no brew package known for: (flamegraph\.pl )?chromium \(", r.stderr) is not None,
              f"the test tools brew has no package for are named: {r.stderr!r}")
    # no package manager: what to install, exit 1
    r = dry_run(ctx, fake_path(ctx, "none", {}), "build")
    ctx.eq(r.returncode, 1, "setup.sh without a package manager: exit")
    ctx.check("no package manager found" in r.stderr and all(n in r.stderr.split() for n in
              ("cmake", "libcjson", "libarchive", "libmicrohttpd", "protoc-c")),
              f"setup.sh without a package manager names what to install: {r.stderr!r}")
    r = dry_run(ctx, apt, "nonsense")
    ctx.eq(r.returncode, 2, "setup.sh with an unknown mode: exit")


def pc_dir(ctx, leave_out):
    """A PKG_CONFIG_LIBDIR with the system's .pc files but those named."""
    d = os.path.join(ctx.work, "pc-" + "-".join(leave_out))
    os.makedirs(d)
    path = subprocess.run(["pkg-config", "--variable", "pc_path", "pkg-config"], capture_output=True,
                          text=True).stdout.strip()
    for p in path.split(":"):
        if os.path.isdir(p):
            for f in os.listdir(p):
                if f.endswith(".pc") and f[:-3] not in leave_out and not os.path.exists(os.path.join(d, f)):
                    os.symlink(os.path.join(p, f), os.path.join(d, f))
    return d


def configure(ctx, name, pc, *flags):
    env = dict(os.environ, PKG_CONFIG_LIBDIR=pc)
    env.pop("PKG_CONFIG_PATH", None)
    return subprocess.run(["cmake", "-S", ctx.source, "-B", os.path.join(ctx.work, name), "-DTC_BUILD_TESTS=OFF",
                           *flags], capture_output=True, text=True, env=env)


def check_cmake(ctx):
    no_cjson = pc_dir(ctx, ["libcjson", "libarchive"])
    for platform, line in (
            ("debian", "traceconv: libcjson, libarchive not found: install them with "
                       "`sudo apt-get install libcjson-dev libarchive-dev`"),
            ("fedora", "traceconv: libcjson, libarchive not found: install them with "
                       "`sudo dnf install cjson-devel libarchive-devel`"),
            ("unknown", "traceconv: libcjson, libarchive not found: install them with their development files")):
        r = configure(ctx, "cfg-" + platform, no_cjson, "-DTC_PLATFORM=" + platform, "-DTC_WITH_LIBARCHIVE=ON")
        lines = [x.strip() for x in r.stderr.splitlines() if x.strip().startswith("traceconv:")]
        ctx.check(r.returncode != 0 and len(lines) == 1 and lines[0].startswith(line),
                  f"cmake with libcjson and libarchive missing ({platform}): one line starting {line!r}: "
                  f"{r.stderr[-800:]}")
    # make build: that line alone (and make's own), whatever the platform found
    env = dict(os.environ, PKG_CONFIG_LIBDIR=pc_dir(ctx, ["libcjson"]))
    env.pop("PKG_CONFIG_PATH", None)
    env.pop("MAKEFLAGS", None)
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", ctx.source, "build",
                        "BUILD=" + os.path.join(ctx.work, "make-build")], capture_output=True, text=True, env=env)
    lines = [x for x in r.stderr.splitlines() if not x.startswith("make")]
    ctx.check(r.returncode != 0 and len(lines) == 1 and re.match(
        r"traceconv: libcjson not found: install it (with `.*`|with its development files) \(or run "
        r"scripts/setup\.sh build\), then configure again$", lines[0]) is not None,
        f"make build with libcjson missing says one line: {r.stderr!r}")
    ctx.eq(r.stdout, "", "make build with libcjson missing: nothing on stdout")
    # an optional part missing (AUTO): said, left out, the configure goes on
    r = configure(ctx, "cfg-auto", pc_dir(ctx, ["libarchive"]), "-DTC_PLATFORM=alpine")
    ctx.eq(r.returncode, 0, f"cmake without libarchive (AUTO): exit ({r.stderr[-500:]})")
    ctx.check("-- traceconv: batch without archives: libarchive not found (to read them: install it with "
              "`sudo apk add libarchive-dev`, then configure again)" in r.stdout,
              f"cmake without libarchive says batch reads no archives: {r.stdout[-800:]}")


def main():
    ctx = tclib.Ctx()
    check_setup(ctx)
    if ctx.check(shutil.which("pkg-config") and shutil.which("cmake") and shutil.which("make"),
                 "cmake, make and pkg-config are installed (scripts/setup.sh build)"):
        check_cmake(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
