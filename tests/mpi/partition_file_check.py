#!/usr/bin/env python3
"""shiro-plan --partition parts:FILE: the application's partition, one rank id per row (gpmetis's format).

Replays: for a square and a rectangular matrix, partitions written here (fixed seed), flat and
two-tier plans; each rank owns the rows the file gives it (square: B rows follow C rows;
rectangular: B rows block over the columns), `shiro-plan-dump --verify --matrix` proves the plan
and its transposed program, and `shiro-spmm --direction both --check` passes. A file that leaves a
rank empty plans with the warning; CRLF line ends and a missing last newline are accepted.
Errors: wrong line counts, a rank out of range or equal to --ranks, negative, not a number, an
empty line, a missing file: exit 1, the message names the file and line, no plan left behind;
`parts:` without a file: exit 2.

usage: partition_file_check.py BUILD_DIR SQUARE.mtx RECTANGULAR.mtx   (needs mpirun, tests/meson.build's mpi_env)
"""
import json
import os
import random
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "lib"))  # checklib
import checklib
from checklib import expect, run


def shape(matrix):
    with open(matrix) as f:
        for line in f:
            if not line.startswith("%"):
                m, k, _ = (int(x) for x in line.split())
                return m, k


def write(path, labels, end="\n", last_newline=True):
    with open(path, "w", newline="") as f:
        f.write(end.join(str(x) for x in labels) + (end if last_newline else ""))


def main():
    build, square, rect = (os.path.abspath(a) for a in sys.argv[1:4])
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(build, "tools", "shiro-plan")
    dump = os.path.join(build, "tools", "shiro-plan-dump")
    spmm = os.path.join(build, "tools", "shiro-spmm")
    rng = random.Random(18)
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "p.shiro.h5")
        parts = os.path.join(tmp, "rows.parts")
        for matrix in (square, rect):
            name = os.path.basename(matrix)
            m, k = shape(matrix)
            for ranks, gpn, strategy, style in (("3", "1", "joint", "lf"), ("4", "2", "group", "crlf"),
                                                 ("4", "2", "cola", "nolast"), ("4", "1", "row", "empty")):
                R = int(ranks)
                used = R - 1 if style == "empty" else R
                labels = [rng.randrange(used) for _ in range(m)]
                write(parts, labels, "\r\n" if style == "crlf" else "\n", style != "nolast")
                tag = f"{name} {strategy} R={ranks} G={gpn} ({style})"
                p = run([plan_exe, matrix, "--ranks", ranks, "--gpus-per-node", gpn, "--strategy", strategy,
                         "--partition", "parts:" + parts, "-o", plan])
                expect(p.returncode == 0 and (("own no rows" in p.stderr) == (style == "empty")),
                       f"{tag}: planned{' with the empty-rank warning' if style == 'empty' else ''}", p)
                if p.returncode != 0:
                    continue
                d = run([dump, plan, "--json"])
                summary = json.loads(d.stdout)["rank_summary"] if d.returncode == 0 else []
                want_c = [labels.count(r) for r in range(R)]
                want_b = want_c if m == k else [(r + 1) * k // R - r * k // R for r in range(R)]
                expect([s["c_rows"] for s in summary] == want_c and [s["b_rows"] for s in summary] == want_b
                       and json.loads(d.stdout)["partition"] == "parts",
                       f"{tag}: each rank owns the file's rows ({want_c}), B rows {'follow' if m == k else 'block'}", d)
                v = run([dump, plan, "--verify", "--matrix", matrix])
                expect(v.returncode == 0 and "verified" in v.stdout and "transposed program" in v.stdout,
                       f"{tag}: --verify --matrix (forward and transposed)", v)
                s = run([mpirun, "-np", ranks, spmm, plan, "--direction", "both", "--n", "3", "--iters", "1",
                         "--check", matrix])
                expect(s.returncode == 0 and s.stdout.count(" ok\n") == 2,
                       f"{tag}: shiro-spmm --direction both --check", s)
        # Bad files: exit 1, the file and line named, no plan left.
        m, _ = shape(square)
        good = [i % 4 for i in range(m)]
        bad_cases = [
            ("one line short", "\n".join(map(str, good[:-1])) + "\n", f"{m - 1} lines, the matrix has {m} rows"),
            ("one line too many", "\n".join(map(str, good + [0])) + "\n", f":{m + 1}: more lines than the {m} rows"),
            ("a trailing blank line", "\n".join(map(str, good)) + "\n\n", f":{m + 1}: more lines than the {m} rows"),
            ("rank = --ranks", "\n".join(map(str, good[:4] + [4] + good[5:])) + "\n", ":5: rank 4 is out of range 0..3 (--ranks 4)"),
            ("rank 99", "\n".join(map(str, good[:9] + [99] + good[10:])) + "\n", ":10: rank 99 is out of range 0..3"),
            ("negative rank", "\n".join(map(str, [-1] + good[1:])) + "\n", ":1: rank -1 is out of range 0..3"),
            ("not a number", "\n".join(map(str, good[:2] + ["x"] + good[3:])) + "\n", ":3: expected a rank id (an integer 0..3), found 'x'"),
            ("a fraction", "\n".join(map(str, good[:2] + ["1.5"] + good[3:])) + "\n", ":3: expected a rank id (an integer 0..3), found '1.5'"),
            ("two numbers", "\n".join(map(str, good[:6] + ["1 2"] + good[7:])) + "\n", ":7: expected a rank id (an integer 0..3), found '1 2'"),
            ("an empty line", "\n".join(map(str, good[:6] + [""] + good[7:])) + "\n", ":7: an empty line, expected a rank id (0..3)"),
            ("an empty file", "", f"0 lines, the matrix has {m} rows"),
        ]
        for what, text, needle in bad_cases:
            with open(parts, "w") as f:
                f.write(text)
            if os.path.exists(plan):
                os.remove(plan)
            p = run([plan_exe, square, "--ranks", "4", "--partition", "parts:" + parts, "-o", plan, "--quiet"])
            expect(p.returncode == 1 and (parts + needle if needle.startswith(":") else needle) in p.stderr
                   and parts in p.stderr and not os.path.exists(plan),
                   f"{what}: exit 1, '{needle}' named with the file, no plan written", p)
        missing = os.path.join(tmp, "missing.parts")
        p = run([plan_exe, square, "--ranks", "4", "--partition", "parts:" + missing, "-o", plan, "--quiet"])
        expect(p.returncode == 1 and f"{missing}: cannot open the partition of the rows" in p.stderr,
               "a missing file: exit 1, named", p)
        p = run([plan_exe, square, "--ranks", "4", "--partition", "parts:", "-o", plan, "--quiet"])
        expect(p.returncode == 2 and "--partition parts:FILE: no file named" in p.stderr, "parts: without a file: exit 2", p)
    print(f"{checklib.failures} failures")
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
