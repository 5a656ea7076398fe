#!/usr/bin/env python3
"""The transposed product on real plans: plan a matrix for every strategy x partition x ranks
(flat and two-tier), run test_transpose under mpirun (X = Aᵀ·Y against a serial reference,
the same bits on two calls, the forward product still right), float and double.

usage: transpose_check.py BUILD_DIR MATRIX [--strategies S,..] [--partitions P,..] [--ranks R[:G],..] [--n N,..]
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
    ap.add_argument("--strategies", default="block,col,row,joint,hier,group")
    ap.add_argument("--partitions", default="block,nnz")
    ap.add_argument("--ranks", default="1,3,4:2,8:4,5:2")
    ap.add_argument("--n", default="1,7")
    a = ap.parse_args()
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(a.build, "tools", "shiro-plan")
    test_exe = os.path.join(a.build, "tests", "mpi", "test_transpose")
    failures = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "t.shiro.h5")
        for part in a.partitions.split(","):
            for strategy in a.strategies.split(","):
                for entry in a.ranks.split(","):
                    r, g = (entry.split(":") + ["1"])[:2]
                    tag = f"{os.path.basename(a.matrix)} {strategy} {part} R={r} G={g}"
                    p = subprocess.run([plan_exe, a.matrix, "--ranks", r, "--gpus-per-node", g, "--strategy", strategy,
                                        "--partition", part, "-o", plan, "--quiet"], capture_output=True, text=True)
                    if p.returncode != 0:
                        print(f"FAIL {tag}: shiro-plan: {p.stderr.strip()}")
                        failures += 1
                        continue
                    t = subprocess.run([mpirun, "-np", r, test_exe, plan, a.matrix, a.n], capture_output=True, text=True,
                                       timeout=600)
                    runs += 1
                    if t.returncode != 0:
                        print(f"FAIL {tag}:\n{t.stdout}{t.stderr}")
                        failures += 1
                    else:
                        print(f"ok   {tag}: {t.stdout.strip().splitlines()[-2] if t.stdout.strip() else ''}")
    print(f"{runs} runs, {failures} failures")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
