#!/usr/bin/env python3
"""The ctypes structs of the Python package against the C headers they mirror.

usage: struct_check.py BUILD_DIR SOURCE_DIR
Runs tests/python/struct_layout (built from the headers: offsetof and sizeof of every field) and
checks that each struct of python/shiro/_lib.py and _planner.py has the same fields, in the same
order, at the same offsets with the same sizes, and the same sizeof; and that the C headers have
no field the Python side lacks. Needs no MPI, numpy or torch (imports only the two modules).
"""
import ctypes
import importlib.util
import os
import subprocess
import sys


def load(src, name):
    """python/shiro/<name>.py as a module of a package `shiro` made here (so `from . import _lib` works
    without running the package's __init__, which needs numpy)."""
    pkg = os.path.join(src, "python", "shiro")
    if "shiro" not in sys.modules:
        spec = importlib.util.spec_from_file_location("shiro", os.path.join(pkg, "_lib.py"),
                                                      submodule_search_locations=[pkg])
        sys.modules["shiro"] = importlib.util.module_from_spec(spec)
    spec = importlib.util.spec_from_file_location(f"shiro.{name}", os.path.join(pkg, f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    sys.modules[f"shiro.{name}"] = mod
    spec.loader.exec_module(mod)
    return mod


def main():
    build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    out = subprocess.run([os.path.join(build, "tests", "python", "struct_layout")], capture_output=True, text=True,
                         check=True).stdout
    c = {}
    for line in out.splitlines():
        s, f, off, size = line.split()
        c.setdefault(s, []).append((f, int(off), int(size)))
    lib, planner = load(src, "_lib"), load(src, "_planner")
    py = {name: getattr(mod, name) for mod in (lib, planner) for name in dir(mod)
          if isinstance(getattr(mod, name), type) and issubclass(getattr(mod, name), ctypes.Structure)
          and name.startswith("shiro_")}
    bad = []
    for name in sorted(set(c) | set(py)):
        if name not in py or name not in c:
            bad.append(f"{name}: in {'C only' if name in c else 'Python only'}")
            continue
        want = c[name]
        got = [("-", 0, ctypes.sizeof(py[name]))] + [(f, getattr(py[name], f).offset, getattr(py[name], f).size)
                                                      for f, _ in py[name]._fields_]
        if got != want:
            bad.append(f"{name}: C {want}\n    Python {got}")
        else:
            print(f"ok   {name}: {len(want) - 1} fields, {want[0][2]} bytes")
    for b in bad:
        print(f"FAIL {b}")
    return 1 if bad or not py else 0


if __name__ == "__main__":
    sys.exit(main())
