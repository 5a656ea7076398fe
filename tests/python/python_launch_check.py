#!/usr/bin/env python3
"""The Python package where a GNN user's launch goes wrong, and its planning inputs.

usage: python_launch_check.py BUILD_DIR SOURCE_DIR
Each check runs in a fresh interpreter (one that imports numpy, scipy, mpi4py, torch; h5py
where there is one), with a time limit, so that a hang is a failure:
  * a torchrun-style launch (WORLD_SIZE=4, LOCAL_RANK set, an MPI world of one): Plan() and
    plan_matrix() raise shiro.MismatchError at once, naming `mpirun -np 4`; the same under a
    Slurm step of 4 tasks without MPI; SHIRO_ALLOW_SINGLETON=1 lets it through;
  * `import shiro` (and shiro.torch) initializes no MPI and loads no libshiro until a Plan;
  * shiro.Error(message, status) is the status's subclass (ArgumentError is a ValueError,
    FileError an OSError, ...); a missing plan file raises FileError; __version__ is
    meson.build's project version;
  * plan_matrix(comm=) under mpirun -np 2 where rank 0's input makes it raise a TypeError-like
    error (a 3-d sparse tensor) or a bad edge_weight: every rank raises shiro.Error with the
    message within the time limit (no rank left waiting);
  * checked calls (the default): a wrong shape (rank 1) or dtype (rank 0), and ranks calling
    spmm and spmm_t at the same step, raise on both ranks, and the next call is right;
    checked=False keeps the check local; an uncaught exception on rank 1 with a context open
    aborts the job within the limit instead of leaving rank 0 waiting;
  * DDP (gloo) initialized from MPI's rank beside a shiro context under mpirun -np 2: the
    averaged weight gradient equals a one-process reference's;
  * plan_matrix from a scipy matrix, a torch sparse COO and CSR tensor, and (edge_index,
    edge_weight): the plan's local matrices equal those of shiro-plan on the same entries as a
    Matrix Market file (the written csr-h5 file and the .mtx give one matrix).
Exit 0 when every check passed, 1 otherwise, 77 without the Python modules.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from python_check import env_for, find_python  # noqa: E402

LIMIT = 60  # seconds per check: a hang fails instead of stalling the suite

PRELUDE = """
import os, sys, numpy as np, scipy.sparse as sp, torch
import shiro
from shiro import MPI
"""


def run(py, env, code, mpi=0):
    cmd = [py, "-c", PRELUDE + code]
    if mpi:
        cmd = [shutil.which("mpirun") or "mpiexec", "-np", str(mpi)] + cmd
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, timeout=LIMIT)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return -1, f"TIMEOUT after {LIMIT} s (a hang)\n{e.stdout or ''}"


def main():
    build, src = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    py, why = find_python()
    if py is None:
        print(f"SKIP: no interpreter imports numpy, scipy, mpi4py and torch ({why})")
        return 77
    env = env_for(build, src)
    for k in ("WORLD_SIZE", "LOCAL_RANK", "SLURM_STEP_NUM_TASKS", "SHIRO_ALLOW_SINGLETON"):
        env.pop(k, None)
    failures = []

    def check(name, ok, out=""):
        print(f"{'ok  ' if ok else 'FAIL'} {name}")
        if not ok:
            failures.append(name)
            print(out)

    with tempfile.TemporaryDirectory() as tmp:
        mtx = os.path.join(src, "tests", "data", "email-Eu-core.mtx")
        plan = os.path.join(tmp, "p.shiro.h5")
        p = subprocess.run([os.path.join(build, "tools", "shiro-plan"), mtx, "--ranks", "2", "-o", plan, "--quiet"])
        plan1 = os.path.join(tmp, "p1.shiro.h5")
        p1 = subprocess.run([os.path.join(build, "tools", "shiro-plan"), mtx, "--ranks", "1", "-o", plan1, "--quiet"])
        check("shiro-plan", p.returncode == 0 and p1.returncode == 0)

        # torchrun: 4 processes, each an MPI world of one
        torchrun = dict(env, WORLD_SIZE="4", LOCAL_RANK="0", RANK="0")
        code = f"""
try:
    shiro.Plan({plan!r}); print("opened")
except shiro.MismatchError as e:
    print("MISMATCH", e)
try:
    shiro.plan_matrix(sp.eye(4, format="csr"), ranks=2, out={os.path.join(tmp, 'x.h5')!r}); print("planned")
except shiro.MismatchError as e:
    print("MISMATCH", e)
"""
        rc, out = run(py, torchrun, code)
        check("torchrun launch refused by Plan and plan_matrix", rc == 0 and out.count("MISMATCH") == 2 and
              "mpirun -np 4" in out and "WORLD_SIZE=4" in out and "opened" not in out, out)
        rc, out = run(py, dict(env, SLURM_STEP_NUM_TASKS="4"), code)
        check("srun without MPI refused", rc == 0 and out.count("MISMATCH") == 2 and "srun --mpi" in out, out)
        rc, out = run(py, dict(torchrun, SHIRO_ALLOW_SINGLETON="1"), f"shiro.Plan({plan!r}, rank=0); print('opened')")
        check("SHIRO_ALLOW_SINGLETON=1 lets it through", rc == 0 and "opened" in out, out)

        # the exception classes, __version__
        with open(os.path.join(src, "meson.build")) as f:
            version = re.search(r"version:\s*'([^']+)'", f.read()).group(1)
        code = f"""
E = shiro.Error
assert type(E("x", 7)) is shiro.MismatchError and isinstance(E("x", 7), E)
assert isinstance(E("x"), shiro.ArgumentError) and isinstance(E("x"), ValueError) and E("x").status == 1
assert isinstance(E("x", 3), shiro.FileError) and isinstance(E("x", 3), OSError)
assert type(E("x", 99)) is E
try:
    shiro.Plan({os.path.join(tmp, 'none.h5')!r}, rank=0)
    print("no error")
except shiro.FileError as e:
    print("FileError", e.status_name)
print("version", shiro.__version__)
"""
        rc, out = run(py, env, code)
        check("Error subclasses by status; a missing file is a FileError", rc == 0 and "FileError" in out, out)
        check(f"shiro.__version__ == meson.build's {version}", f"version {version}" in out, out)

        # import shiro (and shiro.torch) initializes no MPI and loads no libshiro; a Plan does both
        code = f"""
import shiro.torch
print("after import:", "mpi4py.MPI" in sys.modules, shiro._lib._lib is not None)
shiro.Plan({plan1!r}).close()
print("after Plan:", MPI.Is_initialized(), shiro._lib._lib is not None)
"""
        rc, out = run(py, env, code)
        check("import shiro initializes no MPI until a Plan needs it", rc == 0 and "after import: False False" in out
              and "after Plan: True True" in out, out)

        # plan_matrix(comm=): whatever rank 0 raises reaches every rank
        for what, arg in (("a 3-d sparse tensor", "torch.zeros(2, 2, 2).to_sparse()"),
                          ("a bad edge_weight", "(torch.tensor([[0, 1], [1, 0]]), torch.ones(3))")):
            code = f"""
A = {arg} if MPI.COMM_WORLD.Get_rank() == 0 else None
try:
    shiro.plan_matrix(A, ranks=2, out={os.path.join(tmp, 'y.h5')!r}, comm=MPI.COMM_WORLD)
    line = "planned"
except shiro.Error as e:
    line = f"RAISED {{MPI.COMM_WORLD.Get_rank()}} {{e}}"
every = MPI.COMM_WORLD.gather(line)
if MPI.COMM_WORLD.Get_rank() == 0:
    print(chr(10).join(every))
"""
            rc, out = run(py, env, code, mpi=2)
            check(f"plan_matrix(comm=) with {what} on rank 0: both ranks raise", rc == 0 and "RAISED 0" in out and
                  "RAISED 1" in out, out)

        # checked calls (the default): a misuse on one rank raises on every rank, and they stay in step
        code = f"""
import scipy.io
comm = MPI.COMM_WORLD
r = comm.Get_rank()
A = scipy.io.mmread({mtx!r}).tocsr()
B = np.random.default_rng(5).standard_normal((A.shape[1], 3))
lines = []
with shiro.Plan({plan!r}) as plan, plan.context(3) as ctx:
    good = B[plan.b_global]
    for step, arg in enumerate([good[:-1] if r == 1 else good, good.astype(np.float32) if r == 0 else good]):
        try:
            ctx.spmm(arg); lines.append(f"STEP {{step}} {{r}} passed")
        except shiro.ArgumentError as e:
            lines.append(f"STEP {{step}} {{r}} raised {{('rank 1' if step == 0 else 'rank 0') in str(e)}}")
    try:
        ctx.spmm(good) if r == 0 else ctx.spmm_t(np.zeros((plan.c_rows, 3)))
        lines.append(f"MIXED {{r}} passed")
    except shiro.Error as e:
        lines.append(f"MIXED {{r}} raised {{'out of step' in str(e)}}")
    C = ctx.spmm(good)
    lines.append(f"AFTER {{r}} {{np.allclose(C, (A @ B)[plan.c_global], rtol=1e-12, atol=1e-12)}}")
every = comm.gather(lines)
if r == 0:
    print(chr(10).join(l for ls in every for l in ls))
"""
        rc, out = run(py, env, code, mpi=2)
        ok = rc == 0 and all(f"STEP {s} {r} raised True" in out for s in (0, 1) for r in (0, 1)) and \
            all(f"MIXED {r} raised True" in out for r in (0, 1)) and all(f"AFTER {r} True" in out for r in (0, 1))
        check("checked calls: a wrong shape or dtype on one rank, or mixed directions, raise on both; "
              "the next call is right", ok, out)
        code = f"""
with shiro.Plan({plan1!r}) as plan, plan.context(3, checked=False) as ctx:
    try:
        ctx.spmm(np.zeros((plan.b_rows + 1, 3))); print("passed")
    except shiro.ArgumentError as e:
        print("local", e)
"""
        rc, out = run(py, env, code)
        check("checked=False: the argument check stays local", rc == 0 and "local" in out, out)
        # an uncaught exception on one rank with a context open ends the job instead of hanging it
        code = f"""
with shiro.Plan({plan!r}) as plan:
    ctx = plan.context(3)
    if MPI.COMM_WORLD.Get_rank() == 1:
        raise RuntimeError("the user's bug")
    ctx.spmm(np.zeros((plan.b_rows, 3)))
"""
        rc, out = run(py, env, code, mpi=2)
        check("an uncaught exception on rank 1 aborts the job (no hang)", rc not in (0, -1) and "aborting the MPI job" in out
              and "the user's bug" in out, out)

        # DDP beside shiro (python/README.md's recipe): the averaged weight gradient is the global mean's
        code = f"""
import socket, scipy.io, torch.distributed as dist, shiro.torch
comm = MPI.COMM_WORLD
os.environ.setdefault("MASTER_ADDR", comm.bcast(socket.gethostname() if comm.rank == 0 else None))
os.environ.setdefault("MASTER_PORT", str(29500 + os.getpid() % 1000 if comm.rank == 0 else 0))
os.environ["MASTER_PORT"] = comm.bcast(os.environ["MASTER_PORT"])
dist.init_process_group("gloo", rank=comm.rank, world_size=comm.size)
A = scipy.io.mmread({mtx!r}).tocsr().astype(np.float64)
X = np.random.default_rng(3).standard_normal((A.shape[1], 4))
def layer():
    torch.manual_seed(0)
    return torch.nn.Linear(4, 3, bias=False).double()
with shiro.Plan({plan!r}) as plan, plan.context(4) as ctx:
    model = torch.nn.parallel.DistributedDataParallel(layer())
    H = shiro.torch.spmm(ctx, torch.tensor(X[plan.b_global]))
    loss = (model(H) ** 2).sum() * comm.size / A.shape[0]
    loss.backward()
    got = model.module.weight.grad.numpy()
ref = layer()
(ref(torch.tensor(A @ X)) ** 2).sum().div(A.shape[0]).backward()
err = float(np.abs(got - ref.weight.grad.numpy()).max())
line = f"DDP {{comm.rank}} " + ("ok" if err <= 1e-12 * max(1.0, float(np.abs(got).max())) else f"off by {{err}}")
every = comm.gather(line)  # one print, on rank 0: two ranks' prints can interleave within a line
if comm.rank == 0:
    print(chr(10).join(every))
dist.destroy_process_group()
"""
        rc, out = run(py, env, code, mpi=2)
        check("DDP (gloo) beside shiro: the weight gradient of the global mean", rc == 0 and "DDP 0 ok" in out and
              "DDP 1 ok" in out, out)

        # the inputs plan_matrix takes give the CLI's matrix
        code = f"""
import scipy.io
A = scipy.io.mmread({mtx!r}).tocsr()
A.data = np.arange(1, A.nnz + 1, dtype=np.float64) / 7.0
C = A.tocoo()
inputs = {{"scipy": A,
          "torch COO": torch.sparse_coo_tensor(np.stack([C.row, C.col]), C.data, C.shape),
          "torch CSR": torch.sparse_csr_tensor(A.indptr, A.indices, A.data, A.shape),
          "edge_index, edge_weight": (torch.tensor(np.stack([C.row, C.col])), torch.tensor(C.data))}}
ref = os.path.join({tmp!r}, "ref.mtx")
scipy.io.mmwrite(ref, A, precision=17)
shiro.plan_matrix(ref, ranks=2, out=os.path.join({tmp!r}, "ref.h5"))
want = [shiro.Plan(os.path.join({tmp!r}, "ref.h5"), rank=r).local_matrix() for r in range(2)]
for name, X in inputs.items():
    out = shiro.plan_matrix(X, ranks=2, out=os.path.join({tmp!r}, "in.h5"))
    got = [shiro.Plan(out, rank=r).local_matrix() for r in range(2)]
    same = all(np.array_equal(g, w) for gr, wr in zip(got, want) for g, w in zip(gr, wr))
    print(name, "same" if same else "DIFFERENT")
"""
        rc, out = run(py, env, code)
        for name in ("scipy", "torch COO", "torch CSR", "edge_index, edge_weight"):
            check(f"plan_matrix({name}) gives shiro-plan's matrix", rc == 0 and f"{name} same" in out, out)
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
