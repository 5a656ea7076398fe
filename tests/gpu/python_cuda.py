#!/usr/bin/env python3
"""The Python package's CUDA path: shiro.torch.spmm on CUDA tensors under mpirun.

usage: python_cuda.py BUILD_DIR MATRIX [--ranks 1,4:2] [--n 1,7,32] [--backend cuda|cpu]
Plans MATRIX with shiro-plan for each R[:G] (joint flat, group two-tier), then runs this
file under `mpirun -np R` as the worker. Each rank, for float32 and float64 and each N:
  * C = shiro.torch.spmm(ctx, X) with X a CUDA tensor: C on the GPU, equal to this rank's
    rows of the serial A·B (torch, float64 on the CPU) within the rounding bound
    (terms + 3)·u·(|A|·|B|);
  * C.backward(G): X.grad equals this rank's rows of Aᵀ·G within the same kind of bound;
  * set_values(2·values): the next product is 2·(A·B) within the same bound;
  * spmm(..., out=) into a CUDA tensor; a CPU tensor given to the cuda context raises
    shiro.Error on every rank (checked before any collective);
  * with one rank, torch.autograd.gradcheck of the float64 op (N = 2).
Exit status 0 when every rank passed, 1 otherwise, 77 (skipped) when torch has no CUDA
device or the library was built without the CUDA backend. --backend cpu runs the same checks
on CPU tensors (the harness itself, checked where there is no GPU), where out= and 2·v must
also give exactly the first call's bits (cuSPARSE's may differ in the last bits between calls).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
from python_check import find_python  # noqa: E402  (an interpreter with numpy, scipy, mpi4py, torch)


def driver(a):
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(a.build, "tools", "shiro-plan")
    env = dict(os.environ)
    env.setdefault("SHIRO_LIBRARY", os.path.join(a.build, "runtime", "libshiro.so"))
    env["PYTHONPATH"] = os.path.join(HERE, "..", "..", "python") + os.pathsep + env.get("PYTHONPATH", "")
    exe, why = find_python()
    if exe is None:
        print(f"SKIP: no interpreter imports numpy, scipy, mpi4py and torch ({why})")
        return 77
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "p.shiro.h5")
        for entry in a.ranks.split(","):
            r, g = (entry.split(":") + ["1"])[:2]
            strategy = "group" if int(g) > 1 else "joint"
            tag = f"{os.path.basename(a.matrix)} {strategy} R={r} G={g}"
            p = subprocess.run([plan_exe, a.matrix, "--ranks", r, "--gpus-per-node", g, "--strategy", strategy,
                                "-o", plan, "--quiet"], capture_output=True, text=True)
            if p.returncode != 0:
                print(f"FAIL {tag}: shiro-plan: {p.stderr.strip()}")
                failures += 1
                continue
            t = subprocess.run([mpirun, "-np", r, exe, os.path.abspath(__file__), "--worker", plan,
                                a.matrix, "--n", a.n, "--backend", a.backend], capture_output=True, text=True, timeout=600, env=env)
            if t.returncode == 77:
                print(f"SKIP {tag}: {t.stdout.strip()}")
                return 77
            print(f"{'ok  ' if t.returncode == 0 else 'FAIL'} {tag}:\n{t.stdout}{'' if t.returncode == 0 else t.stderr}")
            failures += t.returncode != 0
    return 1 if failures else 0


def worker(a):
    import numpy as np
    import torch
    dev = a.backend
    if dev == "cuda" and not torch.cuda.is_available():
        print("SKIP: torch sees no CUDA device")
        return 77
    import scipy.io
    import shiro
    import shiro.torch
    from shiro import MPI
    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    if dev == "cuda":
        torch.cuda.set_device(rank % torch.cuda.device_count())
    A = scipy.io.mmread(a.matrix).tocsr().astype(np.float64)
    At = A.T.tocsr()
    absA = abs(A)
    fails = []

    def expect(cond, what):
        if not cond:
            fails.append(f"rank {rank}: {what}")

    def within(got, ref, bound, what):
        err = np.abs(got - ref)
        ok = bool(np.all(err <= bound))
        expect(ok, f"{what}: max error/bound {float(np.max(err / np.maximum(bound, 1e-300))) if err.size else 0:.3g}")

    plan = shiro.Plan(a.plan)
    cg, bg = plan.c_global, plan.b_global
    for n in [int(x) for x in a.n.split(",")]:
        rng = np.random.default_rng(n)
        Bfull = rng.standard_normal((A.shape[1], n))
        Gfull = rng.standard_normal((A.shape[0], n))
        for dtype, tdt, u in (("float32", torch.float32, 2.0 ** -24), ("float64", torch.float64, 2.0 ** -53)):
            Bq = Bfull.astype(np.float32 if dtype == "float32" else np.float64).astype(np.float64)
            Gq = Gfull.astype(np.float32 if dtype == "float32" else np.float64).astype(np.float64)
            terms_c = np.diff(A.indptr)[cg][:, None] + 3
            terms_x = np.diff(At.indptr)[bg][:, None] + 3
            ref_c, bnd_c = (A @ Bq)[cg], terms_c * u * (absA @ np.abs(Bq))[cg] * 2
            ref_x, bnd_x = (At @ Gq)[bg], terms_x * u * (abs(At) @ np.abs(Gq))[bg] * 2
            what = f"{dtype} N={n}"
            try:
                with plan.context(n, dtype=dtype, backend=dev) as ctx:
                    X = torch.tensor(Bq[bg], dtype=tdt, device=dev, requires_grad=True)
                    C = shiro.torch.spmm(ctx, X)
                    expect(C.device.type == dev and C.dtype == tdt and tuple(C.shape) == (len(cg), n), f"{what}: C {C.device} {C.dtype}")
                    within(C.detach().double().cpu().numpy(), ref_c, bnd_c, f"{what} C = A·B")
                    G = torch.tensor(Gq[cg], dtype=tdt, device=dev)
                    C.backward(G)
                    within(X.grad.double().cpu().numpy(), ref_x, bnd_x, f"{what} X.grad = Aᵀ·G")
                    out = torch.empty((len(cg), n), dtype=tdt, device=dev)
                    C1 = ctx.spmm(X.detach(), out=out)
                    expect(C1.data_ptr() == out.data_ptr(), f"{what}: out= not written in place")
                    within(out.double().cpu().numpy(), ref_c, bnd_c, f"{what} out=")
                    if dev == "cpu":  # the CPU backend gives the same bits on every call
                        expect(torch.equal(out, C.detach()), f"{what}: out= differs from the first call's C")
                    _, _, v = plan.local_matrix()
                    ctx.set_values(2.0 * np.asarray(v))
                    C2 = ctx.spmm(X.detach())
                    within(C2.double().cpu().numpy(), 2 * ref_c, 2 * bnd_c, f"{what} after set_values(2·v)")
                    if dev == "cpu":  # scaling every value by 2 is exact, in the same order
                        expect(torch.equal(C2, 2 * C.detach()), f"{what}: after set_values(2·v) not exactly 2·C")
                    if dev == "cuda":
                        try:
                            ctx.spmm(X.detach().cpu())
                            expect(False, f"{what}: a CPU tensor on the cuda context was accepted")
                        except shiro.Error as e:
                            expect("cpu" in str(e), f"{what}: CPU tensor refused with '{e}'")
                    if comm.Get_size() == 1 and n == 2 and dtype == "float64":
                        Xg = torch.tensor(Bq[bg], dtype=tdt, device=dev, requires_grad=True)
                        expect(torch.autograd.gradcheck(lambda x: shiro.torch.spmm(ctx, x), (Xg,)), "gradcheck")
            except shiro.Error as e:
                if "no CUDA" in str(e) or "built without" in str(e).lower():
                    print(f"SKIP: {e}")
                    return 77
                expect(False, f"{what}: {e}")
            ok = not comm.allreduce(len(fails))
            if rank == 0:
                print(f"{what} R={comm.Get_size()}: {'ok' if ok else 'FAILED'}")
    plan.close()
    for f in fails:
        print(f, file=sys.stderr)
    return 1 if comm.allreduce(len(fails)) else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build_or_plan")
    ap.add_argument("matrix")
    ap.add_argument("--worker", action="store_true")
    ap.add_argument("--ranks", default="1,4:2")
    ap.add_argument("--n", default="1,2,7,32")
    ap.add_argument("--backend", default="cuda", choices=["cuda", "cpu"])
    a = ap.parse_args()
    if a.worker:
        a.plan = a.build_or_plan
        return worker(a)
    a.build = a.build_or_plan
    if not os.path.exists(a.matrix):
        print(f"SKIP: {a.matrix} not present")
        return 77
    return driver(a)


if __name__ == "__main__":
    sys.exit(main())
