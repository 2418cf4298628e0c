#!/usr/bin/env python3
"""An independent decoder of ART's long-running-method dump (shared/docs/formats/ART.md §6 and §11),
as a file (headerless, SLOW 0xF6, base64 text alone or in a report) or inside a Perfetto trace
(TracePacket.art_method_trace_long_running, found by content: the field numbers are not
published). Written from the spec, not from traceconv's C; standard library only.

    artlr_inspect.py FILE            prints the model as JSON

The model: threads (tid -> name, pid), the process (pid, name), every record, and the timeline
the conversion rules give (doc/formats.md, Conversion rules; DESIGN §4): an entry opens a frame named
by its method, an exit closes the innermost open frame, an exit with nothing open is ignored
(ignored-exit), frames still open at the end close at the last record's time (open-at-end);
the trace starts at the earliest session start that no record precedes, else at the earliest
record. From the timeline: per-thread slices, folded self time per stack (ns), per-method
calls and inclusive (outermost activations) and exclusive time.
"""
import base64
import json
import re
import sys

SLOW = b"SLOW"


def sleb(buf, pos, end):
    """(value, new pos); ValueError past end or past 10 bytes."""
    result = shift = 0
    for i in range(10):
        if pos >= end:
            raise ValueError(f"LEB128 runs past the end at {pos}")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            if b & 0x40:
                result -= 1 << shift
            return result, pos
    raise ValueError(f"LEB128 longer than 10 bytes at {pos - 10}")


def u(buf, pos, n):
    if pos + n > len(buf):
        raise ValueError(f"{n}-byte field at {pos} runs past the end ({len(buf)})")
    return int.from_bytes(buf[pos:pos + n], "little")


def wrap64(v):
    v &= (1 << 64) - 1
    return v - (1 << 64) if v >> 63 else v


def decode_dump(buf):
    """-> dict(slow, start, summary, records=[(tid, ts, is_exit, method)], threads={tid: name},
    methods={ptr: (cls, name, sig, src)})."""
    d = {"slow": False, "start": None, "summary": None, "records": [], "threads": {}, "methods": {}}
    pos = 0
    if buf[:4] == SLOW:
        if u(buf, 4, 2) != 0xF6:
            raise ValueError("not version 0xF6")
        if len(buf) < 32:
            raise ValueError("short SLOW header")
        d["slow"] = True
        d["start"] = u(buf, 6, 8)
        pos = 32
        if pos < len(buf) and buf[pos] == 3:
            d["summary"] = (u(buf, pos + 1, 8), u(buf, pos + 9, 8))
            pos += 17
    while pos < len(buf):
        kind = buf[pos]
        if kind == 2:
            tid, count, size = u(buf, pos + 1, 4), u(buf, pos + 5, 3), u(buf, pos + 8, 4)
            start, end = pos + 12, pos + 12 + size
            if end > len(buf):
                raise ValueError(f"chunk at {pos} runs past the end")
            p, t_acc, m_acc = start, 0, 0
            for _ in range(count):
                delta, p = sleb(buf, p, end)
                t_acc = wrap64(t_acc + delta)
                is_exit = t_acc & 1
                ts = t_acc >> 1
                method = None
                if not is_exit:
                    delta, p = sleb(buf, p, end)
                    m_acc = wrap64(m_acc + delta)
                    method = m_acc & ((1 << 64) - 1)
                d["records"].append((tid, ts, bool(is_exit), method))
            if p != end:
                raise ValueError(f"chunk at {pos}: {end - p} bytes after its records")
            pos = end
        elif kind == 0:
            tid, n = u(buf, pos + 1, 4), u(buf, pos + 5, 2)
            if pos + 7 + n > len(buf):
                raise ValueError("thread packet past the end")
            d["threads"][tid] = buf[pos + 7:pos + 7 + n].decode("utf-8", "replace")
            pos += 7 + n
        elif kind == 1:
            ptr, n = u(buf, pos + 1, 8), u(buf, pos + 9, 2)
            if pos + 11 + n > len(buf):
                raise ValueError("method packet past the end")
            line = buf[pos + 11:pos + 11 + n].decode("utf-8", "replace").rstrip("\n")
            f = line.split("\t")
            if len(f) >= 3:
                cls = f[0]
                if cls.startswith("L") and cls.endswith(";") and len(cls) >= 3:
                    cls = cls[1:-1]
                d["methods"][ptr] = (cls.replace("/", "."), f[1], f[2], f[3] if len(f) > 3 else "")
            pos += 11 + n
        elif kind == 3 and d["slow"]:
            pos += 17
        else:
            raise ValueError(f"unknown packet type {kind} at {pos}")
    return d


# ---- base64 (a marker line, the whole file, or the longest run of base64 lines) ----

B64_LINE = re.compile(rb"^[A-Za-z0-9+/]+=*$")
MARKER = re.compile(rb"[lL](ong running method|ong-running method|ongRunningMethod)")


def b64_block(text):
    lines = text.split(b"\n")
    stripped = [ln.strip() for ln in lines]
    m = MARKER.search(text)
    if m:
        k = text[:m.start()].count(b"\n") + 1
        while k < len(lines) and not stripped[k]:
            k += 1
        block = []
        while k < len(lines) and stripped[k] and b" " not in stripped[k] and b"\t" not in stripped[k]:
            block.append(stripped[k])
            k += 1
        if block:
            return b"".join(block)
    nonempty = [s for s in stripped if s]
    if nonempty and all(b" " not in s and b"\t" not in s for s in nonempty):
        return b"".join(nonempty)
    best, run = b"", []
    for s in stripped + [b" "]:
        if s and B64_LINE.match(s):
            run.append(s)
        else:
            if sum(map(len, run)) > len(best):
                best = b"".join(run)
            run = []
    return best


# ---- Perfetto protobuf, by content ----

def varint(buf, pos, end):
    v = shift = 0
    while True:
        if pos >= end:
            raise ValueError("varint past the end")
        b = buf[pos]
        pos += 1
        v |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            return v, pos
        if shift >= 70:
            raise ValueError("varint too long")


def fields(buf, start, end):
    pos = start
    while pos < end:
        key, pos = varint(buf, pos, end)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, pos = varint(buf, pos, end)
            yield num, wire, v
        elif wire == 2:
            n, pos = varint(buf, pos, end)
            if pos + n > end:
                raise ValueError("length-delimited field past the end")
            yield num, wire, (pos, pos + n)
            pos += n
        elif wire == 1:
            pos += 8
        elif wire == 5:
            pos += 4
        else:
            raise ValueError(f"wire type {wire}")
        if pos > end:
            raise ValueError("field past the end")


def lr_packets(buf):
    """[(pid or None, process name or None, payload bytes)] of every TracePacket carrying a dump."""
    out = []
    for num, wire, v in fields(buf, 0, len(buf)):
        if num != 1 or wire != 2:
            continue
        pid, found = None, None
        for pnum, pwire, pv in fields(buf, *v):
            if pnum == 79 and pwire == 0:
                pid = pv - (1 << 32) if pv & 0x80000000 and pv < (1 << 32) else pv
            elif pwire == 2 and found is None:
                try:
                    sub = list(fields(buf, *pv))
                except ValueError:
                    continue
                payload, name = None, None
                for snum, swire, sv in sub:
                    if swire != 2:
                        continue
                    data = buf[sv[0]:sv[1]]
                    if payload is None and data[:4] == SLOW and len(data) >= 6 and u(data, 4, 2) == 0xF6:
                        payload = data
                    elif name is None and all(c >= 0x20 and c != 0x7F for c in data):
                        name = data.decode("utf-8", "replace")
                if payload is not None:
                    found = (name, payload)
        if found:
            out.append((pid, found[0], found[1]))
    return out


# ---- the model ----

def method_names(methods, ptr):
    if ptr in methods:
        cls, name, sig, _src = methods[ptr]
        return f"{cls}.{name}: {sig}", f"{cls}.{name}"
    return f"unknown.0x{ptr:x}", f"unknown.0x{ptr:x}"


def model(path):
    data = open(path, "rb").read()
    dumps = []  # (pid, pname, decoded)
    if data[:1] == b"\x0a" and b"SLOW\xf6" in data:
        kind = "pftrace"
        for pid, pname, payload in lr_packets(data):
            dumps.append((pid, pname, decode_dump(payload)))
    elif data[:4] == SLOW or (data and data[0] <= 2):
        kind = "dump"
        dumps.append((None, None, decode_dump(data)))
    else:
        kind = "base64"
        dumps.append((None, None, decode_dump(base64.b64decode(b64_block(data), validate=True))))
    first_pid = next((p for p, _, _ in dumps if p is not None), None)
    # threads keyed by (process index, tid); methods by (process index, ptr)
    procs, threads, events = {}, {}, {}
    for pid, pname, d in dumps:
        pk = pid if pid is not None else first_pid
        procs.setdefault(pk, pname)
        if pname and not procs[pk]:
            procs[pk] = pname
        for tid, name in d["threads"].items():
            threads[(pk, tid)] = name
        for tid, ts, is_exit, method in d["records"]:
            full = short = None
            if not is_exit:
                full, short = method_names(d["methods"], method)
            events.setdefault((pk, tid), []).append((ts, is_exit, full, short))
    all_ts = [e[0] for evs in events.values() for e in evs]
    earliest, last = min(all_ts), max(all_ts)
    starts = [d["start"] for _, _, d in dumps if d["start"] is not None]
    start = min(starts) if starts and min(starts) <= earliest else earliest
    out_threads = []
    folded, profile = {}, {}
    ignored = open_end = 0
    for key in sorted(events, key=lambda k: (str(k[0]), k[1])):
        pk, tid = key
        name = threads.get(key, f"Thread-{tid}")
        root = f"{name}-{tid}"
        stack, slices, timeline = [], [], []

        def close(ts):
            full, short, t0, child = stack.pop()
            dur = ts - t0
            path = root + "".join(";" + s[1] for s in stack) + ";" + short
            folded[path] = folded.get(path, 0) + dur - child
            if stack:
                stack[-1][3] += dur
            slices.append((full, t0, ts))
            timeline.append(("E", ts))
            p = profile.setdefault((tid, full), [0, 0, 0])
            p[2] += dur - child
            if all(s[0] != full for s in stack):
                p[1] += dur
        for ts, is_exit, full, short in events[key]:
            if is_exit:
                if stack:
                    close(ts)
                else:
                    ignored += 1
            else:
                stack.append([full, short, ts, 0])
                timeline.append(("B", ts, full))
                profile.setdefault((tid, full), [0, 0, 0])[0] += 1
        open_end += len(stack)
        while stack:
            close(last)
        out_threads.append({"pid": pk, "tid": tid, "name": name, "records": len(events[key]),
                            "timeline": timeline, "slices": len(slices)})
    return {
        "kind": kind,
        "start_ns": start,
        "end_ns": last,
        "pid": first_pid,
        "process_names": {str(k): v for k, v in procs.items()},
        "records": sum(len(v) for v in events.values()),
        "ignored_exits": ignored,
        "open_at_end": open_end,
        "threads": out_threads,
        "folded_ns": {k: v for k, v in folded.items() if v},
        "profile": [[tid, full, *vals] for (tid, full), vals in sorted(profile.items(), key=str)],
    }


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: artlr_inspect.py FILE")
    json.dump(model(sys.argv[1]), sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
