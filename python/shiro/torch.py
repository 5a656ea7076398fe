"""shiro.torch — the distributed SpMM as a differentiable torch operation.

    H = shiro.torch.spmm(ctx, X)    # this rank's rows of A·X; X.grad gets this rank's rows of Aᵀ·dH

X: this rank's b_rows x w rows for any width w from 1 to ctx.n (one context serves
every layer of a network), a CPU tensor of the context's dtype (CUDA tensors with a
"cuda" context); the backward pass runs at the same width. The backward pass is ctx.spmm_t on the same
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


def spmm(ctx, X):
    """This rank's rows of A·X for a shiro.Context ctx, recorded for autograd. Collective."""
    return _SpMM.apply(ctx, X)


# The graph object and GNN layers over spmm (_gnn.py).
from ._gnn import GCNConv, Graph, SAGEConv  # noqa: E402

__all__ = ["spmm", "Graph", "GCNConv", "SAGEConv"]
