#!/usr/bin/env python3
"""`mpirun -np P shiro-plan`: several processes plan one plan, the plan one process plans.

For each matrix and case (R, G, strategy, partition, P; P above the nodes and above R; R above the
rows and G above R; the two-tier strategies hier, group and cola; --machine, whose predicted times
must be one process's, bit for bit; --floor, and by default with a machine, every node's and rank's
row floors and the time floor one process's; auto, the default, whose candidates col, joint, hier, group and
cola are priced as one process prices them and whose kept plan is one process's plan of that
strategy, and with no --partition joint's plan priced on block's and metis's partitions, metis kept
where 3% faster; --compare, whose seven strategies but hybrid have one process's volumes and predictions): the file written by P processes has every dataset and attribute equal to the
single process's (`h5diff`, which compares both: a changed attribute or value fails it, checked
here), verifies (`shiro-plan-dump --verify --matrix`), the same warnings are printed once, and its
--json reports P processes, the same volumes, and a largest-process peak no larger than the sum.
The same (h5diff, --verify) for parts:FILE, with scattered and reversed labels: the rows renumbered
part by part (square: the columns too), then told in the file's numbering again. metis, cut by
PT-Scotch over the processes: the plan verifies, is the same on a second run, and its joint volume
is within 1.5x (+ 8 rows: tiny graphs) of one process's METIS plan; a rectangular matrix is refused.
An R-MAT graph as csr-h5 and as Matrix Market gives the same plan from P processes. One plan is
replayed with `shiro-spmm --check`. Without OMP_NUM_THREADS, P processes take no more threads than
the CPUs.
Errors, reported once (on process 0's stderr) and every process exits non-zero, no file left:
hybrid and metis-vol (exit 2: not planned by several processes yet), a missing
input, an output in a missing directory, a parts file with a rank out of range (its line named),
a bad entry in another process's part of the file (exit
1, its line named as one process names it); and one process killed mid-plan: the job ends within
60 s, non-zero, with neither the plan nor its temporary file left.

usage: dist_plan_check.py BUILD_DIR MATRIX.mtx... [--default-only MATRIX.mtx...]
       (needs mpirun, tests/meson.build's mpi_env; the matrices after --default-only are planned
       only by the default's cases: one where metis's partition wins)
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "lib"))  # checklib
import checklib
from checklib import expect, run

CASES = [  # R, G, strategy, partition, P
    ("8", "4", "joint", "block", 2), ("16", "4", "joint", "nnz", 3), ("8", "2", "col", "block", 4),
    ("6", "2", "row", "nnz", 2), ("5", "1", "block", "block", 2), ("7", "4", "joint", "block", 3),
    ("2", "1", "joint", "block", 3), ("40", "64", "joint", "block", 3),  # G > R, empty ranks (warnings)
    # two-tier: whole nodes to each process (2 nodes on 3 processes: one plans nothing; a short last node)
    ("16", "4", "group", "nnz", 3), ("8", "2", "hier", "block", 2), ("12", "4", "cola", "block", 4),
    ("8", "4", "group", "block", 3), ("5", "2", "group", "nnz", 2)]
AUTO_CASES = [  # R, G, partition (None: not given), P
    ("16", "4", "block", 3), ("12", "4", "nnz", 2), ("8", "2", "block", 4), ("40", "4", "block", 3)]
DEFAULT_CASES = [("16", "4", 3), ("8", "4", 2)]  # R, G, P: auto with no --partition (block or metis weighed)
COMPARE_CASES = [  # R, G, options, P
    ("16", "4", ["--strategy", "group", "--partition", "nnz", "--machine", "tsubame4"], 3),
    ("8", "2", ["--partition", "block"], 2), ("12", "4", ["--strategy", "block", "--machine", "dgx-h100"], 4),
    ("7", "4", ["--strategy", "joint", "--partition", "block"], 3)]
AUTO_STRATEGIES = ("col", "joint", "hier", "group", "cola")
PARTS_CASES = [  # R, G, strategy, labels, P: parts:FILE (rows renumbered part by part; square: columns too)
    ("8", "4", "joint", "scattered", 2), ("16", "4", "col", "scattered", 3), ("8", "2", "row", "reversed", 4),
    ("6", "2", "block", "scattered", 2), ("7", "4", "joint", "reversed", 3), ("16", "4", "group", "scattered", 3),
    ("8", "2", "hier", "reversed", 2)]


def labels(kind, m, R):
    """A parts file's lines: scattered (neighbouring rows on different ranks, some ranks left empty where
    m < R) or reversed (contiguous ranges, the last rows on rank 0)."""
    if kind == "scattered":
        return [(7 * i + i // 3) % R for i in range(m)]
    return [R - 1 - (i * R) // m for i in range(m)]


def floors(j):
    """--json's floor object less the seconds it took (None when there is none)."""
    f = j.get("floor")
    return None if f is None else {k: v for k, v in f.items() if k != "seconds"}

def rows_of(matrix):
    """The row count a Matrix Market file's size line gives."""
    with open(matrix) as f:
        for line in f:
            if not line.startswith("%"):
                return int(line.split()[0])
    return 0


def h5py_edit(path, what):
    """Changes one attribute or one value of a copy (for the check that h5diff sees it); None if h5py is missing."""
    try:
        import h5py
    except ImportError:
        return None
    with h5py.File(path, "r+") as f:
        if what == "attr":
            f["rank_000001"].attrs["s_rows"] = f["rank_000001"].attrs["s_rows"] + 1
        else:
            d = f["rank_000000/col"]
            x = d[...]
            x[0] += 1
            d[...] = x
    return True


def main():
    build = os.path.abspath(sys.argv[1])
    args = sys.argv[2:]
    cut = args.index("--default-only") if "--default-only" in args else len(args)
    matrices = [os.path.abspath(a) for a in args[:cut] + args[cut + 1:]]
    only_default = set(os.path.abspath(a) for a in args[cut + 1:])  # these: the default's partitions only
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    plan_exe = os.path.join(build, "tools", "shiro-plan")
    dump = os.path.join(build, "tools", "shiro-plan-dump")
    spmm = os.path.join(build, "tools", "shiro-spmm")
    gen = os.path.join(build, "tools", "gen", "shiro-gen")
    h5diff = shutil.which("h5diff")
    expect(h5diff is not None, "h5diff (hdf5-tools) is installed")
    with tempfile.TemporaryDirectory() as tmp:
        one, many = os.path.join(tmp, "one.h5"), os.path.join(tmp, "many.h5")

        def both(tag, args, P):
            """args planned by one process (one) and by P (many), --json; their reports, or None."""
            a = run([plan_exe] + args + ["-o", one, "--json", "--quiet"])
            b = run([mpirun, "-np", str(P), plan_exe] + args + ["-o", many, "--json", "--quiet"])
            expect(a.returncode == 0 and b.returncode == 0, f"{tag}: planned by one and by {P} processes", b)
            return None if a.returncode or b.returncode else (json.loads(a.stdout), json.loads(b.stdout))

        def same(tag, fmt_args=()):
            d = run([h5diff, one, many])
            expect(d.returncode == 0, f"{tag}: every dataset and attribute equal to one process's (h5diff)", d)

        for matrix in matrices:
            name = os.path.basename(matrix)
            # auto with no --partition: the fast search plans on block's partition, metis and hypergraph
            # listed as skipped; the exhaustive one prices joint's plan on block's partition (as one
            # process prices it), then on metis's and hypergraph's (as --partition X --strategy joint
            # prices it), each kept where 3% faster than the one kept before (or skipped, saying why),
            # the plan that of --partition KEPT
            for R, G, P in DEFAULT_CASES:
                tag = f"{name} R={R} G={G} the default P={P}"
                base = [matrix, "--ranks", R, "--gpus-per-node", G]
                f = run([mpirun, "-np", str(P), plan_exe] + base + ["-o", many, "--json", "--quiet"])
                jf = json.loads(f.stdout) if f.returncode == 0 else {"candidates": []}
                fp = {k["partition"]: k["status"] for k in jf["candidates"] if k["candidate"] == "partition"}
                expect(jf.get("partition") == "block"
                       and fp == {"block": "kept", "metis": "skipped", "hypergraph": "skipped", "time": "skipped"}
                       and jf.get("effort") == "fast", f"{tag}: the fast search plans on block's partition ({fp})", f)
                tag += " --effort exhaustive"
                b = run([mpirun, "-np", str(P), plan_exe] + base + ["--effort", "exhaustive", "-o", many, "--json",
                                                                    "--quiet"])
                j = run([plan_exe] + base + ["--strategy", "joint", "--partition", "block", "--machine", "tsubame4",
                                             "-o", one, "--json", "--quiet"])
                expect(b.returncode == 0 and j.returncode == 0, f"{tag}: planned", b)
                if b.returncode or j.returncode:
                    continue
                jb = json.loads(b.stdout)
                part = {k["partition"]: k for k in jb["candidates"] if k["candidate"] == "partition"}
                block_s = json.loads(j.stdout)["volumes"]["joint"]["predicted_time_s"]
                kept, best = "block", block_s
                for cand in ("metis", "hypergraph"):  # in the order weighed, each against the one kept before
                    rec = part.get(cand, {})
                    if rec.get("status") == "skipped":
                        expect(bool(rec.get("reason")), f"{tag}: {cand} skipped, saying why", b)
                        continue
                    m = run([mpirun, "-np", str(P), plan_exe] + base + ["--strategy", "joint", "--partition", cand,
                                                                        "--machine", "tsubame4", "-o", one, "--json", "--quiet"])
                    cand_s = json.loads(m.stdout)["volumes"]["joint"]["predicted_time_s"] if m.returncode == 0 else None
                    expect(rec.get("predicted_s") == cand_s,
                           f"{tag}: {cand}'s estimate is joint's plan on it ({rec.get('predicted_s')} against {cand_s})", b)
                    if cand_s is not None and cand_s < 0.97 * best:  # kept iff 3% below the one kept before
                        kept, best = cand, cand_s
                status = {p: k["status"] for p, k in part.items() if k["status"] != "skipped" and p != "time"}
                expect(status == {p: "kept" if p == kept else "weighed" for p in status},
                       f"{tag}: {kept} kept, the others weighed ({status})", b)
                expect(set(part) == {"block", "metis", "hypergraph", "time"} and part["block"]["predicted_s"] == block_s
                       and part["time"]["status"] == "skipped" and jb["partition"] == kept
                       and jb["partition_choice"] == "auto",
                       f"{tag}: block's estimate one process's ({part['block']['predicted_s']} against {block_s}), "
                       f"{kept} kept, the time partition skipped", b)
                k = run([mpirun, "-np", str(P), plan_exe] + base + ["--partition", kept, "-o", one, "--json", "--quiet"])
                expect(k.returncode == 0 and json.loads(k.stdout)["strategy"] == jb["strategy"],
                       f"{tag}: --partition {kept} keeps {jb['strategy']} too", k)
                same(f"{tag}: the plan of --partition {kept}")
            if matrix in only_default:
                continue
            for R, G, strategy, partition, P in CASES:
                tag = f"{name} R={R} G={G} {strategy}/{partition} P={P}"
                args = [matrix, "--ranks", R, "--gpus-per-node", G, "--strategy", strategy, "--partition", partition,
                        "--floor"]
                a = run([plan_exe] + args + ["-o", one, "--json", "--quiet"])
                b = run([mpirun, "-np", str(P), plan_exe] + args + ["-o", many, "--json", "--quiet"])
                expect(a.returncode == 0 and b.returncode == 0 and b.stderr == a.stderr,
                       f"{tag}: planned by one and by {P} processes, quietly, with the same warnings ({a.stderr!r})", b)
                if a.returncode or b.returncode:
                    continue
                ja, jb = json.loads(a.stdout), json.loads(b.stdout)
                expect(jb["processes"] == P and jb["volumes"] == {strategy: {k: v for k, v in ja["volumes"][strategy].items()
                                                                            if not k.startswith("predicted")}}
                       and 0 < jb["peak_rss_bytes"] <= jb["peak_rss_bytes_sum"],
                       f"{tag}: --json: {P} processes, the same volumes, peak <= sum", b)
                expect(floors(jb) == floors(ja) and "rank" in floors(ja),
                       f"{tag}: --floor: every node's and rank's row floors one process's", b)
                same(tag)
                v = run([dump, many, "--verify", "--matrix", matrix])
                expect(v.returncode == 0 and "verified" in v.stdout, f"{tag}: --verify --matrix", v)
            # --machine: the plan priced from every process's programs, as one process prices it
            for R, G, strategy, P, machine in (("16", "4", "joint", 3, "tsubame4"), ("12", "4", "group", 2, "dgx-h100")):
                tag = f"{name} R={R} G={G} {strategy} --machine {machine} P={P}"
                args = [matrix, "--ranks", R, "--gpus-per-node", G, "--strategy", strategy, "--machine", machine, "--n",
                        "16", "--dtype", "double"]
                reports = both(tag, args, P)
                if not reports:
                    continue
                ja, jb = reports
                expect(floors(jb) == floors(ja) and floors(ja)["time_s"] > 0,
                       f"{tag}: the floors, the time floor too, one process's ({floors(jb)['time_s']})")
                expect(jb["volumes"] == ja["volumes"] and "predicted_time_s" in jb["volumes"][strategy]
                       and (jb["machine"], jb["predicted_n"], jb["predicted_dtype"]) == (machine, 16, "double"),
                       f"{tag}: --json: the same volumes and predicted times, bit for bit ({jb['volumes']})")
                same(tag)
            # auto (the default where 1 < G < R): every candidate priced as one process prices it, the
            # fastest kept (joint where equal), the plan one process plans for that strategy directly
            for R, G, partition, P in AUTO_CASES:
                tag = f"{name} R={R} G={G} auto/{partition or '(default)'} P={P}"
                given = ["--partition", partition] if partition else []
                base = [matrix, "--ranks", R, "--gpus-per-node", G]
                c = run([plan_exe] + base + ["--strategy", "auto", "--partition", partition or "block", "--compare",
                                             "-o", one, "--json", "--quiet"])
                b = run([mpirun, "-np", str(P), plan_exe] + base + given + ["-o", many, "--json", "--quiet"])
                expect(c.returncode == 0 and b.returncode == 0, f"{tag}: planned by one (--compare) and {P} processes", b)
                if c.returncode or b.returncode:
                    continue
                jc, jb = json.loads(c.stdout), json.loads(b.stdout)
                one_s = {k: v["predicted_time_s"] for k, v in jc["volumes"].items() if k in AUTO_STRATEGIES}
                priced = {k["strategy"]: k["predicted_s"] for k in jb["candidates"] if k["status"] in ("weighed", "kept")}
                best = "joint"
                for k in AUTO_STRATEGIES:
                    best = k if one_s[k] < one_s[best] else best
                skipped = sorted((k["candidate"], k["partition"] if k["candidate"] == "partition" else k["strategy"])
                                 for k in jb["candidates"] if k["status"] == "skipped")
                want_skipped = [("strategy", "hybrid")]
                expect(priced == one_s and jb["strategy"] == best and jb["strategy_choice"] == "auto"
                       and jb["partition_choice"] == "given" and skipped == want_skipped,
                       f"{tag}: col, joint, hier, group and cola priced as one process prices them "
                       f"({priced} against {one_s}), {best} kept, {want_skipped} skipped", b)
                a = run([plan_exe] + base + ["--strategy", jb["strategy"], "--partition", partition or "block", "-o", one,
                                             "--quiet", "--json"])
                expect(a.returncode == 0, f"{tag}: {jb['strategy']} planned by one process", a)
                if a.returncode:
                    continue
                same(f"{tag}: the plan of --strategy {jb['strategy']}")
                want = {k: v for k, v in jc["volumes"][best].items() if not k.startswith("predicted_stages")}
                got = {k: v for k, v in jb["volumes"][best].items() if not k.startswith("predicted_stages")}
                expect(got == want, f"{tag}: the kept plan's volumes and prediction ({got} against {want})", b)
                expect(floors(jb) == floors(jc), f"{tag}: the floors (by default, as auto predicts) one process's", b)
                s1 = run([plan_exe] + base + ["--partition", partition or "block", "-o", one, "--quiet", "--json"])
                s1s = json.loads(s1.stdout)["strategy"] if s1.returncode == 0 else None
                expect(s1s in ("hybrid", jb["strategy"]), f"{tag}: one process's auto keeps {s1s}: "
                       f"{jb['strategy']}, or hybrid, which several processes do not weigh", s1)
            # --compare: every strategy but hybrid counted (and priced where one process prices it) as
            # one process counts it, the plan the same
            for R, G, extra, P in COMPARE_CASES:
                tag = f"{name} R={R} G={G} --compare {' '.join(extra)} P={P}"
                args = [matrix, "--ranks", R, "--gpus-per-node", G, "--compare"] + extra
                reports = both(tag, args, P)
                if not reports:
                    continue
                ja, jb = reports
                want = {k: v for k, v in ja["volumes"].items() if k != "hybrid"}
                expect(jb["volumes"] == want and len(want) == 7 and jb["strategy"] == ja["strategy"],
                       f"{tag}: seven strategies' volumes and predictions one process's ({jb['volumes']})")
                same(tag)
                if extra != COMPARE_CASES[0][2]:
                    continue
                before = set(os.listdir(os.path.dirname(matrix))) | set(os.listdir(tmp))
                n = run([mpirun, "-np", str(P), plan_exe] + args + ["--json", "--quiet"])  # no -o: no plan, as one process
                after = set(os.listdir(os.path.dirname(matrix))) | set(os.listdir(tmp))
                expect(n.returncode == 0 and json.loads(n.stdout)["plan"] is None and after == before
                       and json.loads(n.stdout)["volumes"] == want,
                       f"{tag}, no -o: the same volumes, no file written ({sorted(after - before)})", n)
            # parts:FILE: the file's rows renumbered as one process renumbers them, their ids and values
            # told in the file's numbering again
            for R, G, strategy, kind, P in PARTS_CASES:
                tag = f"{name} R={R} G={G} {strategy}/parts:{kind} P={P}"
                parts = os.path.join(tmp, "parts.txt")
                with open(parts, "w") as f:
                    f.write("".join(f"{x}\n" for x in labels(kind, rows_of(matrix), int(R))))
                args = [matrix, "--ranks", R, "--gpus-per-node", G, "--strategy", strategy, "--partition", f"parts:{parts}"]
                a = run([plan_exe] + args + ["-o", one, "--quiet"])
                b = run([mpirun, "-np", str(P), plan_exe] + args + ["-o", many, "--quiet"])
                expect(a.returncode == 0 and b.returncode == 0 and b.stderr == a.stderr,
                       f"{tag}: planned by one and by {P} processes, with the same warnings ({a.stderr!r})", b)
                if a.returncode or b.returncode:
                    continue
                same(tag)
                v = run([dump, many, "--verify", "--matrix", matrix])
                expect(v.returncode == 0 and "verified" in v.stdout, f"{tag}: --verify --matrix", v)
            # metis: PT-Scotch's cut, not METIS's: another plan, which verifies and moves about as much
            args = [matrix, "--ranks", "8", "--gpus-per-node", "2", "--strategy", "joint", "--partition", "metis"]
            if os.path.exists(many):
                os.remove(many)
            a = run([plan_exe] + args + ["-o", one, "--json", "--quiet"])
            b = run([mpirun, "-np", "2", plan_exe] + args + ["-o", many, "--json", "--quiet"])
            if "built without PT-Scotch" in b.stderr:
                print(f"skip {name} metis: this build has no PT-Scotch ({b.stderr.strip()})")
            elif a.returncode != 0:  # rectangular: refused alike
                expect(b.returncode == 1 and "needs a square matrix" in a.stderr and "needs a square matrix" in b.stderr
                       and b.stderr.count("shiro-plan:") == 1 and not os.path.exists(many),
                       f"{name} metis: refused by one and by 2 processes alike", b)
            else:
                expect(b.returncode == 0, f"{name} metis: planned by 2 processes", b)
                if b.returncode == 0:
                    va = json.loads(a.stdout)["volumes"]["joint"]["total_rows"]
                    vb = json.loads(b.stdout)["volumes"]["joint"]["total_rows"]
                    v = run([dump, many, "--verify", "--matrix", matrix])
                    expect(v.returncode == 0 and "verified" in v.stdout, f"{name} metis, 2 processes: --verify --matrix", v)
                    expect(vb <= 1.5 * va + 8, f"{name} metis, 2 processes: joint moves {vb} rows, METIS's plan {va}")
                    shutil.copy(many, one)
                    c = run([mpirun, "-np", "2", plan_exe] + args + ["-o", many, "--quiet"])
                    expect(c.returncode == 0, f"{name} metis: planned again", c)
                    same(f"{name} metis, 2 processes, run twice")
        # h5diff sees a changed attribute and a changed value (so the checks above can fail)
        if matrices:
            run([plan_exe, matrices[0], "--ranks", "4", "--strategy", "joint", "-o", one, "--quiet"])
            for what in ("attr", "value"):
                shutil.copy(one, many)
                if h5py_edit(many, what) is None:  # no h5py: another strategy's plan differs in both
                    print(f"h5py is missing: h5diff is checked on another strategy's plan instead of a changed {what}")
                    run([plan_exe, matrices[0], "--ranks", "4", "--strategy", "col", "-o", many, "--quiet"])
                d = run([h5diff, one, many])
                expect(d.returncode == 1, f"h5diff tells a changed {what} apart", d)
            # a plan from P processes replays and checks out
            run([mpirun, "-np", "2", plan_exe, matrices[0], "--ranks", "4", "--gpus-per-node", "2", "--strategy", "joint",
                 "-o", many, "--quiet"])
            s = run([mpirun, "-np", "4", spmm, many, "--direction", "both", "--n", "3", "--iters", "1", "--check", matrices[0]])
            expect(s.returncode == 0 and s.stdout.count(" ok\n") == 2, "a plan from 2 processes: shiro-spmm --check", s)
        # threads by default (OMP_NUM_THREADS unset): the node's CPUs shared, never more threads than cores
        if matrices:
            env = {k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"}
            for P in (2, 4):
                b = run([mpirun, "-np", str(P), plan_exe, matrices[0], "--ranks", "8", "--strategy", "joint", "-o", many,
                         "--json", "--quiet"], env=env)
                t = json.loads(b.stdout)["threads"] if b.returncode == 0 else 0
                cpus = os.cpu_count() or 1
                expect(b.returncode == 0 and 1 <= t and t * P <= max(P, cpus),
                       f"P={P}, OMP_NUM_THREADS unset: {t} threads a process on {cpus} CPUs", b)
        # csr-h5 and Matrix Market: the same plan from 3 processes
        rmat_mtx, rmat_h5 = os.path.join(tmp, "rmat.mtx"), os.path.join(tmp, "rmat.h5")
        g1 = run([gen, "rmat", "--scale", "11", "--edge-factor", "8", "-o", rmat_mtx])
        g2 = run([gen, "rmat", "--scale", "11", "--edge-factor", "8", "--format", "csr-h5", "-o", rmat_h5])
        expect(g1.returncode == 0 and g2.returncode == 0, "shiro-gen: R-MAT scale 11 as mtx and csr-h5", g2)
        args = ["--ranks", "16", "--gpus-per-node", "4", "--strategy", "joint", "--partition", "nnz", "--quiet"]
        a = run([plan_exe, rmat_mtx] + args + ["-o", one])
        b = run([mpirun, "-np", "3", plan_exe, rmat_h5, "--format", "csr-h5"] + args + ["-o", many])
        expect(a.returncode == 0 and b.returncode == 0, "R-MAT: planned from mtx by one, from csr-h5 by 3 processes", b)
        same("R-MAT csr-h5, 3 processes")
        # R-MAT files list duplicate edges, summed into values of 2 and more: the plans keep those values
        # (a pattern file's plan stores none only where all are 1) and verify against the file
        for which, path in (("one process", one), ("3 processes", many)):
            v = run([dump, path, "--verify", "--matrix", rmat_mtx])
            expect(v.returncode == 0 and "verified" in v.stdout, f"R-MAT (duplicates summed), {which}: --verify --matrix", v)
        # errors: reported once, every process non-zero, no file
        bad = os.path.join(tmp, "bad.mtx")
        with open(bad, "w") as f:
            f.write("%%MatrixMarket matrix coordinate pattern general\n400 400 2000\n")
            f.write("".join(f"{1 + (7 * i) % 400} {1 + (13 * i) % 400}\n" if i != 1500 else "3 x\n" for i in range(2000)))
        if os.path.exists(many):
            os.remove(many)
        one_err = run([plan_exe, bad, "--ranks", "4", "--strategy", "joint", "-o", many, "--quiet"]).stderr.strip()
        p = run([mpirun, "-np", "3", plan_exe, bad, "--ranks", "4", "--strategy", "joint", "-o", many, "--quiet"])
        expect(p.returncode == 1 and one_err.endswith("bad.mtx:1503: expected column index, found 'x'")
               and p.stderr.count("shiro-plan:") == 1 and one_err.split("shiro-plan: ")[1] in p.stderr
               and not os.path.exists(many), "a bad entry in process 2's part: exit 1, its line named once", p)
        for what, extra, rc, needle in (
                ("hybrid", ["--strategy", "hybrid"], 2, "--strategy hybrid is not planned by several processes yet"),
                ("metis-vol", ["--strategy", "joint", "--partition", "metis-vol"], 2, "--partition metis-vol is not planned "
                                                                                     "by several processes yet"),
                ("a parts file with a rank out of range", ["--strategy", "joint", "--partition", "PARTS"], 1,
                 "badparts.txt:3: "),
                ("a missing input", ["--strategy", "joint", "MISSING"], 1, "missing.mtx: cannot open"),
                ("a missing directory", ["--strategy", "joint", "OUT"], 1, "cannot create a file there")):
            out = os.path.join(tmp, "nodir", "x.h5") if "OUT" in extra else many
            matrix = os.path.join(tmp, "missing.mtx") if "MISSING" in extra else rmat_mtx
            if "PARTS" in extra:
                badparts = os.path.join(tmp, "badparts.txt")
                with open(badparts, "w") as f:
                    f.write("".join("9\n" if i == 2 else "1\n" for i in range(rows_of(rmat_mtx))))
                extra = [f"parts:{badparts}" if x == "PARTS" else x for x in extra]
            extra = [x for x in extra if x not in ("MISSING", "OUT")]
            if os.path.exists(many):
                os.remove(many)
            p = run([mpirun, "-np", "3", plan_exe, matrix, "--ranks", "8"] + extra + ["-o", out, "--quiet"])
            expect(p.returncode == rc and p.stderr.count(needle) == 1 and p.stderr.count("shiro-plan:") == 1
                   and not os.path.exists(out), f"{what}: exit {rc}, said once, no file", p)
        # one process killed mid-plan (once the plan's temporary file exists): no hang, no file
        big = os.path.join(tmp, "big.mtx")
        run([gen, "rmat", "--scale", "17", "--edge-factor", "16", "-o", big])
        for f in os.listdir(tmp):
            if f.startswith("many.h5"):
                os.remove(os.path.join(tmp, f))
        job = subprocess.Popen([mpirun, "-np", "2", plan_exe, big, "--ranks", "256", "--gpus-per-node", "4", "--strategy",
                                "joint", "-o", many, "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
        victim = None
        deadline = time.time() + 300  # a loaded machine reaches the writing late: wait for it, not for a count
        while time.time() < deadline:  # the second process (OMPI_COMM_WORLD_RANK=1), once the programs are being written
            time.sleep(0.005)
            if job.poll() is not None:
                break
            if not any(f.startswith("many.h5.tmp") for f in os.listdir(tmp)):
                continue
            for pid in os.listdir("/proc"):
                try:
                    if pid.isdigit() and b"OMPI_COMM_WORLD_RANK=1\0" in open(f"/proc/{pid}/environ", "rb").read() + b"\0" \
                            and many.encode() in open(f"/proc/{pid}/cmdline", "rb").read():  # this job's, no other
                        victim = int(pid)
                except OSError:
                    pass
            if victim:
                os.kill(victim, signal.SIGKILL)
                break
        try:
            job.communicate(timeout=60)
            ended = True
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            job.communicate()
            ended = False
        left = [f for f in os.listdir(tmp) if f.startswith("many.h5")]
        expect(victim is not None and ended and job.returncode != 0 and not left,
               f"process 1 killed: the job ends within 60 s, non-zero ({job.returncode}), nothing left ({left})")
    print(f"{checklib.failures} failures")
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
