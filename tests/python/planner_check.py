#!/usr/bin/env python3
"""shiro.plan_matrix in-process (libshiro_planner) against shiro-plan.

usage: planner_check.py BUILD_DIR SOURCE_DIR
One process: for email-Eu-core (pattern) and lp_afiro (rectangular, values), and several strategies,
partitions and rank counts (flat, two-tier, auto, metis, an array partition), plan_matrix of the
matrix in memory (edge_index; scipy and torch COO/CSR with the values) writes the very
bytes shiro-plan writes from the file; the planner's warnings (G > R, ranks without rows) arrive as
shiro.PlanWarning and nothing is printed; a partition array with a bad rank id is refused naming its
index, and leaves no plan file; a path with format='csr-h5' still plans through shiro-plan.
Exit 0 when all passed, 1 otherwise, 77 (skipped) without numpy, scipy, mpi4py and torch.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from python_check import env_for, find_python  # noqa: E402

CASES = (  # matrix, ranks, G, strategy, partition
    ("email-Eu-core", 4, 1, "joint", None), ("email-Eu-core", 4, 2, "group", "nnz"),
    ("email-Eu-core", 8, 2, None, None), ("email-Eu-core", 4, 2, "hier", "metis"),
    ("email-Eu-core", 3, 1, "col", "parts"), ("email-Eu-core", 4, 1, "auto-cpu", None),
    ("lp_afiro", 3, 1, "joint", None), ("lp_afiro", 4, 2, "hybrid", "nnz"))


def worker(build, src):
    import tempfile
    import warnings

    import numpy as np
    import scipy.io
    import torch

    import shiro

    bad = []
    warnings.filterwarnings("ignore", message=".*[Ss]parse CSR tensor support is in beta")  # torch's, not ours
    tmp = tempfile.mkdtemp(prefix="planner-")
    cli = os.path.join(build, "tools", "shiro-plan")
    for name, R, G, strategy, partition in CASES:
        mtx = os.path.join(src, "tests", "data", name + ".mtx")
        pattern = "pattern" in open(mtx).readline()
        A = scipy.io.mmread(mtx)
        coo = A.tocoo()
        if pattern:
            inputs = {"edge_index": np.vstack([coo.row, coo.col])}
        else:
            csr = A.tocsr()
            inputs = {"scipy COO": coo, "scipy CSR": csr,
                      "torch COO": torch.sparse_coo_tensor(np.vstack([coo.row, coo.col]), coo.data, coo.shape),
                      "torch CSR": torch.sparse_csr_tensor(csr.indptr, csr.indices, csr.data, csr.shape)}
        part_arg, cmd = partition, [cli, mtx, "--ranks", str(R), "--gpus-per-node", str(G), "--quiet"]
        if partition == "parts":
            part_arg = np.random.default_rng(2).integers(0, R, A.shape[0])
            pfile = os.path.join(tmp, "parts.txt")
            np.savetxt(pfile, part_arg, fmt="%d")
            cmd += ["--partition", "parts:" + pfile]
        elif partition:
            cmd += ["--partition", partition]
        if strategy:
            cmd += ["--strategy", strategy]
        ref = os.path.join(tmp, "cli.h5")
        subprocess.run(cmd + ["-o", ref], check=True)
        want = open(ref, "rb").read()
        for kind, X in inputs.items():
            out = os.path.join(tmp, "py.h5")
            kw = {"num_nodes": A.shape[0]} if kind == "edge_index" else {}
            shiro.plan_matrix(X, ranks=R, gpus_per_node=G, strategy=strategy, partition=part_arg, out=out, **kw)
            if open(out, "rb").read() != want:
                bad.append(f"{name} R={R} G={G} {strategy}/{partition} from {kind}: not shiro-plan's bytes")
            os.remove(out)
    # warnings, as shiro.PlanWarning
    A = scipy.io.mmread(os.path.join(src, "tests", "data", "karate.mtx")).tocsr()
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        shiro.plan_matrix(A, ranks=2, gpus_per_node=4, out=os.path.join(tmp, "w1.h5"))
        shiro.plan_matrix(A, ranks=40, out=os.path.join(tmp, "w2.h5"))
    msgs = [str(w.message) for w in got if issubclass(w.category, shiro.PlanWarning)]
    if len(msgs) != 2 or "more than --ranks 2" not in msgs[0] or "6 of the 40 ranks own no rows" not in msgs[1]:
        bad.append(f"warnings: {msgs}")
    # a bad partition array: its index named, no file left
    parts = np.zeros(A.shape[0], np.int64)
    parts[17] = 9
    out = os.path.join(tmp, "bad.h5")
    try:
        shiro.plan_matrix(A, ranks=4, partition=parts, out=out)
        bad.append("a partition array with rank 9 of 4 was accepted")
    except shiro.ArgumentError as e:
        if "partition[17] = 9" not in str(e) or os.path.exists(out):
            bad.append(f"bad partition array: {e!r}, file left: {os.path.exists(out)}")
    try:
        shiro.plan_matrix(A, ranks=4, partition=parts[:-1], out=out)
        bad.append("a partition array one row short was accepted")
    except shiro.ArgumentError as e:
        if "one integer rank id per row (34)" not in str(e):
            bad.append(f"short partition array: {e!r}")
    # a path in another format: shiro-plan, as before
    import h5py
    h5 = os.path.join(tmp, "k.h5")
    with h5py.File(h5, "w") as f:
        f["indptr"], f["indices"] = A.indptr.astype(np.int64), A.indices.astype(np.int64)
    shiro.plan_matrix(h5, format="csr-h5", ranks=2, out=os.path.join(tmp, "f.h5"))
    ei = np.vstack(A.nonzero())
    shiro.plan_matrix(ei, ranks=2, out=os.path.join(tmp, "g.h5"))
    if open(os.path.join(tmp, "f.h5"), "rb").read() != open(os.path.join(tmp, "g.h5"), "rb").read():
        bad.append("format='csr-h5' path and the same edge_index give different plans")
    # the huge-page heap that plan_matrix sets up for graphs of 1M nonzeros and more (64 MiB of heap
    # grown, freed, madvised), forced on this small one: the same plan, and glibc's heap usable after
    from shiro import _planner
    with _planner._planning_heap(nnz=4 << 20):
        shiro.plan_matrix(ei, ranks=2, out=os.path.join(tmp, "h.h5"))
    if open(os.path.join(tmp, "h.h5"), "rb").read() != open(os.path.join(tmp, "g.h5"), "rb").read():
        bad.append("the plan made inside the huge-page heap differs")
    junk = [bytearray(1 << 20) for _ in range(64)]
    del junk
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
    print("\n".join("FAIL " + b for b in bad) if bad else
          f"ok planner: {len(CASES)} cases byte-identical to shiro-plan, warnings, partition errors, format=")
    return 1 if bad else 0


def main():
    if len(sys.argv) >= 4 and sys.argv[3] == "worker":
        return worker(sys.argv[1], sys.argv[2])
    build, src = sys.argv[1], sys.argv[2]
    exe, why = find_python()
    if exe is None:
        print(f"SKIP: no Python with numpy, scipy, mpi4py and torch ({why})")
        return 77
    p = subprocess.run([exe, os.path.abspath(__file__), build, src, "worker"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env_for(build, src), timeout=600)
    print(p.stdout, end="")
    lines = p.stdout.strip().splitlines()
    if p.returncode != 0 or len(lines) != 1 or not lines[0].startswith("ok "):
        print(f"FAIL: exit {p.returncode}; expected one 'ok' line and nothing else printed (the planner prints nothing)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
