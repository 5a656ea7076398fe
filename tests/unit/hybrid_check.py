#!/usr/bin/env python3
"""The hybrid strategy (compiler/cover/hybrid.c) from the command line.

usage: hybrid_check.py BUILD_DIR plan|replay
  plan    on shipped matrices, tsubame4 and a 2-GPU machine with a slow NIC
          (where relaying pays on some node pairs and not on others):
          hybrid's predicted time <= min(joint, hier, group)'s, and a mixed routing
          (candidate 3-5) at least 3% below it (hybrid.c's MIXED_MARGIN) (all three are
          among its candidates: all direct, all relayed with joint's covers,
          all relayed with group's), its JSON counts every inter-node node
          pair once (direct + relayed; relayed with joint's covers a part of
          relayed), its plan verifies against the matrix
          (shiro-plan-dump --verify --matrix) and is predicted as --compare
          predicted it; at least one case mixes direct and relayed pairs and
          moves a relay off the rail, and one mixes all three modes (direct,
          relayed with group's covers, relayed with joint's), else the routing
          code went untested
  replay  the plans at R = 4 and 8 (relayed, some with joint's covers, and
          all direct) and R = 12, G = 2 (all three modes mixed, relays off the
          rail) replayed under mpirun with shiro-spmm --check, float and
          double, forward and transposed (--direction both)
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
MACHINES = os.path.join(ROOT, "tools", "sim", "machines")
failures = []


def fail(what):
    print(f"FAIL {what}")
    failures.append(what)


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=900)


def slow_machine(tmp):
    """tsubame4's links with 2 GPUs per node and a 2 GB/s NIC: bandwidth-bound, so group's fewer
    inter-node rows win on some node pairs and joint's single stage on others."""
    with open(os.path.join(MACHINES, "tsubame4.json")) as f:
        d = json.load(f)
    d.update(name="slow-nic-2", gpus_per_node=2, nics_per_node=2)
    d["nic"]["bandwidth_GBps"] = 2
    path = os.path.join(tmp, "slow-nic-2.json")
    with open(path, "w") as f:
        json.dump(d, f)
    return path


def plans(build, tmp):
    """(matrix, R, G, plan path, hybrid JSON) of each case planned, the checks of `plan` on the way."""
    slow = slow_machine(tmp)
    cases = [("email-Eu-core.mtx", 8, 2, slow), ("email-Eu-core.mtx", 12, 2, slow), ("bcspwr10.mtx", 8, 2, slow),
             ("email-Eu-core.mtx", 4, 2, slow), ("ca-GrQc.mtx", 16, 4, "tsubame4"),
             ("email-Eu-core.mtx", 16, 4, "tsubame4"), ("tech-routers-rf.mtx", 32, 4, "tsubame4")]
    out, mixed, three = [], False, False
    for name, R, G, mach in cases:
        m = os.path.join(DATA, name)
        tag = f"{name} R={R} G={G} {os.path.basename(mach)}"
        plan = os.path.join(tmp, f"{name}-{R}-{G}-{os.path.basename(mach)}.h5")
        p = run([os.path.join(build, "tools", "shiro-plan"), m, "--ranks", str(R), "--gpus-per-node", str(G),
                 "--strategy", "hybrid", "--machine", mach, "--compare", "--json", "--quiet", "-o", plan])
        if p.returncode != 0:
            fail(f"{tag}: shiro-plan exit {p.returncode}: {p.stderr.strip()}")
            continue
        j = json.loads(p.stdout)
        v, h = j["volumes"], j.get("hybrid")
        if j["strategy"] != "hybrid" or not h:
            fail(f"{tag}: strategy {j['strategy']}, hybrid {h}")
            continue
        t, low = v["hybrid"]["predicted_time_s"], min(v[s]["predicted_time_s"] for s in ("joint", "hier", "group"))
        if t > low * (1 + 1e-12):
            fail(f"{tag}: hybrid predicted {t} s, slower than min(joint, hier, group) {low} s")
        if h["candidate"] >= 3 and not t < 0.97 * low:  # a mixed routing is kept only 3% below the pure ones
            fail(f"{tag}: mixed candidate {h['candidate']} predicted {t} s, not 3% below min(joint, hier, group) {low} s")
        if not v["group"]["inter_node_rows"] <= v["hybrid"]["inter_node_rows"] <= v["joint"]["inter_node_rows"]:
            fail(f"{tag}: inter-node rows group {v['group']['inter_node_rows']} <= hybrid "
                 f"{v['hybrid']['inter_node_rows']} <= joint {v['joint']['inter_node_rows']} does not hold")
        nodes = (R + G - 1) // G
        if not 0 < h["pairs_direct"] + h["pairs_relayed"] <= nodes * (nodes - 1):
            fail(f"{tag}: {h['pairs_direct']} direct + {h['pairs_relayed']} relayed node pairs of {nodes * (nodes - 1)}")
        if not 0 <= h["pairs_relayed_joint"] <= h["pairs_relayed"]:
            fail(f"{tag}: {h['pairs_relayed_joint']} pairs relayed with joint's covers of {h['pairs_relayed']} relayed")
        if h["pairs_relayed"] == 0 and h["relays_moved"]:
            fail(f"{tag}: relays moved without a relayed pair: {h}")
        if not 0 <= h["candidate"] < 6 or not all(h[k] > 0 for k in ("estimate_s", "estimate_direct_s",
                                                                         "estimate_relayed_s", "estimate_relayed_joint_s")):
            fail(f"{tag}: candidate or estimates out of range: {h}")
        mixed |= h["pairs_direct"] > 0 and h["pairs_relayed"] > 0 and h["relays_moved"] > 0
        three |= h["pairs_direct"] > 0 and 0 < h["pairs_relayed_joint"] < h["pairs_relayed"]
        d = run([os.path.join(build, "tools", "shiro-plan-dump"), plan, "--verify", "--matrix", m])
        if d.returncode != 0 or "verified" not in d.stdout:
            fail(f"{tag}: shiro-plan-dump --verify: exit {d.returncode}: {d.stdout[-500:]} {d.stderr.strip()}")
        d = run([os.path.join(build, "tools", "shiro-plan-dump"), plan, "--machine", mach, "--json"])
        pr = json.loads(d.stdout).get("prediction", {}) if d.returncode == 0 else {}
        if abs(pr.get("time_per_call_s", 0) - t) > 1e-12:
            fail(f"{tag}: the plan file is predicted {pr.get('time_per_call_s')} s, --compare said {t} s")
        print(f"ok   {tag}: hybrid {1e3 * t:.4f} ms predicted (joint {1e3 * v['joint']['predicted_time_s']:.4f}, "
              f"hier {1e3 * v['hier']['predicted_time_s']:.4f}, group {1e3 * v['group']['predicted_time_s']:.4f}); {h['pairs_direct']} pairs direct, "
              f"{h['pairs_relayed']} relayed ({h['pairs_relayed_joint']} with joint's covers), "
              f"{h['relays_moved']} relays off the rail")
        out.append((m, R, G, plan, h))
    if not mixed:
        fail("no case mixed direct and relayed node pairs with a relay off the rail")
    if not three:
        fail("no case mixed direct pairs, pairs relayed with group's covers and pairs relayed with joint's")
    return out


def replay(build, tmp):
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun:
        print("SKIP: mpirun not found")
        return 77
    three = False
    for m, R, G, plan, h in plans(build, tmp):
        if R not in (4, 8) and (R, G) != (12, 2):
            continue
        three |= h["pairs_direct"] > 0 and 0 < h["pairs_relayed_joint"] < h["pairs_relayed"]
        for dtype in ("float", "double"):
            s = run([mpirun, "-np", str(R), os.path.join(build, "tools", "shiro-spmm"), plan, "--n", "7", "--dtype", dtype,
                     "--iters", "2", "--check", m, "--direction", "both"])
            oks = sum(1 for line in s.stdout.splitlines() if line.endswith(" ok"))
            tag = (f"{os.path.basename(m)} R={R} G={G} {dtype} ({h['pairs_direct']} direct, {h['pairs_relayed']} relayed, "
                   f"{h['pairs_relayed_joint']} of them with joint's covers)")
            if s.returncode != 0 or oks != 2:
                fail(f"{tag}: shiro-spmm exit {s.returncode}, {oks}/2 checks ok (forward, transposed)\n{s.stdout}{s.stderr}")
            else:
                print(f"ok   {tag}: replayed, --check passed")
    if not three:
        fail("no replayed plan mixes direct pairs, pairs relayed with group's covers and with joint's")
    return 1 if failures else 0


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("plan", "replay"):
        print(__doc__)
        return 2
    build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        if sys.argv[2] == "replay":
            return replay(build, tmp)
        plans(build, tmp)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
