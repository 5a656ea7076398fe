#!/usr/bin/env python3
"""bench_checked.py — what Python's checked calls (the default) cost per call against unchecked ones.

    mpirun -np R python3 tools/bench/bench_checked.py PLAN --n 1,64 [--iters 200] [--reps 7]

For each N, two float32 contexts on one plan, `checked=True` (the default: one MPI_Allreduce of
7 integers per call, so that a wrong shape or an out-of-step rank raises on every rank) and
`checked=False`; ctx.spmm(B) timed --iters calls at a time, the two interleaved --reps times so
that both run under the same load. Rank 0 prints, per N, the slowest rank's median and best time
per call of each and their difference. Needs the Python package (PYTHONPATH=python) and libshiro
(SHIRO_LIBRARY or the build's).
"""
import argparse
import statistics
import time

import numpy as np
from mpi4py import MPI

import shiro


def per_call(comm, ctx, B, iters):
    """The slowest rank's seconds per call over `iters` calls."""
    comm.Barrier()
    t = time.perf_counter()
    for _ in range(iters):
        ctx.spmm(B)
    return comm.allreduce((time.perf_counter() - t) / iters, op=MPI.MAX)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("plan")
    ap.add_argument("--n", default="1,64")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--reps", type=int, default=7)
    a = ap.parse_args()
    comm = MPI.COMM_WORLD
    with shiro.Plan(a.plan, comm) as plan:
        if comm.rank == 0:
            print(f"{a.plan}: R = {comm.size}, float32, {a.iters} calls x {a.reps} repetitions, interleaved")
        for n in (int(x) for x in a.n.split(",")):
            with plan.context(n, dtype="float32") as chk, plan.context(n, dtype="float32", checked=False) as raw:
                B = np.random.default_rng(comm.rank).standard_normal((plan.b_rows, n)).astype(np.float32)
                chk.spmm(B), raw.spmm(B)  # first calls (staging, pages) outside the timing
                times = {"checked": [], "unchecked": []}
                for _ in range(a.reps):
                    times["checked"].append(per_call(comm, chk, B, a.iters))
                    times["unchecked"].append(per_call(comm, raw, B, a.iters))
            if comm.rank == 0:
                med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
                best = {k: min(v) * 1e6 for k, v in times.items()}
                print(f"N = {n}: checked {med['checked']:.1f} us (best {best['checked']:.1f}), unchecked "
                      f"{med['unchecked']:.1f} us (best {best['unchecked']:.1f}); the check costs "
                      f"{med['checked'] - med['unchecked']:+.1f} us per call (median), "
                      f"{best['checked'] - best['unchecked']:+.1f} us (best)")


if __name__ == "__main__":
    main()
