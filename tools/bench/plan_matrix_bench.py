#!/usr/bin/env python3
"""plan_matrix_bench.py — shiro.plan_matrix in-process against shiro-plan on a csr-h5 file.

usage: plan_matrix_bench.py BUILD_DIR GRAPH.h5 [--ranks R] [--gpus-per-node G] [--threads T] [--reps N]

GRAPH.h5 is an HDF5 CSR file (shiro-gen rmat --format csr-h5 writes one). Interleaved, --reps times
each: `shiro-plan GRAPH.h5 --format csr-h5` (wall time of the process, reading the file included) and
plan_matrix of the same graph held in memory as a 2 x E int64 edge_index (wall time of the call: the
arrays handed to libshiro_planner, planned, the plan written). Both plans are checked byte-identical.
Prints each time (wall, and CPU: user + system), the best of each and their ratios (the goal: plan_matrix <= 1.2x shiro-plan).
Run with the interpreter that has numpy, h5py, mpi4py (/usr/bin/python3 on Debian).
"""
import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("graph")
    ap.add_argument("--ranks", type=int, default=8)
    ap.add_argument("--gpus-per-node", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--reps", type=int, default=3)
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, os.path.join(here, "..", "..", "python"))
    os.environ.setdefault("SHIRO_LIBRARY", os.path.join(a.build, "runtime", "libshiro.so"))
    os.environ["OMP_NUM_THREADS"] = str(a.threads)
    import h5py
    import numpy as np

    import shiro
    with h5py.File(a.graph, "r") as f:
        indptr, indices = f["indptr"][:].astype(np.int64), f["indices"][:].astype(np.int64)
        m = len(indptr) - 1
    edge_index = np.vstack([np.repeat(np.arange(m, dtype=np.int64), np.diff(indptr)), indices])
    del indices
    tmp = tempfile.mkdtemp(prefix="plan-bench-")
    cli_out, py_out = os.path.join(tmp, "cli.h5"), os.path.join(tmp, "py.h5")
    cmd = [os.path.join(a.build, "tools", "shiro-plan"), a.graph, "--format", "csr-h5", "--ranks", str(a.ranks),
           "--gpus-per-node", str(a.gpus_per_node), "--threads", str(a.threads), "-o", cli_out, "--quiet"]
    print(f"graph {a.graph}: {m} nodes, {edge_index.shape[1]} edges; R = {a.ranks}, G = {a.gpus_per_node}, "
          f"{a.threads} thread(s)")
    def cpu(who):
        r = resource.getrusage(who)
        return r.ru_utime + r.ru_stime

    # shiro-plan as a user runs it (its huge-page heap on); SHIRO_HUGEPAGES=0 turns off plan_matrix's only
    cli_env = {k: v for k, v in os.environ.items() if k != "SHIRO_HUGEPAGES"}
    t_cli, t_py, c_cli, c_py = [], [], [], []
    for rep in range(a.reps):
        c0, t0 = cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
        subprocess.run(cmd, check=True, env=cli_env)
        t_cli.append(time.perf_counter() - t0)
        c_cli.append(cpu(resource.RUSAGE_CHILDREN) - c0)
        c0, t0 = cpu(resource.RUSAGE_SELF), time.perf_counter()
        shiro.plan_matrix(edge_index, num_nodes=m, ranks=a.ranks, gpus_per_node=a.gpus_per_node, threads=a.threads,
                          out=py_out)
        t_py.append(time.perf_counter() - t0)
        c_py.append(cpu(resource.RUSAGE_SELF) - c0)
        print(f"rep {rep}: shiro-plan {t_cli[-1]:.3f} s ({c_cli[-1]:.3f} s CPU), plan_matrix {t_py[-1]:.3f} s "
              f"({c_py[-1]:.3f} s CPU)", flush=True)
    same = open(cli_out, "rb").read() == open(py_out, "rb").read()
    ratio, cratio = min(t_py) / min(t_cli), min(c_py) / min(c_cli)
    print(f"best: shiro-plan {min(t_cli):.3f} s ({min(c_cli):.3f} s CPU), plan_matrix {min(t_py):.3f} s "
          f"({min(c_py):.3f} s CPU): ratio {ratio:.3f} wall, {cratio:.3f} CPU (goal <= 1.2: "
          f"{'PASS' if ratio <= 1.2 else 'MISS'}); plans {'byte-identical' if same else 'DIFFER'}")
    os.remove(cli_out)
    os.remove(py_out)
    os.rmdir(tmp)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
