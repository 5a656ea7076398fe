#!/usr/bin/env python3
"""bench_sddmm.py — the per-call time of shiro_sddmm against shiro_spmm and shiro_spmm_transpose.

    mpirun -np R python3 tools/bench/bench_sddmm.py PLAN --n 16,64 [--iters 20] [--reps 5]

For each N, one unchecked float64 context: the three calls interleaved (each repetition times --iters
calls of each, so all three run under the same load), the slowest rank's time per call, the median
and the best of --reps repetitions; rank 0 prints one line per N with the ratios sddmm / spmm and
sddmm / (spmm + spmm_t). Needs the Python package (PYTHONPATH=python) and libshiro (SHIRO_LIBRARY
or the build's).
"""
import argparse
import statistics
import time

import numpy as np
from mpi4py import MPI

import shiro


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plan")
    ap.add_argument("--n", default="16,64")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--reps", type=int, default=5)
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    with shiro.Plan(a.plan, comm) as plan:
        for n in (int(x) for x in a.n.split(",")):
            with plan.context(n, checked=False) as ctx:
                rng = np.random.default_rng(comm.Get_rank())
                B, G = rng.standard_normal((plan.b_rows, n)), rng.standard_normal((plan.c_rows, n))
                C, X, g = np.empty((plan.c_rows, n)), np.empty((plan.b_rows, n)), np.empty(plan.local_nnz())
                calls = {"spmm": lambda: ctx.spmm(B, out=C), "spmm_t": lambda: ctx.spmm_t(G, out=X),
                         "sddmm": lambda: ctx.sddmm(B, G, out=g)}
                for f in calls.values():  # warm up: the transposed program, the value exchange
                    f()
                times = {k: [] for k in calls}
                for _ in range(a.reps):
                    for k, f in calls.items():
                        comm.Barrier()
                        t0 = time.perf_counter()
                        for _ in range(a.iters):
                            f()
                        times[k].append(comm.allreduce((time.perf_counter() - t0) / a.iters, op=MPI.MAX))
                med = {k: statistics.median(v) for k, v in times.items()}
                best = {k: min(v) for k, v in times.items()}
                if comm.Get_rank() == 0:
                    print(f"R={comm.Get_size()} N={n}: per call (median / best of {a.reps} x {a.iters}, slowest rank) "
                          + ", ".join(f"{k} {med[k] * 1e3:.3f} / {best[k] * 1e3:.3f} ms" for k in calls)
                          + f"; sddmm/spmm {med['sddmm'] / med['spmm']:.2f}, sddmm/(spmm+spmm_t) "
                          f"{med['sddmm'] / (med['spmm'] + med['spmm_t']):.2f}", flush=True)


if __name__ == "__main__":
    main()
