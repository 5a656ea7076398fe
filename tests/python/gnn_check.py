#!/usr/bin/env python3
"""shiro.torch's Graph, GCNConv and SAGEConv against a one-process torch reference.

usage: gnn_check.py BUILD_DIR SOURCE_DIR
Under mpirun -np 4, for a flat plan (joint, block partition, 1 rank per node) and a two-tier one
(group, nnz partition, 2 nodes of 2 ranks): karate's graph made symmetric with random positive
weights, plus I, planned in-process by rank 0 (plan_matrix(comm=)); a Graph over it scatters the
features, a GCNConv (gcn normalization) then a SAGEConv (mean) run forward and backward. Their
outputs (gathered), the features' gradients (this rank's rows) and the weights' gradients (summed
over the ranks) equal, to 1e-9 relative in float64, the same modules on torch.sparse.mm with
D^-1/2 A D^-1/2 and D^-1 A built in one process. Graph.degree is A's row sums. Exit 0 when all
passed, 1 otherwise, 77 (skipped) without numpy, scipy, mpi4py and torch.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_check import env_for, find_python, mpirun  # noqa: E402

CASES = (("joint", "block", 1), ("group", "nnz", 2))


def worker(src, strategy, partition, gpn):
    import tempfile

    import numpy as np
    import scipy.io
    import scipy.sparse as sp
    import torch
    from mpi4py import MPI

    import shiro
    import shiro.torch

    comm = MPI.COMM_WORLD
    rank = comm.Get_rank()
    bad = []

    def close(got, ref, what):
        got, ref = np.asarray(got, np.float64), np.asarray(ref, np.float64)
        err = float(np.abs(got - ref).max()) if ref.size else 0.0
        scale = max(1.0, float(np.abs(ref).max()) if ref.size else 0.0)
        if got.shape != ref.shape or not err <= 1e-9 * scale:
            bad.append(f"{what}: off by {err:.3g} (scale {scale:.3g}), shapes {got.shape} {ref.shape}")

    A = scipy.io.mmread(os.path.join(src, "tests", "data", "karate.mtx")).tocsr()
    A = ((abs(A) + abs(A.T)) > 0).astype(np.float64).tocoo()
    w = np.random.default_rng(5).uniform(0.5, 2.0, A.nnz)
    A = sp.coo_matrix((w, (A.row, A.col)), A.shape).tocsr()
    A = (A + A.T + sp.identity(A.shape[0])).tocsr()  # symmetric, weighted, self loops
    n = A.shape[0]
    tmp = comm.bcast(tempfile.mkdtemp(prefix="gnn-") if rank == 0 else None)
    path = os.path.join(tmp, "g.shiro.h5")
    shiro.plan_matrix(A, ranks=comm.Get_size(), gpus_per_node=gpn, strategy=strategy, partition=partition, out=path,
                      comm=comm)
    X = np.random.default_rng(0).standard_normal((n, 5))
    R = np.random.default_rng(1).standard_normal((n, 3))
    torch.manual_seed(0)
    conv1, conv2 = shiro.torch.GCNConv(5, 4), shiro.torch.SAGEConv(4, 3)
    ref1, ref2 = shiro.torch.GCNConv(5, 4), shiro.torch.SAGEConv(4, 3)
    ref1.load_state_dict(conv1.state_dict())
    ref2.load_state_dict(conv2.state_dict())

    # the reference: one process, torch.sparse.mm
    d = np.asarray(A.sum(axis=1)).ravel()

    def sparse(M):
        M = M.tocoo()
        return torch.sparse_coo_tensor(np.vstack([M.row, M.col]), M.data, M.shape, dtype=torch.float64).coalesce()

    Agcn = sparse(sp.diags(1 / np.sqrt(d)) @ A @ sp.diags(1 / np.sqrt(d)))
    Amean = sparse(sp.diags(1 / d) @ A)
    Xr = torch.tensor(X, requires_grad=True)
    H = torch.relu(torch.sparse.mm(Agcn, ref1.lin(Xr)) + ref1.bias)
    Zr = torch.sparse.mm(Amean, H @ ref2.lin_l.weight.T) + ref2.lin_l.bias + ref2.lin_r(H)
    (Zr * torch.tensor(R)).sum().backward()

    with shiro.torch.Graph(path, comm, n_max=8, dtype=torch.float64) as g:
        close(g.degree(), d[g.plan.c_global], "Graph.degree (A·1)")
        Xl = g.scatter(X).requires_grad_(True)
        Z = conv2(g, torch.relu(conv1(g, Xl)))
        (Z * g.scatter_rows(torch.tensor(R))).sum().backward()
        close(g.gather(Z), Zr.detach(), "outputs (gathered)")
        close(Xl.grad, Xr.grad[g.b_global], "the features' gradient (this rank's rows)")
        for (name, p), q in zip(list(conv1.named_parameters()) + list(conv2.named_parameters()),
                                list(ref1.parameters()) + list(ref2.parameters())):
            close(g.allreduce_(p.grad.clone()), q.grad, f"gradient of {name} (summed over the ranks)")
        loss = (Z * g.scatter_rows(torch.tensor(R))).sum().detach()  # a 0-d tensor, as a loss is
        close(g.allreduce_(loss.clone()).reshape(1), torch.tensor([comm.allreduce(loss.item())]),
              "allreduce_ of a 0-d loss")
    bad = [b for part in comm.allgather(bad) for b in part]
    if rank == 0:
        import shutil
        shutil.rmtree(tmp, ignore_errors=True)
        print("\n".join(f"FAIL {strategy}/{partition} G={gpn}: {b}" for b in bad) if bad else
              f"ok {strategy}/{partition} G={gpn}: GCNConv + SAGEConv outputs and gradients equal torch.sparse.mm's "
              "to 1e-9 on 4 ranks")
    return 1 if bad else 0


def main():
    if len(sys.argv) >= 7 and sys.argv[3] == "worker":
        return worker(sys.argv[2], sys.argv[4], sys.argv[5], int(sys.argv[6]))
    build, src = sys.argv[1], sys.argv[2]
    exe, why = find_python()
    if exe is None:
        print(f"SKIP: no Python with numpy, scipy, mpi4py and torch ({why})")
        return 77
    env = env_for(build, src)
    failures = 0
    for strategy, partition, gpn in CASES:
        p = mpirun(4, [exe, os.path.abspath(__file__), build, src, "worker", strategy, partition, str(gpn)], env)
        print(p.stdout, end="")
        if p.returncode != 0 or "ok " not in p.stdout:
            print(f"FAIL {strategy}/{partition} G={gpn}: exit {p.returncode}")
            failures += 1
    print("FAILED" if failures else "all passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
