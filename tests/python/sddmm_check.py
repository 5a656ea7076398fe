#!/usr/bin/env python3
"""The values' gradient in Python: ctx.sddmm, shiro.torch.spmm(values=) and shiro.torch.sddmm.

usage: sddmm_check.py BUILD_DIR SOURCE_DIR MODE
  grad  for every strategy: the flat ones (block, col, row, joint) under mpirun -np 2, joint and the
        two-tier ones (hier, group, cola, hybrid: relays) under -np 4 as 2 nodes of 2, karate, float64: on every rank, a function of
        global inputs (X and two sets of A's values, the same on every rank) whose output is the
        global C = A(v)·X + A(w)·X (two products on one context with other values, so the backward
        installs the first's again), checked against a dense torch reference to 1e-12, then
        torch.autograd.gradcheck of it in X, v and w, and of shiro.torch.sddmm in B and G; ctx.sddmm
        against the serial sums, numpy and torch, out=; a product without values= whose context's
        values changed before its backward raises there; a wrong G shape on one rank raises on all.
  gat   python/examples/gat.py under mpirun -np 4 (2 nodes of 2, group) and -np 2 (joint) against
        its one-process torch reference (--reference): the losses agree to 1e-9 at every epoch and fall.
Exit 0 when every check passed, 1 otherwise, 77 (skipped) without numpy, scipy, mpi4py and torch.
The worker (--worker PLAN MATRIX) is this file under mpirun.
"""
import os
import subprocess
import sys
import tempfile

STRATEGIES = ("block", "col", "row", "joint", "hier", "group", "cola", "hybrid")


def worker(plan_path, matrix):
    import numpy as np
    import scipy.io
    import torch
    from mpi4py import MPI

    import shiro
    import shiro.torch

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    fails = []
    A = scipy.io.mmread(matrix).tocsr()
    n, k = A.shape
    with shiro.Plan(plan_path, comm) as plan, plan.context(2, dtype="float64") as ctx:
        indptr, indices, _ = plan.local_matrix()
        nnz = len(indices)
        rows_local = np.repeat(plan.c_global, np.diff(indptr))
        parts = comm.allgather((rows_local, indices))
        first = np.cumsum([0] + [len(p[0]) for p in parts])
        rows = torch.from_numpy(np.concatenate([p[0] for p in parts]))
        cols = torch.from_numpy(np.concatenate([p[1] for p in parts]))
        mine = torch.arange(first[rank], first[rank + 1])
        bg, cg = torch.from_numpy(plan.b_global), torch.from_numpy(plan.c_global)
        total = int(first[-1])

        class Local(torch.autograd.Function):
            """A global tensor's entries idx on this rank; backward: the ranks' gradients summed."""

            @staticmethod
            def forward(fctx, a, idx):
                fctx.shape, fctx.idx = a.shape, idx
                return a[idx].clone()

            @staticmethod
            def backward(fctx, g):
                z = torch.zeros(fctx.shape, dtype=g.dtype)
                z.index_add_(0, fctx.idx, g)
                out = np.empty_like(z.numpy())
                comm.Allreduce(np.ascontiguousarray(z.numpy()), out, op=MPI.SUM)
                return torch.from_numpy(out), None

        class Gather(torch.autograd.Function):
            """This rank's rows (global ids idx) into the global tensor on every rank; backward: its rows."""

            @staticmethod
            def forward(fctx, a, idx, nrows):
                fctx.idx = idx
                full = torch.zeros((nrows,) + tuple(a.shape[1:]), dtype=a.dtype)
                for i, part in comm.allgather((idx, a.detach())):
                    full[i] = part
                return full

            @staticmethod
            def backward(fctx, g):
                return g[fctx.idx].contiguous(), None, None

        def f(Xg, vg, wg):
            Xl = Local.apply(Xg, bg)
            C = shiro.torch.spmm(ctx, Xl, values=Local.apply(vg, mine)) + \
                shiro.torch.spmm(ctx, Xl, values=Local.apply(wg, mine))
            return Gather.apply(C, cg, n)

        gen = torch.Generator().manual_seed(7)
        Xg = torch.randn(k, 2, dtype=torch.float64, generator=gen, requires_grad=True)
        vg = torch.randn(total, dtype=torch.float64, generator=gen, requires_grad=True)
        wg = torch.randn(total, dtype=torch.float64, generator=gen, requires_grad=True)
        Ad = torch.zeros(n, k, dtype=torch.float64)
        Ad.index_put_((rows, cols), (vg + wg).detach(), accumulate=True)
        ref = Ad @ Xg.detach()
        got = f(Xg, vg, wg).detach()
        if not torch.allclose(got, ref, rtol=1e-12, atol=1e-12):
            fails.append(f"rank {rank}: forward off by {float((got - ref).abs().max()):.3g}")
        # the gradients against the reference's: dv_ij = <W_i, X_j>, dX = Aᵀ W
        W = torch.randn(n, 2, dtype=torch.float64, generator=gen)
        (f(Xg, vg, wg) * W).sum().backward()
        dv_ref = (W[rows] * Xg.detach()[cols]).sum(1)
        for name, g_, r_ in (("v", vg.grad, dv_ref), ("w", wg.grad, dv_ref), ("X", Xg.grad, Ad.T @ W)):
            if not torch.allclose(g_, r_, rtol=1e-12, atol=1e-12):
                fails.append(f"rank {rank}: d{name} off by {float((g_ - r_).abs().max()):.3g}")
        for t in (Xg, vg, wg):
            t.grad = None
        if not torch.autograd.gradcheck(f, (Xg, vg, wg), eps=1e-6, atol=1e-7, raise_exception=False):
            fails.append(f"rank {rank}: gradcheck of spmm(values=) failed")

        # shiro.torch.sddmm in B and G (global inputs as above), and ctx.sddmm against serial sums
        def s(Bg, Gg):
            e = shiro.torch.sddmm(ctx, Local.apply(Bg, bg), Local.apply(Gg, cg))
            return Gather.apply(e, mine, total)

        Bg = torch.randn(k, 2, dtype=torch.float64, generator=gen, requires_grad=True)
        Gg = torch.randn(n, 2, dtype=torch.float64, generator=gen, requires_grad=True)
        e_ref = (Gg.detach()[rows] * Bg.detach()[cols]).sum(1)
        if not torch.allclose(s(Bg, Gg).detach(), e_ref, rtol=1e-14, atol=1e-14):
            fails.append(f"rank {rank}: shiro.torch.sddmm off")
        if not torch.autograd.gradcheck(s, (Bg, Gg), eps=1e-6, atol=1e-7, raise_exception=False):
            fails.append(f"rank {rank}: gradcheck of shiro.torch.sddmm failed")
        Bl, Gl = Bg.detach()[bg].numpy().copy(), Gg.detach()[cg].numpy().copy()
        want = e_ref[mine].numpy()
        out = np.empty(nnz)
        for name, val in (("numpy", ctx.sddmm(Bl, Gl)), ("torch", ctx.sddmm(torch.from_numpy(Bl), torch.from_numpy(Gl))),
                          ("out=", ctx.sddmm(Bl, Gl, out=out)), ("width 1", ctx.sddmm(Bl[:, :1].copy(), Gl[:, :1].copy()))):
            w_ = want if name != "width 1" else (Gg.detach()[rows][:, :1] * Bg.detach()[cols][:, :1]).sum(1)[mine].numpy()
            if not np.allclose(np.asarray(val), w_, rtol=1e-14, atol=1e-14):
                fails.append(f"rank {rank}: ctx.sddmm ({name}) off")
        # a product without values= whose context's values changed before its backward raises there
        Xl = torch.randn(len(bg), 2, dtype=torch.float64, generator=gen, requires_grad=True)
        H = shiro.torch.spmm(ctx, Xl)
        ctx.set_values(np.ones(nnz))
        try:
            H.sum().backward()
            fails.append(f"rank {rank}: a backward after set_values did not raise")
        except shiro.Error as e:
            if "values changed" not in str(e):
                fails.append(f"rank {rank}: a backward after set_values raised {e}")
        try:
            ctx.sddmm(Bl, Gl if rank != comm.Get_size() - 1 else Gl[:-1] if len(Gl) else np.zeros((1, 2)))
            fails.append(f"rank {rank}: a wrong G on the last rank did not raise")
        except shiro.Error as e:
            if "G" not in str(e):
                fails.append(f"rank {rank}: a wrong G raised {e}")
    all_fails = [x for part in comm.allgather(fails) for x in part]
    if rank == 0:
        print("\n".join(all_fails) if all_fails else "ok")
    return 1 if all_fails else 0


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3])
    build, src, mode = sys.argv[1:4]
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from python_check import env_for, find_python, mpirun
    py, why = find_python()
    if py is None:
        print(f"SKIP: no Python with numpy, scipy, mpi4py and torch ({why})")
        return 77
    env = env_for(build, src)
    failures = 0
    if mode == "grad":
        karate = os.path.join(src, "tests", "data", "karate.mtx")
        with tempfile.TemporaryDirectory() as tmp:
            plan = os.path.join(tmp, "k.shiro.h5")
            # Each run is a gradcheck through hundreds of collective calls: the flat strategies on
            # 2 ranks, joint and the two-tier ones (relays, aggregation) on 2 nodes of 2.
            runs = [(s, "2", "1") for s in STRATEGIES[:4]] + [(s, "4", "2") for s in ("joint",) + STRATEGIES[4:]]
            for strategy, r, g in runs:
                tag = f"{strategy} R={r} G={g}"
                p = subprocess.run([env["SHIRO_PLAN"], karate, "--ranks", r, "--gpus-per-node", g, "--strategy",
                                    strategy, "-o", plan, "--quiet"], capture_output=True, text=True)
                if p.returncode:
                    print(f"FAIL {tag}: shiro-plan: {p.stderr.strip()}")
                    failures += 1
                    continue
                t = mpirun(r, [py, os.path.abspath(__file__), "--worker", plan, karate], env)
                ok = t.returncode == 0 and t.stdout.strip().endswith("ok")
                failures += not ok
                print(f"{'ok  ' if ok else 'FAIL'} {tag}" + ("" if ok else f":\n{t.stdout}"))
    elif mode == "gat":
        gat = os.path.join(src, "python", "examples", "gat.py")
        ref = subprocess.run([py, gat, "--reference"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                             env=env, timeout=600)
        want = [float(line.split()[-1]) for line in ref.stdout.splitlines() if line.startswith("epoch ")]
        if ref.returncode or len(want) < 2 or not want[-1] < want[0]:
            print(f"FAIL reference:\n{ref.stdout}")
            return 1
        for np_, extra in (("4", ["--gpn", "2", "--strategy", "group"]), ("2", ["--strategy", "joint"])):
            t = mpirun(np_, [py, gat] + extra, env)
            got = [float(line.split()[-1]) for line in t.stdout.splitlines() if line.startswith("epoch ")]
            diff = max((abs(a - b) for a, b in zip(got, want)), default=float("inf"))
            ok = t.returncode == 0 and len(got) == len(want) and diff <= 1e-9
            failures += not ok
            print(f"{'ok  ' if ok else 'FAIL'} gat.py -np {np_} {' '.join(extra)}: {len(got)} epochs, losses "
                  f"{want[0]:.6f} -> {want[-1]:.6f}, max |shiro - reference| = {diff:.3g}" + ("" if ok else f"\n{t.stdout}"))
    else:
        print(f"sddmm_check.py: unknown mode {mode!r} (grad, gat)")
        return 2
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
