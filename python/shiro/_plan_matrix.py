"""_plan_matrix.py — shiro.plan_matrix: a plan from a matrix in memory (scipy.sparse, torch sparse
COO/CSR, a 2 x E edge_index with optional edge weights) or a matrix file.

Arrays are planned in this process: libshiro_planner's shiro_plan_compile_csr (_planner.py) takes
the CSR or COO arrays as they are (no file written, no program run) and writes the plan, the same
bytes shiro-plan writes for the same entries and options; its warnings become Python warnings
(shiro.PlanWarning), and a bad partition array is reported by its index. A path is planned by
shiro-plan (found at $SHIRO_PLAN, beside the library: ../tools/shiro-plan in a build tree or
../bin/shiro-plan, ../../bin/shiro-plan installed, then on PATH), in the format= given. Either way
the plan is written to a temporary file renamed at the end: a failed run leaves nothing at `out`.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import warnings
from typing import Any

import numpy as np

from . import _lib, _planner
from ._lib import Error


class PlanWarning(UserWarning):
    """A planner warning: the plan is written and valid, but probably not what was meant (ranks that
    own no rows, more GPUs per node than ranks)."""


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


def _i64(a):
    return np.ascontiguousarray(a, dtype=np.int64)


def _f64(a):
    return None if a is None else np.ascontiguousarray(a, dtype=np.float64)


def _coo(A, num_nodes):
    """(m, k, rowptr, rows, cols, vals) of A (rowptr for CSR input, else None and rows given): a scipy.sparse matrix or a torch sparse COO or CSR tensor (vals
    their values), a 2 x E integer edge_index (A[edge_index[0], edge_index[1]] = 1, num_nodes x
    num_nodes, default max id + 1; vals None: a pattern) or a pair (edge_index, edge_weight) (vals the
    weights). Raises Error naming what is wrong."""
    if hasattr(A, "tocoo") and hasattr(A, "shape"):
        m, k = A.shape
        if getattr(A, "format", None) == "csr":  # its arrays as they are: no COO copy
            vals = np.asarray(A.data)
            if not np.issubdtype(vals.dtype, np.number) or np.iscomplexobj(vals):
                raise Error(f"shiro.plan_matrix: values of dtype {vals.dtype}, expected real numbers")
            return m, k, _i64(A.indptr), None, _i64(A.indices), _f64(vals)
        coo = A.tocoo()
        vals = np.asarray(coo.data)
        if not np.issubdtype(vals.dtype, np.number) or np.iscomplexobj(vals):
            raise Error(f"shiro.plan_matrix: values of dtype {vals.dtype}, expected real numbers")
        return m, k, None, _i64(coo.row), _i64(coo.col), _f64(vals)
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
                rowptr, rows = _i64(A.crow_indices().cpu().numpy()), None
                cols, vals = _i64(A.col_indices().cpu().numpy()), A.values().detach().cpu().numpy()
            else:
                A = A.coalesce()
                idx = A.indices().cpu().numpy()
                rowptr, rows, cols, vals = None, _i64(idx[0]), _i64(idx[1]), A.values().detach().cpu().numpy()
            if not np.issubdtype(vals.dtype, np.number) or np.iscomplexobj(vals):
                raise Error(f"shiro.plan_matrix: values of dtype {vals.dtype}, expected real numbers")
            return m, k, rowptr, rows, cols, _f64(vals)
        A = A.detach().cpu().numpy()
    ei = np.asarray(A)
    if ei.ndim != 2 or ei.shape[0] != 2 or not np.issubdtype(ei.dtype, np.integer):
        raise Error(f"shiro.plan_matrix: expected a scipy.sparse matrix or a 2 x E integer edge_index, "
                    f"found {type(A).__name__} of shape {getattr(ei, 'shape', '?')} and dtype {ei.dtype}")
    rows, cols = _i64(ei[0]), _i64(ei[1])
    if rows.size and min(rows.min(), cols.min()) < 0:
        raise Error("shiro.plan_matrix: edge_index holds a negative node id")
    top = int(max(rows.max(), cols.max())) + 1 if rows.size else 0
    m = k = top if num_nodes is None else int(num_nodes)
    if top > m:
        raise Error(f"shiro.plan_matrix: edge_index names node {top - 1}, num_nodes is {m}")
    if weight is not None and weight.shape[0] != rows.size:
        raise Error(f"shiro.plan_matrix: {weight.shape[0]} edge weights for {rows.size} edges")
    return m, k, None, rows, cols, _f64(weight)


def _parts(partition, m, ranks):
    """(name, int32 labels or None) for plan_matrix's partition= (a name or one rank id per row)."""
    if partition is None or isinstance(partition, str):
        return partition, None
    if type(partition).__module__.startswith("torch"):
        partition = partition.detach().cpu().numpy()
    parts = np.asarray(partition)
    if parts.ndim != 1 or parts.shape[0] != m or not (np.issubdtype(parts.dtype, np.integer) or parts.size == 0):
        raise Error(f"shiro.plan_matrix: partition of shape {parts.shape} and dtype {parts.dtype}, expected one "
                    f"integer rank id per row ({m})")
    bad = np.flatnonzero((parts < 0) | (parts >= ranks))
    if bad.size:
        i = int(bad[0])
        raise Error(f"shiro.plan_matrix: partition[{i}] = {int(parts[i])} is not a rank (expected 0..{ranks - 1}); "
                    f"{bad.size} such entries")
    return "parts", np.ascontiguousarray(parts, dtype=np.int32)


def _plan_file(path, fmt, ranks, gpus_per_node, out, strategy, partition, threads):
    """shiro-plan on a file (format fmt: mtx, edgelist, csr-h5; None: mtx); returns [warnings]."""
    exe = _find_planner()
    with tempfile.TemporaryDirectory(prefix="shiro-plan-") as tmp:
        cmd = [exe, os.fspath(path)] + (["--format", str(fmt)] if fmt else []) + [
            "--ranks", str(int(ranks)), "--gpus-per-node", str(int(gpus_per_node)), "-o", os.fspath(out), "--quiet"]
        if strategy is not None:
            cmd += ["--strategy", str(strategy)]
        if partition is not None and not isinstance(partition, str):
            pfile = os.path.join(tmp, "parts.txt")
            np.savetxt(pfile, np.asarray(partition).astype(np.int64), fmt="%d")
            partition = "parts:" + pfile
        if partition is not None:
            cmd += ["--partition", partition]
        if threads is not None:
            cmd += ["--threads", str(int(threads))]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise Error(p.stderr.strip() or f"shiro-plan exited {p.returncode}", 1)
        return [line.split("warning: ", 1)[1] for line in p.stderr.splitlines() if "warning: " in line]


def _plan_local(A, ranks, gpus_per_node, out, strategy, partition, num_nodes, threads, fmt):
    """Plans in this process; returns [warnings]. Raises Error (or anything the input raises)."""
    if isinstance(A, (str, os.PathLike)):
        return _plan_file(A, fmt, ranks, gpus_per_node, out, strategy, partition, threads)
    if fmt is not None:
        raise Error(f"shiro.plan_matrix: format={fmt!r} is for a path; found {type(A).__name__}")
    if not 1 <= int(ranks) <= 1 << 20 or not 1 <= int(gpus_per_node) <= 1 << 20:
        raise Error(f"shiro.plan_matrix: ranks = {ranks}, gpus_per_node = {gpus_per_node} (expected 1..{1 << 20})")
    m, k, rowptr, rows, cols, vals = _coo(A, num_nodes)
    name, parts = _parts(partition, m, int(ranks))
    try:
        _, _, warns = _planner.compile_csr(m, k, rowptr, rows, cols, vals, out, ranks, gpus_per_node, strategy, name,
                                           parts, threads)
    except Error as e:
        raise Error(str(e).replace("shiro_plan_compile_csr:", "shiro.plan_matrix:"), e.status) from None
    return warns


def plan_matrix(A: Any, *, ranks: int, out: str | os.PathLike, gpus_per_node: int = 1, strategy: str | None = None,
                partition: Any = None, num_nodes: int | None = None, threads: int | None = None, comm: Any = None,
                format: str | None = None) -> str | os.PathLike:
    """Plans C = A·B for `ranks` ranks (`gpus_per_node` per node) and writes the plan file `out`; returns
    `out`. A: a scipy.sparse matrix or a torch sparse COO/CSR tensor (their values go into the plan), a
    2 x E integer edge_index (numpy or torch; A[edge_index[0][e], edge_index[1][e]] = 1, num_nodes x
    num_nodes, default max id + 1), a pair (edge_index, edge_weight) (the weights as values), all planned
    in this process (libshiro_planner); or the path of a matrix file in `format` ('mtx', the default,
    'edgelist' or 'csr-h5'), planned by shiro-plan. Duplicate entries are summed. strategy,
    partition: shiro-plan's --strategy and --partition ('block', 'nnz', 'work', 'time', 'metis',
    'metis-vol', 'metis-node', 'hypergraph' (a matrix file only: Zoltan runs over MPI, which the
    in-process planner does not start), or an array of one rank id per row; None: shiro-plan's default, which
    under auto may be 'time': each rank's rows come from the plan). threads: planner threads (None:
    OpenMP's default). Planner warnings (ranks without rows, G > R) are issued as shiro.PlanWarning
    (with comm: on rank 0). Local by default; with comm (an
    mpi4py communicator) collective: rank 0 plans, and every rank returns or raises the same, whatever
    rank 0 raised (chained there as the cause). Raises shiro.Error with the planner's message on
    failure (a bad partition array: its index); MismatchError at once under a launch of several
    processes that MPI sees as one each (torchrun)."""
    _lib.check_launch()
    msg, cause, status, warns = None, None, 1, []
    if comm is None or comm.Get_rank() == 0:
        try:
            warns = _plan_local(A, ranks, gpus_per_node, out, strategy, partition, num_nodes, threads, format)
        except Error as e:
            msg, cause, status = str(e), e, e.status or 1
        except Exception as e:  # anything (a TypeError for an input it cannot read): the other ranks must hear
            msg, cause = f"shiro.plan_matrix: {type(e).__name__}: {e}", e
    if comm is not None:
        msg, status = comm.bcast((msg, status), root=0)
    if msg is not None:
        raise Error(msg, status) from cause
    for w in warns:
        warnings.warn(f"shiro.plan_matrix: {w}", PlanWarning, stacklevel=2)
    return out
