#!/usr/bin/env python3
"""plan_threads_check.py BUILD_ROOT MATRIX — shiro-plan writes the same bytes
whatever --threads says.

Programs are built in parallel and written to the file one by one as they
are finished (in rank order), so this is what keeps the file independent of
which thread built what: for every strategy and for the block, nnz and metis
partitions, plans made with 1, 2 and 3 threads must be byte-identical.
metis is left out only when this build has no METIS (BUILD_ROOT/shiro_config.h
says SHIRO_HAVE_METIS 0), and then shiro-plan must refuse it with exit 1 and
a message naming METIS; with METIS, a metis failure is a failure. Also checks that a write failing part way (the disk
full) exits with an error and leaves no file behind.
Exit status 0 if all hold; each failure is printed.
"""
import hashlib
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile

failures = []


def plan_digest(plan, matrix, out, args, **kw):
    """Runs shiro-plan MATRIX -o OUT ARGS; (exit status, stderr, sha256 of OUT or None)."""
    r = subprocess.run([plan, matrix, "--quiet", "-o", out] + args, capture_output=True, text=True, **kw)
    digest = None
    if r.returncode == 0:
        with open(out, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    return r.returncode, r.stderr.strip(), digest


def build_has_metis(build):
    """SHIRO_HAVE_METIS from BUILD/shiro_config.h (meson's configuration of this build); exits 1 if it is not there."""
    path = os.path.join(build, "shiro_config.h")
    try:
        with open(path) as f:
            m = re.search(r"^#define SHIRO_HAVE_METIS ([01])$", f.read(), re.M)
    except OSError as e:
        m, why = None, str(e)
    else:
        why = "no '#define SHIRO_HAVE_METIS 0|1' line"
    if not m:
        print("FAIL %s: %s: cannot tell whether this build has METIS" % (path, why))
        sys.exit(1)
    return m.group(1) == "1"


def main():
    build, matrix = sys.argv[1], sys.argv[2]
    plan = os.path.join(build, "tools", "shiro-plan")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "p.h5")
        has_metis = build_has_metis(build)
        if not has_metis:
            # Built without METIS: --partition metis must be refused, clearly.
            rc, err, _ = plan_digest(plan, matrix, out, ["--ranks", "2", "--partition", "metis"])
            if rc != 1 or "METIS" not in err:
                failures.append("--partition metis without METIS: exit %d (want 1 and a message naming METIS): %s"
                                % (rc, err))
            print("this build has no METIS (shiro_config.h): metis partitions not compared")
        cases = 0
        for part in ["block", "nnz"] + (["metis"] if has_metis else []):
            for strategy in ["block", "col", "row", "joint", "hier", "group", "cola", "hybrid"]:
                digests = set()
                for threads in (1, 2, 3):
                    rc, err, digest = plan_digest(plan, matrix, out, ["--ranks", "12", "--gpus-per-node", "4",
                                                                      "--strategy", strategy, "--partition", part,
                                                                      "--threads", str(threads)])
                    if rc != 0:
                        failures.append("%s %s --threads %d: exit %d: %s" % (part, strategy, threads, rc, err))
                    digests.add(digest)
                if len(digests) != 1:
                    failures.append("%s %s: the plan differs between 1, 2 and 3 threads" % (part, strategy))
                cases += 1
        # A write that fails part way (a file size limit: the disk full
        # after some ranks are written): exit status 1, a message, and no
        # file left, neither the plan nor its temporary.
        full = os.path.join(tmp, "full")
        os.mkdir(full)

        def small_disk():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() fails with EFBIG instead
            resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 10, 64 << 10))

        rc, err, _ = plan_digest(plan, matrix, os.path.join(full, "p.h5"),
                                 ["--ranks", "12", "--gpus-per-node", "4", "--threads", "2"], preexec_fn=small_disk)
        if rc != 1 or "writing the plan failed" not in err:
            failures.append("write failing part way: exit %d: %s" % (rc, err))
        if os.listdir(full):
            failures.append("failed write left files: %s" % os.listdir(full))
        print("%d strategy x partition cases, 3 thread counts each" % cases)
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
