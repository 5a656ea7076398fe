#!/usr/bin/env python3
"""shiro_ctx_set_values on real plans: plan a matrix for every strategy x partition x ranks (flat
and two-tier, partial products at relays included), run test_set_values under mpirun (new values:
A'·B and A'ᵀ·Y against serial products, the transposed program derived before and after, repeated
installs, misuse), float and double; --old-plan: a format 2.0 plan is refused with SHIRO_ERR_VERSION.

usage: set_values_check.py BUILD_DIR MATRIX [--strategies S,..] [--partitions P,..] [--ranks R[:G],..] [--n N,..]
                     [--backend cpu|cuda]
       set_values_check.py BUILD_DIR --old-plan PLAN.gz --ranks R
"""
import argparse
import gzip
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("matrix", nargs="?")
    ap.add_argument("--strategies", default="block,col,row,joint,hier,group,cola")
    ap.add_argument("--partitions", default="block,nnz")
    ap.add_argument("--ranks", default="1,2,3,4:2")
    ap.add_argument("--n", default="1,7")
    ap.add_argument("--old-plan")
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"],
                    help="cuda: tests/gpu/test_set_values_cuda (B, C, Y, X on the device; exit 77 without one)")
    a = ap.parse_args()
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(a.build, "tools", "shiro-plan")
    test_exe = os.path.join(a.build, "tests", "mpi", "test_set_values") if a.backend == "cpu" else \
        os.path.join(a.build, "tests", "gpu", "test_set_values_cuda")
    failures = runs = 0
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "t.shiro.h5")
        if a.old_plan:
            with gzip.open(a.old_plan, "rb") as src, open(plan, "wb") as dst:
                shutil.copyfileobj(src, dst)
            t = subprocess.run([mpirun, "-np", a.ranks, test_exe, plan, "--expect-version"], capture_output=True,
                               text=True, timeout=300)
            ok = t.returncode == 0
            print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(a.old_plan)}:\n{t.stdout}{'' if ok else t.stderr}")
            print(f"1 runs, {0 if ok else 1} failures")
            return 0 if ok else 1
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
                    t = subprocess.run([mpirun, "-np", r, test_exe, plan, a.matrix, a.n], capture_output=True, text=True,
                                       timeout=600)
                    if t.returncode == 77 and a.backend == "cuda":
                        print(f"SKIP {tag}: {t.stdout.strip()}")
                        return 77
                    if t.returncode != 0:
                        print(f"FAIL {tag}:\n{t.stdout}{t.stderr}")
                        failures += 1
                    else:
                        print(f"ok   {tag}")
    print(f"{runs} runs, {failures} failures")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
