#!/usr/bin/env python3
"""The CPU kernels' threads per rank (shiro_ctx_options.threads, shiro_ctx_get_threads), as
shiro-spmm reports them: with OMP_NUM_THREADS unset the library gives each rank its share of the
node's CPUs (the CPUs divided by the ranks on the node, at least 1), never more threads than CPUs;
OMP_NUM_THREADS, where set, is the user's choice; --threads (the context's option) overrides both.
A user's count above the CPUs the rank may run on (its binding: mpirun binds a rank to one core by
default) is said in the reason ("threads share cores") and shiro-spmm warns on stderr with the fix.

usage: threads_check.py BUILD_DIR MATRIX
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = 0


def expect(cond, what, proc=None):
    global failures
    print(f"{'ok  ' if cond else 'FAIL'} {what}")
    if not cond:
        failures += 1
        if proc is not None:
            print(proc.stdout, proc.stderr)


def spmm(mpirun, exe, plan, np_, env, extra=(), launcher=()):
    p = subprocess.run([mpirun, *launcher, "-np", str(np_), exe, plan, "--n", "4", "--iters", "2", *extra],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120, env=env)
    m = re.search(r"^shiro-spmm: threads: (\d+) per rank \((.*)\)$", p.stdout, re.M)
    return p, (int(m.group(1)), m.group(2)) if m else (None, "")


def main():
    build, matrix = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    exe, planner = os.path.join(build, "tools", "shiro-spmm"), os.path.join(build, "tools", "shiro-plan")
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    cpus = os.cpu_count() or 1
    base = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
    with tempfile.TemporaryDirectory() as tmp:
        plans = {}
        for r in (1, 4):
            plans[r] = os.path.join(tmp, f"k{r}.shiro.h5")
            p = subprocess.run([planner, matrix, "--ranks", str(r), "-o", plans[r], "--quiet"], capture_output=True, text=True)
            expect(p.returncode == 0, f"plan for {r} ranks", p)
        share = max(1, cpus // 4)
        p, (t, why) = spmm(mpirun, exe, plans[4], 4, base, launcher=("--bind-to", "none"))
        expect(p.returncode == 0 and t == share and "4 ranks there" in why,
               f"4 ranks, OMP_NUM_THREADS unset, unbound: {t} threads each ({why}), expected {share} ({cpus} CPUs / 4)", p)
        p, (t, why) = spmm(mpirun, exe, plans[4], 4, base)
        expect(p.returncode == 0 and t is not None and 1 <= t <= share,
               f"4 ranks, OMP_NUM_THREADS unset, mpirun's binding: {t} threads each ({why}), at most {share}", p)
        whole = min(cpus, len(os.sched_getaffinity(0)))
        p, (t, why) = spmm(mpirun, exe, plans[1], 1, base, launcher=("--bind-to", "none"))
        expect(p.returncode == 0 and t == whole and "1 rank there" in why,
               f"1 rank, OMP_NUM_THREADS unset, unbound: {t} threads ({why}), expected {whole}", p)
        p, (t, why) = spmm(mpirun, exe, plans[4], 4, dict(base, OMP_NUM_THREADS="3"))
        expect(p.returncode == 0 and t == 3 and why.startswith("OMP_NUM_THREADS=3"),
               f"OMP_NUM_THREADS=3 is the user's choice: {t} ({why})", p)
        # More threads than the rank's CPUs: said in the reason, and shiro-spmm warns with the fix.
        if whole >= 2:
            p, (t, why) = spmm(mpirun, exe, plans[1], 1, dict(base, OMP_NUM_THREADS="2"), launcher=("--bind-to", "core"))
            warned = "warning: rank 0's threads outnumber its CPUs" in p.stderr and "--bind-to none" in p.stderr
            expect(p.returncode == 0 and t == 2 and why == "OMP_NUM_THREADS=2; more than the 1 CPU of this rank's binding: "
                   "threads share cores" and warned,
                   f"OMP_NUM_THREADS=2 on one rank bound to a core: said ({why}) and warned ({p.stderr.strip()!r})", p)
            p, (t, why) = spmm(mpirun, exe, plans[1], 1, dict(base, OMP_NUM_THREADS="2"), launcher=("--bind-to", "none"))
            expect(p.returncode == 0 and t == 2 and why == "OMP_NUM_THREADS=2" and "warning" not in p.stderr,
                   f"OMP_NUM_THREADS=2 on one unbound rank of {whole} CPUs: no warning ({why}, {p.stderr.strip()!r})", p)
        else:
            print(f"skip: the binding checks need 2 CPUs ({whole} here)")
        p, (t, why) = spmm(mpirun, exe, plans[1], 1, dict(base, OMP_NUM_THREADS=str(whole + 1)), launcher=("--bind-to", "none"))
        expect(p.returncode == 0 and t == whole + 1 and f"more than the {whole} CPU" in why and "warning" in p.stderr,
               f"OMP_NUM_THREADS={whole + 1} on one unbound rank of {whole} CPUs: said ({why}) and warned", p)
        p, (t, why) = spmm(mpirun, exe, plans[4], 4, dict(base, OMP_NUM_THREADS="1"), extra=("--threads", "2"))
        expect(p.returncode == 0 and t == 2 and why == "the context's option", f"--threads 2 over OMP_NUM_THREADS=1: {t} ({why})", p)
        p, _ = spmm(mpirun, exe, plans[4], 4, base, extra=("--threads", "-1"))
        expect(p.returncode == 2 and "--threads" in p.stderr, "--threads -1 is refused, naming the option", p)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
