#!/usr/bin/env python3
"""shiro-bench-cpu (tools/bench) on small real plans: every mode prints its keys with finite
numbers, for R = 1 and 2, float and double; bad arguments are exit 2 with a message.

usage: bench_cpu_check.py BUILD_DIR MATRIX
"""
import math
import os
import shutil
import subprocess
import sys
import tempfile

KEYS = {
    "call": ["call_ms"],
    "local": ["local1_ms", "localT_ms"],
    "all": ["call_ms", "local1_ms", "localT_ms", "nopoll_ms", "window_ms", "nopoll_window_ms", "comm_ms", "comp_ms",
            "tag_local_ms"],
}
EXCHANGE_KEYS = ["overlap", "nopoll_overlap", "overlap_med", "nopoll_overlap_med", "pack_ms", "pack_GBs", "memcpy_GBs", "unpack_ms", "unpack_GBs"]


def main():
    build, matrix = sys.argv[1], sys.argv[2]
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(build, "tools", "shiro-plan")
    bench = os.path.join(build, "tools", "bench", "shiro-bench-cpu")
    failures = 0

    def fail(msg):
        nonlocal failures
        failures += 1
        print("FAIL " + msg)

    with tempfile.TemporaryDirectory() as tmp:
        for r in ("1", "2"):
            plan = os.path.join(tmp, f"p{r}.h5")
            subprocess.run([plan_exe, matrix, "--ranks", r, "-o", plan, "--quiet"], check=True)
            for only in ("call", "local", "all"):
                t = subprocess.run([mpirun, "-np", r, bench, plan, "--n", "1,7", "--dtype", "double,float", "--reps", "2",
                                    "--ms", "1", "--only", only], capture_output=True, text=True, timeout=300)
                lines = [l for l in t.stdout.splitlines() if l.startswith("bench-cpu ")]
                if t.returncode != 0 or len(lines) != 4:
                    fail(f"R={r} --only {only}: exit {t.returncode}, {len(lines)} lines (expected 4)\n{t.stdout}{t.stderr}")
                    continue
                for line in lines:
                    kv = dict(f.split("=", 1) for f in line.split()[1:])
                    want = KEYS[only] + (EXCHANGE_KEYS if only == "all" and r != "1" else [])
                    for k in want:
                        try:
                            ok = math.isfinite(float(kv[k])) and ("overlap" in k or float(kv[k]) >= 0)
                        except (KeyError, ValueError):
                            ok = False
                        if not ok:
                            fail(f"R={r} --only {only}: {k} missing or not a finite number in: {line}")
                print(f"ok   R={r} --only {only}: {len(lines)} lines")
        for args, what in (([], "no plan"), (["x.h5", "--n", "0"], "--n 0"), (["x.h5", "--only", "some"], "--only some"),
                           (["x.h5", "--dtype", "half"], "--dtype half")):
            t = subprocess.run([mpirun, "-np", "1", bench] + args, capture_output=True, text=True, timeout=60)
            if t.returncode != 2 or "shiro-bench-cpu" not in t.stderr:
                fail(f"{what}: exit {t.returncode} (expected 2 with a message), stderr: {t.stderr.strip()}")
            else:
                print(f"ok   {what}: exit 2: {t.stderr.strip().splitlines()[0]}")
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
