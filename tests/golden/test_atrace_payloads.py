"""One atrace payload grammar for both readers that see `tracing_mark_write`
payloads (src/parsers/atrace.c): the same payloads written as systrace text and as
a RheaTrace 1.x all-threads dump give the same events.

Each payload below carries the event it must become, written here from the
grammar (SYSTRACE.md §3.3: libcutils' forms, Perfetto's reading), not from
traceconv's output. Both files are converted with `-o ir`; the events
(kind, tid, name, µs from the first event, value or cookie) must equal that
list for each reader, and the malformed payloads must be one skipped bad line
each, in both readers. `C|42|queue|5|gfx` is the case the two readers used to
disagree on (value 5 for systrace, a bad line for Rhea)."""
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

# (tid, payload, expected event or None for a malformed payload)
#   event = (kind, name, value-or-cookie); kinds as the IR dump writes them:
#   B enter, E exit, I instant, C counter, S async begin, F async end
LINES = [
    (42, "B|42|outer", ("B", "outer", None)),
    (42, "C|42|queue|5|gfx", ("C", "queue", 5.0)),             # category gfx ignored
    (42, "B|42|inner|with|bars", ("B", "inner|with|bars", None)),  # name: all after B|pid|
    (42, "I|42|tick", ("I", "tick", None)),
    (42, "E|42", ("E", "inner|with|bars", None)),
    (42, "S|42|load|7", ("S", "load", 7)),
    (42, "N|42|trk|mark", ("I", "mark", None)),                # instant named by its name
    (42, "G|42|gtrack|gslice|9", ("S", "gtrack", 9)),          # async on a track: the track's name
    (42, "H|42|gtrack|9", ("F", "gtrack", 9)),
    (42, "F|42|load|7", ("F", "load", 7)),
    (42, "C|42|level|2.5", ("C", "level", 2.5)),
    (42, "C|42|q|abc", None),                                  # value not a number
    (42, "C|42|q|99999999999999999999", None),                 # value beyond int64
    (42, "B|x|bad", None),                                     # pid not a number
    (42, "S|42|n|", None),                                     # no cookie
    (42, "I|42|", None),                                       # empty name
    (42, "H|42|gtrack||", None),                               # no cookie
    (42, "E", ("E", "outer", None)),                           # bare E
    (43, "B|42|work", ("B", "work", None)),
    (43, "E|42|work", ("E", "work", None)),                    # E|pid|name: ends the innermost
    (43, "B|42|", ("B", "[empty slice name]", None)),
    (43, "E|42", ("E", "[empty slice name]", None)),
    (43, "C|42|big|-9223372036854775808", ("C", "big", -9223372036854775808.0)),
]
T0_US = 948220_912000  # first line's time, µs
STEP_US = 10


def systrace_text():
    out = ["# tracer: nop\n", "#\n",
           "#           TASK-PID    TGID   CPU#  ||||    TIMESTAMP  FUNCTION\n",
           "#              | |        |      |   ||||       |         |\n"]
    for i, (tid, payload, _) in enumerate(LINES):
        us = T0_US + i * STEP_US
        out.append(f"{'app':>16}-{tid:<5} (   42) [000] ...1 {us // 1000000}.{us % 1000000:06d}: "
                   f"tracing_mark_write: {payload}\n")
    return "".join(out)


def rhea_text():
    start_ns = (T0_US - 1000) * 1000
    out = [f"1|TRACE_START|{start_ns}|42|2147483647|2|18316\n"]
    for i, (tid, payload, _) in enumerate(LINES):
        us = T0_US + i * STEP_US
        out.append(f"{us // 1000000}.{us % 1000000:06d} {tid}: {payload}\n")
    out.append(f"2|TRACE_END|{(T0_US + 10000) * 1000}|42|2147483647|2|18316\n")
    return "".join(out)


def expected():
    want = []
    for i, (tid, _, ev) in enumerate(LINES):
        if ev:
            kind, name, num = ev
            want.append((kind, tid, name, i * STEP_US, num))
    return want


EV_RE = re.compile(r"^([BEICSF]) t=(\d+) m=(\d+) d=\d+ ts=(-?\d+) cpu=\S+(?: value=(\S+))?(?: id=(\d+))?")


def events_of(ir):
    """(kind, tid, name, µs from the first event, value or cookie) from an IR dump."""
    tids, names, evs = {}, {}, []
    for line in ir.splitlines():
        m = re.match(r"thread (\d+) tid=(\d+)", line)
        if m:
            tids[int(m.group(1))] = int(m.group(2))
        m = re.match(r'method (\d+) .* name="(.*)"$', line)
        if m:
            names[int(m.group(1))] = m.group(2)
        m = EV_RE.match(line)
        if m:
            kind, t, meth, ts, value, cookie = m.groups()
            num = float(value) if value is not None else int(cookie) if cookie is not None else None
            evs.append([kind, tids[int(t)], names.get(int(meth)), int(ts), num])
    t0 = evs[0][3] if evs else 0
    for e in evs:
        e[3] = (e[3] - t0) // 1000
    return [tuple(e) for e in evs]


def main():
    ctx = tclib.Ctx()
    want = expected()
    n_bad = sum(1 for _, _, ev in LINES if ev is None)
    got = {}
    for name, text in (("payloads.systrace", systrace_text()), ("payloads.rhea-atrace", rhea_text())):
        src = os.path.join(ctx.work, name)
        with open(src, "w") as f:
            f.write(text)
        out, figs = ctx.convert(src, "ir")
        if not out:
            continue
        with open(out) as f:
            got[name] = events_of(f.read())
        ctx.eq(figs.get("bad-line"), n_bad, f"{name}: each malformed payload is one skipped bad line")
        ctx.eq(got[name], want, f"{name}: events as the atrace grammar says")
    if len(got) == 2:
        ctx.eq(got["payloads.systrace"], got["payloads.rhea-atrace"], "systrace and Rhea text give the same events")
    ctx.done()


if __name__ == "__main__":
    main()
