"""shiro.torch — the distributed SpMM as a differentiable torch operation.

    H = shiro.torch.spmm(ctx, X)            # this rank's rows of A·X; X.grad gets this rank's rows of Aᵀ·dH
    H = shiro.torch.spmm(ctx, X, values=v)  # A's values v (this rank's, set_values order) too: v.grad = SDDMM

X: this rank's b_rows x w rows for any width w from 1 to ctx.n (one context serves
every layer of a network), a CPU tensor of the context's dtype (CUDA tensors with a
"cuda" context); the backward pass runs at the same width and in the same type
(a bfloat16 context: bfloat16 gradients, computed in float32, rounded as the forward).
Under torch.autocast, X of another floating type is cast to the context's dtype first
(a differentiable cast, so X's gradient comes back in X's type): a bfloat16 autocast
region runs through a dtype="bfloat16" context. Outside autocast a type other than the
context's raises shiro.Error, as ctx.spmm does. The backward pass is ctx.spmm_t on the same
plan, so forward and backward move the same rows between the same ranks. A's
values, without values=, are constants here (set them with ctx.set_values); only X is
differentiated.

With values (a 1-D tensor of this rank's ctx.plan.local_nnz() values, in plan.local_matrix() order,
e.g. attention scores or learnable edge weights), the forward installs them (ctx.set_values) before
the product, and the backward gives their gradient, dL/dA_ij = <dL/dC_i, X_j>, by ctx.sddmm on the
same plan's messages (CPU backend). Each call may bring other values on the same context (the
layers of a GAT): the backward installs its forward's values again when the context's have changed
since, so that X's gradient is Aᵀ·dH with the values of that forward (a product without values
raises in its backward if the context's values changed since its forward). sddmm(ctx, B, G) is the
sampled product itself, differentiable in B and G (attention scores). Every rank must run forward
and backward in the same order (all are collective calls).
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from . import Context


class _SpMM(torch.autograd.Function):
    """C = A·X forward (ctx.spmm), dX = Aᵀ·dC backward (ctx.spmm_t)."""

    @staticmethod
    def forward(fctx, sctx, X):
        fctx.sctx, fctx.version = sctx, getattr(sctx, "values_version", 0)
        return sctx.spmm(X.detach().contiguous())

    @staticmethod
    def backward(fctx, grad):
        if getattr(fctx.sctx, "values_version", 0) != fctx.version:
            from . import Error
            raise Error("shiro.torch.spmm: the context's values changed between this product and its backward pass "
                        "(set_values, spmm(values=) or sddmm's backward on the same context); pass values= to spmm "
                        "so that the backward can install them again")
        return None, fctx.sctx.spmm_t(grad.contiguous())


_TYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _autocast_on(device_type):
    """True inside a torch.autocast region for device_type ("cpu" or "cuda"), for old and new torch."""
    try:
        return bool(torch.is_autocast_enabled(device_type))
    except TypeError:  # torch < 2.4: one call per device type
        return bool(torch.is_autocast_cpu_enabled() if device_type == "cpu" else torch.is_autocast_enabled())


class _SpMMValues(torch.autograd.Function):
    """C = A(v)·X forward (set_values, spmm); dX = Aᵀ·dC (spmm_t), dv = SDDMM(X, dC) (sddmm) backward."""

    @staticmethod
    def forward(fctx, sctx, X, values):
        v = values.detach()
        sctx.set_values(v)
        fctx.sctx, fctx.version = sctx, sctx.values_version
        Xd = X.detach().contiguous()
        fctx.save_for_backward(Xd, v)
        return sctx.spmm(Xd)

    @staticmethod
    def backward(fctx, grad):
        sctx = fctx.sctx
        X, v = fctx.saved_tensors
        g = grad.contiguous()
        dX = dv = None
        if fctx.needs_input_grad[1]:
            if sctx.values_version != fctx.version:  # another forward installed its values since
                sctx.set_values(v)
                fctx.version = sctx.values_version
            dX = sctx.spmm_t(g)
        if fctx.needs_input_grad[2]:
            dv = sctx.sddmm(X, g).to(v.dtype)
        return None, dX, dv


class _SDDMM(torch.autograd.Function):
    """e = SDDMM(B, G) forward (ctx.sddmm); dG = A(de)·B (spmm), dB = A(de)ᵀ·G (spmm_t) backward."""

    @staticmethod
    def forward(fctx, sctx, B, G):
        fctx.sctx = sctx
        Bd, Gd = B.detach().contiguous(), G.detach().contiguous()
        fctx.save_for_backward(Bd, Gd)
        return sctx.sddmm(Bd, Gd)

    @staticmethod
    def backward(fctx, grad):
        sctx = fctx.sctx
        B, G = fctx.saved_tensors
        sctx.set_values(grad.detach())
        dG = sctx.spmm(B) if fctx.needs_input_grad[2] else None
        dB = sctx.spmm_t(G) if fctx.needs_input_grad[1] else None
        return None, dB, dG


def sddmm(ctx: Context, B: torch.Tensor, G: torch.Tensor) -> torch.Tensor:
    """This rank's <G_i, B_j> for each of its nonzeros A_ij (set_values order), recorded for autograd:
    B is this rank's b_rows x w rows, G its c_rows x w rows. E.g. attention logits s_i + t_j with
    B = [1, t], G = [s, 1]. Its backward multiplies by A with the incoming gradient as values (it
    installs them on ctx: spmm on the same context then needs values=). Collective."""
    return _SDDMM.apply(ctx, B, G)


def spmm(ctx: Context, X: torch.Tensor, values: torch.Tensor | None = None) -> torch.Tensor:
    """This rank's rows of A·X for a shiro.Context ctx, recorded for autograd; with values (this rank's
    values of A in set_values order, a 1-D tensor), A's values are those and differentiated too.
    Collective."""
    want = _TYPES.get(ctx.dtype)
    if want is not None and X.dtype != want and X.dtype.is_floating_point and _autocast_on(X.device.type):
        X = X.to(want)
    if values is None:
        return _SpMM.apply(ctx, X)
    return _SpMMValues.apply(ctx, X, values)


# The graph object and GNN layers over spmm (_gnn.py).
from ._gnn import GCNConv, Graph, SAGEConv  # noqa: E402

__all__ = ["spmm", "sddmm", "Graph", "GCNConv", "SAGEConv"]
