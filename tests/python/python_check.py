#!/usr/bin/env python3
"""The Python package (python/shiro) against scipy / torch references.

usage: python_check.py BUILD_DIR SOURCE_DIR MODE
  ops     under mpirun -np 1, 2, 4 (4 also as 2 nodes of 2): for square (karate, west0067) and
          rectangular (lp_afiro) matrices, flat (joint) and two-tier (hier, group) plans, block, nnz,
          metis (square) and file (an array of rank ids) partitions, float32 and float64, N 1 and 7:
          ctx.spmm, ctx.spmm_t (numpy, torch, out=), shiro.torch.spmm's gradient and, where the library
          has them, plan.local_matrix() and ctx.set_values, each checked on every rank against scipy
          (every rank holds the whole matrix), within the rounding bound of shiro-spmm --check.
  local   one process: torch.autograd.gradcheck of shiro.torch.spmm (double, small), the errors
          (shiro.Error with the library's message), the lifecycle (with, close, a context keeping its
          plan alive), plan_matrix from an edge_index.
  widths  under mpirun -np 3 (joint) and -np 4 (2 nodes of 2, group): a 3-layer GCN-like chain of widths
          128 -> 64 -> 16 through shiro.torch.spmm (forward and backward) on ONE context made for 128,
          with one set_values per change of A's values, equals bit for bit the same chain on three
          contexts made for 128, 64 and 16 (outputs and every gradient), float32 and float64, two
          changes of values; a width above the context's n on one rank, or different widths on the
          ranks, raise on every rank (checked) and a bad width raises locally (checked=False).
  half    under mpirun -np 3 (joint) and -np 4 (2 nodes of 2, group): dtype="bfloat16" and "float16"
          contexts from numpy (uint16 bit patterns, shiro.to_bfloat16; float16) and torch (bfloat16,
          float16 tensors) give the same bits, within the bound of shiro.h of a float64 product of the
          rounded inputs (scipy); shiro.torch.spmm's backward in the same type equals ctx.spmm_t; under
          torch.autocast("cpu", bfloat16) a float32 input is cast and runs through the bfloat16 context
          (its gradient float32), outside autocast it raises; set_values takes a bfloat16 tensor; a
          16-bit shiro.torch.Graph counts the float64 Graph's degrees and its "gcn" product is within
          the 16-bit bound of the float64 Graph's.
  gcn     python/examples/gcn.py under mpirun -np 4 (2 nodes of 2, group, nnz partition) and in one
          process with torch.sparse.mm (--reference): the losses fall at every epoch, by 30% in all,
          and agree to 1e-9; --dtype bfloat16 (autocast, a bfloat16 Graph) ends within 2% of --dtype
          float32's loss.
Exit 0 when every check passed, 1 otherwise, 77 (skipped, with the reason) when no Python at hand has
numpy, scipy, mpi4py and torch. The interpreter running this one need not: /usr/bin/python3 (Debian's,
where tools/dev/install-deps.sh installs them) is tried too.
"""
import os
import subprocess
import sys

MODULES = ("numpy", "scipy", "mpi4py", "torch")


def find_python():
    """An interpreter that imports MODULES (this one first), or None; and why not."""
    probe = "import " + ", ".join(MODULES)
    why = []
    for exe in dict.fromkeys([sys.executable, "/usr/bin/python3"]):
        if not os.path.exists(exe):
            continue
        p = subprocess.run([exe, "-c", probe], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode == 0:
            return exe, ""
        why.append(f"{exe}: {p.stdout.strip().splitlines()[-1] if p.stdout.strip() else 'failed'}")
    return None, "; ".join(why)


def env_for(build, src):
    env = dict(os.environ)
    env["SHIRO_LIBRARY"] = os.path.join(build, "runtime", "libshiro.so")
    env["SHIRO_PLAN"] = os.path.join(build, "tools", "shiro-plan")
    env["PYTHONPATH"] = os.path.join(src, "python") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("OMP_NUM_THREADS", "1")
    return env


def mpirun(np_, args, env, timeout=600):
    cmd = ["mpirun", "-np", str(np_)] + args
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=timeout)


def driver(build, src, mode):
    exe, why = find_python()
    if exe is None:
        print(f"SKIP: no Python with {', '.join(MODULES)} ({why}); tools/dev/install-deps.sh installs them")
        return 77
    env = env_for(build, src)
    me = os.path.abspath(__file__)
    failures = 0
    if mode == "ops":
        for ranks, gpn in ((1, 1), (2, 1), (4, 1), (4, 2)):
            p = mpirun(ranks, [exe, me, build, src, "ops-worker", str(gpn)], env)
            print(p.stdout, end="")
            if p.returncode != 0:
                print(f"FAIL ops under mpirun -np {ranks} (G = {gpn}): exit {p.returncode}")
                failures += 1
    elif mode in ("widths", "half"):
        for ranks, gpn, strategy in ((3, 1, "joint"), (4, 2, "group")):
            p = mpirun(ranks, [exe, me, build, src, mode + "-worker", str(gpn), strategy], env)
            print(p.stdout, end="")
            if p.returncode != 0:
                print(f"FAIL {mode} under mpirun -np {ranks} (G = {gpn}, {strategy}): exit {p.returncode}")
                failures += 1
    elif mode == "local":
        p = subprocess.run([exe, me, build, src, "local-worker"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, env=env, timeout=600)
        print(p.stdout, end="")
        failures += p.returncode != 0
    elif mode == "gcn":
        failures += gcn_check(exe, src, env)
    else:
        print(f"python_check: unknown mode {mode!r}")
        return 2
    print("FAILED" if failures else "all passed")
    return 1 if failures else 0


def losses_of(out):
    """{epoch: loss} from gcn.py's 'epoch E loss L' lines."""
    res = {}
    for line in out.splitlines():
        f = line.split()
        if len(f) >= 4 and f[0] == "epoch" and f[2] == "loss":
            res[int(f[1])] = float(f[3])
    return res


def gcn_check(exe, src, env):
    gcn = os.path.join(src, "python", "examples", "gcn.py")
    common = ["--epochs", "30", "--graph", os.path.join(src, "tests", "data", "email-Eu-core.mtx")]
    # two nodes of two ranks, group's two-tier plan: Â's values reach the relays too
    dist = mpirun(4, [exe, gcn, "--partition", "nnz", "--gpn", "2", "--strategy", "group"] + common, env)
    ref = subprocess.run([exe, gcn, "--reference"] + common, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         text=True, env=env, timeout=600)
    print("== mpirun -np 4 gcn.py\n" + dist.stdout + "== gcn.py --reference\n" + ref.stdout)
    if dist.returncode != 0 or ref.returncode != 0:
        print(f"FAIL gcn: exit {dist.returncode} (mpirun -np 4), {ref.returncode} (--reference)")
        return 1
    a, b = losses_of(dist.stdout), losses_of(ref.stdout)
    bad = 0
    if sorted(a) != list(range(30)) or sorted(b) != list(range(30)):
        print(f"FAIL gcn: epochs printed {sorted(a)} and {sorted(b)}, expected 0..29 in both")
        return 1
    for e in range(30):
        if abs(a[e] - b[e]) > 1e-9 * max(1.0, abs(b[e])):
            print(f"FAIL gcn: epoch {e}: loss {a[e]!r} (shiro, 4 ranks) != {b[e]!r} (torch.sparse.mm)")
            bad += 1
    if not a[29] < 0.7 * a[0] or any(a[e + 1] > a[e] for e in range(29)):
        print(f"FAIL gcn: the loss does not decrease at every epoch, and by 30% overall: {[a[e] for e in range(30)]}")
        bad += 1
    if not bad:
        print(f"ok gcn: 30 epochs, loss {a[0]:.6f} -> {a[29]:.6f}, equal to torch.sparse.mm's to 1e-9")
    # mixed precision: --dtype bfloat16 (autocast, a bfloat16 Graph: 16-bit rows on the wire) ends within 2%
    # of float32's loss
    final = {}
    for dt in ("float32", "bfloat16"):
        p = mpirun(4, [exe, gcn, "--partition", "nnz", "--gpn", "2", "--strategy", "group", "--dtype", dt] + common, env)
        ls = losses_of(p.stdout)
        if p.returncode != 0 or sorted(ls) != list(range(30)) or not ls[29] < 0.7 * ls[0]:
            print(f"FAIL gcn --dtype {dt}: exit {p.returncode}, losses {ls}\n{p.stdout[-2000:]}")
            return 1
        if f", contexts {dt}\n" not in p.stdout:  # the header line: the Graph's dtype
            print(f"FAIL gcn --dtype {dt}: the Graph's contexts are not {dt}:\n{p.stdout[:500]}")
            return 1
        final[dt] = ls[29]
    rel = abs(final["bfloat16"] - final["float32"]) / final["float32"]
    print(f"{'ok' if rel <= 0.02 else 'FAIL'} gcn --dtype bfloat16: final loss {final['bfloat16']:.6f}, float32's "
          f"{final['float32']:.6f} ({100 * rel:.2f}% apart, at most 2%)")
    bad += rel > 0.02
    return 1 if bad else 0


# ---------------------------------------------------------------------------------------------
# Workers (run with the interpreter find_python chose, under mpirun for ops-worker).

def tol(absprod, maxnnz, dtype):
    """shiro-spmm --check's bound: (nnz + 3) u (|A||B|), u the unit roundoff of dtype."""
    u = 2.0 ** -24 if dtype == "float32" else 2.0 ** -53
    return (maxnnz + 3) * u * absprod + 1e-300


def ops_worker(build, src, gpn):
    import numpy as np
    import scipy.io
    from mpi4py import MPI

    import shiro
    import shiro.torch

    comm = MPI.COMM_WORLD
    R, rank = comm.Get_size(), comm.Get_rank()
    data = os.path.join(src, "tests", "data")
    failures = 0
    checks = 0

    def expect(cond, what):
        nonlocal failures, checks
        checks += 1
        if not cond:
            failures += 1
            print(f"FAIL rank {rank}/{R}: {what}", flush=True)

    def close(got, ref, absref, maxnnz, dtype, what):
        got = np.asarray(got, np.float64)
        err = np.abs(got - ref)
        lim = tol(absref, maxnnz, dtype)
        expect(got.shape == ref.shape and bool(np.all(err <= lim)),
               f"{what}: max error {err.max() if err.size else 0:.3g} over the bound "
               f"(shape {got.shape} vs {ref.shape})")

    tmp = comm.bcast(__import__("tempfile").mkdtemp(prefix="shiro-py-") if rank == 0 else None)
    strategies = ["joint"] + (["hier", "group"] if gpn > 1 and R > gpn else [])
    for name in ("karate.mtx", "west0067.mtx", "lp_afiro.mtx"):
        A = scipy.io.mmread(os.path.join(data, name)).tocsr().astype(np.float64)
        A.sum_duplicates()
        A.sort_indices()
        m, k = A.shape
        absA = abs(A)
        maxnnz = int(max(np.diff(A.indptr).max(), np.diff(A.tocsc().indptr).max()))
        parts = ["block", "nnz"] + (["metis", "file"] if m == k else [])
        for strategy in strategies:
            for part in parts:
                partition = part
                if part == "file":  # one rank id per row: rows dealt round-robin (the application's own)
                    partition = np.arange(m) % R
                tag = f"{name} R={R} G={gpn} {strategy}/{part}"
                path = os.path.join(tmp, "p.shiro.h5")
                try:
                    shiro.plan_matrix(A, ranks=R, gpus_per_node=gpn, strategy=strategy, partition=partition,
                                      out=path, comm=comm)
                except shiro.Error as e:
                    if part == "metis" and "built without METIS" in str(e):  # as replay-metis-skipped says
                        if rank == 0:
                            print(f"note {tag}: {e}")
                        continue
                    expect(False, f"{tag}: plan_matrix: {e}")
                    continue
                with shiro.Plan(path, comm) as plan:
                    expect((plan.m, plan.k, plan.nnz) == (m, k, A.nnz), f"{tag}: shape {plan.m}x{plan.k}")
                    expect(comm.allreduce(plan.c_rows) == m and comm.allreduce(plan.b_rows) == k,
                           f"{tag}: rows over the ranks")
                    ci, bi = plan.c_global, plan.b_global
                    for dtype in ("float32", "float64"):
                        for n in (1, 7):
                            failures_before = failures
                            run_case(plan, A, absA, maxnnz, ci, bi, dtype, n, tag, expect, close)
                            if failures == failures_before and rank == 0:
                                print(f"ok {tag} {dtype} N={n}", flush=True)
    if R == 4:  # a communicator of mpi4py's own making: two halves, each running a 2-rank plan of its own
        sub = comm.Split(rank % 2, rank)
        A = scipy.io.mmread(os.path.join(data, "west0067.mtx")).tocsr()
        path = os.path.join(tmp, f"half{rank % 2}.shiro.h5")
        shiro.plan_matrix(A, ranks=2, out=path, comm=sub)
        with shiro.Plan(path, sub) as plan, plan.context(3) as ctx:
            B = np.arange(A.shape[1] * 3, dtype=np.float64).reshape(-1, 3) * (1 + rank % 2)
            ref = (A @ B)[plan.c_global]
            got = ctx.spmm(np.ascontiguousarray(B[plan.b_global]))
            expect(plan.rank == sub.Get_rank() and np.allclose(got, ref, rtol=1e-13, atol=0),
                   f"west0067 on half {rank % 2} of COMM_WORLD (comm.Split): rank {plan.rank} of {plan.ranks}")
        sub.Free()
    if R > 1:  # one rank's failed open raises on every rank, with that rank's message (no hang)
        A = scipy.io.mmread(os.path.join(data, "karate.mtx")).tocsr()
        path = os.path.join(tmp, "open.shiro.h5")
        shiro.plan_matrix(A, ranks=R, out=path, comm=comm)
        mine = path if rank != R - 1 else os.path.join(tmp, "missing.shiro.h5")
        try:
            shiro.Plan(mine, comm).close()
            expect(False, f"Plan of a missing file on rank {R - 1} only: no error on rank {rank}")
        except shiro.Error as e:
            expect(e.status == 3 and f"failed on rank {R - 1}" in str(e) and "missing.shiro.h5" in str(e),
                   f"Plan of a missing file on rank {R - 1} only: shiro.Error({e.status}) {e}")
    comm.Barrier()
    if rank == 0:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    total, all_checks = comm.allreduce(failures), comm.allreduce(checks)
    if rank == 0:
        print(f"ops R={R} G={gpn}: {all_checks} checks, {total} failed", flush=True)
    return 1 if total else 0


def run_case(plan, A, absA, maxnnz, ci, bi, dtype, n, tag, expect, close):
    """Forward, transposed, torch, autograd and set_values checks of one plan, dtype and N."""
    import numpy as np
    import torch

    import shiro
    import shiro.torch

    m, k = A.shape
    rng = np.random.default_rng(42 + n)
    npdt = np.float32 if dtype == "float32" else np.float64
    tdt = torch.float32 if dtype == "float32" else torch.float64
    B = rng.uniform(-1, 1, (k, n)).astype(npdt)  # the same on every rank (same seed)
    Y = rng.uniform(-1, 1, (m, n)).astype(npdt)
    B64, Y64 = B.astype(np.float64), Y.astype(np.float64)
    Cref, Cabs = A @ B64, absA @ np.abs(B64)
    Xref, Xabs = A.T @ Y64, absA.T @ np.abs(Y64)
    what = f"{tag} {dtype} N={n}"
    with plan.context(n, dtype=dtype) as ctx:
        Bl, Yl = np.ascontiguousarray(B[bi]), np.ascontiguousarray(Y[ci])
        C = ctx.spmm(Bl)
        expect(C.dtype == npdt and C.shape == (plan.c_rows, n), f"{what}: spmm gave {C.dtype} {C.shape}")
        close(C, Cref[ci], Cabs[ci], maxnnz, dtype, f"{what}: spmm (numpy)")
        X = ctx.spmm_t(Yl)
        close(X, Xref[bi], Xabs[bi], maxnnz, dtype, f"{what}: spmm_t (numpy)")
        out = np.full((plan.c_rows, n), np.nan, npdt)
        expect(ctx.spmm(Bl, out=out) is out, f"{what}: spmm(out=) returns out")
        close(out, Cref[ci], Cabs[ci], maxnnz, dtype, f"{what}: spmm (out=)")
        Ct = ctx.spmm(torch.from_numpy(Bl))
        expect(isinstance(Ct, torch.Tensor) and Ct.dtype == tdt, f"{what}: spmm of a tensor gave {type(Ct)}")
        close(Ct.numpy(), Cref[ci], Cabs[ci], maxnnz, dtype, f"{what}: spmm (torch)")
        Xo = torch.empty((plan.b_rows, n), dtype=tdt)
        ctx.spmm_t(torch.from_numpy(Yl), out=Xo)
        close(Xo.numpy(), Xref[bi], Xabs[bi], maxnnz, dtype, f"{what}: spmm_t (torch, out=)")
        # autograd: loss = sum(H * Y) over all ranks, so dL/dB = Aᵀ·Y on this rank's B rows
        Bt = torch.tensor(Bl, requires_grad=True)
        H = shiro.torch.spmm(ctx, Bt)
        close(H.detach().numpy(), Cref[ci], Cabs[ci], maxnnz, dtype, f"{what}: shiro.torch.spmm")
        (H * torch.from_numpy(Yl)).sum().backward()
        close(Bt.grad.numpy(), Xref[bi], Xabs[bi], maxnnz, dtype, f"{what}: shiro.torch.spmm backward")
        check_values(plan, ctx, A, ci, bi, B, Y, npdt, dtype, maxnnz, what, expect, close)
        t = ctx.traffic()
        sent, received = plan.comm.allreduce(t["rows_sent"]), plan.comm.allreduce(t["rows_received"])
        expect(sent == received and t["bytes_sent"] == t["rows_sent"] * n * npdt().itemsize
               and (plan.ranks > 1 or sent == 0), f"{what}: traffic {t}, {sent} rows sent in all, {received} received")


def check_values(plan, ctx, A, ci, bi, B, Y, npdt, dtype, maxnnz, what, expect, close):
    """local_matrix() is this rank's rows of A (global columns); set_values(new) multiplies with new."""
    import numpy as np
    import scipy.sparse as sp

    import shiro

    indptr, indices, values = plan.local_matrix()
    local = A[ci]
    expect(np.array_equal(indptr, local.indptr) and np.array_equal(indices, local.indices)
           and np.array_equal(values, local.data), f"{what}: local_matrix() is not this rank's rows of A")
    # New values: a function of (global row, global column), so every rank knows the whole new A.
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    newdata = np.cos(rows * 0.37 + A.indices * 1.3) + 0.5
    A2 = sp.csr_matrix((newdata, A.indices, A.indptr), shape=A.shape)
    lrows = np.repeat(ci, np.diff(indptr))
    ctx.set_values(np.cos(lrows * 0.37 + indices * 1.3) + 0.5)
    B64, Y64 = B.astype(np.float64), Y.astype(np.float64)
    absA2 = abs(A2)
    close(ctx.spmm(np.ascontiguousarray(B[bi])), (A2 @ B64)[ci], (absA2 @ np.abs(B64))[ci], maxnnz, dtype,
          f"{what}: spmm after set_values")
    close(ctx.spmm_t(np.ascontiguousarray(Y[ci])), (A2.T @ Y64)[bi], (absA2.T @ np.abs(Y64))[bi], maxnnz, dtype,
          f"{what}: spmm_t after set_values")
    try:
        ctx.set_values(np.zeros(len(values) + 1))
        expect(False, f"{what}: set_values with one value too many did not raise")
    except shiro.Error as e:
        expect(str(e) != "", f"{what}: set_values error without a message")


def local_worker(build, src):
    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    import tempfile
    import warnings
    import torch

    import shiro
    import shiro.torch

    failures = 0

    def expect(cond, what):
        nonlocal failures
        print(("ok " if cond else "FAIL ") + what, flush=True)
        failures += not cond

    def raises(fn, *words, status=None, what=""):
        try:
            fn()
        except shiro.Error as e:
            msg = str(e)
            ok = all(w in msg for w in words) and (status is None or e.status == status)
            expect(ok, f"{what}: shiro.Error({e.status} {e.status_name}): {msg}")
            return
        except Exception as e:  # noqa: BLE001 - any other exception is the failure being tested for
            expect(False, f"{what}: raised {type(e).__name__}: {e}, not shiro.Error")
            return
        expect(False, f"{what}: did not raise")

    data = os.path.join(src, "tests", "data")
    tmp = tempfile.mkdtemp(prefix="shiro-py-")
    A = scipy.io.mmread(os.path.join(data, "karate.mtx")).tocsr().astype(np.float64)
    path = shiro.plan_matrix(A, ranks=1, out=os.path.join(tmp, "k.shiro.h5"))

    # gradcheck: one rank holds all of A, so the numerical Jacobian is the whole function's.
    with shiro.Plan(path) as plan, plan.context(3, dtype="float64") as ctx:
        X = torch.tensor(np.random.default_rng(3).standard_normal((34, 3)), requires_grad=True)
        expect(torch.autograd.gradcheck(lambda x: shiro.torch.spmm(ctx, x), (X,)), "gradcheck of shiro.torch.spmm")
        # a non-contiguous upstream gradient (a transpose) goes through backward
        X.grad = None
        shiro.torch.spmm(ctx, X).t().contiguous().t().sum().backward()
        expect(torch.allclose(X.grad, torch.from_numpy(np.asarray(A.T @ np.ones((34, 3))))),
               "backward of a reduction: Aᵀ·1")

    # errors: shiro.Error with the library's message
    raises(lambda: shiro.Plan(os.path.join(tmp, "missing.shiro.h5")), "missing.shiro.h5", status=3,
           what="Plan of a missing file")
    bad = os.path.join(tmp, "bad.shiro.h5")
    with open(bad, "wb") as f:
        f.write(b"not a plan" * 100)
    raises(lambda: shiro.Plan(bad), "bad.shiro.h5", what="Plan of a file that is no plan")
    p2 = shiro.plan_matrix(A, ranks=2, out=os.path.join(tmp, "k2.shiro.h5"))
    raises(lambda: shiro.Plan(p2), "made for 2 ranks but the communicator has 1", status=7,
           what="Plan of a 2-rank plan in 1 process (the collective open checks the size)")
    with shiro.Plan(p2, rank=0) as plan2:  # rank given: the local open, as before
        raises(lambda: plan2.context(4), "rank", status=7, what="context of a 2-rank plan in 1 process")
    raises(lambda: shiro.Plan(p2, rank=5), "5", what="Plan for rank 5 of 2")
    with shiro.Plan(path) as plan:
        raises(lambda: plan.context(4, dtype="int32"), "int32", what="context of dtype int32")
        raises(lambda: plan.context(0), status=1, what="context with N = 0")
        raises(lambda: plan.context(4, backend="tpu"), "tpu", what="context of backend tpu")
        try:  # no device here (SHIRO_ERR_CUDA) or a build without CUDA (SHIRO_ERR_UNSUPPORTED): the library's word
            plan.context(4, backend="cuda").close()
            print("note: backend cuda: a device answered (the CUDA path is the GPU suite's to test)")
        except shiro.Error as e:
            expect(e.status in (9, 10) and "cuda" in str(e).lower(), f"context of backend cuda without a device: "
                   f"shiro.Error({e.status} {e.status_name}): {e}")
        with plan.context(4, dtype="float32") as ctx:
            good = np.zeros((34, 4), np.float32)
            raises(lambda: ctx.spmm(np.zeros((33, 4), np.float32)), "(33, 4)", "(34, w)", "1 <= w <= 4",
                   what="spmm of 33 rows")
            raises(lambda: ctx.spmm(np.zeros((34, 5), np.float32)), "(34, 5)", "1 <= w <= 4", what="spmm of 5 columns of 4")
            raises(lambda: ctx.spmm_t(np.zeros((34, 0), np.float32)), "(34, 0)", "1 <= w <= 4", what="spmm_t of 0 columns")
            raises(lambda: ctx.spmm(np.zeros((34, 4))), "float64", "float32", what="spmm of float64 in float32")
            raises(lambda: ctx.spmm(np.zeros((4, 34), np.float32).T), "contiguous", what="spmm of a transpose")
            raises(lambda: ctx.spmm(torch.zeros((34, 4), dtype=torch.int64)), "int64", what="spmm of an int tensor")
            raises(lambda: ctx.spmm([[0.0] * 4] * 34), "list", what="spmm of a list")
            raises(lambda: ctx.spmm(good, out=np.zeros((34, 3), np.float32)), "out", what="spmm, out of 3 columns")
            ro = np.zeros((34, 4), np.float32)
            ro.flags.writeable = False
            raises(lambda: ctx.spmm(good, out=ro), "read-only", what="spmm into a read-only out")
            raises(lambda: ctx.spmm(good, out=good), "overlap", what="spmm with out = B (the library refuses)")
            raises(lambda: ctx.spmm_t(np.zeros((34, 5), np.float32)), "(34, 5)", what="spmm_t of 5 columns")

            class DeviceArray:  # what CuPy or Numba arrays show: a device pointer, no host memory
                __cuda_array_interface__ = {"shape": (34, 4), "typestr": "<f4", "data": (0, False), "version": 3}
            raises(lambda: ctx.spmm(DeviceArray()), "cuda array", "cpu arrays",
                   what="a __cuda_array_interface__ array on the cpu backend")
        raises(lambda: ctx.spmm(good), "closed", what="spmm on a closed context")
    raises(lambda: plan.context(4), "closed", what="context of a closed plan")
    raises(lambda: shiro.plan_matrix(np.arange(5), ranks=2, out=os.path.join(tmp, "x.shiro.h5")), "edge_index",
           what="plan_matrix of a 1-D array")
    raises(lambda: shiro.plan_matrix(A, ranks=0, out=os.path.join(tmp, "x.shiro.h5")), "ranks = 0",
           what="plan_matrix with ranks=0")
    expect(not os.path.exists(os.path.join(tmp, "x.shiro.h5")), "a failed plan_matrix leaves no file")
    raises(lambda: shiro.plan_matrix(np.array([[0, 1], [1, -1]]), ranks=1, out=os.path.join(tmp, "x.shiro.h5")),
           "negative", what="plan_matrix of an edge_index with -1")

    # the CPU kernels' threads: the context's option, and how they were chosen
    with shiro.Plan(path) as plan, plan.context(2, threads=1) as ctx:
        expect(ctx.threads == 1 and ctx.threads_why == "the context's option",
               f"context(threads=1): {ctx.threads} threads ({ctx.threads_why})")
    with shiro.Plan(path) as plan:
        raises(lambda: plan.context(2, threads=-1), "threads = -1", status=1, what="context with threads=-1")
    # more threads than this process's CPUs: said in threads_why and warned (RuntimeWarning), once per context
    over = len(os.sched_getaffinity(0)) + 1
    with warnings.catch_warnings(record=True) as seen, shiro.Plan(path) as plan:
        warnings.simplefilter("always")
        with plan.context(2, threads=over) as ctx, plan.context(2, threads=1):
            why = ctx.threads_why
    said = [str(w.message) for w in seen if issubclass(w.category, RuntimeWarning) and "share cores" in str(w.message)]
    expect("threads share cores" in why and len(said) == 1 and "--bind-to none" in said[0],
           f"context(threads={over}) on {over - 1} CPUs: said ({why}) and warned once ({said})")

    # local_matrix and set_values in one process: the whole of A; a wrong length raises before the library
    with shiro.Plan(path) as plan:
        indptr, indices, values = plan.local_matrix()
        Ac = A.tocsr()
        Ac.sort_indices()
        expect(np.array_equal(indptr, Ac.indptr) and np.array_equal(indices, Ac.indices)
               and np.array_equal(values, Ac.data) and plan.local_nnz() == A.nnz and plan.has_values,
               "local_matrix() of a one-rank plan is A")
        with plan.context(2) as ctx:
            raises(lambda: ctx.set_values(np.ones(A.nnz + 1)), f"{A.nnz + 1} values", f"its {A.nnz} nonzeros",
                   what="set_values with one value too many")
            raises(lambda: ctx.set_values(np.ones((A.nnz, 1))), "one value per local nonzero",
                   what="set_values of a column")
            ctx.set_values(torch.arange(A.nnz, dtype=torch.float64))
            B = np.ones((34, 2))
            A2 = sp.csr_matrix((np.arange(A.nnz, dtype=np.float64), Ac.indices, Ac.indptr), shape=A.shape)
            expect(np.array_equal(ctx.spmm(B), A2 @ B), "set_values from a torch tensor")
        # float32 values go in as they are: the same bits as those floats given as doubles
        v32 = (np.cos(np.arange(A.nnz)) + 1.25).astype(np.float32)
        with plan.context(2, dtype="float32") as c32, plan.context(2, dtype="float32") as c64:
            c32.set_values(torch.from_numpy(v32))
            c64.set_values(v32.astype(np.float64))
            B32 = np.ones((34, 2), np.float32)
            expect(np.array_equal(c32.spmm(B32), c64.spmm(B32)) and not np.array_equal(c32.spmm(B32), A @ B32),
                   "set_values of float32 values: the bits of the same values as float64")
        raises(lambda: ctx.set_values(np.ones(A.nnz)), "closed", what="set_values on a closed context")
    old = os.path.join(data, "golden", "karate-joint.shiro.h5.gz")
    if os.path.exists(old):
        import gzip
        with gzip.open(old) as f, open(os.path.join(tmp, "old.shiro.h5"), "wb") as g:
            g.write(f.read())
        with shiro.Plan(os.path.join(tmp, "old.shiro.h5"), rank=0) as plan:  # a 4-rank plan: rank 0 part
            raises(plan.local_matrix, "2.0", status=6, what="local_matrix of a format 2.0 plan")

    # lifecycle: a context keeps its plan; close() of the plan waits for its contexts
    plan = shiro.Plan(path)
    ctx = plan.context(2)
    plan.close()
    expect(plan.closed and bool(plan._h), "plan.close() with a live context: closed to new contexts, kept open")
    B = np.ones((34, 2))
    expect(np.allclose(ctx.spmm(B), A @ B), "a context works after its plan's close()")
    ctx.close()
    expect(not plan._h, "the plan is released with its last context")
    ctx.close()
    plan.close()
    expect(True, "close() twice is a no-op")
    # dropped without close: released by the garbage collector (refcount), the plan after its context
    plan = shiro.Plan(path)
    ctx = plan.context(2)
    del plan
    expect(np.allclose(ctx.spmm(B), A @ B), "a context keeps its plan alive when the plan object is dropped")
    del ctx
    expect(len(shiro._live) == 0, f"nothing left open after del: {list(shiro._live)}")
    # left open at exit: released by shiro's atexit hook, while MPI is still up (a fresh interpreter; its
    # own hook, registered before shiro's, runs after it)
    script = f"""import atexit
state = {{}}
atexit.register(lambda: print("closed", state["ctx"].closed, state["plan"]._h.value is None, "finalized", state["fin"]))
import shiro
from mpi4py import MPI
close = shiro.Context.close
def spy(self):
    state.setdefault("fin", MPI.Is_finalized())
    close(self)
shiro.Context.close = spy
state["plan"] = shiro.Plan({path!r})
state["ctx"] = state["plan"].context(2)
"""
    p = subprocess.run([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    expect(p.returncode == 0 and p.stdout.strip() == "closed True True finalized False",
           f"what is left open is released at exit before MPI_Finalize: {p.stdout.strip()!r}")

    # plan_matrix from an edge_index (A[ei[0], ei[1]] = 1) and from a torch edge_index
    coo = A.tocoo()
    ei = np.stack([coo.row, coo.col]).astype(np.int64)
    for kind, e in (("numpy", ei), ("torch", torch.from_numpy(ei))):
        pe = shiro.plan_matrix(e, ranks=1, out=os.path.join(tmp, "e.shiro.h5"), num_nodes=40)
        with shiro.Plan(pe) as plan, plan.context(2) as ctx:
            Bb = np.arange(80, dtype=np.float64).reshape(40, 2)
            ref = sp.csr_matrix((np.ones(coo.nnz), (coo.row, coo.col)), shape=(40, 40)) @ Bb
            expect((plan.m, plan.nnz) == (40, A.nnz) and np.array_equal(ctx.spmm(Bb), ref),
                   f"plan_matrix of a {kind} edge_index, num_nodes 40")
            expect(not plan.has_values and np.array_equal(plan.local_matrix()[2], np.ones(A.nnz)),
                   "an edge_index plan has no values: local_matrix() gives 1.0")
    expect(shiro.library_path() == os.environ["SHIRO_LIBRARY"], f"library from $SHIRO_LIBRARY: {shiro.library_path()}")
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
    # a library that is not there: shiro.Error naming it, in a fresh interpreter
    env = dict(os.environ, SHIRO_LIBRARY=os.path.join(tmp, "nowhere", "libshiro.so"))
    p = subprocess.run([sys.executable, "-c", "import shiro\ntry:\n shiro.Plan('x')\nexcept shiro.Error as e:\n print(e)"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    expect(p.returncode == 0 and "nowhere" in p.stdout and "SHIRO_LIBRARY" in p.stdout,
           f"a missing library: {p.stdout.strip()}")
    return 1 if failures else 0


def widths_worker(build, src, gpn, strategy):
    """The widths mode's checks on this rank (see the module's docstring)."""
    import tempfile

    import numpy as np
    import scipy.io
    import torch
    from mpi4py import MPI

    import shiro
    import shiro.torch
    comm = MPI.COMM_WORLD
    rank, R = comm.Get_rank(), comm.Get_size()
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)
            print(f"FAIL rank {rank}: {what}", flush=True)

    A = scipy.io.mmread(os.path.join(src, "tests", "data", "email-Eu-core.mtx")).tocsr()
    A = (((abs(A) + abs(A.T)) > 0).astype(np.float64)).tocoo()
    tmp = comm.bcast(tempfile.mkdtemp(prefix="widths-") if rank == 0 else None)
    path = shiro.plan_matrix(np.vstack([A.row, A.col]), num_nodes=A.shape[0], ranks=R, gpus_per_node=gpn,
                             strategy=strategy, out=os.path.join(tmp, "g.shiro.h5"), comm=comm)
    widths = (128, 64, 16)
    with shiro.Plan(path, comm) as plan:
        expect(np.array_equal(plan.c_global, plan.b_global), "the plan's B rows follow its C rows")
        indptr, indices, _ = plan.local_matrix()
        nnz = len(indices)
        for dtype, tdt in (("float32", torch.float32), ("float64", torch.float64)):
            one = plan.context(widths[0], dtype=dtype)
            per = {w: plan.context(w, dtype=dtype) for w in widths}
            g = torch.Generator().manual_seed(7)
            X0 = torch.randn(A.shape[0], widths[0], generator=g, dtype=tdt)[torch.from_numpy(plan.b_global)]
            W = [torch.randn(widths[i], widths[i + 1], generator=g, dtype=tdt) / 8 for i in range(2)]

            def chain(ctx_of):
                X = X0.clone().requires_grad_(True)
                Ws = [w.clone().requires_grad_(True) for w in W]
                H = torch.relu(shiro.torch.spmm(ctx_of(widths[0]), X) @ Ws[0])      # 128 -> 64
                H = torch.relu(shiro.torch.spmm(ctx_of(widths[1]), H) @ Ws[1])      # 64 -> 16
                out = shiro.torch.spmm(ctx_of(widths[2]), H)                        # 16
                (out * out).sum().backward()
                return [out.detach(), X.grad, Ws[0].grad, Ws[1].grad]

            for change in range(2):  # A's values change: one set_values on the one context, three on the others
                v = (1.0 + ((np.arange(nnz) * 7 + rank * 3 + change * 5) % 11) / 8.0).astype(np.float64)
                one.set_values(v)
                for c in per.values():
                    c.set_values(v)
                a, b = chain(lambda w: one), chain(lambda w: per[w])
                names = ("output", "X.grad", "W0.grad", "W1.grad")
                for name, x, y in zip(names, a, b):
                    expect(x.shape == y.shape and torch.equal(x, y),
                           f"{dtype}, values {change}: {name} of the one context differs from the per-width contexts'")
            # a width above n on the last rank, different widths: every rank raises, and the next call is right
            B16 = np.ones((plan.b_rows, 16), dtype=one.np_dtype)
            bad = np.ones((plan.b_rows, 129 if rank == R - 1 else 16), dtype=one.np_dtype)
            for what, arg, words in (("width 129 on one rank", bad, "1 <= w <= 128"),
                                     ("different widths", np.ones((plan.b_rows, 8 if rank == 0 else 16),
                                                                  dtype=one.np_dtype), "different widths")):
                try:
                    one.spmm(arg)
                    expect(False, f"{dtype}: {what}: no error")
                except shiro.ArgumentError as e:
                    expect(words in str(e), f"{dtype}: {what}: message {e}")
            C = one.spmm(B16)
            expect(C.shape == (plan.c_rows, 16) and np.array_equal(C, per[16].spmm(B16)),
                   f"{dtype}: a width-16 call after the refusals")
            loose = plan.context(16, dtype=dtype, checked=False)
            try:
                loose.spmm(np.ones((plan.b_rows, 17), dtype=one.np_dtype))
                expect(False, f"{dtype}: checked=False: width 17 of 16 accepted")
            except shiro.ArgumentError as e:
                expect("1 <= w <= 16" in str(e), f"{dtype}: checked=False: message {e}")
            for c in [one, loose] + list(per.values()):
                c.close()
    comm.Barrier()
    if rank == 0:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    bad = comm.allreduce(len(failures))
    if rank == 0:
        print(f"{'FAIL' if bad else 'ok'} widths (R = {R}, G = {gpn}, {strategy}): one context for 128 -> 64 -> 16 "
              f"equals per-width contexts bit for bit, {bad} failures", flush=True)
    return 1 if bad else 0


def half_worker(build, src, gpn, strategy):
    """The half mode's checks on this rank (see the module's docstring)."""
    import tempfile

    import numpy as np
    import scipy.io
    import torch
    from mpi4py import MPI

    import shiro
    import shiro.torch
    comm = MPI.COMM_WORLD
    rank, R = comm.Get_rank(), comm.Get_size()
    failures = []

    def expect(cond, what):
        if not cond:
            failures.append(what)
            print(f"FAIL rank {rank}: {what}", flush=True)

    A = scipy.io.mmread(os.path.join(src, "tests", "data", "karate.mtx")).tocsr()
    A = (abs(A) + abs(A.T)).tocsr()
    A.data = 0.3 + (np.arange(A.nnz) % 7) / 9.0
    A = A.tocoo()
    tmp = comm.bcast(tempfile.mkdtemp(prefix="half-") if rank == 0 else None)
    path = shiro.plan_matrix(A, ranks=R, gpus_per_node=gpn,
                             strategy=strategy, out=os.path.join(tmp, "g.shiro.h5"), comm=comm)
    A = A.tocsr()
    hops = 3 if strategy in ("hier", "group", "cola", "hybrid") else 1
    n = 8
    with shiro.Plan(path, comm) as plan:
        ci, bi = plan.c_global, plan.b_global
        Al = A[ci]  # this rank's rows of A (all columns)
        absA = abs(Al)
        terms = np.diff(Al.indptr)[:, None]
        g = torch.Generator().manual_seed(3)
        X0 = torch.randn(A.shape[1], n, generator=g, dtype=torch.float32)
        Y0 = torch.randn(A.shape[0], n, generator=g, dtype=torch.float32)
        for dtype, tdt, u16 in (("bfloat16", torch.bfloat16, 2.0 ** -8), ("float16", torch.float16, 2.0 ** -11)):
            ctx = plan.context(n, dtype=dtype)
            Xr = X0.to(tdt)  # the rounded inputs, every row
            Xl = Xr[torch.from_numpy(bi)].contiguous()
            if dtype == "bfloat16":
                Bnp = shiro.to_bfloat16(X0[torch.from_numpy(bi)].numpy())
                expect(np.array_equal(Bnp, Xl.view(torch.int16).numpy().view(np.uint16)),
                       "shiro.to_bfloat16 rounds as torch does")
                Cnp = ctx.spmm(Bnp)
                Cnp_f = shiro.from_bfloat16(Cnp)
            else:
                Bnp = X0[torch.from_numpy(bi)].numpy().astype(np.float16)
                Cnp = ctx.spmm(Bnp)
                expect(Cnp.dtype == np.float16, "float16 in, float16 out")
                expect(np.array_equal(ctx.spmm(Bnp.view(np.uint16)), Cnp.view(np.uint16)), "float16 as uint16 bits")
                Cnp_f = Cnp.astype(np.float32)
            Ct = ctx.spmm(Xl)
            expect(Ct.dtype == tdt and np.array_equal(Ct.view(torch.int16).numpy(), np.asarray(Cnp).view(np.int16)),
                   f"{dtype}: numpy and torch inputs give the same bits")
            ref = Al @ Xr.double().numpy()
            bound = ((hops + 1) * u16 + (terms + 3) * 2.0 ** -24) * (absA @ abs(Xr.double().numpy())) * 1.01 + 1e-300
            err = abs(Cnp_f.astype(np.float64) - ref)
            expect(np.all(err <= bound), f"{dtype}: C off the bound by {float((err / bound).max()):.3g}")
            # autograd in the same type: X.grad = Aᵀ·dC, from ctx.spmm_t
            X = Xl.clone().requires_grad_(True)
            out = shiro.torch.spmm(ctx, X)
            (out.float() ** 2).sum().backward()
            want = ctx.spmm_t((2 * out.detach().float()).to(tdt))
            expect(X.grad.dtype == tdt and torch.equal(X.grad, want), f"{dtype}: backward is not ctx.spmm_t in {dtype}")
            Yl = Y0[torch.from_numpy(ci)].to(tdt).contiguous()
            Xt = ctx.spmm_t(Yl)
            reft = (A.T.tocsr()[bi] @ Y0.to(tdt).double().numpy())
            tt = np.diff(A.T.tocsr()[bi].indptr)[:, None]
            boundt = ((hops + 1) * u16 + (tt + 3) * 2.0 ** -24) * (abs(A.T.tocsr()[bi]) @ abs(Y0.to(tdt).double().numpy())) * 1.01
            expect(np.all(abs(Xt.double().numpy() - reft) <= boundt + 1e-300), f"{dtype}: Aᵀ·Y off the bound")
            # a float32 input outside autocast: refused
            try:
                shiro.torch.spmm(ctx, X0[torch.from_numpy(bi)].contiguous())
                expect(False, f"{dtype}: a float32 tensor accepted outside autocast")
            except shiro.Error as e:
                expect(dtype in str(e), f"{dtype}: message {e}")
            if dtype == "bfloat16":  # CPU autocast's 16-bit type
                Xf = X0[torch.from_numpy(bi)].contiguous().requires_grad_(True)
                lin = torch.nn.Linear(n, n, bias=False)
                with torch.autocast("cpu", dtype=torch.bfloat16):
                    H = lin(Xf)  # bfloat16 under autocast
                    out1 = shiro.torch.spmm(ctx, H)
                    out2 = shiro.torch.spmm(ctx, Xf)  # float32 in: cast to bfloat16
                expect(H.dtype == torch.bfloat16 and out1.dtype == torch.bfloat16 and out2.dtype == torch.bfloat16,
                       f"autocast: types {H.dtype}, {out1.dtype}, {out2.dtype}")
                expect(torch.equal(out2, ctx.spmm(Xf.detach().to(torch.bfloat16))), "autocast: the cast input's product")
                (out2.float().sum() + out1.float().sum()).backward()
                expect(Xf.grad is not None and Xf.grad.dtype == torch.float32 and lin.weight.grad is not None,
                       "autocast: gradients reach the float32 input and the layer")
                # new values from a bfloat16 tensor
                nnz = plan.local_nnz()
                ctx.set_values(torch.full((nnz,), 0.5, dtype=torch.bfloat16))
                C5 = ctx.spmm(Xl)
                ref5 = (Al != 0).astype(np.float64) @ Xr.double().numpy() * 0.5
                expect(np.all(abs(C5.double().numpy() - ref5) <= bound), "set_values of a bfloat16 tensor")
            try:
                ctx.spmm(np.ones((plan.b_rows, n), np.float32))
                expect(False, f"{dtype}: numpy float32 accepted")
            except shiro.Error as e:
                expect("uint16" in str(e), f"{dtype}: message {e}")
            expect(ctx.traffic()["bytes_sent"] == ctx.traffic()["rows_sent"] * n * 2, f"{dtype}: 2 bytes a value on the wire")
            ctx.close()
            # a 16-bit shiro.torch.Graph: its degrees counted exactly (float64), its "gcn" product within the
            # 16-bit bound of the float64 Graph's: X·D^-1/2 rounded twice (the scale, the product), the
            # partial rows once per hop, the output once, float32 sums
            with shiro.torch.Graph(plan, n_max=n, dtype=torch.float64) as g64, \
                    shiro.torch.Graph(plan, n_max=n, dtype=tdt) as g16:
                expect(np.array_equal(g16.degree(), g64.degree()), f"{dtype} Graph: degrees differ from float64's")
                X16 = g16.scatter(X0)
                out16 = g16.spmm(X16, "gcn")
                out64 = g64.spmm(X16.double(), "gcn")
                mag = g64.spmm(X16.double().abs(), "gcn").numpy()  # |Â|·|X|: Â >= 0 here
                boundg = ((hops + 4) * u16 + (terms + 3) * 2.0 ** -24) * mag * 1.01 + 1e-300
                expect(out16.dtype == tdt and np.all(abs(out16.double().numpy() - out64.numpy()) <= boundg),
                       f"{dtype} Graph: gcn product off the bound")
    comm.Barrier()
    if rank == 0:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
    bad = comm.allreduce(len(failures))
    if rank == 0:
        print(f"{'FAIL' if bad else 'ok'} half (R = {R}, G = {gpn}, {strategy}): bfloat16 and float16 from numpy and "
              f"torch, autograd and autocast, {bad} failures", flush=True)
    return 1 if bad else 0


def main():
    if len(sys.argv) < 4:
        print(__doc__)
        return 2
    build, src, mode = sys.argv[1], sys.argv[2], sys.argv[3]
    if mode == "ops-worker":
        return ops_worker(build, src, int(sys.argv[4]))
    if mode == "local-worker":
        return local_worker(build, src)
    if mode == "widths-worker":
        return widths_worker(build, src, int(sys.argv[4]), sys.argv[5])
    if mode == "half-worker":
        return half_worker(build, src, int(sys.argv[4]), sys.argv[5])
    return driver(os.path.abspath(build), os.path.abspath(src), mode)


if __name__ == "__main__":
    sys.exit(main())
