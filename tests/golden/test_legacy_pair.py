"""Legacy split traces (pre-1.0 SDK, ART.md §7): name.key holds the key
section, name.data the binary part. Every non-streaming corpus trace is split
in two; given either half, traceconv must find the other and produce the same
IR dump as the combined file; given both paths (KEY DATA [OUTPUT]) too. A
missing half is one clear error, no output."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def main():
    ctx = tclib.Ctx()
    split = 0
    for name, path, _ in ctx.project_cases():
        with open(path, "rb") as f:
            data = f.read()
        if not data.startswith(b"*version\n") or b"\n*end\n" not in data:
            continue  # streaming traces were never split
        cut = data.index(b"\n*end\n") + len(b"\n*end\n")
        d = os.path.join(ctx.work, name)
        os.makedirs(d, exist_ok=True)
        key, dat = os.path.join(d, name + ".key"), os.path.join(d, name + ".data")
        with open(key, "wb") as f:
            f.write(data[:cut])
        with open(dat, "wb") as f:
            f.write(data[cut:])
        want = ctx.run(["-o", "ir", path, "-"], check_rc=0).stdout
        for half in (key, dat):
            got = ctx.run(["-o", "ir", half, "-"], check_rc=0).stdout
            ctx.check(got == want and want, f"{name}: IR from {os.path.basename(half)} equals the combined file's")
        split += 1
        # both halves named, with stems that differ, and an explicit OUTPUT
        other = os.path.join(d, "renamed.data")
        with open(other, "wb") as f:
            f.write(data[cut:])
        out_ir = os.path.join(d, "pair.ir.txt")
        ctx.run(["-f", "-o", "ir", key, other, out_ir], check_rc=0)
        if os.path.exists(out_ir):
            with open(out_ir, "rb") as f:
                got = f.read()
            body = lambda b: [l for l in b.splitlines() if not l.startswith(b"process ")]  # noqa: E731
            ctx.check(body(got) == body(want), f"{name}: IR from 'KEY DATA OUTPUT' equals the combined file's")
        # the halves in the other order (DATA KEY), named after the key half, as the library
        # opens them either way (issue 22 item 14); before, KEY was read as a second INPUT
        r = ctx.run(["-o", "ir", other, key], check_rc=0)
        out_key = os.path.join(d, name + ".ir.txt")
        if ctx.check(os.path.exists(out_key), f"{name}: 'DATA KEY' writes {os.path.basename(out_key)}"):
            with open(out_key, "rb") as f:
                ctx.check(body(f.read()) == body(want), f"{name}: IR from 'DATA KEY' equals the combined file's")
            os.remove(out_key)
        err = r.stderr.decode(errors="replace")
        ctx.eq(sum(" -> " in l for l in err.splitlines()), 1, f"{name}: 'DATA KEY': one conversion ({err.strip()})")
        if split == 1:  # the missing-half error, once
            os.remove(key)
            out = os.path.join(d, "out.json")
            r = ctx.run(["-o", "json", dat, out])
            err = r.stderr.decode(errors="replace")
            ctx.eq(r.returncode, 1, f"{name}: a .data without its .key fails ({err.strip()})")
            ctx.check(key in err and len(err.strip().splitlines()) == 1, f"{name}: one line naming {key}: {err}")
            ctx.check(not os.path.exists(out), f"{name}: no output without the key half")
    ctx.check(split >= 5, f"enough non-streaming corpus traces to split: {split}")
    ctx.done()


if __name__ == "__main__":
    main()
