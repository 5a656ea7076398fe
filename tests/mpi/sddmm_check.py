#!/usr/bin/env python3
"""shiro_sddmm on real plans: plan a matrix for every strategy x partition x ranks (flat and two-tier:
relays that forward B rows and relays that sum partial rows), run test_sddmm under mpirun: the
gradient of every nonzero, ⟨G_i, B_j⟩, bit for bit the serial reference, float and double, calls of
several widths on one context, misuse on one rank.

usage: sddmm_check.py BUILD_DIR MATRIX [--strategies S,..] [--partitions P,..] [--ranks R[:G],..] [--n N,..]
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
    ap.add_argument("--strategies", default="block,col,row,joint,hier,group,cola,hybrid")
    ap.add_argument("--partitions", default="block,nnz")
    ap.add_argument("--ranks", default="1,2,4,4:2")
    ap.add_argument("--n", default="1,3,8")
    a = ap.parse_args()
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(a.build, "tools", "shiro-plan")
    test_exe = os.path.join(a.build, "tests", "mpi", "test_sddmm")
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
                    runs += 1
                    if p.returncode != 0:
                        print(f"FAIL {tag}: shiro-plan: {p.stderr.strip()}")
                        failures += 1
                        continue
                    t = subprocess.run([mpirun, "-np", r, test_exe, plan, a.n], capture_output=True, text=True,
                                       timeout=600)
                    if t.returncode != 0:
                        print(f"FAIL {tag}:\n{t.stdout}{t.stderr}")
                        failures += 1
                    else:
                        print(f"ok   {tag}")
    print(f"{runs} runs, {failures} failures")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
