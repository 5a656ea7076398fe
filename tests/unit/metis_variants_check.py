#!/usr/bin/env python3
"""metis_variants_check.py BUILD DATA_DIR — the METIS partitions' variants of shiro-plan.

* --partition metis-node (nodes first, then each node's ranks): the rows of node q's G ranks are
  exactly rank q's rows of --partition metis at R/G ranks (the first cut is METIS's, unchanged),
  every rank owns rows, B rows follow C rows; with G = 1 (or one node) it is metis's partition.
* --partition metis-vol (METIS's communication-volume objective): deterministic (two runs, the
  same rows), not metis's partition (the objective reached METIS), and METIS's own measure of
  volume (per row, the other parts its neighbours are in) no higher than the edge cut's.
* Both: the plans verify against the matrix (shiro-plan-dump --verify --matrix), the JSON and the
  file name the partition, a rectangular matrix is refused naming the option, and an unknown
  partition's error lists them.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import checklib  # noqa: E402

checklib.need("h5py", "numpy", "scipy.io", "scipy.sparse")
import numpy as np  # noqa: E402
import scipy.io  # noqa: E402
import scipy.sparse as sp  # noqa: E402


def fail(what):
    checklib.expect(False, what)


def plan(exe, mtx, out, ranks, gpn, part):
    p = subprocess.run([exe, mtx, "--ranks", str(ranks), "--gpus-per-node", str(gpn), "--partition", part,
                        "--strategy", "joint", "--threads", "1", "-o", out, "--json", "--quiet"],
                       capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"{os.path.basename(mtx)} R={ranks} G={gpn} --partition {part}: exit {p.returncode}: {p.stderr.strip()}")
        return None
    j = json.loads(p.stdout)
    if j.get("partition") != part:
        fail(f"{part}: --json says partition {j.get('partition')!r}")
    return j


rows_of = checklib.plan_rows


def verify(dump, path, mtx, what):
    p = subprocess.run([dump, "--verify", path, "--matrix", mtx], capture_output=True, text=True, timeout=300)
    if p.returncode != 0 or "verified" not in p.stdout + p.stderr:
        fail(f"{what}: shiro-plan-dump --verify failed: {(p.stdout + p.stderr).strip()[-400:]}")


def read_pattern(mtx):
    """The symmetrized pattern without the diagonal, as neighbour sets (the graph METIS cuts)."""
    A = sp.coo_matrix(scipy.io.mmread(mtx))
    off = A.row != A.col
    r, c = np.concatenate([A.row[off], A.col[off]]), np.concatenate([A.col[off], A.row[off]])
    S = sp.csr_matrix((np.ones(len(r), dtype=np.int8), (r, c)), shape=A.shape)
    S.sum_duplicates()
    return S


def volume(S, label):
    """METIS's communication volume: for each row, the number of other parts among its neighbours."""
    total = 0
    for i in range(S.shape[0]):
        nb = label[S.indices[S.indptr[i]:S.indptr[i + 1]]]
        total += len(set(nb.tolist()) - {label[i]})
    return total


def labels(c, m):
    lab = np.full(m, -1, dtype=np.int64)
    for p, rows in enumerate(c):
        lab[rows] = p
    return lab


def main():
    build, data = sys.argv[1], sys.argv[2]
    exe = os.path.join(build, "tools", "shiro-plan")
    dump = os.path.join(build, "tools", "shiro-plan-dump")
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("email-Eu-core.mtx", "ca-GrQc.mtx"):
            mtx = os.path.join(data, name)
            for ranks, gpn in ((8, 4), (12, 4), (6, 2)):
                what = f"{name} R={ranks} G={gpn} metis-node"
                out = os.path.join(tmp, "node.h5")
                if plan(exe, mtx, out, ranks, gpn, "metis-node") is None:
                    continue
                c, b, attr = rows_of(out)
                if attr != "metis-node":
                    fail(f"{what}: the file's partition is {attr!r}")
                if any(len(x) == 0 for x in c):
                    fail(f"{what}: a rank owns no rows: {[len(x) for x in c]}")
                if any(not np.array_equal(x, y) for x, y in zip(c, b)):
                    fail(f"{what}: B rows do not follow C rows")
                verify(dump, out, mtx, what)
                flat = os.path.join(tmp, "nodes.h5")
                if plan(exe, mtx, flat, ranks // gpn, 1, "metis") is None:
                    continue
                nodes, _, _ = rows_of(flat)
                for q in range(ranks // gpn):
                    mine = np.sort(np.concatenate(c[q * gpn:(q + 1) * gpn]))
                    if not np.array_equal(mine, np.sort(nodes[q])):
                        fail(f"{what}: node {q}'s rows are not METIS's part {q} of {ranks // gpn}")
            # one node per rank (G = 1): the flat metis partition
            a, b = os.path.join(tmp, "a.h5"), os.path.join(tmp, "b.h5")
            if plan(exe, mtx, a, 8, 1, "metis-node") and plan(exe, mtx, b, 8, 1, "metis"):
                ca, cb = rows_of(a)[0], rows_of(b)[0]
                if any(not np.array_equal(x, y) for x, y in zip(ca, cb)):
                    fail(f"{name} R=8 G=1: metis-node is not metis's partition")

        # metis-vol: deterministic, METIS's volume objective taken
        mtx = os.path.join(data, "email-Eu-core.mtx")
        S = read_pattern(mtx)
        v1, v2, cut = (os.path.join(tmp, x) for x in ("v1.h5", "v2.h5", "cut.h5"))
        if plan(exe, mtx, v1, 16, 4, "metis-vol") and plan(exe, mtx, v2, 16, 4, "metis-vol") and \
                plan(exe, mtx, cut, 16, 4, "metis"):
            c1, _, attr = rows_of(v1)
            c2, _, _ = rows_of(v2)
            c0, _, _ = rows_of(cut)
            if attr != "metis-vol":
                fail(f"metis-vol: the file's partition is {attr!r}")
            if any(not np.array_equal(x, y) for x, y in zip(c1, c2)):
                fail("metis-vol: two runs gave different partitions")
            if all(np.array_equal(x, y) for x, y in zip(c1, c0)):
                fail("metis-vol: the same partition as metis (the objective did not reach METIS)")
            vv, vc = volume(S, labels(c1, S.shape[0])), volume(S, labels(c0, S.shape[0]))
            print(f"email-Eu-core R=16: METIS volume {vv} (metis-vol) against {vc} (metis)")
            if vv > vc:
                fail(f"metis-vol: METIS's volume {vv} above the edge cut partition's {vc}")
            verify(dump, v1, mtx, "email-Eu-core R=16 G=4 metis-vol")

        # errors: a rectangular matrix names the option; an unknown name lists the variants
        rect = os.path.join(data, "lp_afiro.mtx")
        for part in ("metis-vol", "metis-node"):
            p = subprocess.run([exe, rect, "--ranks", "4", "--gpus-per-node", "2", "--partition", part,
                                "-o", os.path.join(tmp, "r.h5")], capture_output=True, text=True, timeout=60)
            if p.returncode == 0 or f"--partition {part} needs a square matrix" not in p.stderr or p.stdout:
                fail(f"lp_afiro --partition {part}: exit {p.returncode}, stderr {p.stderr.strip()!r}")
            if os.path.exists(os.path.join(tmp, "r.h5")):
                fail(f"lp_afiro --partition {part}: a plan file was left")
        p = subprocess.run([exe, mtx, "--ranks", "4", "--partition", "metis-edge"], capture_output=True, text=True,
                           timeout=60)
        if p.returncode == 0 or "metis-vol, metis-node" not in p.stderr:
            fail(f"--partition metis-edge: exit {p.returncode}, stderr {p.stderr.strip()!r}")
    checklib.expect(checklib.failures == 0, "metis-node and metis-vol: partitions, plans, errors")
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
