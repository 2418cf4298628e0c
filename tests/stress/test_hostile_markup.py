#!/usr/bin/env python3
"""Hostile names through every output that embeds them in markup or script
(issue 22, item 1): method, class, thread and process names, --process-name
and --title holding `<|script>`, `</script>`, `<!--`, `<!-` at a field's end
(the thread column is followed by `-tid`), `<` at a field's end, `]]>`,
quotes, `&`, `<img src=x onerror=...>`, U+2028/U+2029, U+FFFF, U+FFFE, a
UTF-8-encoded surrogate (ED A0 80), C0 and C1 controls, bytes that are not
UTF-8, NUL (where the reader keeps it), read by every reader that carries
names: the IR text, Chrome JSON, systrace text, RheaTrace text and an ART
trace made by tracegen.

Outputs and their readers (none of them ours, but for the round trip):
- `-o systrace` (HTML): the trace-data blocks, cut out of the file line by
  line the way Perfetto's systrace parser does (SYSTRACE.md §4: a block ends
  at the first line holding `</script>`, and after the ftrace block parsing
  stops), are exactly two, hold every line, and equal the `--text` output
  with a backslash put between `<` and a `/`, `!` or `script` (any case)
  after it (the script-data rule, stated here independently); no `</script`,
  `<script` (any case) or `<!` is left in them; read back through our systrace reader, the names are
  the input's with the writer's documented rewrites and that rule.
- `-o flamegraph --title T --app-package P` and `diff -o flamegraph --title T`:
  strict XML (expat); no element or `on*` attribute the payload would make;
  one script; the title's text is T, the legend's app P, as the markup rule
  shows them.
- `-o report --html`: strict XML (the page is XHTML-compatible); no element
  or `on*` attribute from a name; one script; every name of the IR input
  shown as the rule's visible form says.
- `-o dot`: `dot -Tsvg` writes strict XML (U+FFFF, C0, C1, invalid UTF-8
  used to break it); every name of the IR input is a node's text.
- `traceconv serve`: a page upload of the hostile IR trace under a hostile
  file name: the result page (HTML parsed by Python's html.parser) has no
  element or attribute from the name and shows it as text; the same for the
  error page of an upload that does not convert, and its JSON error
  (Accept: application/json) holds no markup character.
The browser side (headless Chromium, no CSP) is test_hostile_markup_browser.py.
"""
import html.parser
import json
import os
import re
import subprocess
import sys
import uuid
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import serve_lib  # noqa: E402
import tclib  # noqa: E402

FFFD = "\ufffd"
# method (slice) names; every reader below takes them as they are (bytes)
METHODS = [
    b"x<|script><img src=x onerror=window.pwned=1>",
    b"</script><script>window.pwned=2</script>",
    b"</SCRIPT ><!--<script>",
    b"end<!-",
    b"a<",
    b"]]><![CDATA[x]]>",
    b"q\"uo'te&amp;&lt;&",
    b"<img src=x onerror=window.pwned=3>",
    "ls\u2028ps\u2029".encode(),
    "nc\uffff\ufffe\ufdd0".encode(),
    b"sur\xed\xa0\x80",
    b"ctl\x01\x1b[2J\x7f\xc2\x85",
    b"bad\xff\xc0\xaf\xf0\x9f\x98",
    b"back\\slash <init>",
]
NUL_NAME = b"nul\x00byte<!"  # for the readers that keep a NUL (it becomes U+FFFD)
# thread names: "<!-" and "<" at the end of the task column, which "-tid" follows
THREADS = [b"end<!-", b"t</script><img src=x onerror=window.pwned=4>", b"a<"]
PROCESS = b"p</script><!--<img src=x onerror=window.pwned=5>"
TITLE = b"T</script><img src=x onerror=window.pwned=6>]]>&\xe2\x80\xa8\xef\xbf\xbf\x01\xff"
# --app-package: the flame graph's legend shows it as given (short enough not to be cut)
APP_PACKAGE = b"</script><img src=x onerror=window.pwned=7>&\x01\xff"
PID = 4242
TIDS = [PID, PID + 1, PID + 2]
SVG = "{http://www.w3.org/2000/svg}"
PAYLOAD_TAGS = {"img", "iframe", "object", "embed", "image", "foreignObject", "use"}


# ---- the inputs ------------------------------------------------------------------------

def json_literal(b):
    """A JSON string literal of the bytes b: '"' '\\' and C0 escaped, every other byte as it is
    (readers take the bytes that are not UTF-8 as they are)."""
    out = bytearray(b'"')
    for c in b:
        if c in (0x22, 0x5C):
            out += b"\\" + bytes([c])
        elif c < 0x20:
            out += b"\\u%04x" % c
        else:
            out.append(c)
    return bytes(out + b'"')


def calls():
    """(thread index, method index) of each call: every method on every thread, in turn."""
    return [(t, m) for t in range(len(THREADS)) for m in range(len(METHODS))]


def make_ir(path):
    lines = [b"traceconv-ir 1", b"trace clock=dual has_wall=1 has_cpu=1 pid=%d start_ns=0" % PID,
             b"process " + json_literal(PROCESS)]
    for i, name in enumerate(THREADS):
        lines.append(b"thread %d tid=%d records=%d name=" % (i, TIDS[i], 2 * len(METHODS)) + json_literal(name))
    for i, name in enumerate(METHODS):
        lines.append(b"method %d id=0 name=" % i + json_literal(name))
    ts = 0
    for t, m in calls():
        lines += [b"B t=%d m=%d d=0 ts=%d cpu=%d" % (t, m, ts, ts),
                  b"E t=%d m=%d d=0 ts=%d cpu=%d" % (t, m, ts + 1000, ts + 500)]
        ts += 2000
    write(path, b"\n".join(lines) + b"\n")


def make_json(path):
    ev = [b'{"ph":"M","name":"process_name","pid":%d,"tid":%d,"args":{"name":%s}}' % (PID, PID, json_literal(PROCESS))]
    for i, name in enumerate(THREADS):
        ev.append(b'{"ph":"M","name":"thread_name","pid":%d,"tid":%d,"args":{"name":%s}}' % (PID, TIDS[i],
                                                                                                json_literal(name)))
    ts = 0
    for t, m in calls():
        ev.append(b'{"ph":"B","name":%s,"pid":%d,"tid":%d,"ts":%d}' % (json_literal(METHODS[m]), PID, TIDS[t], ts))
        ev.append(b'{"ph":"E","pid":%d,"tid":%d,"ts":%d}' % (PID, TIDS[t], ts + 1))
        ts += 2
    write(path, b'{"traceEvents":[\n' + b",\n".join(ev) + b"\n]}\n")


def atrace_lines(prefix):
    """The B/E payload lines of every call, with prefix(thread index, µs) before each payload."""
    out, us = [], 1
    for t, m in calls():
        out.append(prefix(t, us) + b"B|%d|" % PID + METHODS[m])
        out.append(prefix(t, us + 1) + b"E|%d" % PID)
        us += 2
    t0 = len(THREADS) - 1  # one more call with a NUL in its name
    out += [prefix(t0, us) + b"B|%d|" % PID + NUL_NAME, prefix(t0, us + 1) + b"E|%d" % PID]
    return out


def make_systrace(path):
    """ftrace text; the thread whose tid is the pid names the process."""
    def prefix(t, us):
        return b"%16s-%d (%5d) [000] ...1 %d.%06d: tracing_mark_write: " % (THREADS[t], TIDS[t], PID,
                                                                           100 + us // 1000000, us % 1000000)
    head = [b"# tracer: nop", b"#", b"#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION",
            b"#              | |        |      |   ||||       |         |"]
    write(path, b"\n".join(head + atrace_lines(prefix)) + b"\n")


def make_rhea(path):
    """A RheaTrace 2.x text dump (9 decimals, all threads)."""
    def prefix(t, us):
        return b"%d.%09d %d: " % (100 + us // 1000000, (us % 1000000) * 1000, TIDS[t])
    write(path, b"\n".join([b"512|TRACE_START|100000000000|%d|2147483647|2|18316" % PID] + atrace_lines(prefix))
          + b"\n")


def scn_quote(b):
    """A tracegen "quoted string" (escapes \\\\ \\" \\xHH)."""
    out = '"'
    for c in b:
        if c in (0x22, 0x5C):
            out += "\\" + chr(c)
        elif c < 0x20 or c >= 0x7F:
            out += "\\x%02X" % c
        else:
            out += chr(c)
    return out + '"'


def make_art(ctx, path):
    """An ART trace (tracegen): hostile class, method and signature names (no TAB or LF: the
    key file's separators), hostile thread names. None when tracegen is missing."""
    art_names = [n for n in METHODS + [NUL_NAME] if b"\t" not in n and b"\n" not in n and utf8(n)]
    lines = ["version 3", "clock dual", f"pid {PID}"]
    for i, n in enumerate(art_names):
        lines.append(f"method m{i} {scn_quote(b'C' + n)} {scn_quote(n)} {scn_quote(b'(' + n + b')V')} null")
    for t, name in enumerate(THREADS):
        lines.append(f"thread {TIDS[t]} {scn_quote(name)} {{")
        lines += [f"  call m{i} 10" for i in range(len(art_names))]
        lines.append("}")
    scn = path + ".scn"
    with open(scn, "w", encoding="ascii") as f:
        f.write("\n".join(lines) + "\n")
    if not ctx.tracegen or not os.path.exists(ctx.tracegen):
        ctx.fail("tracegen is missing: the ART input cannot be made")
        return None
    r = subprocess.run([ctx.tracegen, scn, path], capture_output=True)
    if not ctx.eq(r.returncode, 0, f"tracegen {scn}: {r.stderr.decode(errors='replace')}"):
        return None
    return path


def utf8(b):
    """Whether b is UTF-8 (tracegen takes nothing else)."""
    try:
        b.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def inputs(ctx):
    """[(label, path, extra options)] of the hostile inputs, one per reader."""
    w = ctx.work
    out = []
    for label, fn, name in (("ir", make_ir, "hostile.ir.txt"), ("json", make_json, "hostile.json"),
                            ("systrace", make_systrace, "hostile.systrace.txt"),
                            ("rhea", make_rhea, "hostile.rhea.txt")):
        path = os.path.join(w, "in", name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fn(path)
        out.append((label, path, ["-i", label]))
    art = make_art(ctx, os.path.join(w, "in", "hostile.trace"))
    if art:
        out.append(("art", art, ["-i", "art", "--process-name", PROCESS]))
    return out


# ---- the rules, stated here ------------------------------------------------------------------

def script_rule(s):
    """The script-data rule: a backslash between '<' and a '/', '!' or "script" (any case) after it."""
    return re.sub(r"<(?=[/!]|(?i:script))", r"<\\", s)


def unsafe(ch):
    """Never shown as itself in markup: C0 (TAB, LF, CR too), DEL, C1, noncharacters."""
    o = ord(ch)
    return o < 0x20 or 0x7F <= o <= 0x9F or 0xFDD0 <= o <= 0xFDEF or (o & 0xFFFE) == 0xFFFE


def shown_replace(b):
    """Markup text of bytes (TCI_ESC_REPLACE) after XML decoding: not UTF-8 as U+FFFD per maximal
    subpart (Python's decoder), the unsafe characters as U+FFFD."""
    return "".join(FFFD if unsafe(c) else c for c in b.decode("utf-8", "replace"))


def shown_visible(b):
    """Markup text of bytes (TCI_ESC_VISIBLE), as the HTML report and dot show names."""
    out = []
    for c in b.decode("utf-8", "replace"):
        o = ord(c)
        if c in "\\\n\r\t":
            out.append({"\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}[c])
        elif o < 0x20 or o == 0x7F:
            out.append("\\x%02X" % o)
        elif 0x80 <= o <= 0x9F:
            out.append("\\u%04X" % o)
        elif unsafe(c):
            out.append(FFFD)
        else:
            out.append(c)
    return "".join(out)


def payload_rule(s):
    """The systrace writer's payload field: '|' as '/', control characters (C0, DEL, C1) as ' '."""
    return "".join("/" if c == "|" else " " if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F else c for c in s)


def task_rule(s):
    """The task column: control characters as ' ' (no hostile thread name here looks like '-<tid> (')."""
    return "".join(" " if ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F else c for c in s)


def token_rule(s):
    """The ps NAME column: one token, spaces and control characters as '_'."""
    return "".join("_" if ord(c) <= 0x20 or 0x7F <= ord(c) <= 0x9F else c for c in s)


# ---- reading outputs ------------------------------------------------------------------------

def ir_names(ctx, path, opts):
    """{'methods','threads','processes'} of a trace as our readers give them (the `ir` writer's
    JSON literals, decoded), or None."""
    r = ctx.run(["-q", *opts, "-o", "ir", path, "-"])
    if not ctx.eq(r.returncode, 0, f"{path} -o ir: {r.stderr.decode(errors='replace')}"):
        return None
    out = {"methods": set(), "threads": set(), "processes": set()}
    for line in r.stdout.decode("utf-8").splitlines():
        m = re.search(r' name=("(?:[^"\\]|\\.)*")$', line)
        if line.startswith("method ") and m:
            out["methods"].add(json.loads(m.group(1)))
        elif line.startswith("thread ") and m and " records=0 " not in line:
            out["threads"].add(json.loads(m.group(1)))
        elif line.startswith("process ") and (m or line.startswith('process "')):
            out["processes"].add(json.loads(m.group(1) if m else line[len("process "):]))
    return out


def perfetto_blocks(text):
    """The trace-data blocks as Perfetto's systrace parser cuts them (lines), and whether it stopped
    after an ftrace block."""
    blocks, cur = [], None
    for line in text.split("\n"):
        if cur is None:
            if '<script class="trace-data" type="application/text">' in line:
                cur = []
            continue
        if "</script>" in line:
            blocks.append(cur)
            if any(l.startswith("#") and "TASK-PID" in l for l in cur):
                break  # kEndOfSystrace
            cur = None
            continue
        cur.append(line)
    return blocks


def xml_root(ctx, what, data):
    try:
        return ET.fromstring(data)
    except ET.ParseError as e:
        ctx.fail(f"{what}: not well-formed XML (expat): {e}")
        return None


def local(tag):
    return tag.rsplit("}", 1)[-1]


def check_elements(ctx, what, root, scripts):
    """No element a payload would make, no on* attribute, the expected number of scripts."""
    tags = [local(e.tag) for e in root.iter()]
    ctx.eq(sorted(t for t in set(tags) if t in PAYLOAD_TAGS), [], f"{what}: elements a name would make")
    ons = [f"{local(e.tag)}.{a}" for e in root.iter() for a in e.attrib if local(a).lower().startswith("on")]
    ctx.eq(ons, [], f"{what}: on* attributes")
    js = [f"{local(e.tag)}.{a}" for e in root.iter() for a, v in e.attrib.items() if "javascript:" in v.lower()]
    ctx.eq(js, [], f"{what}: javascript: addresses")
    ctx.eq(tags.count("script"), scripts, f"{what}: script elements")


def convert(ctx, src, opts, fmt, out, extra=()):
    r = ctx.run(["-q", "-f", *opts, "-o", fmt, *extra, src, out])
    ok = ctx.eq(r.returncode, 0, f"{src} -o {fmt} {' '.join(map(str, extra))}: {r.stderr.decode(errors='replace')}")
    return out if ok else None


# ---- the outputs ----------------------------------------------------------------------------

def check_systrace(ctx, label, src, opts, names):
    out = convert(ctx, src, opts, "systrace", os.path.join(ctx.work, f"{label}.html"))
    if not out or not names:
        return
    raw = open(out, "rb").read()
    text = raw.decode("utf-8", "surrogateescape")
    blocks = perfetto_blocks(text)
    ctx.eq(len(blocks), 2, f"{label} systrace: trace-data blocks as Perfetto cuts them")
    ctx.eq(raw.count(b'  <script class="trace-data" type="application/text">\n'), 2, f"{label} systrace: block starts")
    ctx.eq(len(re.findall(rb"</script", raw, re.I)), 2, f"{label} systrace: '</script' (any case): the two ends only")
    inner = b"".join(re.findall(rb'type="application/text">\n(.*?)  </script>\n', raw, re.S))
    ctx.eq(re.findall(rb"<[!/]|<script", inner, re.I), [], f"{label} systrace: '<!', '</' or '<script' left inside the blocks")
    r = ctx.run(["-q", *opts, "-o", "systrace", "--text", src, "-"])
    if len(blocks) == 2 and ctx.eq(r.returncode, 0, f"{label} --text"):
        want = script_rule(r.stdout.decode("utf-8", "surrogateescape")).split("\n")[:-1]
        bad = next((i for i in range(max(len(want), len(blocks[1])))
                    if i >= len(want) or i >= len(blocks[1]) or want[i] != blocks[1][i]), None)
        i = bad or 0
        ctx.check(bad is None, f"{label} systrace: the ftrace block (Perfetto's cut, {len(blocks[1])} lines) = "
                               f"--text under the script-data rule ({len(want)} lines); first difference: line {i}: "
                               f"{blocks[1][i:i + 1]!r} != {want[i:i + 1]!r}")
    back = ir_names(ctx, out, ["-i", "systrace"])
    if back is None:
        return
    ctx.eq(sorted(back["methods"]), sorted({script_rule(payload_rule(n)) for n in names["methods"]}),
           f"{label} systrace: method names read back by our systrace reader")
    ctx.eq(sorted(back["threads"]), sorted({script_rule(task_rule(n)) for n in names["threads"]}),
           f"{label} systrace: thread names read back")
    want_procs = {script_rule(token_rule(n)) for n in names["processes"]}
    ctx.check(want_procs & back["processes"], f"{label} systrace: process name read back: {back['processes']} "
                                              f"has none of {want_procs}")
    title = re.search(rb"<title>(.*?)</title>", raw, re.S)
    ctx.check(title is not None and b"<" not in title.group(1), f"{label} systrace: the title is text")


def check_flamegraph(ctx, label, src, opts):
    out = convert(ctx, src, opts, "flamegraph", os.path.join(ctx.work, f"{label}.svg"),
                  ["--title", TITLE, "--minwidth", "0", "--app-package", APP_PACKAGE])
    if not out:
        return
    root = xml_root(ctx, f"{label} flamegraph", open(out, "rb").read())
    if root is None:
        return
    check_elements(ctx, f"{label} flamegraph", root, 1)
    title = root.find(f".//{SVG}text[@id='title']")
    ctx.eq(title.text if title is not None else None, shown_replace(TITLE), f"{label} flamegraph: --title as text")
    legend = [t.text for t in root.findall(f".//{SVG}g[@id='legend']/{SVG}text")]
    ctx.check(f"app: {shown_replace(APP_PACKAGE)} (given)" in legend,
              f"{label} flamegraph: --app-package as text in the legend: {legend}")
    frames = [t.text or "" for t in root.iter(SVG + "title")]
    ctx.check(len(frames) > len(METHODS), f"{label} flamegraph: frames drawn ({len(frames)})")


def check_report(ctx, label, src, opts, raw_names):
    out = convert(ctx, src, opts, "report", os.path.join(ctx.work, f"{label}.report.html"), ["--html"])
    if not out:
        return
    root = xml_root(ctx, f"{label} report --html", open(out, "rb").read())
    if root is None:
        return
    check_elements(ctx, f"{label} report --html", root, 2)  # the page's script, the call trees' JSON block
    blocks = [e.text or "" for e in root.iter() if e.tag.endswith("script") and e.get("type") == "application/json"]
    if ctx.eq(len(blocks), 1, f"{label} report --html: one JSON block"):
        ctx.check("<" not in blocks[0], f"{label} report --html: no '<' in the JSON block")
        data = json.loads(blocks[0])  # the script sets these as text: the same characters as the markup
        for b in raw_names or ():
            ctx.check(shown_visible(b) in data["methods"], f"{label} report --html: JSON {b!r} as {shown_visible(b)!r}")
        if raw_names:
            ctx.eq(sorted(t["name"] for t in data["threads"]), sorted(shown_visible(b) for b in THREADS),
                   f"{label} report --html: JSON thread names")
    shown = {"".join(e.itertext()) for e in root.iter() if e.get("class") == "name"}
    threads = {"".join(e.itertext()) for e in root.iter() if e.get("class") == "thread-name"}
    for b in raw_names or ():
        ctx.check(shown_visible(b) in shown, f"{label} report --html: {b!r} shown as {shown_visible(b)!r}")
    if raw_names:
        ctx.eq(sorted(threads), sorted(shown_visible(b) for b in THREADS), f"{label} report --html: thread names")


def check_dot(ctx, label, src, opts, raw_names):
    out = convert(ctx, src, opts, "dot", os.path.join(ctx.work, f"{label}.dot"), ["--threshold", "0"])
    if not out:
        return
    r = ctx.oracle(["dot", "-Tsvg", out])
    if r is None or not ctx.eq(r.returncode, 0, f"{label} dot -Tsvg: {r.stderr.decode(errors='replace')}"):
        return
    ctx.eq(r.stderr.decode(errors="replace").strip(), "", f"{label} dot -Tsvg: warnings")
    root = xml_root(ctx, f"{label} dot -Tsvg", r.stdout)
    if root is None:
        return
    check_elements(ctx, f"{label} dot -Tsvg", root, 0)
    texts = {t.text or "" for g in root.iter(SVG + "g") if g.get("class") == "node" for t in g.iter(SVG + "text")}
    for b in raw_names or ():
        ctx.check(shown_visible(b) in texts, f"{label} dot: {b!r} drawn as {shown_visible(b)!r}")


def check_diff(ctx, a, b):
    out = os.path.join(ctx.work, "diff.svg")
    r = ctx.run(["diff", "-q", "-f", "-o", "flamegraph", "--title", TITLE, a, b, out])
    if not ctx.eq(r.returncode, 0, f"diff -o flamegraph: {r.stderr.decode(errors='replace')}"):
        return
    root = xml_root(ctx, "diff flamegraph", open(out, "rb").read())
    if root is None:
        return
    check_elements(ctx, "diff flamegraph", root, 1)
    title = root.find(f".//{SVG}text[@id='title']")
    ctx.eq(title.text if title is not None else None, shown_replace(TITLE), "diff flamegraph: --title as text")
    sub = root.find(f".//{SVG}text[@id='subtitle']")
    ctx.check(sub is not None and shown_replace(os.path.basename(a).encode()) in (sub.text or ""),
              "diff flamegraph: the subtitle names the inputs")


# ---- serve ------------------------------------------------------------------------------------

class Tags(html.parser.HTMLParser):
    """Every start tag with its attributes, and the text of each element with an id."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.text, self.stack = [], {}, []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag not in ("meta", "link", "input", "br", "img"):
            self.stack.append(dict(attrs).get("id"))

    def handle_endtag(self, tag):
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        for i in self.stack:
            if i:
                self.text[i] = self.text.get(i, "") + data


def page_tags(ctx, what, page):
    p = Tags()
    p.feed(page.decode("utf-8", "replace"))
    tags = [t for t, _ in p.tags]
    ctx.eq(sorted({t for t in tags if t in PAYLOAD_TAGS - {"iframe"}}), [], f"{what}: elements a name would make")
    frames = [a.get("src", "") for t, a in p.tags if t == "iframe"]
    ctx.eq([f for f in frames if not re.fullmatch(r"/r/[0-9a-f]{32}/[a-z.-]+", f)], [], f"{what}: iframes")
    ctx.eq([f"{t}.{k}" for t, a in p.tags for k in a if k.startswith("on")], [], f"{what}: on* attributes")
    ctx.eq([a.get("src") for t, a in p.tags if t == "script"], ["/static/serve.js"], f"{what}: scripts")
    return p


# a quote or CR/LF would end the multipart header, a '/' or '\\' would start the base name: the rest is there
SERVE_NAME = "<img src=x onerror=window.pwned=7>'&<!--]]><!-\x01\u2028\uffff.ir.txt"


def display(name, markup=True):
    """serve's display name (control bytes as '_'), as the markup rule shows it or as it is."""
    clean = "".join("_" if ord(c) < 0x20 or ord(c) == 0x7F else c for c in name)
    return shown_replace(clean.encode()) if markup else clean


def serve_upload(srv, filename, data, accept=None):
    import http.client
    boundary = "tc" + uuid.uuid4().hex
    body = (f'--{boundary}\r\nContent-Disposition: form-data; name="trace"; filename="{filename}"\r\n'.encode()
            + b"Content-Type: application/octet-stream\r\n\r\n" + data + f"\r\n--{boundary}--\r\n".encode())
    headers = {"Content-Type": f"multipart/form-data; boundary={boundary}"}
    if accept:
        headers["Accept"] = accept
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
    try:
        c.request("POST", "/upload", body=body, headers=headers)
        r = c.getresponse()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, r.read()
    finally:
        c.close()


def serve_get(srv, path):
    import http.client
    c = http.client.HTTPConnection("127.0.0.1", srv.port, timeout=300)
    try:
        c.request("GET", path)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


def serve_pages(ctx, ir_path):
    """Upload the hostile IR trace and some noise under a hostile name: (result page URL, error
    page bytes, JSON error bytes, result page bytes), checked here; None where a step failed."""
    srv = serve_lib.Server(ctx.traceconv, ctx.work)
    try:
        st, h, _ = serve_upload(srv, SERVE_NAME, open(ir_path, "rb").read())
        loc = h.get("location", "")
        page = None
        if ctx.eq(st, 303, "serve: a page upload answers with the result") and loc.startswith("/r/"):
            st, page = serve_get(srv, loc)
            ctx.eq(st, 200, "serve: the result page")
        noise = bytes(range(256)) * 8
        st, _, err_page = serve_upload(srv, SERVE_NAME.replace(".ir.txt", ".bin"), noise)
        ctx.eq(st, 422, "serve: noise is not converted")
        st, _, err_json = serve_upload(srv, SERVE_NAME.replace(".ir.txt", ".bin"), noise, "application/json")
        ctx.eq(st, 422, "serve: noise is not converted (JSON)")
    finally:
        srv.stop()
    return srv.url + loc.lstrip("/") if page else None, page, err_page, err_json


def check_serve(ctx, ir_path):
    url, page, err_page, err_json = serve_pages(ctx, ir_path)
    shown = display(SERVE_NAME)
    if page:
        p = page_tags(ctx, "serve result page", page)
        ctx.eq(p.text.get("facts", "").split("input")[0].strip(), shown, "serve result page: the file name as text")
    if err_page:
        p = page_tags(ctx, "serve error page", err_page)
        ctx.check(display(SERVE_NAME.replace(".ir.txt", ".bin")) in p.text.get("error", ""),
                  f"serve error page: the file name as text in {p.text.get('error', '')!r}")
    if err_json:
        ctx.eq(re.findall(rb"[<>&']", err_json), [], "serve JSON error: no markup character")
        try:
            msg = json.loads(err_json)["error"]
            ctx.check(display(SERVE_NAME.replace(".ir.txt", ".bin"), False) in msg,
                      f"serve JSON error names the file: {msg!r}")
        except (ValueError, KeyError) as e:
            ctx.fail(f"serve JSON error is not JSON with an error: {e}: {err_json[:200]!r}")


# ---- main --------------------------------------------------------------------------------

def main():
    ctx = tclib.Ctx()
    ins = inputs(ctx)
    for label, src, opts in ins:
        names = ir_names(ctx, src, opts)
        raw = METHODS if label == "ir" else None  # plain names known byte for byte
        check_systrace(ctx, label, src, opts, names)
        check_flamegraph(ctx, label, src, opts)
        check_report(ctx, label, src, opts, raw)
        check_dot(ctx, label, src, opts, raw)
    by = {label: src for label, src, _ in ins}
    check_diff(ctx, by["ir"], by["json"])
    check_serve(ctx, by["ir"])
    ctx.done()


if __name__ == "__main__":
    main()
