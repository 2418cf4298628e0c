#!/usr/bin/env python3
"""Nothing dropped in silence, for any reader (issue 35, item 6): every input record is converted,
dropped with a reason (a warning figure) or counted as not converted by kind, and the figures say
so. For each reader's inputs in the repository the records are counted here, from the input
itself and apart from traceconv, and the conversion's figures (`-o ir`: its `figure` lines and
meta `not-converted`; the summary line on stderr, whose `; not converted: ...` must say the same)
must add up to them:

  input records = converted + dropped with a reason + not converted (by kind)

An input record, and what its conversion is (the `records` figure counts the reader's raw
records, `sched-events` the system ones):
- art (ART/Dalvik v1-v3, streaming): a method record (binary), one raw record each, counted by
  tests/checkers/artrace_inspect.py (streams by a walk of their items here too); a summary item
  before a stream's end, a line under a key section no ART writes, a line after a stream
  summary's *end: not converted, by kind. Action 3, exits of nothing and depth-limited frames
  are dropped by normalize after being counted in `records` (invalid-action, ignored-exit).
- art-v2: a record of a block (artrace_inspect.py's V2 decoder); a packet after the summary: not
  converted.
- art-longrun: a record of a chunk (tests/checkers/artlr_inspect.py); its summary record is the
  metadata summary-timestamps (checked by value).
- pftrace: a top-level packet (decoded by protoc with the upstream schema): one that carries an
  ART dump is its records (artlr_inspect.py), any other is not converted under the name of its
  data field (TracePacket's `oneof data`, read from the schema here: pftrace.c's table must
  equal it) or of what it holds.
- rhea: 1.x/2.x text: a line after the header (a body line is one raw record; a throw caught
  inside its method, by RHEA.md's rule, and a profilo entry other than TRACE_END are not
  converted; a line that does not parse is a bad-line; monotonic_time is metadata); 2.x binary:
  a 16-byte record that is not the zero tail (two raw records: enter and exit); 3.x sampling: a
  record (one raw record, a sample; a record without a valid stack is a bad-line).
- ir: a line: an event line is one raw record; table, stack and meta lines are the tables (the
  meta lines are checked to reach the output); figure lines and the meta not-converted are the
  dumping conversion's accounting, not records; any other line is a bad-line.
- json: test_json_samples.py's model of the reader (written apart from json.c): an event, a
  sample, a frame... with its IR records, bad-lines and not-converted kinds (O, N, D, (, ) ...).
- systrace: an ftrace event line, found by Perfetto's line regex as
  tests/oracle/test_ftrace_events.py finds them (a raw or system record, an async end without
  its begin dropped as unmatched-async-end, a line it cannot read a bad-line), and any other
  line of the ftrace text that is not structure (comments, a PROCESS DUMP, a ps listing,
  trace-cmd's preamble): a bad-line.
No input here passes --max-depth: frames dropped there are said once per thread (depth-limit),
not counted one by one, so such an input's sum would not hold.
Besides the corpus and test inputs, inputs made here exercise each reader's counts: an ART key
with an unknown section, a stream with a summary item before its end and a line after its
summary's *end, a V2 trace with packets after its summary, traceconv's own Perfetto output
joined to a long-running pftrace (its track events, descriptors, clock snapshot...), a Rhea dump
with profilo entries and a bad monotonic_time, an IR dump with lines of no kind, a JSON trace
with O/N/D phases, an ART key section of more keys than the metadata keeps.

A batch over a folder of such inputs lists, for each member, its `not_converted` kinds in the
batch summary, the same as the single conversion's (and none for a member that converted all).

On traceconv before this round (records skipped unsaid: pftrace packets, Rhea's caught throws,
IR meta lines, ART's summary items...) the sums fail for 14 inputs (7 of the repository's, 7 made
here), and the metadata checks for 5 more (long-running summaries) and the IR dump."""
import base64
import collections
import gzip
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))
sys.path.insert(0, os.path.join(HERE, "..", "checkers"))
import tclib  # noqa: E402
import artrace_inspect  # noqa: E402
import artlr_inspect  # noqa: E402
from test_ftrace_events import LINE as FTRACE_LINE, TraceData  # noqa: E402
from test_json_samples import reference as json_reference, load as json_load  # noqa: E402

NAME_MAX = 31  # a kind's name is cut to this many bytes (TCI_LEFT_NAME_MAX - 1)
NC_RE = re.compile(r"; not converted: (.*?)(?:; hint: |$)")


def cut(name):
    return name.encode("utf-8")[:NAME_MAX].decode("utf-8", "ignore")


def kinds_text(text):
    """{kind: n} of "O 1, ( 2, 3 of other kinds"."""
    out = {}
    for part in text.split(", ") if text else []:
        if part.endswith(" of other kinds"):
            out["(other kinds)"] = int(part.split(" ", 1)[0])
            continue
        k, _, n = part.rpartition(" ")
        out[k] = int(n)
    return out


class Expect:
    """What the input holds, counted here: records, how many convert and to how many raw
    records, which are dropped with which figure, which are not converted, by kind."""

    def __init__(self, inputs=0, converted=0, raw=0, drops=None, nc=None):
        self.inputs, self.converted, self.raw = inputs, converted, raw
        self.drops = drops or {}
        self.nc = collections.Counter(nc or {})
        self.meta = {}     # metadata the output must carry, by value
        self.kinds = True  # the not-converted kinds are known (else only their number)
        self.same = []     # (what, a, b): two counts made here that must agree


class Converted:
    def __init__(self, figs, kinds, meta, err):
        self.figs, self.kinds, self.meta, self.err = figs, kinds, meta, err


def convert(ctx, src, label, extra=()):
    """-o ir: the IR's figures and metadata, and the summary line's kinds (which must agree)."""
    out = os.path.join(ctx.work, re.sub(r"[^\w.-]", "_", label) + ".acc.ir.txt")
    r = ctx.run(["-f", "-o", "ir", *extra, src, out])
    err = r.stderr.decode(errors="replace")
    if not ctx.check(r.returncode == 0, f"{label}: exit {r.returncode}: {err.strip()[-400:]}"):
        return None
    figs, meta = {}, {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            if line.startswith("figure "):
                k, _, v = line[7:].strip().partition("=")
                figs[k] = int(v)
            elif line.startswith("meta "):
                k, v = json.loads("[" + line[5:].strip().replace('" "', '", "', 1) + "]")
                meta[k] = v
    summary = [l for l in err.splitlines() if " -> " in l and l.startswith("traceconv: ")]
    kinds = {}
    if ctx.check(len(summary) == 1, f"{label}: one summary line: {err[-300:]}"):
        m = NC_RE.search(summary[0])
        kinds = kinds_text(m.group(1) if m else "")
        line = NC_RE.sub("", summary[0])  # the kinds' names hold no figure
        sfigs = tclib.parse_figures(line)
        for name in ("records", "not-converted", "bad-line"):
            ctx.eq(sfigs.get(name, 0), figs.get(name, 0), f"{label}: the summary line's {name} is the IR's figure")
    ctx.eq(kinds, kinds_text(meta.get("not-converted", "")), f"{label}: the summary's kinds are the metadata's")
    ctx.eq(sum(kinds.values()), figs.get("not-converted", 0), f"{label}: the kinds add up to the figure not-converted")
    return Converted(figs, kinds, meta, err)


def account(ctx, label, src, e, extra=()):
    """Convert src and check its figures against e; the sum: inputs = converted + dropped + not converted."""
    got = convert(ctx, src, label, extra)
    if not got:
        return None
    f = got.figs
    raw = f.get("records", 0) + f.get("sched-events", 0)
    dropped = sum(f.get(k, 0) for k in e.drops)
    nc = f.get("not-converted", 0)
    print(f"{label}: {e.inputs} input records: {e.converted} converted ({e.raw} raw records), "
          f"{sum(e.drops.values())} dropped {dict(e.drops) or ''}, {sum(e.nc.values())} not converted {dict(e.nc) or ''}")
    ctx.eq(e.converted + sum(e.drops.values()) + sum(e.nc.values()), e.inputs, f"{label}: the count made here adds up")
    ctx.eq(raw, e.raw, f"{label}: raw records (records + sched-events) of the {e.converted} converted")
    for k, n in e.drops.items():
        ctx.eq(f.get(k, 0), n, f"{label}: records dropped as {k}")
    ctx.eq(nc, sum(e.nc.values()), f"{label}: the figure not-converted")
    if e.kinds:
        want = collections.Counter()
        for k, n in e.nc.items():
            want[cut(k)] += n
        if len(want) <= 12:  # past 12 kinds the rest are "of other kinds"
            ctx.eq(got.kinds, dict(want), f"{label}: not converted, by kind")
    ctx.eq(e.converted + dropped + nc, e.inputs, f"{label}: every input record is converted, dropped with a reason "
           f"or not converted ({e.converted} + {dropped} + {nc})")
    for k, v in e.meta.items():
        ctx.eq(got.meta.get(k), v, f"{label}: metadata {k}")
    for what, a, b in e.same:
        ctx.eq(a, b, f"{label}: {what}")
    return got


# ---- ART v1-v3 -------------------------------------------------------------------------------

META_MAX = 4096  # keys a trace's metadata keeps (tc_trace.h)


def key_sections(text):
    """Lines under sections no ART writes: {"*name": lines}, key lines past the metadata's
    4096 keys; and lines after *end (a summary's)."""
    nc, sec, after, keys, version = collections.Counter(), None, 0, set(), False
    lines = text.split("\n")
    for i, line in enumerate(lines):
        line = line.rstrip("\r")
        if line == "*end":
            after = sum(1 for l in lines[i + 1:] if l.rstrip("\r"))
            break
        if line.startswith("*"):
            sec = line if line not in ("*version", "*threads", "*methods") else None
            version = line == "*version"
        elif line and sec:
            nc[sec] += 1
        elif line and version and "=" in line:
            k = line.split("=", 1)[0]
            if k not in keys and len(keys) >= META_MAX:
                nc["key past 4096 keys"] += 1
            elif k not in keys:
                keys.add(k)
    return nc, after


def stream_walk(b):
    """A v1-family stream: (records, summary items before the end, summary text or None)."""
    hdr = artrace_inspect.parse_bin_header(b, 0)
    off, size = hdr["offset_to_data"], hdr["record_size"]
    records, early, summary = 0, 0, None
    while off + 2 <= len(b):
        if struct.unpack_from("<H", b, off)[0]:
            if off + size > len(b):
                break
            records += 1
            off += size
            continue
        if off + 3 > len(b):
            break
        op = b[off + 2]
        if op == 1 and off + 5 <= len(b):
            off += 5 + struct.unpack_from("<H", b, off + 3)[0]
        elif op == 2 and off + 7 <= len(b):
            off += 7 + struct.unpack_from("<H", b, off + 5)[0]
        elif op == 3 and off + 7 <= len(b):
            n = struct.unpack_from("<I", b, off + 3)[0]
            if off + 7 + n == len(b):
                summary = b[off + 7:].decode("utf-8", "replace")
            else:
                early += 1
            off += 7 + n
        else:
            break
    return records, early, summary


def expect_art(path):
    with open(path, "rb") as f:
        b = f.read()
    nc = collections.Counter()
    if b.startswith(b"*version"):
        records = artrace_inspect.inspect(path)["records"]
        secs, _ = key_sections(b[:b.find(b"*end\n") + 5].decode("utf-8", "replace"))
        nc.update(secs)
    else:
        records, early, summary = stream_walk(b)
        nc["summary item before the end"] += early
        if summary is not None:
            secs, after = key_sections(summary)
            nc.update(secs)
            nc["line after the summary's *end"] += after
    nc = +nc
    e = Expect(records + sum(nc.values()), records, records, nc=nc)
    if not nc:  # artrace_inspect.py reads a stream to its first summary item
        e.same.append(("records counted by artrace_inspect.py", records, artrace_inspect.inspect(path)["records"]))
    return e


def expect_art_v2(path):
    with open(path, "rb") as f:
        b = f.read()
    records = artrace_inspect.inspect_v2(b)["records"]
    packets, _ = artrace_inspect.v2_framing(b, False, 12)
    nc = collections.Counter()
    end = [off for t, off in packets if t == 3]
    if end:  # what follows the summary, framed as ART's packets are (Android 16 blocks)
        q = end[0] + 3 + struct.unpack_from("<H", b, end[0] + 1)[0]
        kinds = {0: (7, 5, "thread packet after the summary"), 1: (11, 9, "method packet after the summary"),
                 3: (3, 1, "summary after the summary")}
        while q < len(b):
            t = b[q]
            if t in kinds and q + kinds[t][0] <= len(b):
                n = struct.unpack_from("<H", b, q + kinds[t][1])[0]
                if q + kinds[t][0] + n <= len(b):
                    nc[kinds[t][2]] += 1
                    q += kinds[t][0] + n
                    continue
            if t == 2 and q + 12 <= len(b) and q + 12 + struct.unpack_from("<I", b, q + 8)[0] <= len(b):
                nc["block after the summary"] += 1
                q += 12 + struct.unpack_from("<I", b, q + 8)[0]
                continue
            nc["bytes after the summary"] += 1
            break
    return Expect(records + sum(nc.values()), records, records, nc=nc)


# ---- long-running dumps, Perfetto traces -------------------------------------------------------

def dump_of(path):
    data = open(path, "rb").read()
    if data[:4] == b"SLOW" or (data and data[0] <= 2):
        return artlr_inspect.decode_dump(data)
    return artlr_inspect.decode_dump(base64.b64decode(artlr_inspect.b64_block(data), validate=True))


def summaries(dumps):
    return "; ".join(f"{d['summary'][0]} {d['summary'][1]}" for d in dumps if d["summary"])


def expect_longrun(path):
    records = artlr_inspect.model(path)["records"]
    e = Expect(records, records, records)
    s = summaries([dump_of(path)])
    if s:
        e.meta["summary-timestamps"] = s
    return e


def packet_schema(ctx):
    """TracePacket's fields in the schema: ({number: name} of `oneof data`, {number: name} of the others)."""
    with open(os.path.join(ctx.schema_dir("perfetto_trace.proto"), "perfetto_trace.proto"), encoding="utf-8") as f:
        lines = f.read().split("\n")
    start = lines.index("message TracePacket {")
    data, other, stack = {}, {}, []
    for line in lines[start + 1:]:
        s = line.split("//")[0].strip()
        if not s:
            continue
        m = re.match(r"(message|oneof|enum) (\w+) \{", s)
        if m:
            stack.append(m.group(2) if m.group(1) == "oneof" else "-")
            continue
        if s.startswith("}"):
            if not stack:
                break
            stack.pop()
            continue
        m = re.match(r"(?:optional |repeated )?[\w.]+ (\w+) = (\d+);", s)
        if m and (not stack or stack[-1] not in ("-",)):
            (data if stack == ["data"] else other)[int(m.group(2))] = m.group(1)
    return data, other


def check_packet_table(ctx, data, other):
    """pftrace.c names a packet by these tables: they must be the schema's."""
    with open(os.path.join(ctx.source, "src", "readers", "pftrace.c"), encoding="utf-8") as f:
        src = f.read()
    table = src[src.index("packet_kinds[] = {"):src.index("};", src.index("packet_kinds[] = {"))]
    ctx.eq({int(n): name for n, name in re.findall(r'\{(\d+), "(\w+)"\}', table)}, data,
           "pftrace.c's packet_kinds is the schema's TracePacket oneof data")
    body = src[src.index("static bool packet_context"):]
    body = body[:body.index("}")]
    ctx.eq(sorted(int(n) for n in re.findall(r"f == (\d+)", body)), sorted(other),
           "pftrace.c's packet_context is the schema's other TracePacket fields")


def protoc_packets(ctx, path):
    """Each top-level field of a Trace as protoc decodes it: (name, [its fields' names], raw text)."""
    with open(path, "rb") as f:
        r = ctx.oracle(["protoc", "--proto_path=" + ctx.schema_dir("perfetto_trace.proto"),
                        "--decode=perfetto.protos.Trace", "perfetto_trace.proto"], stdin=f)
    if r is None or not ctx.check(r.returncode == 0, f"protoc cannot decode {path}: {r.stderr[:300]!r}"):
        return None
    out, cur = [], None
    for line in r.stdout.decode("utf-8", errors="replace").split("\n"):
        if not line:
            continue
        if not line.startswith(" "):
            if line == "}":
                cur = None
                continue
            name = re.match(r"(\w+)", line).group(1)
            out.append([name, [], line])
            cur = out[-1] if line.endswith("{") else None
        elif cur is not None:
            cur[2] += "\n" + line
            m = re.match(r"  (\w+)[ :]", line)
            if m:
                cur[1].append(m.group(1))
    return out


def expect_pftrace(ctx, path, schema):
    data, other = schema
    packets = protoc_packets(ctx, path)
    if packets is None:
        return None
    names = set(data.values())
    context = set(other.values())
    nc, dumps = collections.Counter(), 0
    for name, fields, text in packets:
        if name != "packet":
            nc[f"Trace field {name}"] += 1
        elif "SLOW\\366\\000" in text:  # the payload of art_method_trace_long_running
            dumps += 1
        elif [f for f in fields if f in names]:
            nc[[f for f in fields if f in names][0]] += 1
        elif [f for f in fields if f not in context]:
            nc["TracePacket field " + [f for f in fields if f not in context][0]] += 1
        else:
            nc["interned_data" if "interned_data" in fields else "trace_packet_defaults"
               if "trace_packet_defaults" in fields else "packet without data"] += 1
    lr = artlr_inspect.lr_packets(open(path, "rb").read())
    ctx.eq(dumps, len(lr), f"{path}: the packets protoc shows with a dump are those artlr_inspect.py finds")
    records = artlr_inspect.model(path)["records"]
    e = Expect(records + sum(nc.values()), records, records, nc=nc)
    s = summaries([artlr_inspect.decode_dump(p) for _, _, p in lr])
    if s:
        e.meta["summary-timestamps"] = s
    return e


# ---- Rhea -------------------------------------------------------------------------------------

BODY = re.compile(r"(\d{1,9})\.(\d{1,9})(?: +(\d{1,10}))?: *(.*)")
PAYLOAD = re.compile(r"B\|\d+\|.*|E(\|.*)?|C\|\d+\|[^|]+\|-?[\d.]+.*|[SF]\|\d+\|.*\|-?\d+|I\|\d+\|.+|"
                     r"N\|\d+\|[^|]+\|.+|[GH]\|\d+\|.*")
PROFILO = re.compile(r"\d+\|([^|]*)")
TIME = re.compile(r" *\d{1,9}\.\d{1,9}")


def expect_rhea_text(path):
    data = open(path, "rb").read()
    if data[:2] == b"\x1f\x8b":
        data = gzip.decompress(data)
    lines = [l.rstrip("\r") for l in data.decode("utf-8", "replace").split("\n")]
    lines = [l for l in lines if l]
    if lines and re.match(r"\d+\|TRACE_START\|", lines[0]):
        lines = lines[1:]  # the header
    e = Expect(inputs=len(lines))
    pid = None
    stacks, pending_t, caught = collections.defaultdict(list), {}, 0
    for i, line in enumerate(lines):
        m = PROFILO.match(line)
        if m:
            if m.group(1) != "TRACE_END":
                e.nc[m.group(1) or "unnamed profilo entry"] += 1
            else:
                e.converted += 1  # the dump's end
            continue
        m = BODY.fullmatch(line)
        if not m or not PAYLOAD.fullmatch(m.group(4)):
            e.drops["bad-line"] = e.drops.get("bad-line", 0) + 1
            continue
        payload = m.group(4)
        parts = payload.split("|", 2)
        if pid is None and len(parts) > 1 and parts[1].isdigit():
            pid = parts[1]
        if parts[0] == "B" and parts[2].startswith("monotonic_time:"):
            if not TIME.fullmatch(parts[2][15:]):
                e.drops["bad-line"] = e.drops.get("bad-line", 0) + 1
            else:
                e.converted += 1  # metadata
            continue
        e.converted += 1
        e.raw += 1
        tid = m.group(3) or (parts[1] if len(parts) > 1 else pid)
        name = parts[2] if parts[0] == "B" and len(parts) > 2 else ""
        if len(name) < 3 or name[1] != ":" or name[0] not in "BET":
            continue
        mk, x, st = name[0], name[2:], stacks[tid]
        if mk == "B":  # RHEA.md §4.2: T:x then E:x (or T:x) while x is the innermost: caught inside x
            st.append([x, None])
            continue
        idx = max((k for k, fr in enumerate(st) if fr[0] == x), default=None)
        if idx is None:
            continue
        if st[idx][1] is not None and idx == len(st) - 1:
            caught += 1
            st[idx][1] = None
        if mk == "T" and idx == len(st) - 1:
            st[idx][1] = i
            continue
        del st[idx:]
    if caught:
        e.nc["T: throw caught in its method"] += caught
        e.converted -= caught
        e.raw -= caught
    return e


def expect_rhea_bin2(path):
    b = open(path, "rb").read()
    n = sum(1 for off in range(32, len(b) - 15, 16) if struct.unpack_from("<Q", b, off + 8)[0])
    return Expect(n, n, 2 * n)  # a slice: its enter and its exit


def expect_rhea_sampling(path):
    b = open(path, "rb").read()
    version, extra = struct.unpack_from("<I", b, 8)[0], struct.unpack_from("<i", b, 24)[0]
    off, fixed = 28 + max(extra, 0), 40 + (16 if version >= 4 else 0) + (12 if version >= 5 else 0)
    good = bad = 0
    while len(b) - off >= fixed + 8:
        saved, actual = struct.unpack_from("<II", b, off + fixed)
        begin, end = struct.unpack_from("<QQ", b, off + 8)
        off += fixed + 8 + saved * 8
        if saved != actual or not saved or begin > (1 << 62) or end > (1 << 62):
            bad += 1
        else:
            good += 1
    return Expect(good + bad, good, good, drops={"bad-line": bad})


def expect_rhea(path):
    b = open(path, "rb").read(12)
    if struct.unpack_from("<I", b, 0)[0] == 0x01020304:
        return expect_rhea_sampling(path)
    if struct.unpack_from("<I", b, 0)[0] == 5:
        return expect_rhea_bin2(path)
    return expect_rhea_text(path)


# ---- IR ---------------------------------------------------------------------------------------

TABLE = re.compile(r"(trace|process|thread|method|stack) ")


def expect_ir(path):
    lines = open(path, encoding="utf-8", errors="replace").read().split("\n")[1:]
    e, events = Expect(), False
    for line in (l.rstrip("\r") for l in lines):
        if not line or line.startswith("figure ") or line.startswith('meta "not-converted" '):
            continue  # the dumping conversion's accounting
        e.inputs += 1
        if re.match(r"[BEICSFP] ", line):
            events = True
            e.converted += 1
        elif not events and (TABLE.match(line) or line.startswith("meta ")):
            e.converted += 1
            if line.startswith("meta "):
                k, v = json.loads("[" + line[5:].replace('" "', '", "', 1) + "]")
                e.meta[k] = v
        else:
            e.drops["bad-line"] = e.drops.get("bad-line", 0) + 1
    e.raw = sum(1 for l in lines if re.match(r"[BEICSFP] ", l))
    return e


# ---- JSON -------------------------------------------------------------------------------------

def expect_json(path):
    m = json_reference(json_load(path))
    converted = m.inputs - m.bad - sum(m.nc.values())
    e = Expect(m.inputs, converted, m.records, drops={"bad-line": m.bad}, nc=m.nc)
    e.kinds = "(other kinds)" not in m.nc
    return e


# ---- systrace ---------------------------------------------------------------------------------

STRUCTURE = re.compile(r"version = \d+|CPU \d+ is empty|cpus=\d+|capturing trace\.\.\..*|TRACE:|done")
PS_HEADER = re.compile(r"USER\s+PID\s+PPID\b")


def ftrace_text(path):
    """The ftrace text of a capture: plain, TRACE: + zlib (after adb's lines), or the trace-data
    blocks of a page that are no PROCESS DUMP and no JSON."""
    raw = open(path, "rb").read()
    i = raw.find(b"TRACE:\n")
    if 0 <= i < 200 and not raw[i + 7:].lstrip().startswith(b"#") and raw[i + 7:i + 8] == b"x":
        raw = zlib.decompress(raw[i + 7:])
    text = raw.decode("utf-8", errors="replace")
    if text.lstrip().lower().startswith(("<!doctype", "<html")):
        p = TraceData()
        p.feed(text)
        text = "\n".join(b for b in p.blocks if b.strip() and not b.strip().startswith(("PROCESS DUMP", "{", "[")))
    return text


def expect_systrace(path):
    e = Expect()
    lines = ftrace_text(path).split("\n")
    listing = False
    for line in (l.rstrip("\r") for l in lines):
        s = line.strip()
        if not s or s.startswith("#") or STRUCTURE.fullmatch(s):
            continue
        if PS_HEADER.match(s):
            listing = True  # old systrace's ps -t table, to the end: a process listing, not records
        if listing:
            continue
        e.inputs += 1
        if FTRACE_LINE.search(line):
            e.converted += 1
        else:
            e.drops["bad-line"] = e.drops.get("bad-line", 0) + 1
    e.kinds = False
    return e


def check_systrace(ctx, label, src, e):
    """Event lines: raw or system records, unmatched-async-end, not converted or (some) bad lines."""
    got = convert(ctx, src, label)
    if not got:
        return
    f = got.figs
    other = e.drops.get("bad-line", 0)
    raw = f.get("records", 0) + f.get("sched-events", 0)
    unreadable = f.get("bad-line", 0) - other  # event lines the reader could not read
    print(f"{label}: {e.inputs} input records: {e.converted} event lines, {other} other lines of the ftrace text")
    ctx.check(unreadable >= 0, f"{label}: every line that is no event line is a bad-line ({f.get('bad-line', 0)} of {other})")
    ctx.eq(raw + f.get("unmatched-async-end", 0) + f.get("not-converted", 0) + unreadable, e.converted,
           f"{label}: every event line is a record, a system record, an unmatched async end, not converted or bad")


# ---- inputs made here -------------------------------------------------------------------------

def made_inputs(ctx):
    """(label, path, reader) of inputs that exercise each reader's counts."""
    out = []
    d = os.path.join(ctx.work, "made")
    os.makedirs(d, exist_ok=True)

    def put(name, data, reader):
        p = os.path.join(d, name)
        with open(p, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
        out.append((f"made/{name}", p, reader))
        return p

    b = open(os.path.join(ctx.corpus, "v3-dual.trace"), "rb").read()
    i = b.find(b"*methods\n")
    put("unknown-section.trace", b[:i] + b"*extra\nfoo\tbar\n42\tnot a thread\n" + b[i:], "art")
    i = b.find(b"*threads\n")
    put("many-keys.trace", b[:i] + b"".join(b"k%d=%d\n" % (n % 4200, n) for n in range(4300)) + b[i:], "art")
    s = open(os.path.join(ctx.corpus, "streaming-f3-summary.trace"), "rb").read()
    off = struct.unpack_from("<H", s, 6)[0]
    early = b"*version\n3\nclock=dual\n*end\n"
    _, _, summary = stream_walk(s)
    at = len(s) - len(summary.encode("utf-8")) - 7
    late = summary.encode("utf-8") + b"left=over\n\nand more\n"
    put("summary-items.trace", s[:off] + b"\x00\x00\x03" + struct.pack("<I", len(early)) + early + s[off:at] +
        b"\x00\x00\x03" + struct.pack("<I", len(late)) + late, "art")
    v = open(os.path.join(ctx.corpus, "art-v2", "a16-streaming-dual-ns.trace"), "rb").read()
    put("after-summary.trace", v + b"\x00" + struct.pack("<IH", 77, 4) + b"late" + b"\x01" + struct.pack("<QH", 8, 6) +
        b"a\tb\tc\n" + b"\x07\x07", "art-v2")
    # a Perfetto trace of traceconv's own (track events, descriptors, a clock snapshot...), a
    # top-level field that is no packet, then the long-running packets
    pf = os.path.join(d, "v3-dual.pftrace")
    ctx.run(["-f", "-o", "perfetto", os.path.join(ctx.corpus, "v3-dual.trace"), pf], check_rc=0)
    lr = open(os.path.join(ctx.corpus, "art-longrun", "startup.pftrace"), "rb").read()
    put("mixed.pftrace", open(pf, "rb").read() + b"\x12\x03abc" + lr, "pftrace")
    os.remove(pf)
    t = open(os.path.join(ctx.corpus, "rhea", "v1-allthreads.rhea-atrace.txt"), encoding="utf-8").read().split("\n")
    t[2:2] = ["17|TRACE_ABORT|51234500000000|4242", "18|TRACE_START|51234500000000|4242|2147483647|2|18316",
              "51234.500052 4242: B|4242|monotonic_time: soon"]
    put("entries.rhea-atrace.txt", "\n".join(t), "rhea")
    ir = ctx.run(["-o", "ir", os.path.join(ctx.corpus, "v3-dual.trace"), "-"], check_rc=0).stdout.decode().split("\n")
    ir[3:3] = ["no such line"]
    ir.insert(-1, 'thread 9 tid=9 records=0 name="late"')
    put("lines.ir.txt", "\n".join(ir), "ir")
    put("objects.json", json.dumps({"traceEvents": [
        {"ph": "B", "name": "work", "pid": 1, "tid": 1, "ts": 1},
        {"ph": "N", "name": "obj", "id": "0x1", "pid": 1, "tid": 1, "ts": 2},
        {"ph": "O", "name": "obj", "id": "0x1", "pid": 1, "tid": 1, "ts": 3, "args": {"snapshot": {}}},
        {"ph": "O", "name": "obj", "id": "0x1", "pid": 1, "tid": 1, "ts": 4, "args": {"snapshot": {}}},
        {"ph": "D", "name": "obj", "id": "0x1", "pid": 1, "tid": 1, "ts": 5},
        {"ph": "E", "pid": 1, "tid": 1, "ts": 6}]}), "json")
    return out


# ---- the batch summary ------------------------------------------------------------------------

def check_batch(ctx, made, singles):
    """A batch over a folder of made inputs: each member's not_converted kinds are its single
    conversion's; a member that converted everything has none."""
    d = os.path.join(ctx.work, "batch-in")
    os.makedirs(d, exist_ok=True)
    members = {}
    for label, path, reader in made:
        if reader in ("json", "pftrace", "rhea"):
            shutil.copy(path, d)
            members[os.path.basename(path)] = singles.get(label)
    shutil.copy(os.path.join(ctx.corpus, "v3-dual.trace"), d)
    members["v3-dual.trace"] = None
    out = os.path.join(ctx.work, "batch-out")
    r = ctx.run(["batch", "-q", "-o", "ir", "-O", out, d])
    if not ctx.eq(r.returncode, 0, f"batch: {r.stderr.decode(errors='replace')[-300:]}"):
        return
    with open(os.path.join(out, "traceconv-batch.json")) as f:
        s = json.load(f)
    for name, single in members.items():
        es = [m for m in s["members"] if m["member"] == name]
        if not ctx.eq(len(es), 1, f"batch: member {name} listed"):
            continue
        if single is None:
            ctx.check("not_converted" not in es[0], f"batch: {name} converted everything: no not_converted")
            continue
        ctx.eq(es[0].get("not_converted", {}), single.kinds, f"batch: {name}'s not_converted")
        ctx.eq(es[0].get("figures", {}).get("not-converted"), single.figs.get("not-converted"),
               f"batch: {name}'s figure not-converted")
    obj = [m for m in s["members"] if m["member"] == "objects.json"]
    if obj:
        ctx.eq(obj[0].get("not_converted"), {"N": 1, "O": 2, "D": 1}, "batch: the O/N/D phases of objects.json")


# ---- main -------------------------------------------------------------------------------------

def main():
    ctx = tclib.Ctx()
    schema = packet_schema(ctx)
    check_packet_table(ctx, *schema)
    inputs = []  # (label, path, reader)
    for stem, path, _ in ctx.project_cases():
        inputs.append((f"corpus/{stem}.trace", path, "art"))
    v2 = os.path.join(ctx.corpus, "art-v2")
    for f in sorted(os.listdir(v2)):
        if f.endswith(".trace"):
            inputs.append((f"corpus/art-v2/{f}", os.path.join(v2, f), "art" if f.endswith(".v3.trace") else "art-v2"))
    for label, path, facts in ctx.corpus_inputs("art-longrun"):
        inputs.append((label, path, "pftrace" if facts.get("kind") == "pftrace" else "art-longrun"))
    for label, path, _ in ctx.corpus_inputs("rhea"):
        inputs.append((label, path, "rhea"))
    for label, path, facts in ctx.corpus_inputs("systrace"):
        src = os.path.join(ctx.corpus, "systrace", facts["same_as"]) if facts.get("same_as") else path
        inputs.append((label, (path, src), "systrace"))
    for d, reader in (("ir", "ir"), ("json", "json")):
        for f in sorted(os.listdir(os.path.join(ctx.source, "tests", d))):
            inputs.append((f"tests/{d}/{f}", os.path.join(ctx.source, "tests", d, f), reader))
    for reader in sorted(os.listdir(HERE)):  # the reader goldens' inputs
        d = os.path.join(HERE, reader)
        if os.path.isdir(d):
            for f in sorted(os.listdir(d)):
                if f.endswith(".ir") and reader != "art":
                    src = os.path.join(d, f[:-3])
                    inputs.append((f"tests/golden/{reader}/{f[:-3]}", (src, src) if reader == "systrace" else src,
                                   reader))
    made = made_inputs(ctx)
    inputs += made
    expect = {"art": expect_art, "art-v2": expect_art_v2, "art-longrun": expect_longrun, "rhea": expect_rhea,
              "ir": expect_ir, "json": expect_json, "pftrace": lambda p: expect_pftrace(ctx, p, schema)}
    singles, readers = {}, collections.Counter()
    for label, path, reader in inputs:
        readers[reader] += 1
        if reader == "systrace":
            check_systrace(ctx, label, path[0], expect_systrace(path[1]))
            continue
        e = expect[reader](path)
        if e is not None:
            singles[label] = account(ctx, label, path, e)
    print("inputs per reader:", dict(readers))
    ctx.check(all(readers[r] for r in ("art", "art-v2", "art-longrun", "pftrace", "rhea", "ir", "json", "systrace")),
              f"every reader's inputs were found: {dict(readers)}")
    for label, _, _ in made:  # each made input has something not converted or bad, said
        got = singles.get(label)
        if got:
            ctx.check(got.figs.get("not-converted", 0) + got.figs.get("bad-line", 0) > 0,
                      f"{label}: its records left out are counted")
    check_batch(ctx, made, singles)
    ctx.done()


if __name__ == "__main__":
    main()
