#!/usr/bin/env python3
"""mpirun integration: plan a matrix for every strategy x rank count, replay it
with shiro-spmm --check for every dtype x N, and check that the plan's volumes
as shiro-plan reports them equal those shiro-plan-dump recomputes from the file.

usage: replay_check.py BUILD_DIR MATRIX [--ranks 1,2,3,4,8 | --ranks 8:4,6:4] [--gpn 2]
                 [--strategies block,col,row,joint] [--n 1,7,32] [--dtype float,double]
                 [--backend cpu|cuda] [--transport auto|nccl|mpi] [--direction forward|transpose|both]
Exit status 0 when every run passed, 1 otherwise (each failure is printed).
With --backend cuda, exit status 77 (skipped) when shiro-spmm finds no CUDA
device (it exits 77 itself then).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile


def run(cmd, **kw):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600, **kw)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("matrix")
    ap.add_argument("--ranks", default="1,2,3,4,8", help="R or R:G entries")
    ap.add_argument("--gpn", type=int, default=2)
    ap.add_argument("--strategies", default="block,col,row,joint")
    ap.add_argument("--n", default="1,7,32")
    ap.add_argument("--dtype", default="float,double")
    ap.add_argument("--partition", default="block")
    ap.add_argument("--backend", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--transport", default="auto", choices=["auto", "nccl", "mpi"])
    ap.add_argument("--direction", default="forward", choices=["forward", "transpose", "both"],
                    help="shiro-spmm --direction: both checks C = A.B and X = A^T.Y")
    a = ap.parse_args()
    tools = os.path.join(a.build, "tools")
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun:
        print("mpirun not found")
        return 1
    if not os.path.exists(a.matrix):
        print(f"SKIP: {a.matrix} not present")
        return 77
    expected = len(a.n.split(",")) * len(a.dtype.split(",")) * (2 if a.direction == "both" else 1)
    backend = [] if a.backend == "cpu" else ["--backend", a.backend, "--transport", a.transport]
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "plan.shiro.h5")
        for strategy in a.strategies.split(","):
            for entry in a.ranks.split(","):
                ranks, gpn = (int(x) for x in (entry.split(":") if ":" in entry else (entry, a.gpn)))
                tag = f"{os.path.basename(a.matrix)} strategy={strategy} partition={a.partition} ranks={ranks} gpn={gpn}"
                p = run([os.path.join(tools, "shiro-plan"), a.matrix, "--ranks", str(ranks), "--gpus-per-node",
                         str(gpn), "--strategy", strategy, "--partition", a.partition, "-o", plan, "--json", "--quiet"])
                if p.returncode != 0:
                    print(f"FAIL {tag}: shiro-plan exit {p.returncode}: {p.stderr.strip()}")
                    failures += 1
                    continue
                planj = json.loads(p.stdout)  # auto-cpu names the strategy it chose
                planned = {k: v for k, v in planj["volumes"][planj["strategy"]].items()
                           if not k.startswith("predicted_")}  # the time partition prices its plan
                d = run([os.path.join(tools, "shiro-plan-dump"), plan, "--json"])
                dumped = json.loads(d.stdout)["volumes"] if d.returncode == 0 else None
                if dumped != planned:
                    print(f"FAIL {tag}: planner volumes {planned} != dump volumes {dumped} ({d.stderr.strip()})")
                    failures += 1
                v = run([os.path.join(tools, "shiro-plan-dump"), plan, "--verify", "--matrix", a.matrix])
                if v.returncode != 0:
                    print(f"FAIL {tag}: shiro-plan-dump --verify: {v.stderr.strip()}")
                    failures += 1
                s = run([mpirun, "-np", str(ranks), os.path.join(tools, "shiro-spmm"), plan, "--n", a.n,
                         "--dtype", a.dtype, "--iters", "2", "--check", a.matrix, "--direction", a.direction] + backend)
                if s.returncode == 77 and a.backend != "cpu":
                    why = s.stderr.strip().splitlines()[0] if s.stderr.strip() else ""
                    print(f"SKIP {tag}: shiro-spmm --backend {a.backend} found no device: {why}")
                    return 77
                oks = sum(1 for line in s.stdout.splitlines() if line.endswith(" ok"))
                if s.returncode != 0 or oks != expected:
                    print(f"FAIL {tag}: shiro-spmm exit {s.returncode}, {oks}/{expected} checks ok\n{s.stdout}{s.stderr}")
                    failures += 1
                else:
                    print(f"ok   {tag}{'' if a.backend == 'cpu' else ' backend=' + a.backend + '/' + a.transport}: "
                          f"{planned['total_rows']} rows/call, verified, {expected} checks passed ({a.direction})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
