#!/usr/bin/env python3
"""layers_check.py ROOT [BUILD_DIR] — the layering of DESIGN.md, checked on the sources
and, given a build directory, on the calls between the compiler's built objects.

    base  <-  format  <-  {compiler, runtime}  <-  tools, tests

Every quoted #include of a file under base/, format/, compiler/ or runtime/ must
resolve to a header of its own layer or of a layer below it (the generated
shiro_config.h is allowed everywhere; a generated header's template, NAME.h.in,
stands for NAME.h in its folder's layer); compiler/ and runtime/ never include each
other. Headers have unique names across these folders (so an include names one
file), and the include graph between files has no cycle.

With BUILD_DIR, the calls inside compiler/ too, from the symbols of its objects
(`nm`: what each object defines and what it leaves undefined; the objects are found
through the build's compile_commands.json): a room calls only its own files and the
rooms before it in ROOMS (common <- input <- partition <- cost <- cover <- plan <-
choose <- api <- dist), and no files call each other in a circle. Exit 1 with a list of what is
wrong."""
import json
import os
import re
import subprocess
import sys

LAYERS = {"base": {"base"}, "format": {"base", "format"},
          "compiler": {"base", "format", "compiler"}, "runtime": {"base", "format", "runtime"}}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
GENERATED = {"shiro_config.h"}
ROOMS = ["common", "input", "partition", "cost", "cover", "plan", "choose", "api", "dist"]  # compiler/, bottom first


def sources(root, top):
    for d, _, files in os.walk(os.path.join(root, top)):
        for f in files:
            if f.endswith((".c", ".h", ".cu", ".h.in")):
                yield os.path.join(d, f)


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter[0]
        counter[0] += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def compiler_objects(root, build):
    """compiler/ source (relative to root) -> its object in the compiler library."""
    with open(os.path.join(build, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    objs = {}
    for e in entries:
        src = os.path.relpath(os.path.normpath(os.path.join(e["directory"], e["file"])), root)
        if src.startswith("compiler" + os.sep) and "shiro_compiler" in e["output"]:
            objs[src] = os.path.join(e["directory"], e["output"])
    return objs


def check_calls(root, build, problems):
    """The calls between compiler/'s objects: down the rooms only, no circle of files.
    Returns (objects, calls) counted."""
    objs = compiler_objects(root, build)
    if not objs:
        problems.append(f"{build}: no object of compiler/ in compile_commands.json (not built?)")
        return 0, 0
    defined, undefined = {}, {}
    for src, obj in objs.items():
        out = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True).stdout
        undefined[src] = set()
        for line in out.splitlines():
            f = line.split()
            if len(f) >= 2 and f[1] == "U":
                undefined[src].add(f[0])
            elif len(f) >= 2 and f[1] in "TDBR":
                defined[f[0]] = src
    calls = {}  # caller file -> callee file -> symbols
    for src, syms in undefined.items():
        for sym in sorted(syms):
            to = defined.get(sym)
            if to and to != src:
                calls.setdefault(src, {}).setdefault(to, []).append(sym)
    for src, tos in sorted(calls.items()):
        room = src.split(os.sep)[1]
        for to, syms in sorted(tos.items()):
            room_to = to.split(os.sep)[1]
            if room not in ROOMS or room_to not in ROOMS:
                problems.append(f"{src} -> {to}: a room not in ROOMS (tests/unit/layers_check.py)")
            elif ROOMS.index(room_to) > ROOMS.index(room):
                problems.append(f"{src} ({room}) calls {to} ({room_to}): {', '.join(syms)}; "
                                f"{room} may call only {ROOMS[:ROOMS.index(room) + 1]}")
    for comp in cycles({a: set(b) for a, b in calls.items()}):
        detail = "; ".join(f"{a} -> {b} ({', '.join(calls[a][b])})" for a in comp for b in comp
                           if b in calls.get(a, {}))
        problems.append(f"circle of calls between {', '.join(comp)}: {detail}")
    return len(objs), sum(len(t) for t in calls.values())


def main():
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".")
    build = os.path.abspath(sys.argv[2]) if len(sys.argv) > 2 else None
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
    nobj = ncalls = 0
    if build:
        nobj, ncalls = check_calls(root, build, problems)
    if problems:
        print("\n".join(problems))
        print(f"FAIL: {len(problems)} problems in {len(files)} files, {edges} includes")
        return 1
    print(f"ok: {len(files)} files, {edges} includes between them, layers base <- format <- {{compiler, runtime}} respected, no cycle")
    if build:
        print(f"ok: {nobj} objects of compiler/, {ncalls} file-to-file calls, rooms {' <- '.join(ROOMS)} respected, "
              "no circle of calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())
