"""_plan_matrix.py — shiro.plan_matrix: a plan from a scipy.sparse matrix or a 2 x E edge_index.

The plan compiler is a program, not a library libshiro exports: plan_matrix writes
the matrix as a Matrix Market file in a temporary directory and runs shiro-plan
on it (found at $SHIRO_PLAN, beside the library: ../tools/shiro-plan in a build
tree or ../bin/shiro-plan, ../../bin/shiro-plan installed, then on PATH). The
plan is written by shiro-plan itself (a temporary file renamed at the end: a
failed run leaves nothing at `out`); the temporary .mtx is removed.
"""
import os
import shutil
import subprocess
import tempfile

import numpy as np

from . import _lib
from ._lib import Error


def _find_planner():
    """Path of the shiro-plan executable; raises Error naming the places tried."""
    env = os.environ.get("SHIRO_PLAN")
    if env:
        return env
    tried = []
    try:
        libdir = os.path.dirname(os.path.realpath(_lib.path()))
    except Error:
        libdir = None
    if libdir:
        for rel in ("../tools/shiro-plan", "../bin/shiro-plan", "../../bin/shiro-plan"):
            p = os.path.normpath(os.path.join(libdir, rel))
            if os.access(p, os.X_OK):
                return p
            tried.append(p)
    p = shutil.which("shiro-plan")
    if p:
        return p
    raise Error("shiro.plan_matrix: shiro-plan not found (set SHIRO_PLAN); tried " + ", ".join(tried + ["PATH"]))


def _write_mtx(path, A, num_nodes):
    """Writes A (scipy.sparse, or a 2 x E integer edge_index: A[edge_index[0], edge_index[1]] = 1) as a
    coordinate Matrix Market file: real general for scipy (values to 17 digits), pattern general for an
    edge_index (shape num_nodes x num_nodes, default max id + 1). Duplicates are left to shiro-plan,
    which sums them."""
    if hasattr(A, "tocoo") and hasattr(A, "shape"):
        coo = A.tocoo()
        m, k = coo.shape
        rows, cols, vals = np.asarray(coo.row, np.int64), np.asarray(coo.col, np.int64), np.asarray(coo.data)
        if not np.issubdtype(vals.dtype, np.number) or np.iscomplexobj(vals):
            raise Error(f"shiro.plan_matrix: values of dtype {vals.dtype}, expected real numbers")
        field = "real"
    else:
        if type(A).__module__.startswith("torch"):
            A = A.detach().cpu().numpy()
        ei = np.asarray(A)
        if ei.ndim != 2 or ei.shape[0] != 2 or not np.issubdtype(ei.dtype, np.integer):
            raise Error(f"shiro.plan_matrix: expected a scipy.sparse matrix or a 2 x E integer edge_index, "
                        f"found {type(A).__name__} of shape {getattr(ei, 'shape', '?')} and dtype {ei.dtype}")
        rows, cols = ei[0].astype(np.int64), ei[1].astype(np.int64)
        if rows.size and min(rows.min(), cols.min()) < 0:
            raise Error("shiro.plan_matrix: edge_index holds a negative node id")
        top = int(max(rows.max(), cols.max())) + 1 if rows.size else 0
        m = k = top if num_nodes is None else int(num_nodes)
        if top > m:
            raise Error(f"shiro.plan_matrix: edge_index names node {top - 1}, num_nodes is {m}")
        vals, field = None, "pattern"
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate {field} general\n% written by shiro.plan_matrix\n")
        f.write(f"{m} {k} {rows.size}\n")
        if vals is None:
            np.savetxt(f, np.stack([rows + 1, cols + 1], axis=1), fmt="%d")
        else:
            for i, j, v in zip((rows + 1).tolist(), (cols + 1).tolist(), vals.astype(np.float64).tolist()):
                f.write(f"{i} {j} {v!r}\n")


def _plan_local(A, ranks, gpus_per_node, out, strategy, partition, num_nodes, threads):
    """Runs shiro-plan in this process; returns None or the error message."""
    exe = _find_planner()
    with tempfile.TemporaryDirectory(prefix="shiro-plan-") as tmp:
        if isinstance(A, (str, os.PathLike)):
            mtx = os.fspath(A)
        else:
            mtx = os.path.join(tmp, "matrix.mtx")
            _write_mtx(mtx, A, num_nodes)
        cmd = [exe, mtx, "--ranks", str(int(ranks)), "--gpus-per-node", str(int(gpus_per_node)), "-o", os.fspath(out),
               "--quiet"]
        if strategy is not None:
            cmd += ["--strategy", str(strategy)]
        if partition is not None and not isinstance(partition, str):
            parts = np.asarray(partition)
            pfile = os.path.join(tmp, "parts.txt")
            np.savetxt(pfile, parts.astype(np.int64), fmt="%d")
            partition = "parts:" + pfile
        if partition is not None:
            cmd += ["--partition", partition]
        if threads is not None:
            cmd += ["--threads", str(int(threads))]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            return p.stderr.strip() or f"shiro-plan exited {p.returncode}"
    return None


def plan_matrix(A, *, ranks, out, gpus_per_node=1, strategy=None, partition=None, num_nodes=None, threads=None,
                comm=None):
    """Plans C = A·B for `ranks` ranks (`gpus_per_node` per node) and writes the plan file `out`; returns
    `out`. A: a scipy.sparse matrix (its values go into the plan), a 2 x E integer edge_index (numpy or
    torch; A[edge_index[0][e], edge_index[1][e]] = 1, num_nodes x num_nodes, default max id + 1) or the
    path of a Matrix Market file. strategy, partition: shiro-plan's --strategy and --partition
    ('block', 'nnz', 'work', 'time', 'metis', or an array of one rank id per row, written as a parts: file;
    None: shiro-plan's default, which under auto may be 'time': each rank's rows come from the plan).
    Local by default; with comm (an mpi4py communicator) collective: rank 0 plans, and every rank
    returns or raises the same. Raises shiro.Error with shiro-plan's message on failure."""
    msg = None
    if comm is None or comm.Get_rank() == 0:
        try:
            msg = _plan_local(A, ranks, gpus_per_node, out, strategy, partition, num_nodes, threads)
        except Error as e:
            msg = str(e)
        except OSError as e:
            msg = f"shiro.plan_matrix: {e}"
    if comm is not None:
        msg = comm.bcast(msg, root=0)
    if msg is not None:
        raise Error(msg, 1)
    return out
