#!/usr/bin/env python3
"""The output-file rules of a conversion (src/cli/outfile.c, issue 22) and the command line's
messages, each case one that an earlier traceconv got wrong:

- item 17: the default output name is never the input (cap.txt -o report -> cap.report.txt,
  x.html -o systrace -> x.systrace.html), also with several formats;
- item 14: a legal output name of 250 bytes is written (the temporary name no longer adds to
  it), a dangling symbolic link at OUTPUT is not replaced without -f, and with -f the link
  itself is replaced (its target is never written);
- item 9: a write past `ulimit -f` is one clean line ("file size limit exceeded"), no output
  and no temporary file, the other formats kept (not a death by SIGXFSZ);
- item 15: file names with terminal escape sequences never reach stderr raw;
- item 20: messages start with "traceconv:", not the binary's path; format names in any
  case (-o JSON, -i ART, diff -o CSV, batch -o JSON); a bad value lists the valid ones (the
  palettes doc/cli.md lists, the writers --list-formats lists); with -f an existing second
  operand that is plainly not an input is the OUTPUT, while `-f -o json *.trace` still
  converts each trace beside itself.
Outputs are checked with readers we did not write (Python's json, protoc --decode_raw)."""
import json
import os
import re
import resource
import shutil
import signal
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

ctx = tclib.Ctx()
W = ctx.work
APP = os.path.join(ctx.source, "corpus", "app-startup.trace")  # 64 KB; its json is 650 KB
SMALL = os.path.join(ctx.source, "corpus", "open-at-end.trace")
EXE = os.path.abspath(ctx.traceconv)

# An atrace capture (ftrace text) and the HTML systrace.py writes around one: both readable by
# the systrace reader, one slice "draw" on RenderThread.
ATRACE = ("# tracer: nop\n#\n"
          "  RenderThread-1234  ( 1200) [001] ...1  100.000100: tracing_mark_write: B|1200|draw\n"
          "  RenderThread-1234  ( 1200) [001] ...1  100.000300: tracing_mark_write: E|1200\n")
SYSTRACE_HTML = ("<!DOCTYPE html>\n<html>\n<head><title>systrace</title></head>\n<body>\n"
                 '<script class="trace-data" type="application/text">\n' + ATRACE + "</script>\n</body>\n</html>\n")


def s(b):
    return b.decode(errors="replace")


def run(args, cwd=None, limit_fsize=None):
    return tclib.run_limited([EXE, *args], cwd=cwd, limit_fsize=limit_fsize)


def temps(d):
    return [n for n in os.listdir(d) if tclib.is_temp_name(n)]


def check_default_name_never_the_input():
    d = ctx.fresh("default-name")
    cap = os.path.join(d, "cap.txt")
    with open(cap, "w") as f:
        f.write(ATRACE)
    r = run(["-o", "report", "cap.txt"], cwd=d)
    ctx.eq(r.returncode, 0, f"-o report cap.txt: exit status ({s(r.stderr).strip()})")
    rep = os.path.join(d, "cap.report.txt")
    ctx.check(os.path.exists(rep) and "draw" in open(rep).read(), f"-o report cap.txt writes cap.report.txt: {os.listdir(d)}")
    ctx.eq(open(cap).read(), ATRACE, "-o report cap.txt: the input is untouched")
    # several formats: each gets a name that is not the input's
    r = run(["-o", "json,report,ir", "cap.txt"], cwd=d)
    ctx.eq(r.returncode, 0, "again without -f: cap.report.txt is its own earlier output, made again")
    r = run(["-f", "-o", "json,report,ir", "cap.txt"], cwd=d)
    ctx.eq(r.returncode, 0, f"-f -o json,report,ir cap.txt: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(d)), ["cap.ir.txt", "cap.json", "cap.report.txt", "cap.txt"], "several formats: the names")
    ctx.eq(tclib.json_slice_names(os.path.join(d, "cap.json")), ["draw"], "cap.json holds the capture's slice")
    # systrace.py's own HTML, converted to systrace HTML
    html = os.path.join(d, "x.html")
    with open(html, "w") as f:
        f.write(SYSTRACE_HTML)
    r = run(["-o", "systrace", "x.html"], cwd=d)
    ctx.eq(r.returncode, 0, f"-o systrace x.html: exit status ({s(r.stderr).strip()})")
    out = os.path.join(d, "x.systrace.html")
    ctx.check(os.path.exists(out) and "tracing_mark_write: B|1200|draw" in open(out).read(),
              f"-o systrace x.html writes x.systrace.html with the slice: {sorted(os.listdir(d))}")
    ctx.eq(open(html).read(), SYSTRACE_HTML, "-o systrace x.html: the input is untouched")
    ctx.eq(temps(d), [], "default names: no temporary file left")


def check_long_name():
    d = ctx.fresh("long-name")
    name = "n" * (250 - len(".json")) + ".json"  # 250 bytes: legal where names may have 255
    ctx.eq(len(name), 250, "the long name's length")
    if os.pathconf(d, "PC_NAME_MAX") < 255:
        print("SKIP(long name): the file system allows fewer than 255 bytes a name")
        return
    r = run(["-o", "json", APP, name], cwd=d)
    ctx.eq(r.returncode, 0, f"a 250-byte OUTPUT: exit status ({s(r.stderr).strip()[:200]})")
    p = os.path.join(d, name)
    ctx.check(os.path.exists(p) and len(tclib.json_slice_names(p)) > 0, "a 250-byte OUTPUT is written, a JSON trace")
    ctx.eq(temps(d), [], "a 250-byte OUTPUT: no temporary file left")


def check_symlinks():
    d = ctx.fresh("symlinks")
    link = os.path.join(d, "out.json")
    os.symlink("nowhere/target.json", link)  # dangling
    r = run(["-o", "json", APP, link])
    ctx.eq(r.returncode, 2, f"a dangling symlink at OUTPUT without -f: refused ({s(r.stderr).strip()})")
    ctx.check(os.path.islink(link) and os.readlink(link) == "nowhere/target.json",
              "a dangling symlink at OUTPUT without -f: the link is left as it was")
    ctx.check("symbolic link" in s(r.stderr) and "-f" in s(r.stderr), f"the refusal says why: {s(r.stderr)!r}")
    r = run(["-f", "-o", "json", APP, link])
    ctx.eq(r.returncode, 0, f"with -f: exit status ({s(r.stderr).strip()})")
    ctx.check(not os.path.islink(link) and len(tclib.json_slice_names(link)) > 0, "with -f the link itself is replaced by the output")
    ctx.check(not os.path.exists(os.path.join(d, "nowhere")), "with -f nothing is written where the link pointed")
    # a link to a regular file: with -f the link is replaced, its target never written
    target = os.path.join(d, "kept.txt")
    with open(target, "w") as f:
        f.write("keep me\n")
    link2 = os.path.join(d, "out2.json")
    os.symlink("kept.txt", link2)
    ctx.eq(run(["-o", "json", APP, link2]).returncode, 2, "a symlink to a file at OUTPUT without -f: refused")
    ctx.eq(run(["-f", "-o", "json", APP, link2]).returncode, 0, "a symlink to a file at OUTPUT with -f")
    ctx.eq(open(target).read(), "keep me\n", "the symlink's target is never written")
    ctx.check(not os.path.islink(link2), "with -f the link is replaced")
    ctx.eq(temps(d), [], "symlinks: no temporary file left")


def check_stdout_by_name():
    """OUTPUT /dev/stdout (a link to the command's own stdout, here a file): written to stdout, as it is;
    never taken for an input, never replaced. (Not tried with -f on an old build: it renamed its output
    over the name, which as root replaces the link in /dev.)"""
    d = ctx.fresh("stdout-name")
    src = os.path.join(d, "in.trace")  # a copy: an old build converts it beside itself
    shutil.copyfile(SMALL, src)
    redirected = os.path.join(d, "redirected.folded")
    with open(redirected, "wb") as f:
        r = subprocess.run([EXE, "-q", "-o", "folded", src, "/dev/stdout"], stdout=f, stderr=subprocess.PIPE)
    ctx.eq(r.returncode, 0, f"OUTPUT /dev/stdout, stdout a file: exit status ({s(r.stderr).strip()})")
    want = run(["-q", "-o", "folded", SMALL, "-"]).stdout
    ctx.check(len(want) > 0 and open(redirected, "rb").read() == want, "OUTPUT /dev/stdout: the output is in the file")
    ctx.check(os.path.islink("/dev/stdout"), "/dev/stdout is still a link")


def check_file_size_limit():
    d = ctx.fresh("fsize")
    src = os.path.join(d, "app.trace")
    shutil.copyfile(APP, src)
    limit = 200 << 10  # the json output (650 KB) passes it, perfetto (64 KB) does not
    r = run(["-o", "json", src], limit_fsize=limit)
    err = s(r.stderr).strip()
    ctx.eq(r.returncode, 1, f"past ulimit -f: exit status 1, not a signal ({err})")
    ctx.check(len(err.splitlines()) == 1 and "file size limit exceeded" in err and "app.trace" in err,
              f"past ulimit -f: one line naming the input and the cause: {err!r}")
    ctx.eq(sorted(os.listdir(d)), ["app.trace"], "past ulimit -f: no output and no temporary file")
    r = run(["-o", "json,perfetto", src], limit_fsize=limit)
    ctx.eq(r.returncode, 1, "several formats past ulimit -f: exit status")
    ctx.eq(sorted(os.listdir(d)), ["app.pftrace", "app.trace"], "several formats: the output that fitted is kept")
    ok = subprocess.run(["protoc", "--decode_raw"], stdin=open(os.path.join(d, "app.pftrace"), "rb"), capture_output=True)
    ctx.eq(ok.returncode, 0, "the kept perfetto output is a whole protobuf (protoc --decode_raw)")
    # diff's output too
    r = run(["diff", "-o", "csv", APP, SMALL, os.path.join(d, "d.csv")], limit_fsize=1000)
    ctx.eq(r.returncode, 1, f"diff past ulimit -f: exit status ({s(r.stderr).strip()})")
    ctx.check("file size limit exceeded" in s(r.stderr), f"diff past ulimit -f: the cause: {s(r.stderr)!r}")
    ctx.eq(temps(d) + [n for n in os.listdir(d) if n.endswith(".csv")], [], "diff past ulimit -f: nothing left")


def check_hostile_names():
    d = ctx.fresh("hostile")
    names = ["\x1b]0;pwned\x07.trace", "\x1b[2Jclear.trace", "bel\x07\x7f.trace", "c1\u009b31m.trace",
             "bad\xff.trace".encode("latin-1").decode("utf-8", "surrogateescape")]
    for n in names:
        with open(os.path.join(d, n).encode("utf-8", "surrogateescape"), "wb") as f:
            f.write(b"not a trace at all\n" * 3)
    good = os.path.join(d, "\x1b]2;title\x07good.trace")
    shutil.copyfile(SMALL, good)
    args = [os.path.join(d, n).encode("utf-8", "surrogateescape") for n in names]
    r = subprocess.run([EXE, "-o", "json", *args, good.encode()], capture_output=True)
    ctx.eq(r.returncode, 1, "hostile names: the bad inputs fail")
    ctx.check(tclib.terminal_safe(r.stderr), f"hostile file names: stderr holds no control byte: {r.stderr!r}")
    ctx.check(r.stderr.count(b"\n") == len(names) + 1, f"one line per input: {r.stderr!r}")
    ctx.check(b"\\x1b]0;pwned\\x07" in r.stderr, f"the escape is shown, visibly: {r.stderr!r}")
    r = subprocess.run([EXE, b"--\x1b]0;x\x07", b"-o", b"json"], capture_output=True)
    ctx.check(r.returncode == 2 and tclib.terminal_safe(r.stderr), f"a hostile option: escaped in the message: {r.stderr!r}")


def check_messages():
    r = run(["--bogus-option"])
    first = s(r.stderr).splitlines()[0] if r.stderr else ""
    ctx.check(r.returncode == 2 and first.startswith("traceconv: ") and "--bogus-option" in first,
              f"an unknown option: 'traceconv: ...', not the binary's path: {first!r}")
    for sub, prefix in (("batch", "traceconv batch: "), ("diff", "traceconv diff: ")):
        r = run([sub, "--bogus-option"])
        first = s(r.stderr).splitlines()[0] if r.stderr else ""
        ctx.check(r.returncode == 2 and first.startswith(prefix), f"{sub} --bogus-option: {first!r}")
    r = run(["-o"])
    ctx.check(r.returncode == 2 and "'-o' requires an argument" in s(r.stderr), f"-o without a value: {s(r.stderr)!r}")


def check_format_names_in_any_case():
    d = ctx.fresh("case")
    ref = run(["-q", "-o", "json", APP, "-"]).stdout
    for args in (["-o", "JSON"], ["-o", "Json", "-i", "ART"]):
        r = run(["-q", *args, APP, "-"])
        ctx.check(r.returncode == 0 and r.stdout == ref, f"{args}: the same output as -o json ({s(r.stderr).strip()})")
    r = run(["diff", "-q", "-o", "CSV", APP, SMALL])
    ctx.check(r.returncode == 0 and r.stdout.startswith(b"method,"), f"diff -o CSV: {s(r.stderr).strip()}")
    r = run(["batch", "-q", "-o", "JSON,Folded", "-O", os.path.join(d, "out"), SMALL])
    ctx.eq(r.returncode, 0, f"batch -o JSON,Folded: exit status ({s(r.stderr).strip()})")
    ctx.eq(sorted(os.listdir(os.path.join(d, "out"))), ["open-at-end.folded", "open-at-end.json", "traceconv-batch.json"],
           "batch -o JSON,Folded: the outputs")


def check_bad_values_list_the_valid_ones():
    listed = s(run(["--list-formats"]).stdout)
    writers = sorted(l.split()[0] for l in listed.split("writers")[1].splitlines()[1:] if l.strip())
    readers = sorted(l.split()[0] for l in listed.split("writers")[0].splitlines()[1:] if l.strip())
    variants = re.findall(r"(?:also -o |, )([a-z]+-[a-z]+) \(", listed.split("writers")[1])  # report-html, ...
    m = re.search(r"\(writers: ([^;)]*)", s(run(["-o", "nosuch", APP]).stderr))
    ctx.eq(sorted(m.group(1).split(", ")) if m else None, sorted(writers + variants),
           "an unknown -o lists the writers and their variants")
    m = re.search(r"\(readers: ([^;)]*)", s(run(["-i", "nosuch", "-o", "json", APP]).stderr))
    ctx.eq(sorted(m.group(1).split(", ")) if m else None, readers, "an unknown -i lists the readers")
    for opt, want in (("--weight", ["cpu", "wall"]), ("--sort", ["calls", "excl", "incl", "name"])):
        r = run([opt, "sideways", "-o", "report", APP, "-"])
        m = re.search(r"one of: ([^)]*)\)", s(r.stderr))
        ctx.check(r.returncode == 2 and m and sorted(m.group(1).split(", ")) == want,
                  f"{opt} sideways lists {want}: {s(r.stderr)!r}")
    page = open(os.path.join(ctx.source, "doc", "cli.md")).read()
    documented = re.search(r"`--colors PALETTE` \(([^)]*)\)", page).group(1)
    palettes = sorted(re.findall(r"`([a-z]+)`", documented))
    r = run(["--colors", "rainbow", "-o", "flamegraph", SMALL, "-"])
    m = re.search(r"one of: ([^)]*)\)", s(r.stderr))
    ctx.eq(sorted(m.group(1).split(", ")) if m else None, palettes, "--colors rainbow lists doc/cli.md's palettes")
    for p in palettes:
        ctx.eq(run(["-q", "--colors", p, "-o", "flamegraph", SMALL, "-"]).returncode, 0, f"--colors {p} is accepted")


def check_force_output_operand():
    d = ctx.fresh("force-operand")
    src = os.path.join(d, "in.trace")
    shutil.copyfile(APP, src)
    out = os.path.join(d, "out.bin")
    with open(out, "wb") as f:
        f.write(b"an old result\n")
    r = run(["-o", "perfetto", src, out])
    ctx.eq(r.returncode, 1, "without -f an existing out.bin is a second input (which fails)")
    ctx.eq(open(out, "rb").read(), b"an old result\n", "without -f: out.bin untouched")
    ctx.check(os.path.exists(os.path.join(d, "in.pftrace")), "without -f: in.trace converted beside itself")
    os.remove(os.path.join(d, "in.pftrace"))
    r = run(["-f", "-o", "perfetto", src, out])
    ctx.eq(r.returncode, 0, f"-f -o perfetto in.trace out.bin: exit status ({s(r.stderr).strip()})")
    dec = subprocess.run(["protoc", "--decode_raw"], stdin=open(out, "rb"), capture_output=True)
    ctx.check(dec.returncode == 0 and len(dec.stdout) > 1000, "with -f out.bin is the OUTPUT: a protobuf (protoc --decode_raw)")
    ctx.check(not os.path.exists(os.path.join(d, "in.pftrace")) and not os.path.exists(os.path.join(d, "out.pftrace")),
              f"with -f nothing is written beside the operands: {sorted(os.listdir(d))}")
    # a glob: a second trace, or a damaged one with the first's extension, stays an input
    for second in ("b.trace", "broken.trace"):
        g = ctx.fresh("force-glob-" + second.split(".")[0])
        shutil.copyfile(APP, os.path.join(g, "a.trace"))
        if second == "b.trace":
            shutil.copyfile(SMALL, os.path.join(g, second))
        else:
            with open(os.path.join(g, second), "wb") as f:
                f.write(b"\x00\x01 damaged beyond recognition" * 10)
        before = open(os.path.join(g, second), "rb").read()
        r = run(["-f", "-o", "json", "a.trace", second], cwd=g)
        ctx.eq(open(os.path.join(g, second), "rb").read(), before, f"-f -o json a.trace {second}: {second} untouched")
        ctx.check(len(tclib.json_slice_names(os.path.join(g, "a.json"))) > 0, f"-f -o json a.trace {second}: a.json beside a.trace")
        ctx.eq(r.returncode, 0 if second == "b.trace" else 1, f"-f -o json a.trace {second}: exit status")


def check_serve_file_size_limit():
    """serve is the same process: past ulimit -f a conversion answers 422 with the cause, and the
    server goes on (it died of SIGXFSZ)."""
    import urllib.error
    import urllib.request
    store = os.path.join(ctx.fresh("serve"), "store")  # made by serve itself (0700)
    p = subprocess.Popen([EXE, "serve", "--listen", "127.0.0.1:0", "--store", store], stderr=subprocess.PIPE,
                         preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (300 << 10, 300 << 10)))
    try:
        url = None
        while url is None:
            line = p.stderr.readline().decode(errors="replace")
            if not line:
                raise RuntimeError(f"serve ended before listening: {p.stderr.read()!r}")
            m = re.search(r"listening on (http://\S+)", line)
            url = m.group(1).rstrip("/") if m else None

        def post(to):
            req = urllib.request.Request(f"{url}/api/convert?to={to}", data=open(APP, "rb").read(), method="POST")
            try:
                with urllib.request.urlopen(req, timeout=60) as r:
                    return r.status, r.read()
            except urllib.error.HTTPError as e:
                return e.code, e.read()
        code, body = post("json")  # 650 KB: past the limit
        ctx.check(code == 422 and b"file size limit exceeded" in body, f"serve past ulimit -f: 422 with the cause: {code} {body[:200]!r}")
        code, body = post("perfetto")  # 64 KB: fits
        ctx.eq(code, 200, "serve goes on after a conversion past ulimit -f")
        ctx.eq([f for r, _, fs in os.walk(os.path.join(store, "tmp")) for f in fs], [], "serve: no temporary file left")
    finally:
        p.send_signal(signal.SIGTERM)
        p.wait(timeout=30)


for check in (check_default_name_never_the_input, check_long_name, check_symlinks, check_stdout_by_name,
              check_file_size_limit,
              check_hostile_names, check_messages, check_format_names_in_any_case,
              check_bad_values_list_the_valid_ones, check_force_output_operand, check_serve_file_size_limit):
    try:
        check()
    except Exception as e:  # a broken case is a failure of its own, the others still run
        ctx.fail(f"{check.__name__}: {e!r}")
ctx.done()
