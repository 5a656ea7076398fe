#!/usr/bin/env python3
"""Byte flips in a real plan file: the tools must fail cleanly, never crash or hang.

usage: byteflip_check.py BUILD_DIR MATRIX [--ranks 4] [--gpn 2] [--strategy S] [--stride-target 250]
                   [--region-samples 100] [--meta-stride 48] [--spmm-samples 30]
                   [--jobs 2] [--seed 1]

Plans MATRIX for R ranks (G per node; strategy S, default shiro-plan's) with
BUILD_DIR/tools/shiro-plan, then
damages copies of the file, one position at a time (one bit flipped, or at
every fifth position the whole byte inverted):
  * every N-th byte of the whole file (N chosen for about --stride-target positions),
  * --region-samples random bytes of each rank's datasets (the arrays ranks map),
    plus the first and last byte of every dataset,
  * every --meta-stride-th byte outside the datasets (superblock, object headers,
    attributes: what HDF5 itself parses).
Each damaged file goes through `shiro-plan-dump FILE --json` and
`shiro-plan-dump FILE --verify` (a `--help` that no longer mentions `--verify`
is a failure: the sweep would lose its strongest check); a sample of --spmm-samples positions
(three in four inside the datasets) also through
`mpirun -np R shiro-spmm FILE --n 3 --iters 1 --check MATRIX`.

Every run must end in one of: exit 0, or exit 1/2 with a message on stderr;
and since every byte of a plan is under a checksum (the envelope's for the
user block and HDF5's metadata, each dataset's own for its bytes), `--verify`
and shiro-spmm must refuse every damaged file.
Failures: a signal or exit >= 128, a sanitizer exit (86/87, see the 'asan'
test setup) or report, any other exit status, a silent error, a timeout (a
hang; the whole process group is killed), and for shiro-spmm an exit 0
whose --check did not pass on every configuration. Positions are
deterministic for a given --seed. Exit status 0 when every run passed,
1 otherwise (each failure printed with its position and region), and 1 when
the matrix is missing (it ships in tests/data: a wrong path is an error).
"""
import argparse
import concurrent.futures
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile

SANITIZER = re.compile(r"ERROR: (AddressSanitizer|LeakSanitizer)|runtime error:|SUMMARY: UndefinedBehaviorSanitizer")


def run(cmd, timeout, env=None):
    """Runs cmd in its own process group; returns (rc, stdout, stderr), rc None on timeout."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace",
                         start_new_session=True, env=env)
    try:
        out, err = p.communicate(timeout=timeout)
        return p.returncode, out, err
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = p.communicate()
        return None, out, err


def verdict(rc, out, err):
    """None if the run ended cleanly, else what was wrong."""
    if rc is None:
        return "hang (timeout)"
    if rc < 0 or rc >= 128:
        return f"crash (signal or exit {rc})"
    if rc in (86, 87) or SANITIZER.search(err) or SANITIZER.search(out):
        return f"sanitizer report (exit {rc})"
    if rc not in (0, 1, 2):
        return f"unclean exit {rc}"
    if rc != 0 and not err.strip():
        return f"exit {rc} without a message"
    return None


def regions(plan):
    """[(offset, size, 'rank_000001/col')] of every stored dataset, from h5dump -p -H; [] without h5dump."""
    h5dump = shutil.which("h5dump")
    if not h5dump:
        return []
    p = subprocess.run([h5dump, "-p", "-H", plan], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    found, group, dset, size = [], "", "", None
    for ln in p.stdout.splitlines():
        m = re.match(r'\s*GROUP "([^"]+)"', ln)
        if m:
            group = m.group(1)
        m = re.match(r'\s*DATASET "([^"]+)"', ln)
        if m:
            dset, size = m.group(1), None
        m = re.match(r"\s*SIZE (\d+)", ln)
        if m:
            size = int(m.group(1))
        m = re.match(r"\s*OFFSET (\d+)", ln)
        if m and size:
            found.append((int(m.group(1)), size, f"{group}/{dset}"))
    return found


def where(pos, regs):
    for off, size, name in regs:
        if off <= pos < off + size:
            return f"{name}+{pos - off}"
    return "metadata"


def positions(size, regs, a, rnd):
    """Sorted list of byte positions to damage."""
    pos = set(range(0, size, max(1, size // a.stride_target)))
    by_rank = {}
    for off, n, name in regs:
        by_rank.setdefault(name.split("/")[0], []).append((off, n))
        pos.update((off, off + n - 1))
    for spans in by_rank.values():
        total = sum(n for _, n in spans)
        for _ in range(min(a.region_samples, total)):
            k = rnd.randrange(total)
            for off, n in spans:
                if k < n:
                    pos.add(off + k)
                    break
                k -= n
    inside = [False] * size
    for off, n, _ in regs:
        for i in range(off, min(off + n, size)):
            inside[i] = True
    pos.update(i for i in range(0, size, a.meta_stride) if not inside[i])
    return sorted(p for p in pos if 0 <= p < size)


def damage(orig, pos, path):
    """Writes orig with the byte at pos damaged to path; returns a description."""
    data = bytearray(orig)
    if pos % 5 == 0:
        data[pos] ^= 0xFF
        how = "byte inverted"
    else:
        bit = (pos * 7) % 8
        data[pos] ^= 1 << bit
        how = f"bit {bit}"
    with open(path, "wb") as f:
        f.write(data)
    return how


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("matrix")
    ap.add_argument("--ranks", type=int, default=4)
    ap.add_argument("--gpn", type=int, default=2)
    ap.add_argument("--strategy", default=None)
    ap.add_argument("--stride-target", type=int, default=250)
    ap.add_argument("--region-samples", type=int, default=100)
    ap.add_argument("--meta-stride", type=int, default=48)
    ap.add_argument("--spmm-samples", type=int, default=30)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if not os.path.exists(a.matrix):
        print(f"FAIL: {a.matrix} not found")
        return 1
    tools = os.path.join(os.path.abspath(a.build), "tools")
    plan_exe, dump, spmm = (os.path.join(tools, t) for t in ("shiro-plan", "shiro-plan-dump", "shiro-spmm"))
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    env = dict(os.environ)
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
    env.setdefault("OMPI_MCA_pml", "ob1")
    env.setdefault("OMPI_MCA_btl", "self,vader")
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")  # as tests/meson.build's mpi_env, for runs by hand
    env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    rnd = random.Random(a.seed)
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "plan.shiro.h5")
        strategy = ["--strategy", a.strategy] if a.strategy else []
        rc, out, err = run([plan_exe, a.matrix, "--ranks", str(a.ranks), "--gpus-per-node", str(a.gpn), "-o", plan,
                            "--quiet"] + strategy, 600, env)
        if rc != 0:
            print(f"FAIL shiro-plan exit {rc}: {err.strip()}")
            return 1
        orig = open(plan, "rb").read()
        regs = regions(plan)
        rc, help_out, help_err = run([dump, "--help"], 60, env)
        if "--verify" not in help_out + help_err:
            print(f"FAIL shiro-plan-dump --help (exit {rc}) does not mention --verify: {(help_out + help_err).strip()[:300]}")
            return 1
        dump_modes = [["--json"], ["--verify"]]
        # The undamaged plan must pass everything.
        for mode in dump_modes:
            rc, out, err = run([dump, plan] + mode, 120, env)
            if rc != 0:
                print(f"FAIL undamaged plan: shiro-plan-dump {' '.join(mode)} exit {rc}: {err.strip()[:500]}")
                return 1
        spmm_cmd = [mpirun, "-np", str(a.ranks), spmm, None, "--n", "3", "--iters", "1", "--check", a.matrix]
        rc, out, err = run([x if x else plan for x in spmm_cmd], 300, env)
        if rc != 0 or "check:" not in out or "FAILED" in out:
            print(f"FAIL undamaged plan: shiro-spmm exit {rc}: {out.strip()[:300]} {err.strip()[:500]}")
            return 1
        pos = positions(len(orig), regs, a, rnd)
        in_regs = [p for p in pos if where(p, regs) != "metadata"]
        outside = [p for p in pos if where(p, regs) == "metadata"]
        ns = min(a.spmm_samples, len(pos))
        spmm_pos = set(rnd.sample(in_regs, min(len(in_regs), (3 * ns) // 4)))
        spmm_pos.update(rnd.sample(outside, min(len(outside), ns - len(spmm_pos))))
        print(f"{os.path.basename(a.matrix)}: plan of {len(orig)} bytes, {a.ranks} ranks, {len(regs)} stored datasets; "
              f"{len(pos)} positions ({len(in_regs)} in datasets, {len(outside)} elsewhere), shiro-plan-dump "
              f"{' and '.join(' '.join(m) for m in dump_modes)}, shiro-spmm on {len(spmm_pos)}")

        counts = {}

        def one(p):
            path = os.path.join(tmp, f"flip-{p}.h5")
            how = damage(orig, p, path)
            res = []
            cmds = [("dump " + " ".join(m), [dump, path] + m, 120) for m in dump_modes]
            if p in spmm_pos:
                cmds.append(("spmm", [x if x else path for x in spmm_cmd], 300))
            for tag, cmd, limit in cmds:
                rc, out, err = run(cmd, limit, env)
                bad = verdict(rc, out, err)
                if bad is None and tag == "spmm" and rc == 0 and ("check:" not in out or "FAILED" in out):
                    bad = "exit 0 but --check did not pass"
                if bad is None and rc == 0 and tag in ("dump --verify", "spmm"):
                    bad = "damage not detected (every byte of a plan is under a checksum)"
                res.append((tag, rc, bad, (err.strip() or out.strip()).splitlines()[-1:] if bad else []))
            os.remove(path)
            return p, how, res

        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for p, how, res in ex.map(one, pos):
                for tag, rc, bad, last in res:
                    key = (tag, "ok" if rc == 0 and not bad else "error" if not bad else "FAIL")
                    counts[key] = counts.get(key, 0) + 1
                    if bad:
                        failures.append(f"FAIL {tag}: byte {p} ({where(p, regs)}, {how}): {bad}; {' '.join(last)[:300]}")
        for (tag, kind), n in sorted(counts.items()):
            print(f"  {tag:16s} {kind:6s} {n}")
    for f in failures:
        print(f)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
