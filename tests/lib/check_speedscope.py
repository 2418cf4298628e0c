#!/usr/bin/env python3
"""Strict checker of speedscope's file format, written from the speedscope notes
(docs/outputs/SPEEDSCOPE.md in the team's shared notes: speedscope 1.25.0's file-format-spec.ts and its
importer's rules), independently of traceconv's writer.

    python3 check_speedscope.py FILE.speedscope.json [...]

Exit 0 when every file passes, 1 otherwise (each problem on one line, the first 20 per
file). As a module: problems(doc) -> list of strings, load(path) -> doc.

What is checked (§ of SPEEDSCOPE.md):
- the text is JSON with no NaN/Infinity, no duplicate member in an object, valid UTF-8 (§7.8);
- top level (§2): "$schema" is exactly the URL; "shared.frames" and "profiles" are arrays;
  "name", "exporter" strings when present; "activeProfileIndex" an integer naming a profile;
- frames (§2.1): objects with a string "name", optional "file" (string), "line" and "col"
  (integers >= 1); no other member, no null; no two identical entries (identity is the
  index, so a duplicate splits one function in two);
- every profile (§3, §4): "type" evented or sampled, a string "name", "unit" one of
  none/nanoseconds/microseconds/milliseconds/seconds/bytes, numeric "startValue" and
  "endValue" with endValue >= startValue;
- evented (§3): events {"type": "O"|"C", "frame": index in range, "at": number}; "at"
  never below startValue (the importer replays at - startValue from 0) and never below the
  previous event's; a C on an empty stack, a C naming another frame than the innermost open
  one, and frames still open at the end are errors (each makes the importer throw);
- sampled (§4): "samples" (arrays of frame indexes in range) and "weights" of the same
  length; every weight a positive finite number;
- every number finite and of magnitude at most 2^53 (a double's exact integers, §2.2).
"""
import json
import math
import sys

SCHEMA = "https://www.speedscope.app/file-format-schema.json"
UNITS = {"none", "nanoseconds", "microseconds", "milliseconds", "seconds", "bytes"}
EXACT = 2 ** 53
FRAME_KEYS = {"name", "file", "line", "col"}


class Bad(ValueError):
    pass


def _no_constant(name):
    raise Bad(f"{name} is not JSON (NaN and Infinity are not numbers in JSON)")


def _no_duplicates(pairs):
    seen = set()
    for k, _ in pairs:
        if k in seen:
            raise Bad(f"member {k!r} appears twice in one object")
        seen.add(k)
    return dict(pairs)


def load(path):
    with open(path, "rb") as f:
        raw = f.read()
    text = raw.decode("utf-8")  # invalid UTF-8 raises UnicodeDecodeError
    return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_no_duplicates)


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


class Checker:
    def __init__(self):
        self.out = []

    def bad(self, msg):
        self.out.append(msg)

    def number(self, v, where):
        if not is_number(v):
            self.bad(f"{where}: {v!r} is not a number")
            return False
        if isinstance(v, float) and not math.isfinite(v):
            self.bad(f"{where}: {v!r} is not finite")
            return False
        if abs(v) > EXACT:
            self.bad(f"{where}: {v!r} is beyond 2^53 (a double loses integers there)")
            return False
        return True

    def string(self, v, where):
        if not isinstance(v, str):
            self.bad(f"{where}: {v!r} is not a string")
            return False
        return True

    def frames(self, frames):
        seen = {}
        for i, f in enumerate(frames):
            where = f"shared.frames[{i}]"
            if not isinstance(f, dict):
                self.bad(f"{where} is not an object")
                continue
            for k in sorted(set(f) - FRAME_KEYS):
                self.bad(f"{where} has an unknown member {k!r}")
            if "name" not in f:
                self.bad(f"{where} has no name")
            else:
                self.string(f["name"], f"{where}.name")
            if "file" in f:
                self.string(f["file"], f"{where}.file")
            for k in ("line", "col"):
                if k in f and not (is_int(f[k]) and 1 <= f[k] <= EXACT):
                    self.bad(f"{where}.{k}: {f[k]!r} is not an integer >= 1")
            key = json.dumps(f, sort_keys=True)
            if key in seen:
                self.bad(f"{where} is the same entry as shared.frames[{seen[key]}]: {key}")
            else:
                seen[key] = i

    def evented(self, p, where, n_frames, start):
        events = p.get("events")
        if not isinstance(events, list):
            self.bad(f"{where}.events is not an array")
            return
        stack, last = [], None
        for j, e in enumerate(events):
            w = f"{where}.events[{j}]"
            if not isinstance(e, dict):
                self.bad(f"{w} is not an object")
                return
            for k in sorted(set(e) - {"type", "frame", "at"}):
                self.bad(f"{w} has an unknown member {k!r}")
            t, fr, at = e.get("type"), e.get("frame"), e.get("at")
            if t not in ("O", "C"):
                self.bad(f"{w}.type: {t!r} is neither O nor C")
                return
            if not (is_int(fr) and 0 <= fr < n_frames):
                self.bad(f"{w}.frame: {fr!r} is not an index of shared.frames ({n_frames})")
                return
            if not self.number(at, f"{w}.at"):
                return
            if start is not None and at < start:
                self.bad(f"{w}.at: {at} is before startValue {start}")
                return
            if last is not None and at < last:
                self.bad(f"{w}.at: {at} is before the previous event's {last}")
                return
            last = at
            if t == "O":
                stack.append(fr)
            elif not stack:
                self.bad(f"{w}: C of frame {fr} with no frame open")
                return
            elif stack[-1] != fr:
                self.bad(f"{w}: C of frame {fr} while frame {stack[-1]} is the innermost open")
                return
            else:
                stack.pop()
        if stack:
            self.bad(f"{where}: {len(stack)} frames still open at the end (innermost {stack[-1]})")

    def sampled(self, p, where, n_frames):
        samples, weights = p.get("samples"), p.get("weights")
        if not isinstance(samples, list) or not isinstance(weights, list):
            self.bad(f"{where}: samples and weights must both be arrays")
            return
        if len(samples) != len(weights):
            self.bad(f"{where}: {len(samples)} samples but {len(weights)} weights")
        for j, s in enumerate(samples):
            if not isinstance(s, list) or not all(is_int(x) and 0 <= x < n_frames for x in s):
                self.bad(f"{where}.samples[{j}]: {s!r} is not an array of frame indexes (< {n_frames})")
                return
        for j, wt in enumerate(weights):
            if not self.number(wt, f"{where}.weights[{j}]"):
                return
            if wt <= 0:
                self.bad(f"{where}.weights[{j}]: {wt} is not positive")
                return

    def profile(self, p, i, n_frames):
        where = f"profiles[{i}]"
        if not isinstance(p, dict):
            self.bad(f"{where} is not an object")
            return
        kind = p.get("type")
        known = {"type", "name", "unit", "startValue", "endValue"} | (
            {"events"} if kind == "evented" else {"samples", "weights"})
        for k in sorted(set(p) - known):
            self.bad(f"{where} has an unknown member {k!r}")
        if kind not in ("evented", "sampled"):
            self.bad(f"{where}.type: {kind!r} is neither evented nor sampled")
            return
        self.string(p.get("name"), f"{where}.name")
        if p.get("unit") not in UNITS:
            self.bad(f"{where}.unit: {p.get('unit')!r} is not one of {sorted(UNITS)}")
        start, end = p.get("startValue"), p.get("endValue")
        ok = self.number(start, f"{where}.startValue") & self.number(end, f"{where}.endValue")
        if ok and end < start:
            self.bad(f"{where}: endValue {end} is below startValue {start}")
        if kind == "evented":
            self.evented(p, where, n_frames, start if ok else None)
        else:
            self.sampled(p, where, n_frames)

    def document(self, doc):
        if not isinstance(doc, dict):
            self.bad("the top level is not an object")
            return
        if doc.get("$schema") != SCHEMA:
            self.bad(f"$schema is {doc.get('$schema')!r}, not {SCHEMA!r}")
        for k in ("name", "exporter"):
            if k in doc:
                self.string(doc[k], k)
        shared = doc.get("shared")
        frames = shared.get("frames") if isinstance(shared, dict) else None
        if not isinstance(frames, list):
            self.bad("shared.frames is not an array")
            frames = []
        self.frames(frames)
        profiles = doc.get("profiles")
        if not isinstance(profiles, list):
            self.bad("profiles is not an array")
            return
        if not profiles and "name" not in doc:
            self.bad("no profile and no name (the importer reads profiles[0].name)")
        if "activeProfileIndex" in doc:
            a = doc["activeProfileIndex"]
            if not (is_int(a) and 0 <= a < len(profiles)):
                self.bad(f"activeProfileIndex {a!r} names no profile (there are {len(profiles)})")
        for i, p in enumerate(profiles):
            self.profile(p, i, len(frames))


def problems(doc):
    c = Checker()
    c.document(doc)
    return c.out


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[1])
        return 2
    failed = 0
    for path in argv[1:]:
        try:
            found = problems(load(path))
        except (ValueError, UnicodeDecodeError) as e:  # Bad, JSONDecodeError
            found = [f"not valid JSON: {e}"]
        for msg in found[:20]:
            print(f"{path}: {msg}")
        if len(found) > 20:
            print(f"{path}: ... {len(found) - 20} more")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
