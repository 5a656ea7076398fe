"""checklib.py — what the Python test drivers share.

expect(cond, what, proc=None): prints "ok   what" or "FAIL what" (with the process's exit status and the
tails of its output when one is given), counts the failure in checklib.failures, returns cond.
run(cmd, timeout=300, **kw): subprocess.run with stdout and stderr captured as text.
auto_partition(d): the partition auto's exhaustive search (--effort exhaustive) must have kept, from its --json.
fast_partition(d): the partition auto's fast search (--effort fast, the default) must have kept.
plan_rows(path): each rank's C rows and B rows (original ids) of a plan file and its partition attribute (h5py).
need(*modules): imports them or, where this interpreter lacks them, runs the driver again under Debian's
/usr/bin/python3 (where install-deps puts them), else exits 77 saying which is missing.
A driver ends with `return 1 if checklib.failures else 0`.
"""
import importlib
import os
import subprocess
import sys

failures = 0


def expect(cond, what, proc=None, tail=3000):
    """Records one expectation; returns cond so that a driver can go on only when it held."""
    global failures
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures += 1
        if proc is not None:
            print(f"     exit {proc.returncode}\n     stdout: {proc.stdout[-tail:]}\n     stderr: {proc.stderr[-tail:]}")
    return cond


def need(*modules):
    """Imports each module named; missing ones: the driver again under /usr/bin/python3, or SKIP (77)."""
    try:
        for m in modules:
            importlib.import_module(m)
    except ImportError as e:  # this interpreter lacks them: Debian's, where install-deps puts them, may not
        if sys.executable != "/usr/bin/python3" and os.path.exists("/usr/bin/python3"):
            os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
        sys.stderr.write(f"SKIP: no Python here imports {', '.join(modules)} ({e})\n")
        sys.exit(77)


def plan_rows(path):
    """Each rank's C rows and B rows (original ids, numpy arrays) of the plan file at path, and the
    file's partition attribute (h5py and numpy: need() them first)."""
    import h5py
    import numpy as np
    with h5py.File(path, "r") as f:
        ranks = sorted(k for k in f.keys() if k.startswith("rank_"))
        c = [np.asarray(f[r]["c_global"][...]) for r in ranks]
        b = [np.asarray(f[r]["b_global"][...]) for r in ranks]
        attr = f.attrs.get("partition")
    if isinstance(attr, (bytes, np.bytes_)):
        attr = attr.decode()
    return c, b, str(attr)


def run(cmd, timeout=300, **kw):
    """Runs cmd to completion (at most timeout seconds), its output captured as text."""
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=timeout, **kw)


def fast_partition(d):
    """The partition auto's fast search (no --partition, --effort fast) must have kept, from
    shiro-plan's --json d, and what is wrong with d's record ("" if nothing): the last METIS
    partition (metis, metis-node, metis-vol, in the order weighed) whose joint's estimate is at least
    3% below that of the partition kept before it (block's first), else time if its rounds ran and auto's plan is
    predicted at least 3% faster on it than on block's, else block. Every partition is listed in
    candidates, and exactly one candidate built and priced is kept: the plan's."""
    c = [k for k in d.get("candidates") or [] if k.get("candidate") == "partition"]
    if d.get("effort") != "fast" or d.get("partition_choice") != "auto":
        return None, f"effort {d.get('effort')!r}, partition_choice {d.get('partition_choice')!r}"
    est = {k["partition"]: k for k in c if k["priced"] == "estimate" and k["strategy"] == "joint"}
    if "block" not in est:
        return None, f"no estimate of block's partition in {c}"
    want, best = "block", est["block"]["predicted_s"]
    for k in c:  # the METIS partitions in the order weighed, each kept if 3% below the one kept before it
        if k["partition"].startswith("metis") and k["priced"] == "estimate" and k["predicted_s"] is not None \
                and k["predicted_s"] < 0.97 * best:
            want, best = k["partition"], k["predicted_s"]
    if want != "block":
        pass
    elif any(k["partition"] == "time" and k["priced"] == "plan" for k in c):
        tp = d["time_partition"]
        if tp["auto_predicted_s"] < 0.97 * tp["auto_block_predicted_s"]:
            want = "time"
    elif "time" not in {k["partition"] for k in c}:
        return want, "the time partition neither weighed nor skipped"
    kept = [k for k in c if k["status"] == "kept" and k["priced"] == "plan"]
    if len(kept) != 1 or kept[0]["partition"] != d["partition"]:
        return want, f"kept {kept}, the plan's partition {d['partition']}"
    return want, ""


def auto_partition(d):
    """The partition auto's exhaustive search (no --partition, --effort exhaustive) must have kept, from shiro-plan's
    --json d, and what is wrong with d's record of the choice ("" if nothing): time if auto's plan
    is predicted at least 3% faster on it than on block's, then (square A, METIS built in) metis
    if auto's plan is predicted at least 3% faster on it than on that one, then metis-node and
    metis-vol likewise, each against the one kept before it; a METIS partition that leaves a rank
    empty is not weighed; last the hypergraph's, against the one kept before it (any A). Rectangular A,
    or R = 1: no metis_partition."""
    tp = d.get("time_partition")
    if not tp or d.get("partition_choice") != "auto":
        return None, f"no time_partition or partition_choice {d.get('partition_choice')!r}"
    want, best = "block", tp["auto_block_predicted_s"]
    if tp["auto_predicted_s"] < 0.97 * best:
        want, best = "time", tp["auto_predicted_s"]
    mp = d.get("metis_partition")
    if mp is None:
        return hypergraph_after(d, want, best), ""
    if d["m"] != d["k"]:
        return want, "a metis_partition for a rectangular matrix"
    if abs(mp["against_predicted_s"] - best) > 1e-9 * best:
        return want, f"metis weighed against {mp['against_predicted_s']} s, not the {want} partition's {best} s"
    if mp["empty_ranks"]:
        if mp["auto_predicted_s"] is not None or mp["kept"]:
            return want, "an empty-rank metis partition weighed"
    elif mp["auto_predicted_s"] < 0.97 * best:
        want, best = "metis", mp["auto_predicted_s"]
    for k in d.get("candidates") or []:  # metis-node, metis-vol: weighed after metis, in order
        if k.get("candidate") == "partition" and k["partition"].startswith("metis-") and k["priced"] == "plan" \
                and k["status"] == "weighed" and k["predicted_s"] is not None and k["predicted_s"] < 0.97 * best:
            want, best = k["partition"], k["predicted_s"]
    want = hypergraph_after(d, want, best)
    return want, "" if mp["kept"] == (want == "metis") else f"metis_partition kept {mp['kept']} with {want} wanted"


def hypergraph_after(d, want, best):
    """want, or hypergraph where auto's exhaustive search weighed it (last) at least 3% below best."""
    for k in d.get("candidates") or []:
        if k.get("candidate") == "partition" and k["partition"] == "hypergraph" and k["priced"] == "plan" \
                and k["status"] == "weighed" and k["predicted_s"] is not None and k["predicted_s"] < 0.97 * best:
            return "hypergraph"
    return want
