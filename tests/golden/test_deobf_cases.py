#!/usr/bin/env python3
"""Deobfuscation cases written from the format spec (docs/formats/DEOBFUSCATION.md in the
team's shared notes), each
with its expected result taken from the spec, not from traceconv:
  * the three worked examples of §11 (overloads told apart by the descriptor,
    a pre-2.2 map with renamed parameter and return types, a 2.2 map with an
    inline group, a removed parameter and a synthesized lambda class);
  * each mistake of a peer listed in §10 (a space in a parameter list, R8's
    header and JSON with single quotes or bare keys, overloads sharing a
    name, inline groups where the outermost line is the method, a tab as
    indentation, CRLF lines, descending ranges, a qualified inlined name);
  * version gating (§5.2), the fallback tiers and the 'a | b' alternatives of
    §7.5, unmapped names kept and counted, the map/trace mismatch checks of
    §7.10 (pg_map_id against r8-map-id-<X>, fewer than half of the classes);
  * --strict turns those warnings into errors; the mapping is never looked
    for beside the input (DESIGN.md §5b).
Traces are written by tracegen from a scenario made here; the method table
is read back from the IR dump (name with descriptor, source file)."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402

IR_METHOD = re.compile(r'^method (\d+) .* file="((?:[^"\\]|\\.)*)" name="((?:[^"\\]|\\.)*)"$')


class Case:
    def __init__(self, ctx):
        self.ctx = ctx
        self.n = 0

    def trace(self, methods, source="SourceFile"):
        """An ART v3 trace calling each (class, name, descriptor[, file]) once, in order."""
        self.n += 1
        d = os.path.join(self.ctx.work, f"case{self.n}")
        os.makedirs(d, exist_ok=True)
        lines = ["version 3", "clock dual", ""]
        for i, m in enumerate(methods):
            cls, name, desc = m[:3]
            lines.append(f'method m{i} {cls} "{name}" "{desc}" "{m[3] if len(m) > 3 else source}"')
        lines.append("thread 7 main {")
        lines += [f"  call m{i} 10" for i in range(len(methods))]
        lines.append("}")
        scn, trace = os.path.join(d, "case.scn"), os.path.join(d, "case.trace")
        with open(scn, "w") as f:
            f.write("\n".join(lines) + "\n")
        r = subprocess.run([self.ctx.tracegen, scn, trace], capture_output=True)
        self.ctx.check(r.returncode == 0, f"tracegen: {r.stderr.decode(errors='replace')}")
        return d, trace

    def run(self, what, methods, mapping, extra=(), source="SourceFile", newline="\n"):
        """(exit, [(name with descriptor, file)] in table order, figures, stderr)."""
        d, trace = self.trace(methods, source)
        mp = os.path.join(d, "mapping.txt")
        with open(mp, "w", newline=newline) as f:
            f.write(mapping)
        out = os.path.join(d, "out.ir.txt")
        r = self.ctx.run(["-f", "-o", "ir", "--deobfuscate", mp, *extra, trace, out])
        err = r.stderr.decode(errors="replace")
        rows, figs = [], {}
        if r.returncode == 0:
            for line in open(out, encoding="utf-8"):
                m = IR_METHOD.match(line.rstrip("\n"))
                if m:
                    rows.append((m.group(3), m.group(2)))
                elif line.startswith("figure "):
                    k, _, v = line[7:].strip().partition("=")
                    figs[k] = int(v)
        else:
            self.ctx.fail(f"{what}: exit {r.returncode}: {err.strip()}")
        return r.returncode, rows, figs, err

    def expect(self, what, methods, mapping, want, figs_want=None, **kw):
        """want: [(name with descriptor, file or None)] in the order of methods."""
        rc, rows, figs, err = self.run(what, methods, mapping, **kw)
        if rc:
            return figs, err
        got = [(n, f if w[1] is not None else None) for (n, f), w in zip(rows, want)]
        self.ctx.eq(got, list(want), what)
        for k, v in (figs_want or {}).items():
            self.ctx.eq(figs.get(k, 0), v, f"{what}: figure {k}")
        return figs, err


def worked_examples(c):
    ex1 = ("com.android.tools.r8.Internal -> com.android.tools.r8.Internal:\n"
           "  10:10:void foo(int):10:10 -> zza\n"
           "  11:11:void foo(int, int):11:11 -> zza\n"
           "  12:12:void foo(int, boolean):12:12 -> zza\n"
           "  13:13:boolean foo(int, int):13:13 -> zza\n")
    k = "com.android.tools.r8.Internal"
    c.expect("§11 example 1: overloads sharing 'zza', told apart by the whole descriptor",
             [(k, "zza", "(II)Z", "Internal.java"), (k, "zza", "(I)V", "Internal.java"),
              (k, "zza", "(IZ)V", "Internal.java"), (k, "zza", "(II)V", "Internal.java")], ex1,
             [(f"{k}.foo: (II)Z", "Internal.java"), (f"{k}.foo: (I)V", "Internal.java"),
              (f"{k}.foo: (IZ)V", "Internal.java"), (f"{k}.foo: (II)V", "Internal.java")],
             {"deobf-methods": 4, "deobf-ambiguous": 0, "deobf-fallback": 0})
    ex2 = ("com.example.model.User -> a.a:\n"
           "    java.lang.String name -> a\n"
           "com.example.ui.UserListActivity$Adapter -> b.c$a:\n"
           "    1:4:com.example.model.User getItem(int):51:54 -> a\n"
           "    5:5:void bind(com.example.model.User[],int):60:60 -> a\n"
           "    6:9:void bind(com.example.model.User[],int):62:65 -> a\n")
    a = "com.example.ui.UserListActivity$Adapter"
    c.expect("§11 example 2: renamed parameter and return types, pre-2.2 map, nested class",
             [("b.c$a", "a", "(I)La/a;"), ("b.c$a", "a", "([La/a;I)V")], ex2,
             [(f"{a}.getItem: (I)Lcom/example/model/User;", "UserListActivity.java"),
              (f"{a}.bind: ([Lcom/example/model/User;I)V", "UserListActivity.java")],
             {"deobf-methods": 2, "deobf-classes": 1})
    ex3 = ('# {"id":"com.android.tools.r8.mapping","version":"2.2"}\n'
           "com.example.feed.FeedPresenter -> c.f:\n"
           '# {"id":"sourceFile","fileName":"FeedPresenter.kt"}\n'
           "    1:1:void com.example.util.Checks.notNull(java.lang.Object):8:8 -> b\n"
           "    1:1:void refresh(com.example.model.User,boolean):30 -> b\n"
           '      # {"id":"com.android.tools.r8.residualsignature","signature":"(La/a;)V"}\n'
           "    2:6:void refresh(com.example.model.User,boolean):31:35 -> b\n"
           "com.example.feed.FeedPresenter$$ExternalSyntheticLambda0 -> c.g:\n"
           '# {"id":"com.android.tools.r8.synthesized"}\n'
           "    1:1:void com.example.feed.FeedPresenter.start$lambda$0(com.example.feed.FeedPresenter):22:22 -> run\n"
           '      # {"id":"com.android.tools.r8.residualsignature","signature":"()V"}\n'
           "com.example.model.User -> a.a:\n")
    f = "com.example.feed.FeedPresenter"
    c.expect("§11 example 3: inline group, removed parameter (residualsignature), stripped lambda frame",
             [("c.f", "b", "(La/a;)V"), ("c.g", "run", "()V")], ex3,
             [(f"{f}.refresh: (Lcom/example/model/User;Z)V", "FeedPresenter.kt"),
              (f"{f}.start$lambda$0: (L{f.replace('.', '/')};)V", "FeedPresenter.kt")],
             {"deobf-methods": 2, "deobf-fallback": 0, "deobf-ambiguous": 0})
    # the same without its version line: residual signatures are 2.2 information (§5.2), so the
    # removed parameter is found only by the fallback (one candidate name), counted
    c.expect("§5.2: no version line, residualsignature ignored: the fallback names refresh",
             [("c.f", "b", "(La/a;)V")], ex3.split("\n", 1)[1],
             [(f"{f}.refresh: (Lcom/example/model/User;)V", "FeedPresenter.kt")], {"deobf-fallback": 1})


def peers_mistakes(c):
    """§10: what Perfetto, perflib, ahat, simpleperf and Sentry get wrong."""
    u = "com.example.Util"
    c.expect("a space in a parameter list (Perfetto splits on spaces)",
             [("a.a", "a", "(II)V"), ("a.a", "a", "(IZ)V")],
             f"{u} -> a.a:\n    void sum(int, int) -> a\n    void put(int,  boolean) -> a\n",
             [(f"{u}.sum: (II)V", None), (f"{u}.put: (IZ)V", None)], {"deobf-bad-line": 0})
    header = ("# compiler: R8\n# compiler_version: 8.9.32\n# min_api: 24\n# common_typos_disable\n"
              "# { id: 'com.android.tools.r8.mapping', version: '2.2' }\n"
              "# pg_map_id: f5c42ae\n# pg_map_hash: SHA-256 f5c42ae71f00\n")
    c.expect("R8's header lines (perflib fails on them) and JSON with bare keys and single quotes",
             [("a.a", "a", "(La/b;)V")],
             header + f"{u} -> a.a:\n# {{'id':'sourceFile','fileName':'Helpers.kt'}}\n"
             "    1:2:void check(com.example.Item,long):5:6 -> a\n"
             "      # {'id':'com.android.tools.r8.residualsignature','signature':'(La/b;)V'}\n"
             "    3:4:void check(java.lang.String):9:10 -> a\n"
             "com.example.Item -> a.b:\n",
             [(f"{u}.check: (Lcom/example/Item;J)V", "Helpers.kt")], {"deobf-fallback": 0, "deobf-ambiguous": 0})
    c.expect("overloads differing only in the return type (a bridge): the return type decides",
             [("a.a", "a", "()Ljava/lang/Object;"), ("a.a", "a", "()La/b;")],
             f"{u} -> a.a:\n    java.lang.Object get() -> a\n    com.example.Item get() -> a\n"
             "com.example.Item -> a.b:\n",
             [(f"{u}.get: ()Ljava/lang/Object;", None), (f"{u}.get: ()Lcom/example/Item;", None)])
    c.expect("inline group whose callee has the caller's descriptor (ahat keeps the first line): the outermost",
             [("a.a", "b", "(I)V")],
             f"{u} -> a.a:\n    1:1:void inner(int):5:5 -> b\n    1:1:void middle(int):7 -> b\n"
             "    1:1:void outer(int):10 -> b\n    2:3:void outer(int):11:12 -> b\n",
             [(f"{u}.outer: (I)V", None)], {"deobf-ambiguous": 0})
    c.expect("a tab as indentation (perflib wants 4 spaces)", [("a.a", "a", "(J)V")],
             f"{u} -> a.a:\n\t1:1:void sleep(long):3:3 -> a\n", [(f"{u}.sleep: (J)V", None)])
    c.expect("CRLF lines", [("a.a", "a", "(J)V"), ("a.a", "b", "()V")],
             f"{u} -> a.a:\n    1:1:void sleep(long):3:3 -> a\n    void wake() -> b\n",
             [(f"{u}.sleep: (J)V", None), (f"{u}.wake: ()V", None)], newline="\r\n")
    c.expect("descending ranges (R8 ed98ca17): read, not refused",
             [("a.a", "a", "()V"), ("a.a", "b", "()V")],
             f"{u} -> a.a:\n    5:3:void first():10:8 -> a\n    7:0:void second():4:0 -> b\n",
             [(f"{u}.first: ()V", None), (f"{u}.second: ()V", None)], {"deobf-bad-line": 0})
    c.expect("a qualified inlined name: the class is the qualifier's, its file from its own entry",
             [("a.a", "c", "()V")],
             f"{u} -> a.a:\n    4:4:void com.example.Other.lambda$main$0():225 -> c\n"
             "com.example.Other -> a.b:\n# {\"id\":\"sourceFile\",\"fileName\":\"Other.kt\"}\n",
             [("com.example.Other.lambda$main$0: ()V", "Other.kt")])
    c.expect("simpleperf's 'last line wins': two methods sharing one new name in different groups",
             [("a.a", "a", "(I)V"), ("a.a", "a", "(J)V")],
             f"{u} -> a.a:\n    1:1:void one(int):3:3 -> a\n    2:2:void two(long):4:4 -> a\n",
             [(f"{u}.one: (I)V", None), (f"{u}.two: (J)V", None)])


def resolution_rules(c):
    u = "com.example.Util"
    # two originals that truly match one obfuscated method with the same descriptor (§7.5)
    figs, err = c.expect("ambiguity: two originals with one descriptor are shown 'a | b' and counted",
                         [("a.a", "a", "(I)V"), ("a.a", "b", "()V")],
                         f"{u} -> a.a:\n    void start(int) -> a\n    void stop(int) -> a\n    void reset() -> b\n",
                         [(f"{u}.start | {u}.stop: (I)V", None), (f"{u}.reset: ()V", None)],
                         {"deobf-ambiguous": 1, "deobf-methods": 1})
    c.ctx.check("deobf-ambiguous" in err and "a | b" in err, f"ambiguity: a warning says so: {err}")
    c.expect("fallback (a): the same parameter count, one name", [("a.a", "a", "(Ljava/lang/String;)V")],
             f"{u} -> a.a:\n    void log(int) -> a\n    void log(int,int) -> a\n",
             [(f"{u}.log: (Ljava/lang/String;)V", None)], {"deobf-fallback": 1, "deobf-ambiguous": 0})
    c.expect("fallback with two names left: alternatives, never the bare obfuscated name",
             [("a.a", "a", "(Ljava/lang/String;)V")],
             f"{u} -> a.a:\n    void log(int) -> a\n    void warn(long) -> a\n    void x(int,int) -> a\n",
             [(f"{u}.log | {u}.warn: (Ljava/lang/String;)V", None)], {"deobf-ambiguous": 1})
    c.expect("a class that is mapped, a method that is not renamed: the class only (§7.3)",
             [("a.a", "onCreate", "(La/b;)V", "SourceFile")],
             f"{u} -> a.a:\n    void log(int) -> a\ncom.example.Item -> a.b:\n",
             [(f"{u}.onCreate: (Lcom/example/Item;)V", "Util.java")], {"deobf-methods": 1})
    c.expect("names absent from the map stay, counted; their descriptors' classes are renamed (§7.2)",
             [("android.view.View", "post", "(La/b;)Z", "View.java"), ("x.y", "z", "()V", "Y.java")],
             f"{u} -> a.a:\n    void log(int) -> a\ncom.example.Item -> a.b:\n",
             [("android.view.View.post: (Lcom/example/Item;)Z", "View.java"), ("x.y.z: ()V", "Y.java")],
             {"deobf-unmapped": 2, "deobf-methods": 0})
    c.expect("source files: sourceFile information, else inferred (Kt -> .kt, nested -> outer), Native Method kept",
             [("a.a", "a", "()V"), ("a.b", "a", "()V"), ("a.c", "a", "()V"), ("a.d", "a", "()V", "Native Method")],
             "com.example.A -> a.a:\n# {\"id\":\"sourceFile\",\"fileName\":\"Screens.kt\"}\n    void f() -> a\n"
             "com.example.HelpersKt -> a.b:\n    void f() -> a\n"
             "com.example.Outer$Inner -> a.c:\n    void f() -> a\n"
             "com.example.Jni -> a.d:\n    void f() -> a\n",
             [("com.example.A.f: ()V", "Screens.kt"), ("com.example.HelpersKt.f: ()V", "Helpers.kt"),
              ("com.example.Outer$Inner.f: ()V", "Outer.java"), ("com.example.Jni.f: ()V", "Native Method")])
    c.expect("a map version newer than 2.2 is read as 2.2, with a warning",
             [("a.a", "a", "()V")],
             '# {"id":"com.android.tools.r8.mapping","version":"3.0"}\n'
             f"{u} -> a.a:\n    void f(int) -> a\n"
             '      # {"id":"com.android.tools.r8.residualsignature","signature":"()V"}\n',
             [(f"{u}.f: (I)V", None)], {"deobf-bad-line": 1, "deobf-fallback": 0})
    c.expect("R8$$REMOVED$$CLASS$$ entries only give a file (found by original name, never by obfuscated)",
             [("a.a", "a", "()V"), ("R8$$REMOVED$$CLASS$$0", "x", "()V", "Z.java")],
             f"{u} -> a.a:\n    1:1:void com.example.Gone.g():3:3 -> a\n    1:1:void f():7 -> a\n"
             "com.example.Gone -> R8$$REMOVED$$CLASS$$0:\n# {\"id\":\"sourceFile\",\"fileName\":\"Gone.kt\"}\n",
             [(f"{u}.f: ()V", "Util.java"), ("R8$$REMOVED$$CLASS$$0.x: ()V", "Z.java")])
    c.expect("junk after a new name: ignored with a warning (§3.3), the line still maps",
             [("a.a", "a", "()V")], f"{u} -> a.a:\n    void f() -> a   trailing junk\n",
             [(f"{u}.f: ()V", None)], {"deobf-bad-line": 1})


def mismatch(c):
    ctx = c.ctx
    scn = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "deobf", "feed.scn")
    d = os.path.join(ctx.work, "mismatch")
    os.makedirs(d, exist_ok=True)
    trace, mine, other = (os.path.join(d, x) for x in ("obf.trace", "mapping.txt", "other-build.txt"))
    for args in ([scn, trace, "--obfuscate", mine, "--r8-map-id"],
                 [scn, os.path.join(d, "other.trace"), "--obfuscate", other, "--r8-map-id", "--map-seed", "5"]):
        r = subprocess.run([ctx.tracegen, *args], capture_output=True)
        ctx.check(r.returncode == 0, f"tracegen {args}: {r.stderr.decode()}")
    ids = {}
    for mp in (mine, other):
        ids[mp] = re.search(r"^# pg_map_id: (\w+)$", open(mp).read(), re.M).group(1)
    ctx.check(ids[mine] != ids[other], f"two builds have two map ids: {ids}")

    def conv(mp, *extra):
        out = os.path.join(d, "out.folded")
        if os.path.exists(out):
            os.remove(out)
        r = ctx.run(["-f", "-o", "folded", "--deobfuscate", mp, *extra, trace, out])
        return r.returncode, tclib.parse_figures(r.stderr.decode(errors="replace")), r.stderr.decode(errors="replace"), out
    rc, figs, err, _ = conv(mine)
    ctx.check(rc == 0 and "deobf-mismatch" not in figs, f"the build's own mapping: no mismatch warning: {err}")
    rc, figs, err, _ = conv(other)
    ctx.check(rc == 0 and figs.get("deobf-mismatch", 0) >= 1, f"another build's mapping: deobf-mismatch: {err}")
    ctx.check(f"r8-map-id-{ids[mine]}" in err and ids[other] in err and "another build" in err,
              f"the warning names both map ids: {err}")
    rc, _, err, out = conv(other, "--strict")
    ctx.check(rc == 1 and not os.path.exists(out), f"--strict: the mismatch is an error, no output: {err}")
    # a mapping without pg_map_id, of another app: fewer than half of the classes found
    lone = os.path.join(d, "another-app.txt")
    with open(lone, "w") as f:
        f.write("com.other.App -> a.a:\n    void f() -> a\ncom.other.B -> q.q:\n")
    rc, figs, err, _ = conv(lone)
    ctx.check(rc == 0 and figs.get("deobf-mismatch", 0) == 1 and "does not match" in err,
              f"another app's mapping: fewer than half of the classes found: {err}")


def side_files(c):
    """DESIGN.md §5b: a mapping.txt beside the input is never read without the option."""
    ctx = c.ctx
    d, trace = c.trace([("a.a", "a", "()V")])
    with open(os.path.join(d, "mapping.txt"), "w") as f:
        f.write("com.example.Util -> a.a:\n    void f() -> a\n")
    r = ctx.run(["-o", "folded", trace, "-"])
    ctx.check(r.returncode == 0 and b"a.a.a" in r.stdout and b"Util" not in r.stdout,
              f"no --deobfuscate: the trace's own names: {r.stdout[:200]}")


def main():
    ctx = tclib.Ctx()
    if not ctx.tracegen:
        ctx.fail("tracegen was not built")
        ctx.done()
    c = Case(ctx)
    worked_examples(c)
    peers_mistakes(c)
    resolution_rules(c)
    mismatch(c)
    side_files(c)
    ctx.done()


if __name__ == "__main__":
    main()
