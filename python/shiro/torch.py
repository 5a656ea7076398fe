"""shiro.torch — the distributed SpMM as a differentiable torch operation.

    H = shiro.torch.spmm(ctx, X)    # this rank's rows of A·X; X.grad gets this rank's rows of Aᵀ·dH

X: this rank's b_rows x w rows for any width w from 1 to ctx.n (one context serves
every layer of a network), a CPU tensor of the context's dtype (CUDA tensors with a
"cuda" context); the backward pass runs at the same width and in the same type
(a bfloat16 context: bfloat16 gradients, computed in float32, rounded as the forward).
Under torch.autocast, X of another floating type is cast to the context's dtype first
(a differentiable cast, so X's gradient comes back in X's type): a bfloat16 autocast
region runs through a dtype="bfloat16" context. Outside autocast a type other than the
context's raises shiro.Error, as ctx.spmm does. The backward pass is ctx.spmm_t on the same
plan, so forward and backward move the same rows between the same ranks. A's
values are constants here (set them with ctx.set_values); only X is
differentiated. Every rank must run forward and backward in the same order
(both are collective calls).
"""
import torch


class _SpMM(torch.autograd.Function):
    """C = A·X forward (ctx.spmm), dX = Aᵀ·dC backward (ctx.spmm_t)."""

    @staticmethod
    def forward(fctx, sctx, X):
        fctx.sctx = sctx
        return sctx.spmm(X.detach().contiguous())

    @staticmethod
    def backward(fctx, grad):
        return None, fctx.sctx.spmm_t(grad.contiguous())


_TYPES = {"float32": torch.float32, "float64": torch.float64, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _autocast_on(device_type):
    """True inside a torch.autocast region for device_type ("cpu" or "cuda"), for old and new torch."""
    try:
        return bool(torch.is_autocast_enabled(device_type))
    except TypeError:  # torch < 2.4: one call per device type
        return bool(torch.is_autocast_cpu_enabled() if device_type == "cpu" else torch.is_autocast_enabled())


def spmm(ctx, X):
    """This rank's rows of A·X for a shiro.Context ctx, recorded for autograd. Collective."""
    want = _TYPES.get(ctx.dtype)
    if want is not None and X.dtype != want and X.dtype.is_floating_point and _autocast_on(X.device.type):
        X = X.to(want)
    return _SpMM.apply(ctx, X)


# The graph object and GNN layers over spmm (_gnn.py).
from ._gnn import GCNConv, Graph, SAGEConv  # noqa: E402

__all__ = ["spmm", "Graph", "GCNConv", "SAGEConv"]
