#!/usr/bin/env python3
"""Inter-node rows of col, joint, hier and group for a set of matrices (a
markdown table), with the geometric means of hier/col and group/hier.

usage: tools/bench/volume_table.py [--ranks 32] [--gpn 4] [--build build] [MATRIX...]
Default matrices: every *.mtx / *.mtx.gz in ../shared/data/matrices.
"""
import argparse
import glob
import json
import math
import os
import subprocess
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ranks", type=int, default=32)
    ap.add_argument("--gpn", type=int, default=4)
    ap.add_argument("--build", default="build")
    ap.add_argument("--partitions", default="", help="e.g. block,nnz,metis: compare partitions instead")
    ap.add_argument("matrices", nargs="*")
    a = ap.parse_args()
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    mats = a.matrices or sorted(glob.glob(os.path.join(root, "..", "shared", "data", "matrices", "*.mtx*")))
    exe = os.path.join(a.build, "tools", "shiro-plan")
    if a.partitions:
        return partition_table(a, mats, exe)
    print(f"R = {a.ranks}, G = {a.gpn}: inter-node rows per SpMM call\n")
    print("| matrix | nnz | col | joint | hier | group | hier/col | group/hier | plan s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    lhc, lgh = [], []
    for m in mats:
        p = subprocess.run([exe, m, "--ranks", str(a.ranks), "--gpus-per-node", str(a.gpn), "--compare", "--json",
                            "--quiet", "--partition", "block"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            print(f"| {os.path.basename(m)} | error: {p.stderr.strip()} |")
            continue
        j = json.loads(p.stdout)
        v = {s: j["volumes"][s]["inter_node_rows"] for s in ("col", "joint", "hier", "group")}
        hc = v["hier"] / v["col"] if v["col"] else float("nan")
        gh = v["group"] / v["hier"] if v["hier"] else float("nan")
        if v["col"] and v["hier"] and v["group"]:
            lhc.append(math.log(hc))
            lgh.append(math.log(gh))
        print(f"| {os.path.basename(m).split('.mtx')[0]} | {j['nnz']} | {v['col']} | {v['joint']} | {v['hier']} | "
              f"{v['group']} | {hc:.3f} | {gh:.3f} | {j['timings_s']['total']:.2f} |")
    if lhc:
        print(f"\ngeometric mean over {len(lhc)} matrices: hier/col = {math.exp(sum(lhc) / len(lhc)):.3f}, "
              f"group/hier = {math.exp(sum(lgh) / len(lgh)):.3f}")
    return 0


def partition_table(a, mats, exe):
    parts = a.partitions.split(",")
    print(f"R = {a.ranks}, G = {a.gpn}: rows moved per call by joint / group (inter-node rows of group), "
          f"and load balance (max/mean nonzeros per rank), per partition\n")
    print("| matrix | " + " | ".join(f"{p}: joint | {p}: group (inter) | {p}: balance" for p in parts) + " |")
    print("|---|" + "---:|" * (3 * len(parts)))
    for m in mats:
        cells = []
        for part in parts:
            p = subprocess.run([exe, m, "--ranks", str(a.ranks), "--gpus-per-node", str(a.gpn), "--compare", "--json",
                                "--quiet", "--partition", part], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            if p.returncode != 0:
                cells += ["n/a", "n/a", "n/a"]
                continue
            j = json.loads(p.stdout)
            v = j["volumes"]
            cells += [str(v["joint"]["total_rows"]), f"{v['group']['total_rows']} ({v['group']['inter_node_rows']})",
                      f"{j['load_balance']:.2f}"]
        print(f"| {os.path.basename(m).split('.mtx')[0]} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
