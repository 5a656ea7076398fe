"""_plan_matrix.py — shiro.plan_matrix: a plan from a scipy.sparse matrix or a 2 x E edge_index.

The plan compiler is a program, not a library libshiro exports: plan_matrix writes
the matrix to a temporary directory, as an HDF5 CSR file where h5py is installed
(binary: seconds for 10M edges) and as a Matrix Market file otherwise, and runs shiro-plan
on it (found at $SHIRO_PLAN, beside the library: ../tools/shiro-plan in a build
tree or ../bin/shiro-plan, ../../bin/shiro-plan installed, then on PATH). The
plan is written by shiro-plan itself (a temporary file renamed at the end: a
failed run leaves nothing at `out`); the temporary file is removed.
"""
import importlib.util
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


def _coo(A, num_nodes):
    """(m, k, rows, cols, vals) of A: a scipy.sparse matrix or a torch sparse COO or CSR tensor (vals
    their values), a 2 x E integer edge_index (A[edge_index[0], edge_index[1]] = 1, num_nodes x
    num_nodes, default max id + 1; vals None: a pattern) or a pair (edge_index, edge_weight) (vals the
    weights). Raises Error naming what is wrong."""
    if hasattr(A, "tocoo") and hasattr(A, "shape"):
        coo = A.tocoo()
        m, k = coo.shape
        rows, cols, vals = np.asarray(coo.row, np.int64), np.asarray(coo.col, np.int64), np.asarray(coo.data)
        if not np.issubdtype(vals.dtype, np.number) or np.iscomplexobj(vals):
            raise Error(f"shiro.plan_matrix: values of dtype {vals.dtype}, expected real numbers")
        return m, k, rows, cols, vals
    weight = None
    if isinstance(A, tuple) and len(A) == 2:  # (edge_index, edge_weight), as PyG passes them
        A, weight = A
        if type(weight).__module__.startswith("torch"):
            weight = weight.detach().cpu().numpy()
        weight = np.asarray(weight)
        if weight.ndim != 1 or not np.issubdtype(weight.dtype, np.number) or np.iscomplexobj(weight):
            raise Error(f"shiro.plan_matrix: edge_weight of shape {weight.shape} and dtype {weight.dtype}, expected "
                        "one real number per edge")
    if type(A).__module__.startswith("torch"):
        import torch
        if A.layout in (torch.sparse_coo, torch.sparse_csr) and weight is None:
            if A.dim() != 2:
                raise Error(f"shiro.plan_matrix: a sparse tensor of {A.dim()} dimensions, expected 2")
            m, k = (int(x) for x in A.shape)
            if A.layout == torch.sparse_csr:
                crow = A.crow_indices().cpu().numpy().astype(np.int64)
                rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(crow))
                cols, vals = A.col_indices().cpu().numpy().astype(np.int64), A.values().detach().cpu().numpy()
            else:
                A = A.coalesce()
                idx = A.indices().cpu().numpy().astype(np.int64)
                rows, cols, vals = idx[0], idx[1], A.values().detach().cpu().numpy()
            if not np.issubdtype(vals.dtype, np.number) or np.iscomplexobj(vals):
                raise Error(f"shiro.plan_matrix: values of dtype {vals.dtype}, expected real numbers")
            return m, k, rows, cols, vals
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
    if weight is not None and weight.shape[0] != rows.size:
        raise Error(f"shiro.plan_matrix: {weight.shape[0]} edge weights for {rows.size} edges")
    return m, k, rows, cols, weight


def _write_mtx(path, m, k, rows, cols, vals):
    """A coordinate Matrix Market file: real general (values to 17 digits) or pattern general.
    Duplicates are left to shiro-plan, which sums them."""
    field = "pattern" if vals is None else "real"
    with open(path, "w") as f:
        f.write(f"%%MatrixMarket matrix coordinate {field} general\n% written by shiro.plan_matrix\n")
        f.write(f"{m} {k} {rows.size}\n")
        if vals is None:
            np.savetxt(f, np.stack([rows + 1, cols + 1], axis=1), fmt="%d")
        else:
            for i, j, v in zip((rows + 1).tolist(), (cols + 1).tolist(), vals.astype(np.float64).tolist()):
                f.write(f"{i} {j} {v!r}\n")


def _write_csr_h5(path, m, k, rows, cols, vals):
    """The same entries as an HDF5 CSR file (shiro-plan --format csr-h5: /indptr, /indices, /data when
    there are values, root attribute shape): the entries of each row in their given order, so that
    shiro-plan sums duplicates as it would from the .mtx. Binary: a 10M-edge graph in about a second
    where the text file takes tens of seconds."""
    import h5py
    order = np.argsort(rows, kind="stable")
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=m), out=indptr[1:])
    with h5py.File(path, "w") as f:
        f.create_dataset("indptr", data=indptr)
        f.create_dataset("indices", data=cols[order])
        if vals is not None:
            f.create_dataset("data", data=np.asarray(vals, np.float64)[order])
        f.attrs["shape"] = np.array([m, k], np.int64)


def _have_h5py():
    return importlib.util.find_spec("h5py") is not None


def _plan_local(A, ranks, gpus_per_node, out, strategy, partition, num_nodes, threads):
    """Runs shiro-plan in this process; returns None or the error message."""
    exe = _find_planner()
    with tempfile.TemporaryDirectory(prefix="shiro-plan-") as tmp:
        fmt = []
        if isinstance(A, (str, os.PathLike)):
            mtx = os.fspath(A)
        else:
            m, k, rows, cols, vals = _coo(A, num_nodes)
            if _have_h5py():
                mtx, fmt = os.path.join(tmp, "matrix.h5"), ["--format", "csr-h5"]
                _write_csr_h5(mtx, m, k, rows, cols, vals)
            else:
                mtx = os.path.join(tmp, "matrix.mtx")
                _write_mtx(mtx, m, k, rows, cols, vals)
        cmd = [exe, mtx] + fmt + ["--ranks", str(int(ranks)), "--gpus-per-node", str(int(gpus_per_node)), "-o",
                                  os.fspath(out), "--quiet"]
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
    `out`. A: a scipy.sparse matrix or a torch sparse COO/CSR tensor (their values go into the plan), a
    2 x E integer edge_index (numpy or torch; A[edge_index[0][e], edge_index[1][e]] = 1, num_nodes x
    num_nodes, default max id + 1), a pair (edge_index, edge_weight) (the weights as values) or the
    path of a Matrix Market file. strategy, partition: shiro-plan's --strategy and --partition
    ('block', 'nnz', 'work', 'time', 'metis', or an array of one rank id per row, written as a parts: file;
    None: shiro-plan's default, which under auto may be 'time': each rank's rows come from the plan).
    Local by default; with comm (an mpi4py communicator) collective: rank 0 plans, and every rank
    returns or raises the same, whatever rank 0 raised (chained there as the cause). Raises shiro.Error
    with shiro-plan's message on failure; MismatchError at once under a launch of several processes
    that MPI sees as one each (torchrun)."""
    _lib.check_launch()
    msg, cause = None, None
    if comm is None or comm.Get_rank() == 0:
        try:
            msg = _plan_local(A, ranks, gpus_per_node, out, strategy, partition, num_nodes, threads)
        except Error as e:
            msg, cause = str(e), e
        except Exception as e:  # anything (a TypeError for an input it cannot read): the other ranks must hear
            msg, cause = f"shiro.plan_matrix: {type(e).__name__}: {e}", e
    if comm is not None:
        msg = comm.bcast(msg, root=0)
    if msg is not None:
        raise Error(msg, 1) from cause
    return out
