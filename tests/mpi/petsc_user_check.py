#!/usr/bin/env python3
"""shiro in a PETSc program, from an installed prefix: `meson install --destdir`
of this build, then docs/examples/petsc_power.c built with
`pkg-config --cflags --libs shiro PETSc` from there, a plan written by the
installed shiro-plan on PETSc's own row layout (--partition parts:FILE), and
4 ranks running a block power iteration on shiro's split-phase column-major
calls, each product checked against PETSc's MatMatMult (and the transposed one
against MatTransposeMatMult) to 1e-12. The program loads one HDF5 library when
this build links the MPI one (-Dhdf5=parallel), as PETSc does; with the serial
one it loads both (said in a note).

usage: petsc_user_check.py BUILD_DIR SOURCE_DIR MATRIX
Skipped (77) without PETSc (petsc-dev) or in a sanitizer build, saying why.
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "lib"))  # checklib
import checklib
from checklib import expect


def run(cmd, **kw):
    return checklib.run(cmd, timeout=300, **kw)


def petsc_layout(m, ranks):
    """PETSc's default split of m rows (PetscSplitOwnership): rank r owns m // P rows, one more if r < m % P."""
    return [r for r in range(ranks) for _ in range(m // ranks + (1 if r < m % ranks else 0))]


def main():
    build, src, matrix = (os.path.abspath(a) for a in sys.argv[1:4])
    meson, pkgconf, mpicc = shutil.which("meson"), shutil.which("pkg-config"), shutil.which("mpicc")
    mpirun = shutil.which("mpirun")
    if not pkgconf or run([pkgconf, "--exists", "PETSc"]).returncode != 0:
        print("SKIP: PETSc is not installed (apt-get install petsc-dev)")
        return 77
    if not meson or not mpicc or not mpirun:
        print(f"meson {meson}, mpicc {mpicc}, mpirun {mpirun}: each is needed")
        return 1
    opts = {o["name"]: o["value"] for o in json.loads(run([meson, "introspect", build, "--buildoptions"]).stdout)}
    if opts.get("b_sanitize", "none") != "none":
        print(f"SKIP: a sanitizer build (b_sanitize={opts['b_sanitize']}): a plain program cannot link its libshiro")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        dest = os.path.join(tmp, "dest")
        p = run([meson, "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", dest])
        if not expect(p.returncode == 0, "meson install --destdir", p):
            return 1
        root = dest + opts["prefix"]
        libdir, bindir = os.path.join(root, opts["libdir"]), os.path.join(root, opts["bindir"])
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(libdir, "pkgconfig"))
        env.pop("LD_LIBRARY_PATH", None)
        flags = run([pkgconf, "--cflags", "--libs", "shiro", "PETSc"], env=env)
        if not expect(flags.returncode == 0, "pkg-config --cflags --libs shiro PETSc", flags):
            return 1
        rpaths = [f"-Wl,-rpath,{f[2:]}" for f in flags.stdout.split() if f.startswith("-L")]
        app = os.path.join(tmp, "petsc_power")
        c = run([mpicc, "-O2", os.path.join(src, "docs", "examples", "petsc_power.c"), "-o", app]
                + flags.stdout.split() + rpaths + ["-lm"], env=env)
        if not expect(c.returncode == 0, "mpicc petsc_power.c $(pkg-config --cflags --libs shiro PETSc)", c):
            return 1

        # The plan on PETSc's layout: 4 ranks, each its contiguous block, in order.
        m = next(int(ln.split()[0]) for ln in open(matrix) if not ln.startswith("%"))
        parts = os.path.join(tmp, "parts.txt")
        with open(parts, "w") as f:
            f.write("".join(f"{r}\n" for r in petsc_layout(m, 4)))
        plan = os.path.join(tmp, "A.h5")
        for strategy in ("joint", "group"):
            p = run([os.path.join(bindir, "shiro-plan"), matrix, "--ranks", "4", "--gpus-per-node", "2", "--strategy",
                     strategy, "--partition", "parts:" + parts, "-o", plan, "--quiet"], env=env)
            if not expect(p.returncode == 0, f"installed shiro-plan --strategy {strategy} --partition parts:FILE", p):
                continue
            r = run([mpirun, "-np", "4", app, matrix, plan, "8", "10"], env=env)
            expect(r.returncode == 0 and "petsc_power: ok" in r.stdout,
                   f"{strategy}: 4 ranks, split-phase column-major calls equal PETSc's products: {r.stdout.strip()}", r)

        # The HDF5 libraries the program loads.
        ldd = run(["ldd", app], env=env).stdout
        hdf5 = sorted({m.group(1) for m in re.finditer(r"(libhdf5[^ ]*\.so[^ ]*) =>", ldd)})
        shiro_line = next((ln.strip() for ln in ldd.splitlines() if "libshiro" in ln), "")
        expect(dest in shiro_line, f"the program takes the installed libshiro: {shiro_line}")
        if opts.get("hdf5") == "parallel":
            expect(len(hdf5) == 1, f"-Dhdf5=parallel: one HDF5 library loaded ({hdf5})")
        else:
            print(f"note: this build links serial HDF5, PETSc the MPI one: the program loads {hdf5} "
                  "(-Dhdf5=parallel makes it one)")
    print(f"{checklib.failures} failure(s)")
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
