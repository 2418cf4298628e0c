#!/usr/bin/env python3
"""Issue 38, item 11: control characters in names never reach a text output raw. `cat` of any
output a person reads (folded stacks, the text report, report CSV, diff text and CSV, dot, the
ir dump, the JSON outputs, the systrace text and HTML) cannot drive the terminal: ESC, BEL, the other C0 controls, DEL and
the C1 controls (U+009B is CSI) from a name are written as the text report writes them
(escape.h's text rule: \\x1B, \\x07, \\x7F, \\u009B, a backslash as \\\\; a byte that is not
UTF-8 as \\xFF in the text tables, U+FFFD in CSV and folded), in JSON as \\u escapes that
JSON readers decode back to the name, or in systrace's ftrace text as spaces (its rule for C0).

The input: an atrace text built here whose slice names carry those characters (and a thread
named with ESC). Expected from the input: every output above is UTF-8 with no control
character but LF (CSV rows may end in CRLF); the folded stacks pass check_folded.py and name
the frames with the text rule's escapes; Python's json reads the JSON outputs' names back
whole; the ir output reads back through the ir reader to the same names.
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

HDR = (b"# tracer: nop\n#\n"
       b"#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n"
       b"#              | |        |      |   ||||       |         |\n")
# raw name bytes -> the text rule's form
NAMES = {
    b"esc\x1b[2Jclear": "esc\\x1B[2Jclear",
    b"bel\x07ring": "bel\\x07ring",
    b"del\x7fx": "del\\x7Fx",
    b"csi\xc2\x9b31m": "csi\\u009B31m",
    b"back\\slash": "back\\\\slash",
    b"bad\xffbyte": "bad\\xFFbyte",  # in CSV and folded: bad\ufffdbyte
    b"vt\x0bff\x0c": "vt\\x0Bff\\x0C",
}
THREAD = b"ui\x1b]0;t"  # OSC: sets a terminal's title


def line(task, ts_us, payload):
    return b"  %s-42  (   42) [000] ...1 %6d.%06d: tracing_mark_write: %s\n" % (
        task, 100 + ts_us // 1000000, ts_us % 1000000, payload)


def build(path, scale=1):
    out = [HDR]
    t = 0
    for name in NAMES:
        out += [line(THREAD, t, b"B|42|" + name), line(THREAD, t + 10 * scale, b"E|42")]
        t += 20
    with open(path, "wb") as f:
        f.write(b"".join(out))


def unsafe(data, crlf=False, raw_bytes=False):
    """Why bytes a person cats could drive a terminal (None: they cannot). raw_bytes: the output
    keeps bytes that are not UTF-8 as they are (systrace: its readers read them back), so only
    its characters are judged."""
    try:
        text = data.decode("utf-8", "surrogateescape" if raw_bytes else "strict")
    except UnicodeDecodeError as e:
        return f"not UTF-8 ({e})"
    if crlf:
        text = text.replace("\r\n", "\n")
    bad = sorted({c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) <= 0x9f})
    return f"control characters {[hex(ord(c)) for c in bad]}" if bad else None


def main():
    ctx = tclib.Ctx()
    src = os.path.join(ctx.work, "names.systrace.txt")
    new = os.path.join(ctx.work, "names-new.systrace.txt")
    build(src)
    build(new, scale=2)
    outputs = {}
    for fmt, extra, ext in (("folded", [], "folded"), ("report", [], "txt"), ("report", ["--csv"], "csv"),
                            ("dot", [], "dot"), ("ir", [], "ir.txt"), ("json", [], "json"),
                            ("speedscope", [], "speedscope.json"), ("activity", [], "activity.json"),
                            ("systrace", ["--text"], "systrace.txt"), ("systrace", [], "html")):
        out = os.path.join(ctx.work, f"out.{ext}")
        r = ctx.run(["-q", "-f", "-o", fmt, *extra, src, out])
        if ctx.check(r.returncode == 0, f"-o {fmt} {extra}: exit {r.returncode}: {r.stderr[-300:]!r}"):
            with open(out, "rb") as f:
                outputs[f"{fmt} {' '.join(extra)}".strip()] = f.read()
    for fmt in ("text", "csv"):
        out = os.path.join(ctx.work, f"diff.{fmt}")
        r = ctx.run(["diff", "-q", "-f", "-o", fmt, src, new, out])
        if ctx.check(r.returncode == 0, f"diff -o {fmt}: exit {r.returncode}: {r.stderr[-300:]!r}"):
            with open(out, "rb") as f:
                outputs[f"diff {fmt}"] = f.read()
    for what, data in outputs.items():
        why = unsafe(data, crlf="csv" in what, raw_bytes=what.startswith("systrace"))
        ctx.check(why is None, f"{what}: {why}")

    # every name, as the text rule writes it, in the outputs people read
    for what in ("folded", "report", "report --csv", "diff text", "diff csv"):
        text = outputs.get(what, b"").decode("utf-8", "replace")
        hex_bytes = what in ("report", "diff text")  # CSV and folded: U+FFFD, as HTML and speedscope
        missing = [shown if hex_bytes else shown.replace("\\xFF", "\ufffd")
                   for shown in NAMES.values()]
        missing = [shown for shown in missing if shown not in text]
        ctx.check(not missing, f"{what}: names not shown by the text rule: {missing}")
    folded = os.path.join(ctx.work, "out.folded")
    if "folded" in outputs:
        r = subprocess.run([sys.executable, ctx.checker("check_folded.py"), folded, "--quiet"], capture_output=True)
        ctx.check(r.returncode == 0, f"check_folded.py: {r.stdout.decode(errors='replace')[-400:]}")
        ctx.check(b"ui\\x1B]0:t-42;" in outputs["folded"], "folded: the thread frame by the text rule")

    # JSON readers read the names back whole (U+FFFD for the byte that is not UTF-8)
    want = sorted(n.decode("utf-8", "replace") for n in NAMES)
    if "json" in outputs:
        got = sorted(e["name"] for e in json.loads(outputs["json"])["traceEvents"] if e.get("ph") == "B")
        ctx.eq(got, want, "json: slice names read back")
    # the ir dump reads back to the same names
    if "ir" in outputs:
        back = os.path.join(ctx.work, "back.ir.txt")
        r = ctx.run(["-q", "-f", "-i", "ir", "-o", "ir", os.path.join(ctx.work, "out.ir.txt"), back])
        if ctx.check(r.returncode == 0, f"ir read back: {r.stderr[-300:]!r}"):
            with open(back, "rb") as f:
                names = [json.loads(n) for n in re.findall(rb'^method .* name=(".*")$', f.read(), re.M)]
            ctx.eq(sorted(names), want, "ir: names read back")
    ctx.done()


if __name__ == "__main__":
    main()
