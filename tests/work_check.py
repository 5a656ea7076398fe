#!/usr/bin/env python3
"""The work partition (shiro-plan --partition work, compiler/cover/work_balance.c).

usage: work_check.py BUILD_DIR

On shipped matrices at R = 2, 4 and 8 (joint, flat):
  * "entries_balance" in --json (max / mean entries a rank computes) equals the
    recount of the plan's programs (shiro-plan-dump: nnz own + nnz others per rank),
    for the nnz and the work partition;
  * the work partition's is never above the nnz partition's (it starts there and
    keeps the best partition it evaluates), and it is at least 10% lower on some
    case (else the rescaling went untested);
  * the partition is contiguous and covers every row once (the dump's C rows sum
    to the matrix's rows), and the plan verifies against the matrix
    (shiro-plan-dump --verify --matrix).
Replays of work-partition plans under mpirun are in meson.build (replay-work-*).
"""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DATA = os.path.join(ROOT, "tests", "data")
CASES = ["email-Eu-core.mtx", "bcspwr10.mtx", "fidapex6.mtx.gz", "tech-routers-rf.mtx"]
failures = []


def fail(what):
    print(f"FAIL {what}")
    failures.append(what)


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)


def recount(dump, plan):
    """Per rank (C rows, entries computed) from shiro-plan-dump's rank table."""
    r = run([dump, plan])
    if r.returncode != 0:
        return None
    rows, lines = [], r.stdout.splitlines()
    head = next(i for i, l in enumerate(lines) if l.split()[:1] == ["rank"])
    for l in lines[head + 1:]:
        f = l.split()
        if not f or not f[0].isdigit():
            break
        rows.append((int(f[1]), int(f[7]) + int(f[8])))
    return rows


def main():
    build = sys.argv[1]
    plan_tool = os.path.join(build, "tools", "shiro-plan")
    dump = os.path.join(build, "tools", "shiro-plan-dump")
    lowered = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name in CASES:
            mtx = os.path.join(DATA, name)
            for R in (2, 4, 8):
                got = {}
                for part in ("nnz", "work"):
                    plan = os.path.join(tmp, f"{name}-{R}-{part}.h5")
                    r = run([plan_tool, mtx, "--ranks", str(R), "--partition", part, "--strategy", "joint",
                             "-o", plan, "--json", "--quiet"])
                    case = f"{name} R={R} --partition {part}"
                    if r.returncode != 0:
                        fail(f"{case}: shiro-plan exit {r.returncode}: {r.stderr.strip()}")
                        continue
                    d = json.loads(r.stdout)
                    got[part] = d["entries_balance"]
                    ranks = recount(dump, plan)
                    if not ranks or len(ranks) != R:
                        fail(f"{case}: shiro-plan-dump's rank table unreadable")
                        continue
                    if sum(c for c, _ in ranks) != d["m"]:
                        fail(f"{case}: the ranks' C rows sum to {sum(c for c, _ in ranks)}, not {d['m']}")
                    entries = [e for _, e in ranks]
                    if sum(entries) != d["nnz"]:
                        fail(f"{case}: the programs compute {sum(entries)} entries, not the {d['nnz']} nonzeros")
                    bal = max(entries) * R / d["nnz"]
                    if abs(bal - d["entries_balance"]) > 1e-5:
                        fail(f"{case}: entries_balance {d['entries_balance']} but the programs' recount gives {bal:.6f}")
                    v = run([dump, plan, "--verify", "--matrix", mtx])
                    if v.returncode != 0:
                        fail(f"{case}: the plan does not verify: {v.stdout.strip()[-300:]} {v.stderr.strip()[-300:]}")
                if len(got) == 2:
                    print(f"{name} R={R}: entries max/mean nnz {got['nnz']:.3f}, work {got['work']:.3f}")
                    if got["work"] > got["nnz"] + 1e-9:
                        fail(f"{name} R={R}: the work partition's entries balance {got['work']} is above nnz's {got['nnz']}")
                    lowered += got["work"] <= 0.9 * got["nnz"]
    if not lowered:
        fail("no case where the work partition lowered the busiest rank's entries by 10%: the rescaling went untested")
    print(f"{len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
