"""Issue 5's cross-format checks that need both the systrace reader and writer.
1. ART -> systrace -> (our systrace reader) -> folded equals ART -> folded, stack
   by stack, for every project corpus trace and every valid ART trace of
   TC_EXTRA_CORPUS when it is set.
2. The project's atrace captures (corpus/systrace, and catapult's real one when
   TC_EXTRA_CORPUS holds it) converted to Perfetto show, per process, as many slice
   begins, counter values and async slices as the input has B, C and S lines for
   that pid: counted with a regex over the input, not by traceconv, and equal to
   the counts in the capture's facts (its generator's model)."""
import collections
import os
import re
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402
import test_perfetto  # noqa: E402  (its protoc decoder)

CAPTURE = "catapult-systrace-decompressed_atrace_data.txt"
PAYLOAD = re.compile(r": (?:tracing_mark_write|0|print): ([BCS])\|(\d+)\|", re.M)


def round_trip(ctx):
    sources = [p for _, p, _ in ctx.project_cases()]
    extra = ctx.extra_corpus("art")
    if extra:
        sources += [os.path.join(extra, f) for f in sorted(os.listdir(extra))
                    if f not in ("perflib-header.trace", "studio-perflib-basic-special_char.trace")]
    for src in sources:
        name = os.path.basename(src)
        html = os.path.join(ctx.work, name + ".html")
        a = os.path.join(ctx.work, name + ".art.folded")
        b = os.path.join(ctx.work, name + ".systrace.folded")
        ok = all(ctx.run(["-q", "-f", *args]).returncode == 0 for args in
                 (["-o", "systrace", src, html], ["-o", "folded", src, a], ["-o", "folded", html, b]))
        if not ctx.check(ok, f"{name}: a conversion of the round trip failed"):
            continue
        fa, fb = tclib.read_folded(a), tclib.read_folded(b)
        diff = {k: (fa.get(k), fb.get(k)) for k in set(fa) | set(fb) if fa.get(k) != fb.get(k)}
        ctx.check(not diff, f"{name}: ART -> folded vs ART -> systrace -> folded differ on {len(diff)} stacks, "
                            f"e.g. {list(diff.items())[:2]}")
        for p in (html, a, b):
            os.remove(p)


def perfetto_counts(packets):
    """{(kind, pid): n} for slice begins on thread tracks (B), counter values (C)
    and async slice begins (S), from the decoded Perfetto trace."""
    one = test_perfetto.one
    kind_of, pid_of, seq_track = {}, {}, {}
    for p in packets:
        td = one(p, "track_descriptor")
        if td:
            uuid = one(td, "uuid")
            if "thread" in td:
                kind_of[uuid], pid_of[uuid] = "thread", int(one(one(td, "thread"), "pid"))
            elif "process" in td:
                kind_of[uuid], pid_of[uuid] = "process", int(one(one(td, "process"), "pid"))
            else:
                kind_of[uuid] = "counter" if "counter" in td else "async"
                pid_of[uuid] = pid_of.get(one(td, "parent_uuid"))
        defs = one(p, "trace_packet_defaults")
        if defs:
            seq_track[one(p, "trusted_packet_sequence_id")] = one(one(defs, "track_event_defaults", {}), "track_uuid")
    out = collections.Counter()
    for p in packets:
        te = one(p, "track_event")
        if not te:
            continue
        track = one(te, "track_uuid", seq_track.get(one(p, "trusted_packet_sequence_id")))
        t, kind = one(te, "type"), kind_of.get(track)
        if t == "TYPE_SLICE_BEGIN" and kind in ("thread", "async"):
            out[("B" if kind == "thread" else "S", pid_of[track])] += 1
        elif t == "TYPE_COUNTER" and kind == "counter":
            out[("C", pid_of[track])] += 1
    return out


def capture_to_perfetto(ctx):
    captures = [(label, path, facts) for label, path, facts in ctx.corpus_inputs("systrace")
                if facts.get("counts", {}).get("B")]
    ctx.check(len(captures) >= 3, f"corpus/systrace holds captures with slices: {[c[0] for c in captures]}")
    captures += [(label, p, None) for label, p in ctx.extra_files("systrace") if os.path.basename(p) == CAPTURE]
    for label, src, facts in captures:
        with open(src, "rb") as f:
            raw = f.read()
        if raw.startswith(b"TRACE:\n") and raw[7:8] == b"\x78":  # atrace -z: the regex reads the text
            raw = zlib.decompress(raw[7:])
        want = collections.Counter((k, int(pid)) for k, pid in PAYLOAD.findall(raw.decode("utf-8", "replace")))
        if facts is not None:
            model = collections.Counter({(k, int(pid)): n for k, per in facts["counts"].items() if k in "BCS"
                                         for pid, n in per.items()})
            ctx.eq(dict(sorted(want.items())), dict(sorted(model.items())), f"{label}: B/C/S lines vs the facts")
        out, _ = ctx.convert(src, "perfetto", os.path.join(ctx.work, os.path.basename(src) + ".pftrace"))
        packets = test_perfetto.decode(ctx, out) if out else None
        if packets is None:
            continue
        got = perfetto_counts(packets)
        ctx.eq(dict(sorted(got.items())), dict(sorted(want.items())),
               f"{label}: per process: B/C/S lines vs slices, counter values and async slices in Perfetto")


def main():
    ctx = tclib.Ctx()
    round_trip(ctx)
    capture_to_perfetto(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
