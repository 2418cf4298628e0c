#!/usr/bin/env python3
"""The tests' Python modules agree on the names they share, checked in the quick loop.

A test that imports another test's module (test_deobf_mutations uses test_mutations'
helpers, test_speedscope_browser test_speedscope's, every test tclib's) fails only when it
runs if a name it uses is gone, and a stress or browser test does not run in `make check`:
after the option tables replaced test_mutations' writers(), test_deobf_mutations failed in
the full pass only. So: for every `import M` / `import M as A` of a module of tests/ in any
test, each `A.name` it uses is defined at the top level of M (a def, a class, an assignment
or an import there). Statically, with Python's own parser: nothing is run."""
import ast
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import tclib  # noqa: E402


def top_level_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                names |= {n.id for n in ast.walk(t) if isinstance(n, ast.Name)}
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.If, ast.Try, ast.With)):  # names bound under a guard
            names |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
            names |= {n.name for n in ast.walk(node) if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    return names


def main():
    ctx = tclib.Ctx()
    tests = os.path.join(ctx.source, "tests")
    files = sorted(p for p in glob.glob(os.path.join(tests, "**", "*.py"), recursive=True)
                   if "node_modules" not in p)
    modules = {}
    for p in files:
        modules.setdefault(os.path.splitext(os.path.basename(p))[0], p)
    parsed = {p: ast.parse(open(p, encoding="utf-8").read(), p) for p in files}
    defined = {m: top_level_names(parsed[p]) for m, p in modules.items()}
    uses = 0
    for p, tree in parsed.items():
        aliases = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name in modules:
                        aliases[a.asname or a.name] = a.name
        for node in ast.walk(tree):
            if (isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
                    and node.value.id in aliases):
                mod = aliases[node.value.id]
                uses += 1
                ctx.check(node.attr in defined[mod],
                          f"{os.path.relpath(p, ctx.source)}:{node.lineno} uses {mod}.{node.attr}, "
                          f"which {os.path.relpath(modules[mod], ctx.source)} does not define")
    ctx.check(uses > 100, f"names used across the tests' modules are found ({uses})")
    ctx.done()


if __name__ == "__main__":
    main()
