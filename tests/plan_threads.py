#!/usr/bin/env python3
"""plan_threads.py BUILD_ROOT MATRIX — shiro-plan writes the same bytes
whatever --threads says.

Programs are built in parallel and written to the file one by one as they
are finished (in rank order), so this is what keeps the file independent of
which thread built what: for every strategy and for the block, nnz and metis
(when built with METIS) partitions, plans made with 1, 2 and 3 threads must
be byte-identical. Also checks that a write failing part way (the disk
full) exits with an error and leaves no file behind.
Exit status 0 if all hold; each failure is printed.
"""
import hashlib
import os
import resource
import signal
import subprocess
import sys
import tempfile

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL", what)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def main():
    build, matrix = sys.argv[1], sys.argv[2]
    plan = os.path.join(build, "tools", "shiro-plan")
    with tempfile.TemporaryDirectory() as tmp:
        probe = subprocess.run([plan, matrix, "--ranks", "2", "--partition", "metis", "--quiet",
                                "-o", os.path.join(tmp, "probe.h5")], capture_output=True, text=True)
        partitions = ["block", "nnz"] + (["metis"] if probe.returncode == 0 else [])
        cases = 0
        for part in partitions:
            for strategy in ["block", "col", "row", "joint", "hier", "group"]:
                digests = {}
                for threads in (1, 2, 3):
                    out = os.path.join(tmp, "p%d.h5" % threads)
                    r = subprocess.run([plan, matrix, "--ranks", "12", "--gpus-per-node", "4", "--strategy", strategy,
                                        "--partition", part, "--threads", str(threads), "--quiet", "-o", out],
                                       capture_output=True, text=True)
                    check(r.returncode == 0, "%s %s --threads %d: exit %d: %s" % (part, strategy, threads,
                                                                                r.returncode, r.stderr.strip()))
                    if r.returncode == 0:
                        digests[threads] = sha(out)
                check(len(set(digests.values())) == 1,
                      "%s %s: plans differ between thread counts %s" % (part, strategy, sorted(digests)))
                cases += 1
        # A write that fails part way (a file size limit: the disk full
        # after some ranks are written): exit status 1, a message, and no
        # file left, neither the plan nor its temporary.
        full = os.path.join(tmp, "full")
        os.mkdir(full)
        out = os.path.join(full, "p.h5")

        def small_disk():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

        r = subprocess.run([plan, matrix, "--ranks", "12", "--gpus-per-node", "4", "--threads", "2", "--quiet",
                            "-o", out], capture_output=True, text=True, preexec_fn=small_disk)
        check(r.returncode == 1 and "writing the plan failed" in r.stderr,
              "write failing part way: exit %d: %s" % (r.returncode, r.stderr.strip()))
        check(os.listdir(full) == [], "failed write left files: %s" % os.listdir(full))
        print("%d strategy x partition cases, 3 thread counts each" % cases)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
