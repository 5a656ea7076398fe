#!/usr/bin/env python3
"""layers_check.py ROOT — the layering of DESIGN.md, checked on the sources.

    base  <-  format  <-  {compiler, runtime}  <-  tools, tests

Every quoted #include of a file under base/, format/, compiler/ or runtime/ must
resolve to a header of its own layer or of a layer below it (the generated
shiro_config.h is allowed everywhere; a generated header's template, NAME.h.in,
stands for NAME.h in its folder's layer); compiler/ and runtime/ never include each
other. Headers have unique names across these folders (so an include names one
file), and the include graph between files has no cycle. Exit 1 with a list of
what is wrong."""
import os
import re
import sys

LAYERS = {"base": {"base"}, "format": {"base", "format"},
          "compiler": {"base", "format", "compiler"}, "runtime": {"base", "format", "runtime"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
GENERATED = {"shiro_config.h"}


def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if f.endswith((".c", ".h", ".cu", ".h.in")):
                yield os.path.join(d, f)


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    problems = []
    where = {}  # header name -> path
    files = {}  # path -> layer
    for top in LAYERS:
        for p in sources(root, top):
            files[p] = top
            name = os.path.basename(p).removesuffix(".in")
            if name.endswith(".h"):
                if name in where:
                    problems.append(f"header name {name} is used twice: {where[name]} and {p}")
                where[name] = p
    graph = {}
    for p, layer in files.items():
        with open(p, encoding="utf-8", errors="replace") as f:
            text = f.read()
        graph[p] = []
        for inc in INCLUDE.findall(text):
            name = os.path.basename(inc)
            if name in GENERATED:
                continue
            target = where.get(name)
            if target is None:
                problems.append(f"{os.path.relpath(p, root)}: #include \"{inc}\" is in none of {sorted(LAYERS)}")
                continue
            graph[p].append(target)
            if files[target] not in LAYERS[layer]:
                problems.append(f"{os.path.relpath(p, root)} ({layer}) includes {os.path.relpath(target, root)} "
                                f"({files[target]}): {layer} may include only {sorted(LAYERS[layer])}")
    # cycles: depth-first search over the include graph
    state, stack = {}, []

    def visit(p):
        state[p] = 1
        stack.append(p)
        for q in graph.get(p, []):
            if state.get(q) == 1:
                cyc = stack[stack.index(q):] + [q]
                problems.append("include cycle: " + " -> ".join(os.path.relpath(x, root) for x in cyc))
            elif q not in state:
                visit(q)
        stack.pop()
        state[p] = 2

    for p in sorted(graph):
        if p not in state:
            visit(p)
    edges = sum(len(v) for v in graph.values())
    if problems:
        print("\n".join(problems))
        print(f"FAIL: {len(problems)} problems in {len(files)} files, {edges} includes")
        return 1
    print(f"ok: {len(files)} files, {edges} includes between them, layers base <- format <- {{compiler, runtime}} respected, no cycle")
    return 0


if __name__ == "__main__":
    sys.exit(main())
