#!/usr/bin/env python3
"""gat.py — trains a 2-layer graph attention network (GAT, one head) with shiro: the attention values
are A's values, learnt through their gradient (SDDMM) on the same plan.

    mpirun -np 4 python3 python/examples/gat.py [--graph G.mtx] [--epochs 10]
    python3 python/examples/gat.py --reference          # the same training in one process, plain torch

A layer, for node features H (rows) and weights W, a_src, a_dst:
    P = H·W;  s = P·a_src, t = P·a_dst                        (a score per node, two ways)
    e_ij = LeakyReLU(s_i + t_j, 0.2)   for each edge (i, j) of A + I
    α_ij = exp(e_ij) / Σ_k exp(e_ik)   (softmax over row i's edges)
    out_i = Σ_j α_ij P_j               (an SpMM with the values α)
The model: Z = layer2(elu(layer1(X))), loss = mean cross-entropy of Z over every node, Adam (lr 0.01);
hidden 8, the graph, features and labels as gcn.py's (email-Eu-core made symmetric with self-loops,
X standard normal from default_rng(0), 4 classes from a random teacher GCN), the weights Glorot-uniform
from torch.manual_seed(0). Rank 0 prints "epoch E loss L" (L to 17 digits) each epoch.

With shiro, everything per edge stays on the rank that holds the edge's row (its rows of A + I from
plan.local_matrix()): s_i + t_j is itself a sampled product, e = shiro.torch.sddmm(ctx, [1, t], [s, 1])
(the t of a remote node j comes by the plan's own messages, as B rows do in an SpMM), the softmax is
over the rank's own rows, and out = shiro.torch.spmm(ctx, P, values=α): the forward installs α
(ctx.set_values), and the backward gives P's gradient (Aᵀ·dout, spmm_t) and α's (SDDMM, ctx.sddmm),
while sddmm's backward is an SpMM with the gradient as values. One context serves both layers and
every width (N = 8). The weight gradients are summed over the ranks (allreduce).
"""
import argparse
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gcn import load_graph, normalized  # noqa: E402  (the same graph and teacher as gcn.py)

HIDDEN, FEATURES, CLASSES = 8, 32, 4


def problem(A, dtype):
    """Features X, labels y (gcn.py's) and the initial weights of both layers."""
    n = A.shape[0]
    X = np.random.default_rng(0).standard_normal((n, FEATURES))
    rng = np.random.default_rng(1)
    T1, T2 = rng.standard_normal((FEATURES, 16)), rng.standard_normal((16, CLASSES))
    Ah = normalized(A)
    y = np.argmax(Ah @ np.maximum(Ah @ (X @ T1), 0) @ T2, axis=1)
    torch.manual_seed(0)
    glorot = lambda *s: torch.nn.init.xavier_uniform_(torch.empty(*s, dtype=dtype))  # noqa: E731
    params = [glorot(FEATURES, HIDDEN), glorot(HIDDEN, 1), glorot(HIDDEN, 1),
              glorot(HIDDEN, CLASSES), glorot(CLASSES, 1), glorot(CLASSES, 1)]
    return X, y, params


def row_softmax(e, row, starts, nrows):
    """Softmax of e over the entries of each row (row: each entry's row; the entries grouped by row, row r's
    first at starts[r], no row empty); each row's max taken out first (a constant: the same softmax)."""
    m = torch.from_numpy(np.maximum.reduceat(e.detach().numpy(), starts))
    x = torch.exp(e - m[row])
    return x / torch.zeros(nrows, dtype=e.dtype).index_add(0, row, x)[row]


def layer(H, W, a_src, a_dst, scores, aggregate, row, starts, nrows):
    """One attention layer; scores(s, t) gives s_i + t_j per edge, aggregate(P, α) the SpMM."""
    P = H @ W
    e = torch.nn.functional.leaky_relu(scores((P @ a_src).squeeze(1), (P @ a_dst).squeeze(1)), 0.2)
    return aggregate(P, row_softmax(e, row, starts, nrows))


def train(args, X, y, params, scores, aggregate, row, starts, nrows, n_total, allreduce, log):
    """--epochs epochs of Adam; log(epoch, loss) with the loss summed over the ranks."""
    for p in params:
        p.requires_grad_(True)
    opt = torch.optim.Adam(params, lr=args.lr)
    W1, s1, d1, W2, s2, d2 = params
    for epoch in range(args.epochs):
        opt.zero_grad()
        H = torch.nn.functional.elu(layer(X, W1, s1, d1, scores, aggregate, row, starts, nrows))
        Z = layer(H, W2, s2, d2, scores, aggregate, row, starts, nrows)
        loss = torch.nn.functional.cross_entropy(Z, y, reduction="sum") / n_total
        loss.backward()
        for p in params:
            p.grad.copy_(allreduce(p.grad))
        log(epoch, float(allreduce(loss.detach().reshape(1))[0]))
        opt.step()


def reference(args):
    """The same training in one process: the edges of A + I as index arrays, plain torch."""
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    Acsr = load_graph(args.graph)
    A, n = Acsr.tocoo(), Acsr.shape[0]
    X, y, params = problem(Acsr, dtype)
    row, col = torch.from_numpy(A.row.astype(np.int64)), torch.from_numpy(A.col.astype(np.int64))

    def aggregate(P, alpha):
        return torch.zeros(n, P.shape[1], dtype=P.dtype).index_add(0, row, alpha.unsqueeze(1) * P[col])

    print(f"gat.py --reference: {args.graph}: {n} nodes, {A.nnz} entries of A + I, {args.dtype}")
    train(args, torch.tensor(X, dtype=dtype), torch.from_numpy(y), params, lambda s, t: s[row] + t[col], aggregate,
          row, Acsr.indptr[:-1], n, n, lambda t: t, lambda e, loss: print(f"epoch {e} loss {loss!r}", flush=True))
    return 0


def distributed(args):
    from mpi4py import MPI

    import shiro
    import shiro.torch

    comm = MPI.COMM_WORLD
    rank, R = comm.Get_rank(), comm.Get_size()
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    A = load_graph(args.graph)
    n = A.shape[0]
    X, y, params = problem(A, dtype)
    import tempfile
    tmp = comm.bcast(tempfile.mkdtemp(prefix="gat-") if rank == 0 else None)
    plan_path = os.path.join(tmp, "graph.shiro.h5")
    coo = A.tocoo()
    shiro.plan_matrix(np.vstack([coo.row, coo.col]), num_nodes=n, ranks=R, gpus_per_node=args.gpn,
                      strategy=args.strategy, partition=args.partition, out=plan_path, comm=comm)
    with shiro.Plan(plan_path, comm) as plan, plan.context(max(HIDDEN, CLASSES), dtype=args.dtype) as ctx:
        comm.Barrier()
        if rank == 0:
            import shutil
            shutil.rmtree(tmp, ignore_errors=True)
        if not np.array_equal(plan.c_global, plan.b_global):
            raise shiro.Error("gat.py: the plan's B rows do not follow its C rows (a layer's output rows must be "
                              "the next one's input rows)")
        indptr, _, _ = plan.local_matrix()
        c_rows = plan.c_rows
        row = torch.repeat_interleave(torch.arange(c_rows), torch.from_numpy(np.diff(indptr)))

        def scores(s, t):  # s_i + t_j = <[s_i, 1], [1, t_j]> for each local edge
            one = torch.ones_like(s)
            return shiro.torch.sddmm(ctx, torch.stack([one, t], 1), torch.stack([s, one], 1))

        def aggregate(P, alpha):
            return shiro.torch.spmm(ctx, P, values=alpha)

        def allreduce(t):
            out = np.empty_like(t.numpy())
            comm.Allreduce(np.ascontiguousarray(t.numpy()), out, op=MPI.SUM)
            return torch.from_numpy(out)

        def log(e, loss):
            if rank == 0:
                print(f"epoch {e} loss {loss!r}", flush=True)

        if rank == 0:
            print(f"gat.py: {args.graph}: {n} nodes, {A.nnz} entries of A + I, {R} ranks, plan {plan.strategy}/"
                  f"{plan.partition}, {args.dtype}")
        train(args, torch.tensor(X[plan.b_global], dtype=dtype), torch.from_numpy(y[plan.c_global]), params, scores,
              aggregate, row, indptr[:-1], c_rows, n, allreduce, log)
    return 0


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--graph", default=os.path.join(here, "..", "..", "tests", "data", "email-Eu-core.mtx"),
                    help="Matrix Market graph (default tests/data/email-Eu-core.mtx)")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    ap.add_argument("--reference", action="store_true", help="one process, plain torch instead of shiro")
    ap.add_argument("--strategy", help="shiro-plan --strategy (default: shiro-plan's)")
    ap.add_argument("--partition", help="shiro-plan --partition: block (default), nnz, metis")
    ap.add_argument("--gpn", type=int, default=1, help="ranks per node the plan is made for (default 1)")
    args = ap.parse_args()
    return reference(args) if args.reference else distributed(args)


if __name__ == "__main__":
    sys.exit(main())
