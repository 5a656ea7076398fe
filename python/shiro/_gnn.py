"""_gnn.py — shiro.torch's graph object and GNN layers (exported by shiro.torch).

    g = shiro.torch.Graph("g.shiro.h5", n_max=64, dtype=torch.float64)   # collective
    X = g.scatter(X_global)                     # this rank's rows of the node features
    H = shiro.torch.GCNConv(32, 16)(g, X)       # or SAGEConv; differentiable in X and the weights
    Y = g.gather(H)                             # every node's rows, on every rank

A Graph owns its plan and one context per normalization of A it was asked for (made at first use,
collectively), all for widths up to n_max. The normalizations are computed on the ranks from the
plan, with no all-gather of the graph: degrees are products through the plan (d = A·1 on this rank's
C rows, and Aᵀ·1 on its B rows for gcn), each rank scales its own nonzeros' values and installs them
with set_values.

  None    A as planned (sum aggregation)
  "mean"  D⁻¹ A, D = diag(A·1): the mean of the neighbours' rows (weighted by A's values); a row without
          entries gives 0
  "gcn"   D^-1/2 A D^-1/2 (Kipf & Welling), D = diag(A·1) for A symmetric. Self loops are the plan's:
          plan A + I (the user adds them before planning, as gcn.py does); the normalization adds
          nothing. The context holds D^-1/2 A (rows scaled); the columns' D^-1/2 scales this rank's
          rows of the input before the product (an elementwise product autograd differentiates), so
          no rank needs another rank's degrees.

Layers' outputs are C rows and their inputs B rows: stacking layers needs a plan whose B rows follow
its C rows (a square A under every partition shiro-plan offers); Graph.rows_follow says so.
"""
from __future__ import annotations

from typing import Any

import numpy as np
import torch

from . import Error, Plan
from ._lib import MPI

_NORMS = (None, "mean", "gcn")
_GRAPH_TYPES = (torch.float32, torch.float64, torch.bfloat16, torch.float16)


class Graph:
    """A planned graph on comm's ranks: the plan (a path, opened collectively over comm, default
    COMM_WORLD; or an open shiro.Plan, borrowed, with its own communicator), and a context per normalization, for widths 1..n_max of dtype (torch.float32,
    torch.float64, or for mixed precision torch.bfloat16 / torch.float16: 16-bit rows in and out and on
    the wire, float32 sums; the normalization's degrees are counted in float64 all the same). threads,
    checked: as Plan.context. Collective: every rank constructs it, and calls
    spmm / the layers in the same order. close() (or `with`) releases the contexts (and the plan if
    the Graph opened it)."""

    def __init__(self, plan: str | Plan, comm: Any = None, n_max: int = 64, dtype: torch.dtype = torch.float64,
                 threads: int = 0, checked: bool = True) -> None:
        self._own = not isinstance(plan, Plan)
        self.plan = Plan(plan, comm) if self._own else plan
        self.comm = self.plan.comm
        if dtype not in _GRAPH_TYPES:
            raise Error(f"shiro.torch.Graph: dtype {dtype}, expected torch.float32, torch.float64, torch.bfloat16 "
                        "or torch.float16")
        self.dtype, self.n_max = dtype, int(n_max)
        self._ctx_args = dict(n=self.n_max, dtype=str(dtype).replace("torch.", ""), threads=threads, checked=checked)
        self._ctx = {}
        self._col_scale = None
        self.num_nodes = self.plan.m
        self.c_global = torch.from_numpy(self.plan.c_global)
        self.b_global = torch.from_numpy(self.plan.b_global)
        self.rows_follow = bool(np.array_equal(self.plan.c_global, self.plan.b_global))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Closes the contexts (and the plan when the Graph opened it). Idempotent. Local."""
        for c in self._ctx.values():
            c.close()
        self._ctx = {}
        if self._own:
            self.plan.close()

    def context(self, norm=None):
        """The shiro.Context holding A (None), D⁻¹A ("mean") or D^-1/2 A ("gcn"; see the module). Collective
        the first time for each norm."""
        if norm not in _NORMS:
            raise Error(f"shiro.torch.Graph: normalization {norm!r}, expected None, 'mean' or 'gcn'")
        if norm not in self._ctx:
            if None not in self._ctx:
                self._ctx[None] = self.plan.context(**self._ctx_args)
            if norm is not None:
                d = self.degree()
                indptr, _, values = self.plan.local_matrix()
                with np.errstate(divide="ignore"):
                    row = np.where(d > 0, 1.0 / d, 0.0) if norm == "mean" else np.where(d > 0, 1.0 / np.sqrt(d), 0.0)
                if norm == "gcn":
                    db = self._ones_product(transposed=True)
                    with np.errstate(divide="ignore"):
                        self._col_scale = torch.tensor(np.where(db > 0, 1.0 / np.sqrt(db), 0.0),
                                                       dtype=self.dtype).reshape(-1, 1)
                ctx = self.plan.context(**self._ctx_args)
                try:
                    ctx.set_values(np.repeat(row, np.diff(indptr)) * values)
                except BaseException:
                    ctx.close()
                    raise
                self._ctx[norm] = ctx
        return self._ctx[norm]

    def degree(self) -> np.ndarray:
        """A·1 on this rank's C rows (float64 numpy), through the plan. Collective."""
        return self._ones_product(transposed=False)

    def _ones_product(self, transposed):
        """A·1 on this rank's C rows, or Aᵀ·1 on its B rows (transposed), as float64 numpy. Collective.
        A 16-bit context would round a degree to 8 (bfloat16) or 11 (float16) bits, so a 16-bit Graph
        counts them in a one-column float64 context made for it and closed at once."""
        rows = self.plan.c_rows if transposed else self.plan.b_rows
        if self.dtype in (torch.float32, torch.float64):
            raw = self.context(None)
            ones = np.ones((rows, 1), raw.np_dtype)
            return (raw.spmm_t(ones) if transposed else raw.spmm(ones)).astype(np.float64).ravel()
        with self.plan.context(1, "float64", threads=self._ctx_args["threads"],
                               checked=self._ctx_args["checked"]) as exact:
            ones = np.ones((rows, 1), np.float64)
            return (exact.spmm_t(ones) if transposed else exact.spmm(ones)).ravel()

    def spmm(self, X: torch.Tensor, norm: str | None = None) -> torch.Tensor:
        """This rank's C rows of N·X, N the normalization `norm` of A, from its B rows X (a CPU tensor of
        the Graph's dtype, b_rows x w, w <= n_max); differentiable in X. Collective."""
        from .torch import spmm
        ctx = self.context(norm)
        if norm == "gcn":
            X = X * self._col_scale
        return spmm(ctx, X.contiguous())

    def scatter(self, X_global: torch.Tensor | np.ndarray) -> torch.Tensor:
        """This rank's B rows of the node features X_global (num_nodes x w, numpy or torch), as a tensor of
        the Graph's dtype. Local."""
        X = torch.as_tensor(X_global)
        if X.dim() != 2 or X.shape[0] != self.plan.k:
            raise Error(f"shiro.torch.Graph.scatter: shape {tuple(X.shape)}, expected ({self.plan.k}, w)")
        return X[self.b_global].to(self.dtype).contiguous()

    def scatter_rows(self, y_global: torch.Tensor | np.ndarray) -> torch.Tensor:
        """This rank's C rows of a per-node array (labels, masks: any shape num_nodes x ...). Local."""
        y = torch.as_tensor(y_global)
        if y.shape[0] != self.plan.m:
            raise Error(f"shiro.torch.Graph.scatter_rows: {y.shape[0]} rows, expected {self.plan.m}")
        return y[self.c_global]

    def gather(self, Y_local: torch.Tensor) -> torch.Tensor:
        """Every node's rows (num_nodes x w) from each rank's C rows Y_local, on every rank (one allgather
        over comm; not differentiable: for evaluation and output). Collective."""
        Y = Y_local.detach().cpu().numpy() if torch.is_tensor(Y_local) else np.asarray(Y_local)
        if Y.ndim != 2 or Y.shape[0] != self.plan.c_rows:
            raise Error(f"shiro.torch.Graph.gather: shape {Y.shape}, expected ({self.plan.c_rows}, w)")
        out = np.zeros((self.plan.m, Y.shape[1]), Y.dtype)
        for rows, part in self.comm.allgather((self.plan.c_global, Y)):
            out[rows] = part
        return torch.from_numpy(out)

    def allreduce_(self, t: torch.Tensor) -> torch.Tensor:
        """Sums a CPU tensor over comm's ranks in place (weight gradients, losses); returns it. Collective."""
        a = t.detach().numpy()
        buf = np.ascontiguousarray(a)  # at least 1-d: a 0-d loss becomes shape (1,), put back below
        self.comm.Allreduce(MPI.IN_PLACE, buf, op=MPI.SUM)
        t.detach().copy_(torch.from_numpy(buf).reshape(t.shape))
        return t


def _layer_input(g, X, what):
    if not g.rows_follow:
        raise Error(f"{what}: the plan's B rows do not follow its C rows, so a layer's output rows are not the next "
                    "layer's input rows; plan a square matrix (every shiro-plan partition makes B rows follow)")
    return X


class GCNConv(torch.nn.Module):
    """Kipf & Welling's graph convolution: out = Â (X W) + b, Â = D^-1/2 A D^-1/2 of the Graph's A (plan
    A + I for the self loops). X: this rank's rows (b_rows x in_channels); out: its C rows. The product
    runs at out_channels columns (<= the Graph's n_max)."""

    def __init__(self, in_channels, out_channels, bias=True, dtype=torch.float64):
        super().__init__()
        self.lin = torch.nn.Linear(in_channels, out_channels, bias=False, dtype=dtype)
        self.bias = torch.nn.Parameter(torch.zeros(out_channels, dtype=dtype)) if bias else None

    def forward(self, g, X):
        out = g.spmm(self.lin(_layer_input(g, X, "shiro.torch.GCNConv")), "gcn")
        return out + self.bias if self.bias is not None else out


class SAGEConv(torch.nn.Module):
    """GraphSAGE with the mean aggregator: out = mean_j(X_j) W_l + b + X_i W_r (root_weight), the mean
    over row i's entries of A weighted by its values (D⁻¹A). The linear map goes first (it commutes with
    the mean), so the product runs at out_channels columns (<= the Graph's n_max)."""

    def __init__(self, in_channels, out_channels, bias=True, root_weight=True, dtype=torch.float64):
        super().__init__()
        self.lin_l = torch.nn.Linear(in_channels, out_channels, bias=bias, dtype=dtype)
        self.lin_r = torch.nn.Linear(in_channels, out_channels, bias=False, dtype=dtype) if root_weight else None

    def forward(self, g, X):
        X = _layer_input(g, X, "shiro.torch.SAGEConv")
        out = g.spmm(X @ self.lin_l.weight.T, "mean")
        if self.lin_l.bias is not None:
            out = out + self.lin_l.bias
        return out + self.lin_r(X) if self.lin_r is not None else out
