#!/usr/bin/env python3
"""shiro-spmm --transpose / --direction both: X = Aᵀ·Y from the plan, checked against a serial Aᵀ·Y.

For a square and a rectangular matrix, flat and two-tier plans: --direction both --check prints a
checked line per direction and the time ratio; --transpose --check alone (float and double) passes;
with a matrix of the same pattern but one value changed, --check fails (exit 1, FAILED) in both
directions; a bad --direction is refused once, exit 2.

usage: spmm_transpose_check.py BUILD_DIR SQUARE.mtx RECTANGULAR.mtx   (needs mpirun, tests/meson.build's mpi_env)
"""
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "lib"))  # checklib
import checklib
from checklib import expect, run


def changed_value(src, dst):
    """dst: src with the first entry's value changed (same pattern); pattern files get values."""
    out, done = [], False
    with open(src) as f:
        lines = f.read().splitlines()
    header = lines[0]
    pattern = " pattern " in header
    if pattern:
        header = header.replace(" pattern ", " real ")
    out.append(header)
    size_seen = False
    for line in lines[1:]:
        if line.startswith("%"):
            out.append(line)
            continue
        if not size_seen:
            size_seen = True
            out.append(line)
            continue
        parts = line.split()
        if pattern:
            parts = parts[:2] + ["1"]
        if not done:
            parts[2] = repr(float(parts[2]) * 3.0 + 1.0)
            done = True
        out.append(" ".join(parts))
    with open(dst, "w") as f:
        f.write("\n".join(out) + "\n")


def main():
    build, square, rect = (os.path.abspath(a) for a in sys.argv[1:4])
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(build, "tools", "shiro-plan")
    spmm = os.path.join(build, "tools", "shiro-spmm")
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "t.shiro.h5")
        for matrix in (square, rect):
            name = os.path.basename(matrix)
            for ranks, gpn, strategy in (("3", "1", "joint"), ("4", "2", "group"), ("4", "2", "cola")):
                tag = f"{name} {strategy} R={ranks} G={gpn}"
                p = run([plan_exe, matrix, "--ranks", ranks, "--gpus-per-node", gpn, "--strategy", strategy, "-o", plan,
                         "--quiet"])
                if p.returncode != 0:
                    expect(False, f"{tag}: shiro-plan", p)
                    continue
                s = run([mpirun, "-np", ranks, spmm, plan, "--direction", "both", "--n", "1,5", "--iters", "2",
                         "--check", matrix])
                lines = s.stdout.splitlines()
                fwd = [l for l in lines if "check: max error/bound" in l and "transposed" not in l]
                bwd = [l for l in lines if "check: max error/bound" in l and "transposed (X = A^T.Y)" in l]
                ratio = [l for l in lines if re.search(r"transposed/forward time [0-9.]+ \(", l)]
                expect(s.returncode == 0 and len(fwd) == 2 and len(bwd) == 2 and len(ratio) == 2
                       and all(l.endswith(" ok") for l in fwd + bwd),
                       f"{tag}: --direction both --check: both directions checked ok, N = 1 and 5, ratios printed", s)
                s = run([mpirun, "-np", ranks, spmm, plan, "--transpose", "--dtype", "float,double", "--n", "3",
                         "--iters", "1", "--check", matrix])
                lines = [l for l in s.stdout.splitlines() if "transposed (X = A^T.Y)" in l]
                expect(s.returncode == 0 and len(lines) == 2 and all(l.endswith(" ok") for l in lines)
                       and "transposed/forward" not in s.stdout,
                       f"{tag}: --transpose --check, float and double", s)
            bad = os.path.join(tmp, "changed.mtx")
            changed_value(matrix, bad)
            p = run([plan_exe, matrix, "--ranks", "3", "-o", plan, "--quiet"])
            s = run([mpirun, "-np", "3", spmm, plan, "--direction", "both", "--n", "2", "--iters", "1", "--check", bad])
            expect(p.returncode == 0 and s.returncode == 1 and s.stdout.count("FAILED") == 2,
                   f"{name}: --check against a changed value fails in both directions", s)
            s = run([mpirun, "-np", "3", spmm, plan, "--transpose", "--n", "2", "--iters", "1", "--check", bad])
            expect(s.returncode == 1 and s.stdout.count("FAILED") == 1 and "transposed" in s.stdout,
                   f"{name}: --transpose --check against a changed value fails", s)
        s = run([mpirun, "-np", "3", spmm, plan, "--direction", "sideways"])
        expect(s.returncode == 2 and s.stderr.count("--direction: expected forward, transpose or both, found 'sideways'") == 1,
               "--direction sideways: refused once, exit 2", s)
    print(f"{checklib.failures} failures")
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
