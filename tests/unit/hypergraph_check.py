#!/usr/bin/env python3
"""hypergraph_check.py BUILD DATA_DIR [--np P --mpiexec MPIEXEC] — shiro-plan --partition hypergraph
(Zoltan's PHG on the column-net model, compiler/dist/dist_hypergraph.c).

* The model is the column-based volume: on square and rectangular matrices, the `col` plan's
  rows moved (--json) equal the column-net connectivity - 1 of the partition the file holds,
  recounted here from its ranks' C rows: for each column j, the parts with an entry in it,
  besides the part holding B row j (square A: C row j's rank; rectangular: block's over k).
* PHG minimizes it: on these matrices at R = 8 the connectivity is below block's ranges'.
* Every row is owned once, B rows follow C rows on a square A, the file and --json name the
  partition, two runs give the same rows, the plans verify (shiro-plan-dump --verify --matrix).
* auto: the fast search lists the hypergraph partition as skipped, with the reason; --effort
  exhaustive weighs it (square and rectangular A).
With --quick: karate and lp_afiro at R = 8, and auto on karate only (the sanitizers' run).
With --np P: the same plans by P planner processes (mpiexec -np P shiro-plan), whose partition is
PHG's over P processes (other labels than one process's, the same checks).
A build without Zoltan: the option is refused naming the Debian package, then exit 77.
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

SQUARE = ["karate.mtx", "west0067.mtx", "email-Eu-core.mtx"]
RECT = ["lp_afiro.mtx", "lp_ship04l.mtx"]


def fail(what):
    checklib.expect(False, what)


def plan(launch, exe, mtx, out, ranks, part, strategy="col", extra=()):
    cmd = launch + [exe, mtx, "--ranks", str(ranks), "--partition", part, "--strategy", strategy, "--threads", "1",
                    "-o", out, "--json", "--quiet"] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    if p.returncode != 0:
        fail(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
        return None
    return json.loads(p.stdout)


rows_of = checklib.plan_rows


def connectivity(A, label, bowner):
    """Sum over columns j of the parts with an entry in column j, other than B row j's part."""
    C = sp.csc_matrix(A)
    total = 0
    for j in range(C.shape[1]):
        parts = set(label[C.indices[C.indptr[j]:C.indptr[j + 1]]].tolist())
        parts.discard(int(bowner[j]))
        total += len(parts)
    return total


def block_owner(n, R):
    """block's owner of each of n rows: rank p owns [floor(p n / R), floor((p + 1) n / R))."""
    own = np.empty(n, dtype=np.int64)
    for p in range(R):
        own[p * n // R:(p + 1) * n // R] = p
    return own


def check_plans(launch, exe, dump, data, tmp, quick):
    for name in (SQUARE[:1] + RECT[:1]) if quick else SQUARE + RECT:
        mtx = os.path.join(data, name)
        A = sp.csr_matrix(scipy.io.mmread(mtx))
        m, k = A.shape
        square = m == k
        for R in (8,) if quick else (4, 8):
            what = f"{name} R={R}{' P=' + launch[2] if launch else ''}"
            out, again = os.path.join(tmp, "h.h5"), os.path.join(tmp, "h2.h5")
            j = plan(launch, exe, mtx, out, R, "hypergraph")
            if j is None:
                continue
            if j.get("partition") != "hypergraph":
                fail(f"{what}: --json says partition {j.get('partition')!r}")
            c, b, attr = rows_of(out)
            if attr != "hypergraph":
                fail(f"{what}: the file's partition is {attr!r}")
            if sorted(np.concatenate(c).tolist()) != list(range(m)):
                fail(f"{what}: the ranks' C rows are not each row once")
            if square and any(not np.array_equal(x, y) for x, y in zip(c, b)):
                fail(f"{what}: B rows do not follow C rows")
            label = np.empty(m, dtype=np.int64)
            for p, rows in enumerate(c):
                label[rows] = p
            bowner = label if square else block_owner(k, R)
            conn = connectivity(A, label, bowner)
            moved = j["volumes"]["col"]["total_rows"]
            if moved != conn:
                fail(f"{what}: col moves {moved} rows, the column-net connectivity - 1 is {conn}")
            if R == 8:
                blk = connectivity(A, block_owner(m, R), block_owner(k, R))
                if conn >= blk:
                    fail(f"{what}: the hypergraph's connectivity {conn} is not below block's {blk}")
            if plan(launch, exe, mtx, again, R, "hypergraph") is not None:
                if any(not np.array_equal(x, y) for x, y in zip(c, rows_of(again)[0])):
                    fail(f"{what}: two runs gave different partitions")
            p = subprocess.run([dump, "--verify", out, "--matrix", mtx], capture_output=True, text=True, timeout=300)
            if p.returncode != 0 or "verified" not in p.stdout:
                fail(f"{what}: shiro-plan-dump --verify: {(p.stdout + p.stderr).strip()[-300:]}")
            print(f"ok {what}: col moves {moved} rows = the connectivity", flush=True)


def candidate(j, part):
    return [c for c in j.get("candidates", []) if c["candidate"] == "partition" and c["partition"] == part]


def check_auto(exe, data, tmp, quick):
    """auto lists the hypergraph partition as skipped (with the reason) under --effort fast and
    weighs it under --effort exhaustive, on a square and a rectangular A."""
    out = os.path.join(tmp, "a.h5")
    for name in ("karate.mtx",) if quick else ("karate.mtx", "lp_ship04l.mtx"):
        for effort in ("fast", "exhaustive"):
            cmd = [exe, os.path.join(data, name), "--ranks", "8", "--gpus-per-node", "4", "--threads", "1", "-o", out,
                   "--json", "--quiet", "--effort", effort]
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                fail(f"{' '.join(cmd)}: exit {p.returncode}: {p.stderr.strip()}")
                continue
            hg = candidate(json.loads(p.stdout), "hypergraph")
            got = hg[0]["status"] if len(hg) == 1 else None
            if effort == "fast" and (got != "skipped" or not hg[0].get("reason")):
                fail(f"auto --effort fast on {name}: hypergraph {hg}, expected one candidate, skipped with a reason")
            if effort == "exhaustive" and (got not in ("weighed", "kept") or hg[0]["predicted_s"] is None):
                fail(f"auto --effort exhaustive on {name}: hypergraph {hg}, expected it weighed")
    print("ok auto: the hypergraph partition skipped (said why) by the fast search, weighed by the exhaustive one")


def main():
    build, data = sys.argv[1], sys.argv[2]
    launch = []
    if "--np" in sys.argv:
        launch = [sys.argv[sys.argv.index("--mpiexec") + 1], "-np", sys.argv[sys.argv.index("--np") + 1]]
    exe = os.path.join(build, "tools", "shiro-plan")
    dump = os.path.join(build, "tools", "shiro-plan-dump")
    with tempfile.TemporaryDirectory() as tmp:
        probe = subprocess.run(launch + [exe, os.path.join(data, "karate.mtx"), "--ranks", "2", "--partition",
                                         "hypergraph", "-o", os.path.join(tmp, "p.h5"), "--quiet"],
                               capture_output=True, text=True, timeout=300)
        if probe.returncode != 0 and "without Zoltan" in probe.stderr:
            if "libtrilinos-zoltan-dev" not in probe.stderr or os.path.exists(os.path.join(tmp, "p.h5")):
                fail(f"without Zoltan: the refusal must name the package and leave no file: {probe.stderr.strip()}")
                sys.exit(1)
            print(f"SKIP: this shiro was built without Zoltan; refused as it should be: {probe.stderr.strip()}")
            sys.exit(77)
        quick = "--quick" in sys.argv
        check_plans(launch, exe, dump, data, tmp, quick)
        if not launch:
            check_auto(exe, data, tmp, quick)
    checklib.expect(checklib.failures == 0, "--partition hypergraph: the model, plans, auto")
    sys.exit(1 if checklib.failures else 0)


if __name__ == "__main__":
    main()
