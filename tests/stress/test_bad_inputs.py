"""Runs the bad-input suite (tests/stress/bad/cases.py): each case ends with its
expected outcome, a message naming the module and byte offset, and no output
file on error (nor a temporary file beside it)."""
import json
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "bad"))
import cases  # noqa: E402
import tclib  # noqa: E402


def main():
    ctx = tclib.Ctx()
    for name, path, expect in cases.write_cases(os.path.join(ctx.work, "cases")):
        out = os.path.join(ctx.work, name + ".json")
        if os.path.exists(out):
            os.remove(out)
        r = ctx.run(["-o", "json", *expect.get("args", ()), path, out])
        err = r.stderr.decode("utf-8", errors="replace")
        ctx.eq(r.returncode, expect["exit"], f"{name}: exit status ({err.strip()[:300]})")
        lines = [l for l in err.splitlines() if l.strip()]
        if expect["exit"] == 1:
            ctx.eq(len(lines), 1, f"{name}: one line on stderr")
            ctx.check(not os.path.exists(out), f"{name}: no output file after an error")
            left = [f for f in os.listdir(ctx.work) if tclib.is_temp_name(f)]
            ctx.check(not left, f"{name}: temporary files left: {left}")
        msg = lines[0] if lines else ""
        if expect["exit"] == 0 and expect["words"]:  # a conversion may warn more than once: find the one meant
            msg = next((l for l in lines if expect["words"] in l), msg)
        if expect["module"]:
            ctx.check(f": {expect['module']}: " in msg, f"{name}: message names module {expect['module']}: {msg}")
        if expect["offset"] is not None:
            m = re.search(r"offset 0x([0-9a-f]+)", msg)
            ctx.check(m and int(m.group(1), 16) == expect["offset"],
                      f"{name}: message names offset 0x{expect['offset']:x}: {msg}")
        if expect["words"]:
            ctx.check(expect["words"] in msg, f"{name}: message says '{expect['words']}': {msg}")
        if expect["exit"] == 0 and os.path.exists(out):
            try:
                with open(out, "rb") as f:
                    json.load(f)
                ctx.check(True, "")
            except ValueError as e:
                ctx.fail(f"{name}: output is not valid JSON: {e}")
    ctx.done()


if __name__ == "__main__":
    main()
