#!/usr/bin/env python3
"""Regenerates corpus/art-longrun/: ART long-running-method dumps (ART.md §6, §11) written by
tracegen --longrun from the scenarios here, in every form the art-longrun and pftrace readers
take, and facts.json: what tests/checkers/artlr_inspect.py (an independent decoder written from
the spec) finds in each file.

    python3 corpus/art-longrun/gen.py build/tracegen

The Perfetto-wrapped files carry the packet under placeholder field numbers (the real ones
are not published; the reader finds the packet by its content): startup.pftrace under
TracePacket field 1001 (payload 1, process_name 2) in 2 packets, startup.far.pftrace under
field 536870000 (payload 7, process_name 3) in 3 packets."""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
CHECKER = os.path.join(HERE, "..", "..", "tests", "checkers", "artlr_inspect.py")

# (output, scenario, tracegen options)
FILES = [
    ("startup.trace", "startup.scn", ["--longrun", "raw"]),
    ("startup.slow.trace", "startup.scn", ["--longrun", "slow"]),
    ("startup.summary.trace", "startup.scn", ["--longrun", "slow-summary", "--chunk-records", "4"]),
    ("startup.b64.txt", "startup.scn", ["--longrun", "raw", "--base64", "plain"]),
    ("startup.anr.txt", "startup.scn", ["--longrun", "slow-summary", "--base64", "anr",
                                        "--pf-process", "com.example.shop"]),
    ("startup.pftrace", "startup.scn", ["--longrun", "pftrace", "--pf-process", "com.example.shop"]),
    ("startup.far.pftrace", "startup.scn", ["--longrun", "pftrace", "--pf-fields", "536870000,7,3",
                                            "--pf-packets", "3", "--pf-process", "com.example.shop"]),
    ("deep.trace", "deep.scn", ["--longrun", "raw", "--chunk-records", "7"]),
    ("deep.pftrace", "deep.scn", ["--longrun", "pftrace", "--chunk-records", "5", "--pf-packets", "1",
                                  "--pf-process", "com.example.tree"]),
]


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gen.py TRACEGEN")
    tracegen = sys.argv[1]
    facts = {}
    for out, scn, opts in FILES:
        path = os.path.join(HERE, out)
        subprocess.run([tracegen, os.path.join(HERE, scn), path, *opts], check=True)
        m = json.loads(subprocess.run([sys.executable, CHECKER, path], check=True, capture_output=True).stdout)
        facts[out] = {"input": True, "scenario": scn, "tracegen": opts, "kind": m["kind"],
                      "records": m["records"], "threads": len(m["threads"]),
                      "ignored_exits": m["ignored_exits"], "open_at_end": m["open_at_end"],
                      "start_ns": m["start_ns"], "end_ns": m["end_ns"], "pid": m["pid"],
                      "process_names": m["process_names"]}
    with open(os.path.join(HERE, "facts.json"), "w", encoding="utf-8") as f:
        json.dump(facts, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
