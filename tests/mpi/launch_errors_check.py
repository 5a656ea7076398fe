#!/usr/bin/env python3
"""Wrong launches and bad input get clear errors, never a hang or a crash, and
leave no file behind.

usage: launch_errors_check.py BUILD_DIR MATRIX README_APP
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

failures = 0


def expect(cond, what, proc=None):
    global failures
    if not cond:
        failures += 1
        print(f"FAIL {what}")
        if proc is not None:
            print(proc.stdout, proc.stderr)
    else:
        print(f"ok   {what}")


def run(cmd, cwd=None):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, cwd=cwd)


def main():
    build, matrix, readme_app = sys.argv[1], os.path.abspath(sys.argv[2]), os.path.abspath(sys.argv[3])
    tools = os.path.join(os.path.abspath(build), "tools")
    plan_exe, spmm = os.path.join(tools, "shiro-plan"), os.path.join(tools, "shiro-spmm")
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "k.shiro.h5")
        p = run([plan_exe, matrix, "--ranks", "4", "--gpus-per-node", "2", "-o", plan, "--quiet"])
        expect(p.returncode == 0 and os.path.exists(plan), "plan for 4 ranks", p)
        # Default output name: the matrix's base name + .shiro.h5, in the current directory.
        p = run([plan_exe, matrix, "--ranks", "2", "--quiet"], cwd=tmp)
        base = os.path.basename(matrix).split(".mtx")[0]
        expect(p.returncode == 0 and os.path.exists(os.path.join(tmp, base + ".shiro.h5")), "default output name", p)
        # Wrong rank count: every rank says so, non-zero exit, no hang (timeout would raise).
        s = run([mpirun, "-np", "3", spmm, plan, "--n", "4", "--iters", "1"])
        expect(s.returncode != 0 and s.stderr.count("made for 4 ranks but the communicator has 3") == 3,
               "3 ranks on a 4-rank plan: error on every rank", s)
        # The README's example as a program, on 5 ranks for a 4-rank plan: every rank leaves within
        # 10 s, each with a message that names the cause (not "see rank 4's message").
        t0 = time.monotonic()
        s = run([mpirun, "-np", "5", readme_app, plan])
        took = time.monotonic() - t0
        said = dict(re.findall(r"^readme_app: rank (\d+): (.*)$", s.stderr, re.M))
        expect(s.returncode != 0 and took < 10 and sorted(said) == ["0", "1", "2", "3", "4"] and
               all("made for 4 ranks but the communicator has 5" in m for m in said.values()),
               f"readme_app on 5 ranks of a 4-rank plan: every rank leaves in {took:.1f} s, naming the cause", s)
        s = run([mpirun, "-np", "4", readme_app, plan])
        expect(s.returncode == 0 and s.stdout.strip() == "ok" and not s.stderr, "readme_app on 4 ranks: ok", s)
        s = run([mpirun, "-np", "2", readme_app, os.path.join(tmp, "missing.h5")])
        said = re.findall(r"^readme_app: rank (\d+): (.*)$", s.stderr, re.M)
        expect(s.returncode != 0 and len(said) == 2 and all("missing.h5" in m for _, m in said),
               "readme_app with a missing plan: both ranks name the file", s)
        s = run([mpirun, "-np", "2", spmm, os.path.join(tmp, "missing.h5")])
        expect(s.returncode != 0 and "missing.h5" in s.stderr, "missing plan file named", s)
        # Bad arguments name the argument.
        for args, needle in [(["--ranks", "0"], "--ranks"), (["--ranks", "x4"], "--ranks"),
                             (["--ranks", "4", "--strategy", "magic"], "unknown strategy 'magic'"),
                             (["--ranks", "4", "--bogus"], "unknown option '--bogus'"),
                             (["--ranks", "4", "--partition", "random"], "unknown partition 'random'"),
                             (["--ranks", "4", "--gpus-per-node"], "--gpus-per-node needs a value")]:
            p = run([plan_exe, matrix] + args)
            expect(p.returncode == 2 and needle in p.stderr, f"shiro-plan {' '.join(args)} -> {needle}", p)
        p = run([plan_exe, "--ranks", "4"])
        expect(p.returncode == 2 and "no matrix" in p.stderr, "no matrix given", p)
        # A bad matrix: error names file and line, and no plan file appears.
        bad = os.path.join(tmp, "bad.mtx")
        with open(bad, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n4 1 2.0\n")
        out = os.path.join(tmp, "bad.shiro.h5")
        p = run([plan_exe, bad, "--ranks", "2", "-o", out])
        expect(p.returncode == 1 and "bad.mtx:4" in p.stderr and not os.path.exists(out), "bad matrix: file:line, no output", p)
        left = [f for f in os.listdir(tmp) if ".tmp." in f]
        expect(not left, f"no temporary files left ({left})")
        # metis needs a square matrix: a clear error, no file.
        rect = os.path.join(tmp, "rect.mtx")
        with open(rect, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n2 3 2\n1 1 1.0\n2 3 2.0\n")
        p = run([plan_exe, rect, "--ranks", "2", "--partition", "metis", "-o", out])
        expect(p.returncode == 1 and "square" in p.stderr and not os.path.exists(out), "metis on a rectangular matrix", p)
        # --check against another matrix is refused up front.
        s = run([mpirun, "-np", "4", spmm, plan, "--check", bad])
        expect(s.returncode != 0 and "bad.mtx" in s.stderr, "--check with a broken matrix", s)
        # --check against a matrix of the same shape and nonzero count but another pattern: named as such.
        moved = os.path.join(tmp, "moved.mtx")
        with open(moved, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n3 2 2.0\n")
        diag = os.path.join(tmp, "diag.mtx")
        with open(diag, "w") as f:
            f.write("%%MatrixMarket matrix coordinate real general\n3 3 2\n1 1 1.0\n2 2 2.0\n")
        dplan = os.path.join(tmp, "diag.shiro.h5")
        p = run([plan_exe, diag, "--ranks", "2", "-o", dplan, "--quiet"])
        expect(p.returncode == 0, "plan of a 3 x 3 matrix", p)
        s = run([mpirun, "-np", "2", spmm, dplan, "--n", "2", "--iters", "1", "--check", moved])
        expect(s.returncode == 1 and "this plan was made for another matrix" in s.stderr and "digest" in s.stderr,
               "--check with another matrix of the same shape: says so, with the digests", s)
        s = run([mpirun, "-np", "2", spmm, dplan, "--n", "2", "--iters", "1", "--check", diag])
        expect(s.returncode == 0 and "ok" in s.stdout, "--check with the plan's own matrix", s)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
