#!/usr/bin/env python3
"""systrace writer: every corpus trace (ours, and TC_EXTRA_CORPUS's ART traces when it
is set) and the hand-made system trace convert to systrace HTML that passes
tests/checkers/check_systrace_html.py, and --text to ftrace text that passes
it once wrapped in the same container. The lines are in global time order
(corpus/android14-chunked.trace has per-thread chunks), and per thread the
B/E sequence and times (µs) are the json writer's. The merge behind the
global order keeps memory flat on a large input.

Oracle note: check_systrace_html.py skips PROCESS DUMP / CGROUP DUMP blocks
(as Perfetto does), so any ERROR line it prints fails the test.

No fuzz target here: tests/fuzz/fuzz_convert.c runs every registered writer,
systrace included."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

MUST_FAIL = {"perflib-header.trace", "studio-perflib-basic-special_char.trace"}
IR_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ir")
SCRIPT = '  <script class="trace-data" type="application/text">'
# our fixed layout: the task is the whole thread name (any length), right-aligned in 16
LINE = re.compile(r"^ *(.+)-(\d+) +\( *(\d+)\) \[000\] \.\.\.1 +(\d+)\.(\d{6}): tracing_mark_write: (.*)$")
# Perfetto's tokenizer regex (SYSTRACE.md §3.2): the leftmost partial match; the task is the trimmed prefix
PERFETTO = re.compile(r"-(\d+)\s+\(?\s*(\d+|-+)?\)?\s?\[(\d+)\]\s*([a-zA-Z.]{3}[0-9a-f.]{1,2}\s*)?(\d+\.\d+):\s+(\S+):")


def checker(ctx, path):
    """Runs the oracle; returns its unexpected error lines (or a one-line reason)."""
    r = ctx.oracle(["python3", ctx.checker("check_systrace_html.py"), path])
    if r is None:
        return ["checker not run"]
    errs = [l for l in r.stdout.decode(errors="replace").splitlines() if l.startswith("ERROR:")]
    if errs or r.returncode not in (0, 1):
        return errs or [f"checker exit {r.returncode}"]
    return []


def ftrace_block(text):
    """The ftrace block of our HTML (from '# tracer: nop' to the line before '  </script>')."""
    start = text.index("\n# tracer: nop\n") + 1
    return text[start:text.index("  </script>\n", start)]


def parse_lines(block):
    """[(tid, pid, ts_us, payload)] of the event lines; None entries for lines that do not parse."""
    out = []
    for ln in block.split("\n"):
        if not ln or ln.startswith("#"):
            continue
        m = LINE.match(ln)
        p = PERFETTO.search(ln)
        if not m or not p or ln[:p.start()].strip() != m.group(1).strip() or p.group(1) != m.group(2):
            out.append(None)  # not our layout, or Perfetto would split the line elsewhere
            continue
        out.append((int(m.group(2)), int(m.group(3)), int(m.group(4)) * 1_000_000 + int(m.group(5)), m.group(6)))
    return out


def json_be(path):
    """tid -> [(ph, ts µs truncated)] and pid -> B count, from the json writer's output."""
    import json
    with open(path, "rb") as f:
        events = json.load(f)["traceEvents"]
    seq, per_pid = {}, {}
    for e in events:
        if e.get("ph") not in ("B", "E"):
            continue
        whole, _, frac = str(e["ts"]).partition(".")
        us = max(int(whole), 0) if not whole.startswith("-") else 0
        seq.setdefault(e["tid"], []).append((e["ph"], us))
        if e["ph"] == "B":
            per_pid[e["pid"]] = per_pid.get(e["pid"], 0) + 1
    return seq, per_pid


def check_input(ctx, src, fmt_args=(), name=None, chunked=False):
    name = name or os.path.basename(src)
    out, figs = ctx.convert(src, "systrace", os.path.join(ctx.work, name + ".html"), extra=fmt_args)
    if not out:
        return None
    with open(out, "rb") as f:
        raw = f.read()
    ctx.check(raw.startswith(b"<!DOCTYPE html>\n"), f"{name}: output does not start with <!DOCTYPE html>")
    ctx.check(b"</script" not in raw.replace(b"  </script>\n", b""), f"{name}: a stray </script inside a block")
    errs = checker(ctx, out)
    ctx.check(not errs, f"{name}: check_systrace_html.py: {errs[:5]}")
    text = raw.decode("utf-8", errors="replace")
    ctx.check(text.index("PROCESS DUMP") < text.index("# tracer: nop"), f"{name}: PROCESS DUMP after the ftrace block")
    block = ftrace_block(text)
    lines = parse_lines(block)
    ctx.check(None not in lines, f"{name}: {lines.count(None)} event lines not in the expected ftrace layout")
    lines = [l for l in lines if l]

    # global order: the whole output, not just each thread
    bad = next((i for i in range(1, len(lines)) if lines[i][2] < lines[i - 1][2]), None)
    ctx.check(bad is None, f"{name}: time goes backwards at event line {bad}")
    if chunked:
        tids = [l[0] for l in lines]
        switches = sum(1 for a, b in zip(tids, tids[1:]) if a != b)
        ctx.check(switches > len(set(tids)), f"{name}: threads are not interleaved ({switches} switches)")

    # --text: the same ftrace text, alone (plain text: the HTML's block also has a backslash between
    # '<' and a '/', '!' or "script" after it, its script-data rule); wrapped in the container it passes the oracle too
    r = ctx.run(["-q", "-o", "systrace", "--text", *fmt_args, src, "-"], check_rc=0)
    txt = r.stdout.decode("utf-8", errors="replace")
    ctx.check(txt.startswith("# tracer: nop\n"), f"{name}: --text does not start with '# tracer: nop'")
    ctx.eq(re.sub(r"<(?=[/!]|(?i:script))", r"<\\", txt), block, f"{name}: --text equals the HTML's ftrace block")
    wrapped = os.path.join(ctx.work, name + ".text.html")
    with open(wrapped, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write("<!DOCTYPE html>\n<html>\n<body>\n" + SCRIPT + "\n"
                + re.sub(r"<(?=[/!]|(?i:script))", r"<\\", r.stdout.decode("utf-8", errors="surrogateescape"))
                + "  </script>\n</body>\n</html>\n")
    errs = checker(ctx, wrapped)
    ctx.check(not errs, f"{name}: --text output (wrapped) fails check_systrace_html.py: {errs[:5]}")

    # per thread the B/E sequence of the json writer; per pid its B count
    jpath = os.path.join(ctx.work, name + ".json")
    if ctx.run(["-q", "-f", "-o", "json", *fmt_args, src, jpath], check_rc=0).returncode:
        return lines
    want_seq, want_pid = json_be(jpath)
    got_seq, got_pid = {}, {}
    for tid, pid, ts, payload in lines:
        if payload[:2] in ("B|", "E|"):
            got_seq.setdefault(tid, []).append((payload[0], ts))
            if payload[0] == "B":
                got_pid[pid] = got_pid.get(pid, 0) + 1
    ctx.eq(got_seq, want_seq, f"{name}: per-thread B/E sequence and µs times vs json")
    # a process without a pid shows its first thread's tid in systrace (pid 0 is idle there)
    ctx.eq(sorted(got_pid.values()), sorted(want_pid.values()), f"{name}: B count per pid vs json")
    ctx.eq({p: n for p, n in got_pid.items() if p in want_pid}, {p: n for p, n in want_pid.items() if p > 0},
           f"{name}: B count per (known) pid vs json")
    return lines


def check_system(ctx):
    """tests/ir/system.ir.txt (see test_ir_writers.py): two processes, every event kind."""
    src = os.path.join(IR_DIR, "system.ir.txt")
    lines = check_input(ctx, src, ("-i", "ir"))
    if not lines:
        return
    kinds = {}
    for _, _, _, payload in lines:
        kinds[payload[0]] = kinds.get(payload[0], 0) + 1
    ctx.eq(kinds, {"B": 5, "E": 5, "I": 1, "C": 2, "S": 1, "F": 1}, "system: payload kinds")
    ctx.eq([p for *_, p in lines if p[0] in "CSFI"],
           ["C|100|heap bytes|1024", "S|100|load image|7", "I|100|vsync", "C|100|heap bytes|4097",
            "F|100|load image|7"], "system: counters (rounded), async and instant payloads in time order")
    ctx.eq(sorted({(t, p) for t, p, _, _ in lines}), [(100, 100), (101, 100), (200, 200)], "system: tid and TGID")
    with open(os.path.join(ctx.work, "system.ir.txt.html"), encoding="utf-8") as f:
        html = f.read()
    dump = html[html.index("PROCESS DUMP"):html.index("  </script>")]
    ctx.check(re.search(r"^user +100 .* S app +app$", dump, re.M) is not None, "system: process 100 named app")
    ctx.check(re.search(r"^user +200 .* S system_server +system_server$", dump, re.M) is not None,
              "system: process 200 named system_server")
    ctx.check(re.search(r"^user +200 +200 binder:200_1$", dump, re.M) is not None, "system: thread 200 named")


def check_unsafe_names(ctx):
    """Names with '|', newlines and </script> stay on one line inside their block."""
    src = os.path.join(ctx.work, "unsafe.ir.txt")
    with open(src, "w") as f:
        f.write('traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=7 start_ns=0\nprocess "a b</script>"\n'
                'thread 0 tid=7 records=0 name="ui-thread-with-a-long.name</script>"\n'
                'method 0 id=0 name="x|y\\nz</script><!--<script>"\nmethod 1 id=0 name="<init>"\n'
                'B t=0 m=0 ts=1000\nB t=0 m=1 ts=1500\nE t=0 m=- ts=1800\nE t=0 m=- ts=2000\n'
                'C t=0 m=0 ts=2500 value=-2.5\n')
    lines = check_input(ctx, src, ("-i", "ir"), name="unsafe")
    if lines:
        ctx.eq([p for *_, p in lines], ["B|7|x/y z<\\/script><\\!--<\\script>", "B|7|<init>", "E|7", "E|7",
                                        "C|7|x/y z<\\/script><\\!--<\\script>|-3"], "unsafe: payloads")


def check_comment_like_names(ctx):
    """A thread name that would start its lines with '#' (a comment to every reader) or `cpus=` (a
    trace-cmd header to ours), also after blanks and control bytes: that byte becomes '_' and every
    event is read back (before, the whole thread was lost)."""
    src = os.path.join(ctx.work, "comment.ir.txt")
    names = ["#comment-looking-thread", " \u0001#short", "cpus=4 thread"]
    with open(src, "w") as f:
        f.write("traceconv-ir 1\ntrace clock=wall has_wall=1 has_cpu=0 pid=7 start_ns=0\nmethod 0 id=0 name=\"m\"\n")
        for i, n in enumerate(names):
            f.write(f'thread {i} tid={7 + i} records=2 name="{n}"\n')
        for i in range(len(names)):
            f.write(f"B t={i} m=0 ts=1000\nE t={i} m=- ts=2000\n")
    lines = check_input(ctx, src, ("-i", "ir"), name="comment")
    if lines is not None:
        ctx.eq(sorted(l[0] for l in lines), [7, 7, 8, 8, 9, 9], "comment-like names: every event line parses")
    r = ctx.run(["-q", "-o", "ir", os.path.join(ctx.work, "comment.html"), "-"], check_rc=0)
    got = sorted(re.findall(r'^thread \d+ tid=\d+ records=2 name="(.*)"$', r.stdout.decode(), re.M))
    ctx.eq(got, ["_comment-looking-thread", "_short", "cpus_4 thread"], "comment-like names: threads read back")


def check_samples(ctx):
    out, figs = ctx.convert(os.path.join(IR_DIR, "samples.ir.txt"), "systrace",
                            os.path.join(ctx.work, "samples.html"), extra=("-i", "ir"))
    if out:
        ctx.eq(figs.get("writer-dropped-frames"), 4, "samples: sampled stacks counted as not shown")
        ctx.check(not checker(ctx, out), "samples: check_systrace_html.py")


def check_memory(ctx):
    """The merge spills: peak RSS stays flat on a large input (each event is spilled, not kept)."""
    if not ctx.tracegen or not os.path.exists("/usr/bin/time"):
        print("note: no tracegen or /usr/bin/time; memory check skipped")
        return
    big = os.path.join(ctx.work, "bench64.trace")
    subprocess.run([ctx.tracegen, "--bench", "64", big], check=True, capture_output=True)
    r = subprocess.run(["/usr/bin/time", "-f", "%M", ctx.traceconv, "-q", "-o", "systrace", big, "-"],
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ctx.eq(r.returncode, 0, "bench64 -> systrace exit")
    rss_kb = int(r.stderr.decode().strip().splitlines()[-1])
    print(f"bench 64 MB -> systrace: peak RSS {rss_kb // 1024} MB")
    # mmapped input pages are released as they are read; the merge holds one block per thread
    ctx.check(rss_kb < 80 * 1024, f"bench64 -> systrace: peak RSS {rss_kb} KB (want < 80 MB)")
    os.unlink(big)


def main():
    ctx = tclib.Ctx()
    check_system(ctx)
    check_unsafe_names(ctx)
    check_comment_like_names(ctx)
    check_samples(ctx)
    for stem, path, _facts in ctx.project_cases():
        check_input(ctx, path, chunked=stem == "android14-chunked")
    art = ctx.extra_corpus("art")
    if art:
        for f in sorted(os.listdir(art)):
            if f.endswith(".trace") and f not in MUST_FAIL:
                check_input(ctx, os.path.join(art, f))
    check_memory(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
