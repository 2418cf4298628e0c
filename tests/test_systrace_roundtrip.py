"""Issue 5's cross-format checks that need both the systrace reader and writer.
1. ART -> systrace -> (our systrace reader) -> folded equals ART -> folded, stack
   by stack, for every project corpus trace and every valid shared ART trace.
2. The catapult capture converted to Perfetto shows, per process, as many slice
   begins, counter values and async slices as the input has B, C and S lines for
   that pid (counted with a regex over the input, not by traceconv)."""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(__file__))
import tclib  # noqa: E402
import test_perfetto  # noqa: E402  (its protoc decoder)

CAPTURE = "catapult-systrace-decompressed_atrace_data.txt"
PAYLOAD = re.compile(r": (?:tracing_mark_write|0|print): ([BCS])\|(\d+)\|", re.M)


def round_trip(ctx):
    sources = [p for _, p, _ in ctx.project_cases()]
    shared = ctx.shared_corpus("art")
    if shared:
        sources += [os.path.join(shared, f) for f in sorted(os.listdir(shared))
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
    corpus = ctx.shared_corpus("systrace")
    if not corpus:
        print("note: ../shared/corpus/systrace is absent: the capture check is skipped")
        return
    src = os.path.join(corpus, CAPTURE)
    with open(src, encoding="utf-8", errors="replace") as f:
        want = collections.Counter((k, int(pid)) for k, pid in PAYLOAD.findall(f.read()))
    out, _ = ctx.convert(src, "perfetto", os.path.join(ctx.work, "capture.pftrace"))
    packets = test_perfetto.decode(ctx, out) if out else None
    if packets is None:
        return
    got = perfetto_counts(packets)
    ctx.eq(dict(sorted(got.items())), dict(sorted(want.items())),
           "per process: B/C/S lines in the capture vs slices, counter values and async slices in Perfetto")


def main():
    ctx = tclib.Ctx()
    round_trip(ctx)
    capture_to_perfetto(ctx)
    ctx.done()


if __name__ == "__main__":
    main()
