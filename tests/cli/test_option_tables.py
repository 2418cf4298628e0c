#!/usr/bin/env python3
"""One description per format (issue 23, items 1 and 2): `traceconv --list-formats --json`,
read with Python's json, against everything said to come from the same tables, and against
what the program does.

1. The document: readers, writers and the diff's formats with their extensions and options,
   writers with their MIME type and variants, the options of every conversion; each option
   with a name, a type among bool/int/float/size/duration/enum/string/path, a default, a help
   line and, for an enum, its choices.
2. Help: every option (but the hidden ones) is in `traceconv --help` (the core's, readers' and
   writers'), `traceconv batch --help` (the same) and `traceconv diff --help` (the core's and
   the diff's), with its value's name, its help line and its default; a hidden one is in none.
3. The man page names every option and every choice of an enum.
4. The bash completion, run in bash against this traceconv, offers every option of each
   command, an enum's choices after it, files after a path option, the writers and their
   variants after -o, the diff's formats after `diff -o`, the readers after -i.
5. `traceconv serve`: GET /api/formats is the same document plus a "serve" member whose
   options are the writers' and the core's that are neither limits, read by the open nor
   hidden, nor `threads` (serve converts each on one thread); the API takes each variant
   as to= and answers with the variant's MIME type; an unknown query option is refused
   naming them.
6. Behaviour: every option of every table is accepted with a valid value of its type (every
   choice of an enum) by the command that reads it, and a bad value (a number that is none, a
   range's end + 1, a choice that is none) is refused as a usage error naming the option, an
   enum's message listing exactly its choices; giving an option its listed default changes no
   byte of the output (so the defaults shown are the real ones).
7. Variants: their extensions are distinct (one input's outputs never share a name), `-o
   VARIANT` writes what `-o WRITER --OPTION` does, under the variant's extension by default,
   and carries the variant's mark (what tells traceconv's own output from an original trace).
8. The fuzz targets reach every option (`replay_convert --check-options`).

Before this (traceconv 0.1.0 of /work/baseline23) there was no --list-formats --json: every
part fails there at the first step.
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402

TYPES = {"bool", "int", "float", "size", "duration", "enum", "string", "path"}


def s(b):
    return b.decode(errors="replace")


def flat(text):
    """Whitespace collapsed: help entries wrap at any word."""
    return " ".join(text.split())


class Tables:
    def __init__(self, doc):
        self.doc = doc
        self.core = doc["options"]
        self.readers, self.writers, self.diffs = doc["readers"], doc["writers"], doc["diff"]

    def rows(self, kinds):
        """(format or None, option) of the tables of kinds: core, readers, writers, diff."""
        out = [(None, o) for o in self.core] if "core" in kinds else []
        for kind in ("readers", "writers", "diff"):
            if kind in kinds:
                out += [(f, o) for f in getattr(self, kind if kind != "diff" else "diffs") for o in f["options"]]
        return out

    def keys(self, kinds):
        return {o["name"] for _, o in self.rows(kinds)}


def check_document(ctx, t):
    for kind in ("readers", "writers", "diff"):
        ctx.check(t.doc[kind], f"{kind} listed")
        for f in t.doc[kind]:
            ctx.check(isinstance(f["name"], str) and isinstance(f["extensions"], list) and f["extensions"],
                      f"{kind} {f.get('name')}: name and extensions")
            if kind != "readers":
                ctx.check(f["mime"] and f["variants"] and f["variants"][0]["name"] == f["name"]
                          and f["variants"][0]["option"] is None, f"{f['name']}: mime, the default variant first")
    ctx.check(t.core, "the options of every conversion listed")
    for fmt, o in t.rows(("core", "readers", "writers", "diff")):
        where = f"{fmt['name'] if fmt else 'core'}: {o.get('name')}"
        ctx.check(o["type"] in TYPES, f"{where}: type {o['type']}")
        ctx.check(isinstance(o["help"], str) and o["help"] and "default" in o, f"{where}: help and default")
        ctx.check((o["type"] == "enum") == ("choices" in o), f"{where}: choices exactly for an enum")
        ctx.check(o.get("repeatable", True) is True, f"{where}: repeatable is true where given")
    # one key, one meaning: the rows of a key in several tables agree but for help and default
    seen = {}
    for fmt, o in t.rows(("core", "readers", "writers", "diff")):
        shape = (o["type"], tuple(o.get("choices", ())), o.get("min"), o.get("max"), o.get("open_time"),
                 o.get("limit"), o.get("hidden"))
        ctx.check(seen.setdefault(o["name"], shape) == shape, f"--{o['name']}: every table gives it one type")


# -- 2. help ----------------------------------------------------------------------------------

def entry(o):
    """How a --help shows the row, whitespace collapsed."""
    left = f"--{o['name']}" + (f" {o['arg']}" if o.get("arg") else "")
    default = o["default"]
    if default is not None:
        q = '"' if o["type"] == "string" else ""
        return f"{left} {o['help']} (default {q}{default}{q})"
    return f"{left} {o['help']}"


def check_help(ctx, t):
    for args, kinds in ((["--help"], ("core", "readers", "writers")), (["batch", "--help"], ("core", "readers", "writers")),
                        (["diff", "--help"], ("core", "diff"))):
        text = flat(s(ctx.run(args, check_rc=0).stdout))
        for fmt, o in t.rows(kinds):
            where = f"traceconv {' '.join(args)}: {fmt['name'] if fmt else 'core'} --{o['name']}"
            if o.get("hidden"):
                ctx.check(f"--{o['name']} " not in text, f"{where}: hidden, not shown")
            elif args == ["--help"] and o["name"] == "threads":  # the command's -j entry is it: listed once
                ctx.eq(text.count("--threads N"), 1, f"{where}: listed once")
                ctx.check("-j, --jobs N, --threads N" in text, f"{where}: in the -j entry")
            else:
                ctx.check(entry(o) in text, f"{where}: shown as {entry(o)!r}")


# -- 3. the man page ----------------------------------------------------------------------------

def check_man(ctx, t):
    with open(os.path.join(ctx.source, "doc", "traceconv.1"), encoding="utf-8") as f:
        man = f.read().replace("\\-", "-").replace("\\fB", "").replace("\\fR", "").replace("\\fI", "")
    for fmt, o in t.rows(("core", "readers", "writers", "diff")):
        if o.get("hidden"):
            continue
        ctx.check(f"--{o['name']}" in man, f"man page: --{o['name']}")
        for c in o.get("choices", ()):
            ctx.check(re.search(rf"\b{re.escape(c)}\b", man), f"man page: --{o['name']} {c}")
    for w in t.writers:
        for v in w["variants"][1:]:
            ctx.check(v["name"] in man, f"man page: -o {v['name']}")


# -- 4. the completion --------------------------------------------------------------------------

def complete(ctx, *words):
    comp = os.path.join(ctx.source, "doc", "traceconv.bash-completion")
    script = (f'source "{comp}"; COMP_WORDS=("{os.path.abspath(ctx.traceconv)}" {" ".join(words)}); COMP_CWORD={len(words)}; '
              f'cd "{ctx.work}"; _traceconv; printf "%s\\n" "${{COMPREPLY[@]}}"')
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True)
    return set(r.stdout.split())


def check_completion(ctx, t):
    open(os.path.join(ctx.work, "a-file.txt"), "w").close()
    for cmd, kinds in (((), ("core", "readers", "writers")), (("batch",), ("core", "readers", "writers")),
                       (("diff",), ("core", "diff"))):
        offered = complete(ctx, *cmd, "--")
        for fmt, o in t.rows(kinds):
            if not o.get("hidden"):
                ctx.check(f"--{o['name']}" in offered, f"completion {' '.join(cmd)} --: --{o['name']}")
    for fmt, o in t.rows(("core", "readers", "writers", "diff")):
        if o["type"] == "enum":
            ctx.eq(complete(ctx, f"--{o['name']}", "''"), set(o["choices"]), f"completion --{o['name']}")
        elif o["type"] == "path" and not o.get("hidden"):
            ctx.check("a-file.txt" in complete(ctx, f"--{o['name']}", "''"), f"completion --{o['name']}: files")
    names = {v["name"] for w in t.writers for v in w["variants"]}
    ctx.eq(complete(ctx, "-o", "''"), names, "completion -o: the writers and their variants")
    ctx.eq(complete(ctx, "diff", "-o", "''"), {f["name"] for f in t.diffs}, "completion diff -o")
    ctx.eq(complete(ctx, "-i", "''"), {f["name"] for f in t.readers}, "completion -i")


# -- 5. serve -----------------------------------------------------------------------------------

def check_serve(ctx, t, trace):
    srv = serve_lib.Server(ctx.traceconv, ctx.work)
    try:
        with urllib.request.urlopen(srv.url + "api/formats", timeout=30) as resp:
            served = json.load(resp)
        mine = served.pop("serve", None)
        ctx.eq(served, t.doc, "GET /api/formats: traceconv --list-formats --json, and its serve member")
        want = {o["name"] for fmt, o in t.rows(("writers",))}
        # threads: serve converts each on one thread (its workers are its parallelism; issue 26)
        want |= {o["name"] for o in t.core
                 if not (o.get("open_time") or o.get("limit") or o.get("hidden")) and o["name"] != "threads"}
        ctx.eq(set(mine["options"]) if mine else None, want, "/api/formats: the API's options")
        with open(trace, "rb") as f:
            data = f.read()
        for w in t.writers:
            for v in w["variants"]:
                st, h, body = api_request(srv, f"to={v['name']}", data)
                ctx.check(st == 200 and h.get("content-type") == v["mime"],
                          f"API to={v['name']}: {st}, {h.get('content-type')} (want {v['mime']})")
                if v["option"]:
                    st2, h2, body2 = api_request(srv, f"to={w['name']}&{v['option']}=1", data)
                    ctx.check(st2 == 200 and h2.get("content-type") == v["mime"] and body2 == body,
                              f"API to={w['name']}&{v['option']}=1: to={v['name']}'s bytes and type")
        st, h, body = api_request(srv, "to=json&bogus=1", data)
        m = re.search(r"unknown option 'bogus' \(options: ([^)]*)\)", s(body))
        ctx.check(st == 400 and m and set(m.group(1).split(", ")) == want,
                  f"API: an unknown option lists the API's: {st} {s(body)!r}")
    finally:
        srv.stop()


def api_request(srv, query, body):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=120)
    try:
        c.request("POST", "/api/convert?" + query, body=body, headers={"Content-Type": "application/octet-stream"})
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


# -- 6. behaviour -------------------------------------------------------------------------------

def command_for(fmt, kind, base, new, opts=()):
    """The command that reads a row's option, with opts: its writer, its diff format; json for
    the others."""
    if kind == "diff":
        return ["diff", "-q", *opts, "-o", fmt["name"], base, new, "-"]
    return ["-q", *opts, "-o", fmt["name"] if kind == "writers" else "json", new, "-"]


def valid_values(o, ctx):
    t = o["type"]
    if t == "bool":
        return [None]
    if t == "enum":
        return o["choices"]
    if t in ("int", "size"):
        return [str(o["min"]), str(o["max"])] if "max" in o else ["1000", "2K" if t == "size" else "7"]
    if t == "float":
        return ["0", "0.5"]
    if t == "duration":
        return ["1us", "1.5ms"]
    if t == "path":  # a readable file: a ProGuard mapping (what --deobfuscate reads)
        return [sorted(glob.glob(os.path.join(ctx.source, "tests", "fuzz", "deobf-seeds", "*")))[0]]
    if o["name"] in METHOD_PATTERNS:  # a pattern must name a method of the input (else exit 2)
        return ["*"]
    return ["some <text>"]


# the options that name methods (select.c): a pattern that matches no method is a usage error
METHOD_PATTERNS = ("focus", "ignore", "callers")


def bad_values(o):
    t = o["type"]
    if t == "enum":
        return ["nosuch"]
    if t == "duration":
        return ["abc", "-1ms", "5", "1.5ns", "1e3s"]
    if t in ("int", "size", "float"):
        return ["abc", "-1"] + ([str(o["max"] + 1)] if "max" in o else [])
    return []  # a flag takes no value on the command line; any text is a string or a path


def check_behaviour(ctx, t, base, new):
    for kind in ("core", "readers", "writers", "diff"):
        for fmt, o in t.rows((kind,)):
            where = f"{fmt['name'] if fmt else 'core'} --{o['name']}"
            for v in valid_values(o, ctx):
                args = [f"--{o['name']}"] + ([] if v is None else [v])
                r = ctx.run(command_for(fmt, kind, base, new, args))
                ctx.check(r.returncode != 2 and b"bad value" not in r.stderr and b"unrecognized" not in r.stderr,
                          f"{where} {v}: accepted ({r.returncode}: {s(r.stderr).strip()[:200]})")
            for v in bad_values(o):
                r = ctx.run(command_for(fmt, kind, base, new, [f"--{o['name']}={v}"]))
                err = s(r.stderr)
                ctx.check(r.returncode == 2 and f"bad value '{v}' for option '{o['name']}'" in err,
                          f"{where} {v}: refused as a usage error ({r.returncode}: {err.strip()[:200]})")
                if o["type"] == "enum":
                    m = re.search(r"one of: ([^)]*)\)", err)
                    ctx.eq(m.group(1).split(", ") if m else None, o["choices"], f"{where} {v}: the choices listed")


def check_defaults(ctx, t, base, new):
    """Giving an option its listed default writes the same bytes as leaving it out."""
    for kind in ("core", "readers", "writers", "diff"):
        for fmt, o in t.rows((kind,)):
            d = o["default"]
            if d is None or (o["type"] == "bool" and d != "1"):
                continue  # a flag can only be turned on
            args = [f"--{o['name']}"] + ([] if o["type"] == "bool" else [d])
            plain = ctx.run(command_for(fmt, kind, base, new))
            given = ctx.run(command_for(fmt, kind, base, new, args))
            ctx.check(plain.returncode == 0 and given.stdout == plain.stdout,
                      f"{fmt['name'] if fmt else 'core'} --{o['name']} {d}: the default, the same bytes "
                      f"({plain.returncode}, {given.returncode}: {s(given.stderr).strip()[:200]})")


# -- 7. variants --------------------------------------------------------------------------------

def check_variants(ctx, t, trace):
    exts = [v["extension"] for w in t.writers for v in w["variants"]]
    ctx.eq(len(exts), len(set(exts)), f"the writers' variants have distinct extensions: {exts}")
    d = os.path.join(ctx.work, "variants")
    os.makedirs(d)
    src = os.path.join(d, "in.trace")
    shutil.copyfile(trace, src)
    for w in t.writers:
        ctx.eq(w["extensions"][0], w["variants"][0]["extension"], f"{w['name']}: its first extension is its default's")
        for v in w["variants"]:
            r = ctx.run(["-q", "-o", v["name"], src])
            out = os.path.join(d, "in." + v["extension"])
            if not ctx.check(r.returncode == 0 and os.path.exists(out), f"-o {v['name']}: in.{v['extension']} "
                                                                            f"({s(r.stderr).strip()})"):
                continue
            with open(out, "rb") as f:
                data = f.read()
            os.remove(out)
            if v["option"]:
                alias = ctx.run(["-q", "-o", w["name"], f"--{v['option']}", src, "-"]).stdout
                ctx.check(alias == data, f"-o {v['name']} writes what -o {w['name']} --{v['option']} does")
            mark = MARKS.get(v["name"])
            if mark is not None:
                ctx.check(mark.encode() in data[:8192] + data[-8192:], f"-o {v['name']}: carries its mark {mark!r}")
    r = ctx.run(["-o", "report", "--csv", "--html", src, "-"])
    err = s(r.stderr)
    ctx.check(r.returncode == 2 and "'csv' and 'html' cannot be used together" in err and "report-csv,report-html" in err,
              f"--csv --html: refused, saying how to get both: {err.strip()}")
    r = ctx.run(["-q", "-o", "report-csv,report-html", src])
    ctx.check(r.returncode == 0 and os.path.exists(os.path.join(d, "in.csv"))
              and os.path.exists(os.path.join(d, "in.report.html")), "-o report-csv,report-html: both, one read")


# what each of traceconv's outputs starts or ends with, as its format defines it (the
# doc/cli.md's overwrite rules): written here independently of the descriptors' rows
MARKS = {"json": '"generator":"traceconv ', "ir": "traceconv-ir ", "systrace": " (traceconv)</title>",
         "systrace-text": "# traceconv ", "report": "# traceconv ", "report-csv": "thread,tid,method,calls,",
         "report-html": " (traceconv)</title>", "speedscope": '"exporter":"traceconv@'}


# -- 8. fuzz ------------------------------------------------------------------------------------

def check_fuzz(ctx):
    replay = os.path.join(os.path.dirname(os.path.abspath(ctx.traceconv)), "replay_convert")
    if ctx.check(os.path.exists(replay), f"{replay} built"):
        r = subprocess.run([replay, "--check-options"], capture_output=True, text=True)
        ctx.check(r.returncode == 0, f"replay_convert --check-options: {r.stdout.strip()} {r.stderr.strip()}")


def main():
    ctx = tclib.Ctx()
    r = ctx.run(["--list-formats", "--json"])
    try:
        t = Tables(json.loads(r.stdout))
    except ValueError:
        ctx.fail(f"--list-formats --json: not JSON (exit {r.returncode}: {s(r.stderr).strip()})")
        ctx.done()
        return
    base = os.path.join(ctx.corpus, "open-at-end.trace")
    new = os.path.join(ctx.corpus, "exits-without-enter.trace")
    check_document(ctx, t)
    check_help(ctx, t)
    check_man(ctx, t)
    check_completion(ctx, t)
    check_variants(ctx, t, new)
    check_behaviour(ctx, t, base, new)
    check_defaults(ctx, t, base, new)
    check_serve(ctx, t, new)
    check_fuzz(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
