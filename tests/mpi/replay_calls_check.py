#!/usr/bin/env python3
"""The calls of a replay on real plans: plan a matrix for a few strategies and rank counts (flat and
two-tier), run test_replay_calls under mpirun: the same bits on every call and for 1 and 2 threads,
nothing allocated per call, the stage in flight polled (MPI_Testall) during the multiply.

usage: replay_calls_check.py BUILD_DIR MATRIX [--runs S:R[:G],..] [--n N,..]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("matrix")
    ap.add_argument("--runs", default="joint:2,joint:4,group:4:2,hier:4:2")
    ap.add_argument("--n", default="1,7,32")
    a = ap.parse_args()
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(a.build, "tools", "shiro-plan")
    test_exe = os.path.join(a.build, "tests", "mpi", "test_replay_calls")
    failures = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "t.shiro.h5")
        for entry in a.runs.split(","):
            strategy, r, g = (entry.split(":") + ["1"])[:3]
            tag = f"{os.path.basename(a.matrix)} {strategy} R={r} G={g}"
            p = subprocess.run([plan_exe, a.matrix, "--ranks", r, "--gpus-per-node", g, "--strategy", strategy,
                                "-o", plan, "--quiet"], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL {tag}: shiro-plan: {p.stderr.strip()}")
                failures += 1
                continue
            t = subprocess.run([mpirun, "-np", r, test_exe, plan, a.n], capture_output=True, text=True, timeout=600)
            runs += 1
            out = (t.stdout + t.stderr).strip()
            if t.returncode != 0:
                print(f"FAIL {tag}:\n{out}")
                failures += 1
            else:
                print(f"ok   {tag}: {out.splitlines()[-1] if out else ''}")
    print(f"{runs} runs, {failures} failures")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
