#!/usr/bin/env python3
"""bench/gen_deobf.py MAPPING_OUT TRACE_OUT [MAPPING_MB] [METHODS]

Writes the input of bench/deobf.sh (issue 13): an R8-style mapping.txt of
MAPPING_MB megabytes (default 300; R8 2.2 preamble, classes sorted by original
name, 14 method lines a class with line ranges, overloads sharing new names,
app types in signatures, residual signatures, an inline group a class) and
an ART v3 trace whose METHODS distinct methods (default 100,000) are
obfuscated methods of classes spread over the whole mapping, each called
several times on four threads. Deterministic; no dependencies."""
import struct
import sys


def short(k):
    """a, b, ..., z, aa, ab, ... (R8's naming)."""
    s = ""
    k += 1
    while k:
        k -= 1
        s = chr(97 + k % 26) + s
        k //= 26
    return s


def class_names(i):
    orig = f"com.example.app.module{i // 700:04d}.feature.Component{i:07d}Impl"
    obf = f"{short(i // 700)}.{short(i % 700)}"
    return orig, obf


MEMBERS = 14


def member_lines(i, n_classes):
    """The member lines of class i and the (new name, residual descriptor) of each method."""
    other_orig, other_obf = class_names((i * 7 + 3) % n_classes)
    out, methods = [], []
    line = 1
    out.append("    java.lang.String TAG -> a\n    int mCount -> b\n")
    for k in range(MEMBERS):
        new = short(k // 2)  # two methods share each new name: told apart by the descriptor
        if k % 2 == 0:
            sig, res = f"void handleEvent{k}(int,{other_orig},java.lang.String)", f"(IL{other_obf.replace('.', '/')};Ljava/lang/String;)V"
        else:
            sig, res = f"{other_orig} computeValue{k}(long[],boolean)", f"([JZ)L{other_obf.replace('.', '/')};"
        if k == 3:  # an inline group: the callee first, the method last
            out.append(f"    {line}:{line}:void com.example.app.util.Preconditions.checkNotNull(java.lang.Object):12:12 -> {new}\n")
            out.append(f"    {line}:{line}:{sig}:{200 + k * 10} -> {new}\n")
            line += 1
        out.append(f"    {line}:{line + 3}:{sig}:{200 + k * 10}:{203 + k * 10} -> {new}\n")
        out.append(f'      # {{"id":"com.android.tools.r8.residualsignature","signature":"{res}"}}\n')
        line += 4
        methods.append((new, res))
    return "".join(out), methods


def write_mapping(path, target_bytes):
    # one class's block is ~2.2 kB: size the class count to the target
    _, probe = class_names(0)
    per_class = len(f"{class_names(0)[0]} -> {probe}:\n") + len(member_lines(0, 1000)[0])
    n_classes = max(1000, target_bytes // per_class)
    with open(path, "w") as f:
        f.write("# compiler: R8\n# compiler_version: 8.9.32\n# min_api: 24\n# common_typos_disable\n"
                '# {"id":"com.android.tools.r8.mapping","version":"2.2"}\n# pg_map_id: 0bench0\n'
                "# pg_map_hash: SHA-256 0bench0\n")
        buf = []
        for i in range(n_classes):
            orig, obf = class_names(i)
            buf.append(f"{orig} -> {obf}:\n")
            buf.append(member_lines(i, n_classes)[0])
            if len(buf) > 4000:
                f.write("".join(buf))
                buf = []
        f.write("".join(buf))
    return n_classes


def write_trace(path, n_classes, n_methods):
    per_class = 5
    used = n_methods // per_class
    step = max(1, n_classes // used)
    methods = []  # (class, name, descriptor)
    for u in range(used):
        i = (u * step) % n_classes
        _, obf = class_names(i)
        _, ms = member_lines(i, n_classes)
        for k in range(per_class):
            new, res = ms[(k * 3 + u) % MEMBERS]
            methods.append((obf, new, res))
    key = ["*version", "3", "data-file-overflow=false", "clock=dual", "elapsed-time-usec=1000000",
           "num-method-calls=0", "clock-call-overhead-nsec=250", "vm=art", "pid=1000", "*threads"]
    key += [f"{1000 + t}\tworker-{t}" for t in range(4)]
    key.append("*methods")
    key += [f"0x{(m + 1) << 2:x}\t{c}\t{n}\t{d}\tSourceFile" for m, (c, n, d) in enumerate(methods)]
    key.append("*end")
    recs = bytearray()
    t = 0
    rec = struct.Struct("<HIII")
    for rep in range(3):  # each method called three times, a parent with a child, on four threads
        for m in range(0, len(methods) - 1, 2):
            tid = 1000 + (m // 2 + rep) % 4
            a, b = (m + 1) << 2, (m + 2) << 2
            recs += rec.pack(tid, a, t, t)
            recs += rec.pack(tid, b, t + 1, t + 1)
            recs += rec.pack(tid, b | 1, t + 3, t + 3)
            recs += rec.pack(tid, a | 1, t + 4, t + 4)
            t += 5
    with open(path, "wb") as f:
        f.write(("\n".join(key) + "\n").encode())
        f.write(b"SLOW" + struct.pack("<HHQH", 3, 32, 1_700_000_000_000_000, 14) + b"\0" * 14)
        f.write(recs)
    return len(methods)


def main():
    mapping, trace = sys.argv[1], sys.argv[2]
    mb = int(sys.argv[3]) if len(sys.argv) > 3 else 300
    n_methods = int(sys.argv[4]) if len(sys.argv) > 4 else 100000
    n_classes = write_mapping(mapping, mb * 1000 * 1000)
    n = write_trace(trace, n_classes, n_methods)
    print(f"gen_deobf: {n_classes} classes in the mapping, {n} distinct methods in the trace")


if __name__ == "__main__":
    main()
