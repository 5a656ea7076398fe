#!/usr/bin/env python3
"""verify_scale_check.py BUILD_ROOT MATRIX — shiro-plan-dump --verify costs O(the plan), not O(R²).

Plans MATRIX (email-Eu-core: 1005 rows, 25,571 nonzeros) with joint, G = 8, for R = 256 and
R = 4096 (three quarters of its ranks own no row; ~25,000 messages), verifies both against the
matrix, and compares the CPU time (user + system, of the verify alone) of the two: 16 times the
ranks must cost less than 20 times the time. CPU time, not wall time, and a ratio, not a bound
in seconds, so that a loaded machine does not make it fail.

What it catches: anything in the verify that grows as R² or as messages² — the envelope
checked again for every rank mapped (a pass over all of the file's metadata, which grows with
R), each receive paired with its send by a scan of the stage's sends, the owner of a row found
by walking the empty ranks, the rank of a local-matrix nonzero found by walking from rank 0.
Measured on the 2-core development machine: the verify of main at 7aaaa2c (all four of those)
took 0.60 to 0.88 s (R = 256) and 42.6 to 43.6 s (R = 4096) of CPU, ratio 49 to 71 (this test
fails on it); with them gone, 0.33 to 0.36 s and 3.2 to 3.5 s, ratio 9.4 to 10.6.
Also --verify --rank P (one rank's part by itself) on the first, a middle and the last rank, and
its refusal of a rank the plan does not have.
Exit status 0 if all hold; each failure is printed.
"""
import os
import resource
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "lib"))  # checklib
import checklib
from checklib import expect, run

RATIO_MAX = 20.0  # 16x the ranks: linear is ~10 here, the quadratic verify was 49 to 71


def cpu_of(cmd, timeout):
    """Runs cmd; (its process, the CPU seconds it used, user + system)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    proc = run(cmd, timeout=timeout)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return proc, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main():
    build, matrix = sys.argv[1], sys.argv[2]
    plan_exe = os.path.join(build, "tools", "shiro-plan")
    dump_exe = os.path.join(build, "tools", "shiro-plan-dump")
    cpu = {}
    with tempfile.TemporaryDirectory() as tmp:
        for ranks in (256, 4096):
            path = os.path.join(tmp, "p%d.shiro.h5" % ranks)
            proc = run([plan_exe, matrix, "--quiet", "--ranks", str(ranks), "--gpus-per-node", "8", "--strategy", "joint",
                        "--threads", "1", "-o", path], timeout=600)
            if not expect(proc.returncode == 0, "planned %s for R = %d" % (os.path.basename(matrix), ranks), proc):
                return 1
            proc, cpu[ranks] = cpu_of([dump_exe, path, "--verify", "--matrix", matrix], timeout=600)
            if not expect(proc.returncode == 0 and ": verified:" in proc.stdout,
                          "R = %d: the plan verifies against the matrix (%.2f s of CPU)" % (ranks, cpu[ranks]), proc):
                return 1
            for rank in (0, ranks // 2, ranks - 1):  # --verify --rank: one rank's part by itself
                proc = run([dump_exe, path, "--verify", "--rank", str(rank), "--matrix", matrix], timeout=120)
                expect(proc.returncode == 0 and "rank %d verified by itself" % rank in proc.stdout,
                       "R = %d: rank %d verifies by itself" % (ranks, rank), proc)
            proc = run([dump_exe, path, "--verify", "--rank", str(ranks)], timeout=120)
            expect(proc.returncode == 2 and "--rank %d: the plan has ranks 0..%d" % (ranks, ranks - 1) in proc.stderr,
                   "R = %d: --verify --rank %d refused with exit 2, naming the ranks" % (ranks, ranks), proc)
    ratio = cpu[4096] / max(cpu[256], 0.01)
    expect(ratio < RATIO_MAX, "R = 4096 verifies in %.1f times the CPU time of R = 256 (at most %g: 16 times the ranks; "
           "the quadratic verify took 49 to 71 times)" % (ratio, RATIO_MAX))
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
