#!/usr/bin/env python3
"""What every program of the command keeps to, however it is called (issue 38):

- standard output is checked as it is closed: --help, --version, --list-formats [--json],
  --probe and every subcommand's --help exit 1 with one line "PROG: standard output: No
  space left on device" when stdout is /dev/full (doc/cli.md, Exit status);
- a subcommand is a subcommand only as the first argument: `traceconv diff batch a.trace`
  compares a file named batch, `traceconv merge serve cap.txt` merges a file named serve
  (doc/cli.md, Subcommands);
- a default output name is never made from '-' (stdin): merge names its output after the
  other input, diff after NEW or, when NEW is stdin, writes its table to stdout;
- every integer option, the library's and the programs' own, refuses a value out of its
  range (2^32+1, 2^64, -1, 1e3, '', '12x') as a usage error (exit 2) naming the range,
  and runs nothing;
- merge refuses two inputs whose spans do not overlap once aligned, naming both spans,
  unless --force (doc/merge.md, Spans that do not overlap);
- a window that holds nothing (--until before the first event) is an empty output, exit 0,
  through every writer, alone, bottom-up and with --callers: a selection that keeps no row
  sorted a NULL list (qsort's base must not be NULL; UBSan found it in the sanitizer pass's
  fuzz replay, which runs this test too)."""
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def s(b):
    return b.decode(errors="replace")


def run(ctx, args, cwd, stdin=None, stdout=None, timeout=20):
    """The run, or one with returncode 'timeout' when it was still running (a server started)."""
    try:
        return subprocess.run([ctx.traceconv] + list(args), cwd=cwd, input=stdin,
                              stdout=stdout if stdout is not None else subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(e.cmd, "timeout", e.stdout or b"", e.stderr or b"")


def check_stdout_closed(ctx, w, has_serve):
    """Item 5: a failed write of stdout is exit 1 and one line, in every program."""
    commands = [["--list-formats"], ["--list-formats", "--json"], ["--help"], ["--version"],
                ["--probe", "app.trace"], ["diff", "--help"], ["merge", "--help"], ["batch", "--help"],
                ["-o", "json", "app.trace", "-"]]
    if has_serve:
        commands.append(["serve", "--help"])
    for args in commands:
        with open("/dev/full", "wb") as full:
            r = run(ctx, args, w, stdout=full)
        err = s(r.stderr).strip().splitlines()
        what = "traceconv " + " ".join(args) + " > /dev/full"
        ctx.eq(r.returncode, 1, f"{what}: exit status")
        ctx.eq(len(err), 1, f"{what}: one line on stderr ({err})")
        ctx.check(bool(err) and "No space left on device" in err[-1], f"{what}: the cause is said: {err}")
        if args[0] in ("batch", "serve"):
            ctx.check(bool(err) and err[-1].startswith(f"traceconv {args[0]}: standard output: "),
                      f"{what}: the program's name and the stream: {err}")
        elif args[0] != "-o":
            ctx.check(bool(err) and err[-1] == "traceconv: standard output: No space left on device",
                      f"{what}: the line: {err}")
    # written whole: the same commands into a pipe exit 0
    for args in (["--help"], ["--list-formats", "--json"], ["batch", "--help"]):
        r = run(ctx, args, w)
        ctx.check(r.returncode == 0 and len(r.stdout) > 100, f"traceconv {' '.join(args)}: exit {r.returncode}")


def check_subcommand_place(ctx, w, has_serve):
    """Item 6: only the first argument names a subcommand."""
    d = os.path.join(w, "names")
    os.makedirs(d)
    for name in ("batch", "serve", "diff", "merge"):
        shutil.copyfile(os.path.join(w, "app.trace"), os.path.join(d, name))
    shutil.copyfile(os.path.join(w, "app.atrace.txt"), os.path.join(d, "cap.txt"))
    shutil.copyfile(os.path.join(w, "app.trace"), os.path.join(d, "a.trace"))
    for sub in ("batch", "serve"):
        r = run(ctx, ["diff", sub, "a.trace"], d)
        ctx.eq(r.returncode, 0, f"traceconv diff {sub} a.trace: the file {sub} compared ({s(r.stderr)})")
        ctx.check(f"diff {sub} (" in s(r.stderr), f"traceconv diff {sub} a.trace: its summary: {s(r.stderr)}")
        r = run(ctx, ["merge", sub, "cap.txt"], d)
        ctx.eq(r.returncode, 0, f"traceconv merge {sub} cap.txt: the file {sub} merged ({s(r.stderr)})")
        ctx.check(os.path.exists(os.path.join(d, f"{sub}.merged.pftrace")),
                  f"traceconv merge {sub} cap.txt: {sub}.merged.pftrace (folder: {sorted(os.listdir(d))})")
    r = run(ctx, ["diff", "diff", "merge"], d)
    ctx.eq(r.returncode, 0, f"traceconv diff diff merge: files named diff and merge ({s(r.stderr)})")
    # after an option, a subcommand's name is an operand: a file for the conversion
    r = run(ctx, ["-o", "json", "batch"], d)
    ctx.eq(r.returncode, 0, f"traceconv -o json batch: the file batch converted ({s(r.stderr)})")
    ctx.check(os.path.exists(os.path.join(d, "batch.json")), "traceconv -o json batch: batch.json")
    r = run(ctx, ["-q", "diff", "a.trace", "batch"], d)
    ctx.eq(r.returncode, 2, "traceconv -q diff ...: a usage error (diff only first)")
    ctx.check("first argument" in s(r.stderr), f"traceconv -q diff ...: says where a subcommand goes: {s(r.stderr)}")
    if has_serve:
        r = run(ctx, ["-q", "serve"], d)
        ctx.eq(r.returncode, 2, "traceconv -q serve: no server started")


def clear(d, keep=("app.trace", "app.atrace.txt")):
    for n in os.listdir(d):
        if n not in keep:
            p = os.path.join(d, n)
            shutil.rmtree(p) if os.path.isdir(p) else os.remove(p)


def check_stdin_names(ctx, w):
    """Item 7: no default name is made from '-'."""
    d = os.path.join(w, "stdin")
    os.makedirs(d)
    for n in ("app.trace", "app.atrace.txt"):
        shutil.copyfile(os.path.join(w, n), os.path.join(d, n))
    with open(os.path.join(w, "app.trace"), "rb") as f:
        art = f.read()
    with open(os.path.join(w, "app.atrace.txt"), "rb") as f:
        cap = f.read()
    r = run(ctx, ["merge", "-o", "json", "-", "app.atrace.txt"], d, stdin=art)
    ctx.eq(r.returncode, 0, f"merge - app.atrace.txt: {s(r.stderr)}")
    ctx.eq(sorted(os.listdir(d)), ["app.atrace.merged.json", "app.atrace.txt", "app.trace"],
           "merge -o json - cap: named after the other input")
    clear(d)
    r = run(ctx, ["merge", "-o", "json", "app.trace", "-"], d, stdin=cap)
    ctx.eq(r.returncode, 0, f"merge app.trace -: {s(r.stderr)}")
    ctx.eq(sorted(os.listdir(d)), ["app.atrace.txt", "app.merged.json", "app.trace"], "merge app.trace -")
    clear(d)
    r = run(ctx, ["merge", "-o", "json,perfetto", "-", "app.atrace.txt"], d, stdin=art)
    ctx.eq(r.returncode, 0, f"merge -o json,perfetto - cap: {s(r.stderr)}")
    ctx.eq(sorted(os.listdir(d)), ["app.atrace.merged.json", "app.atrace.merged.pftrace", "app.atrace.txt",
                                   "app.trace"], "merge -o json,perfetto - cap")
    clear(d)
    # a plain conversion of stdin writes stdout, as before
    r = run(ctx, ["-o", "json", "-"], d, stdin=art)
    ctx.check(r.returncode == 0 and r.stdout.startswith(b"{"), f"-o json -: to stdout ({s(r.stderr)})")
    # diff: the graph is named after NEW; when NEW is stdin it goes to stdout, as a conversion's
    r = run(ctx, ["diff", "-o", "flamegraph", "-", "app.trace"], d, stdin=art)
    ctx.eq(r.returncode, 0, f"diff -o flamegraph - app.trace: {s(r.stderr)}")
    ctx.check(os.path.exists(os.path.join(d, "app.diff.svg")), "diff - app.trace: app.diff.svg")
    r = run(ctx, ["diff", "-o", "flamegraph", "app.trace", "-"], d, stdin=art)
    ctx.check(r.returncode == 0 and b"<svg" in r.stdout[:400], f"diff app.trace -: to stdout ({s(r.stderr)})")
    ctx.check(not any(n.startswith("-") for n in os.listdir(d)), f"no name from '-': {sorted(os.listdir(d))}")


# Each integer option of each program: (program args before the option, option, what else
# it needs to run). The values are out of range for all of them.
BAD_VALUES = ["4294967297", "18446744073709551616", "-1", "1e3", "", "12x"]


def int_options(has_serve):
    lib = ["--max-depth", "--max-threads", "--max-methods", "--max-events", "--threads", "-j", "--width"]
    sizes = ["--max-input", "--max-string", "--max-json", "--max-output"]
    rows = []
    for opt in lib + sizes:
        rows.append((["-o", "json"], opt, ["app.trace", "out.json"], None))
        rows.append((["diff"], opt, ["app.trace", "app.trace", "d.txt"], None))
        rows.append((["merge"], opt, ["app.trace", "app.atrace.txt", "m.pftrace"], None))
        rows.append((["batch", "-o", "json", "-O", "bo"], opt, ["app.trace"], None))
    rows.append((["batch", "-o", "json", "-O", "bo"], "--shard", ["app.trace"], "0/{}"))
    rows.append((["batch", "-o", "json", "-O", "bo"], "--shard", ["app.trace"], "{}/4"))
    if has_serve:
        for opt in ("-j", "--queue", "--header-timeout", "--keep", "--max-upload", "--keep-size", "--min-rate"):
            rows.append((["serve", "--store", "st"], opt, [], None))
        rows.append((["serve", "--store", "st"], "--listen", [], "127.0.0.1:{}"))
    return rows


# A size takes 2^32+1 (4G and a byte) and a ratio 12x; neither is out of its range.
IN_RANGE = {("--max-input", "4294967297"), ("--max-json", "4294967297"), ("--max-output", "4294967297"),
            ("--max-output", "12x"), ("--max-events", "4294967297"), ("--max-upload", "4294967297"),
            ("--keep-size", "4294967297"), ("--min-rate", "4294967297")}


def check_int_options(ctx, w, has_serve):
    """Item 9: every integer option parsed with its range; out of it, exit 2 naming the range."""
    d = os.path.join(w, "ints")
    os.makedirs(d)
    for n in ("app.trace", "app.atrace.txt"):
        shutil.copyfile(os.path.join(w, n), os.path.join(d, n))
    for pre, opt, post, form in int_options(has_serve):
        for v in BAD_VALUES:
            if (opt, v) in IN_RANGE:
                continue
            value = form.format(v) if form else v
            args = pre + [opt, value] + post
            what = "traceconv " + " ".join(a if a else "''" for a in args)
            r = run(ctx, args, d, timeout=10)
            err = s(r.stderr)
            ctx.eq(r.returncode, 2, f"{what}: exit status ({err.strip()})")
            first = err.splitlines()[0] if err else ""
            said = first.replace(value, "VALUE", 1) if value else first  # the range, not the value echoed
            ctx.check(re.search(r"\d[\dKMGx]* to \d", said) is not None,
                      f"{what}: the message names the range (N to M): {first!r}")
            left = sorted(n for n in os.listdir(d) if n not in ("app.trace", "app.atrace.txt", "bo", "st"))
            ctx.eq(left, [], f"{what}: nothing written")
            bo = os.path.join(d, "bo")
            if os.path.isdir(bo):
                ctx.eq(os.listdir(bo), [], f"{what}: batch converted nothing")
            clear(d)
    # the forms a number never has: a sign, spaces, a fraction (the programs' own options)
    for pre, opt, post, form in [(["batch", "-o", "json", "-O", "bo"], "--shard", ["app.trace"], "0/{}")] + \
            ([(["serve", "--store", "st"], "--queue", [], None), (["serve", "--store", "st"], "--keep", [], None),
              (["serve", "--store", "st"], "--listen", [], "127.0.0.1:{}")] if has_serve else []):
        for v in ("+4", " 4", "4 ", "4.0"):
            value = form.format(v) if form else v
            r = run(ctx, pre + [opt, value] + post, d, timeout=10)
            ctx.eq(r.returncode, 2, f"{' '.join(pre)} {opt} {value!r}: exit status ({s(r.stderr).strip()})")
    shutil.rmtree(os.path.join(d, "bo"), ignore_errors=True)
    # in range, the same options still run
    r = run(ctx, ["batch", "-o", "json", "-O", "bo", "--shard", "0/1", "app.trace"], d)
    ctx.eq(r.returncode, 0, f"batch --shard 0/1: {s(r.stderr)}")


def writers(ctx, w):
    out = s(run(ctx, ["--list-formats"], w).stdout)
    rows = out.split("writers", 1)[1].splitlines()[1:] if "writers" in out else []
    names = []
    for r in rows:
        if r.strip() and not r.startswith(" " * 8):
            names.append(r.split()[0])
            names += re.findall(r"(?:^|\], ) ?([a-z][a-z-]+) \(\.", r.split("also -o", 1)[1]) if "also -o" in r else []
    return names


def check_empty_window(ctx, w):
    src = os.path.join(ctx.source, "tests", "json", "samples-before-events.json")
    names = writers(ctx, w)
    ctx.check(len(names) >= 10, f"--list-formats lists the writers: {names}")
    for name in names:
        for extra in ([], ["--reverse"], ["--callers", "*"]):
            out = os.path.join(w, "empty-window.out")
            if os.path.exists(out):
                os.remove(out)
            r = run(ctx, ["-q", "-o", name, "--until", "1us"] + extra + [src, out], w, timeout=60)
            err = s(r.stderr)
            if "not with" in err or "only for" in err or "does not take" in err:
                continue  # an option this writer does not take: a usage error of its own, tested elsewhere
            ctx.check(r.returncode == 0 and "runtime error" not in err and os.path.exists(out),
                      f"-o {name} --until 1us {' '.join(extra)}: an empty output, exit 0 ({r.returncode}: {err.strip()[-300:]})")


def check_merge_spans(ctx, w):
    """Item 8: inputs that do not overlap once aligned are refused, naming both spans."""
    d = os.path.join(w, "spans")
    os.makedirs(d)
    for n in ("app.trace", "app.atrace.txt"):
        shutil.copyfile(os.path.join(w, n), os.path.join(d, n))
    far = "-94608000s"  # three years before: the method trace's span ends long before the capture's
    r = run(ctx, ["merge", "-o", "json", "--offset", far, "app.trace", "app.atrace.txt"], d)
    err = s(r.stderr).strip().splitlines()
    ctx.eq(r.returncode, 1, f"merge --offset {far}: exit status ({err})")
    ctx.eq(len(err), 1, f"merge --offset {far}: one line ({err})")
    ctx.check(bool(err) and "do not overlap" in err[0] and "app.trace" in err[0] and "app.atrace.txt" in err[0]
              and "--force" in err[0], f"merge --offset {far}: the line names both spans and --force: {err}")
    ctx.eq(sorted(os.listdir(d)), ["app.atrace.txt", "app.trace"], f"merge --offset {far}: nothing written")
    r = run(ctx, ["merge", "-f", "-o", "json", "--offset", far, "app.trace", "app.atrace.txt"], d)
    ctx.eq(r.returncode, 0, f"merge -f --offset {far}: merged ({s(r.stderr)})")
    ctx.check("merge-disjoint" in s(r.stderr), f"merge -f --offset {far}: the warning said: {s(r.stderr)}")
    # the marker's offset overlaps: no word of it
    clear(d)
    r = run(ctx, ["merge", "-o", "json", "app.trace", "app.atrace.txt"], d)
    ctx.check(r.returncode == 0 and "overlap" not in s(r.stderr), f"merge by the marker: {s(r.stderr)}")


def main():
    ctx = tclib.Ctx()
    w = ctx.work
    for n in ("app.trace", "app.atrace.txt"):
        shutil.copyfile(os.path.join(ctx.corpus, "merge", n), os.path.join(w, n))
    version = s(run(ctx, ["--version"], w).stdout)
    has_serve = "serve: yes" in version
    check_stdout_closed(ctx, w, has_serve)
    check_subcommand_place(ctx, w, has_serve)
    check_stdin_names(ctx, w)
    check_int_options(ctx, w, has_serve)
    check_merge_spans(ctx, w)
    check_empty_window(ctx, w)
    ctx.done()


if __name__ == "__main__":
    main()
