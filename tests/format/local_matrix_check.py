#!/usr/bin/env python3
"""shiro_plan_get_local_matrix on every rank against the Matrix Market file, read here.

    local_matrix_check.py BUILD MATRIX [--strategies S,..] [--partitions P,..] [--ranks R[:G],..]
    local_matrix_check.py BUILD --old-plan PLAN.gz    a format 2.0 plan: a clear SHIRO_ERR_VERSION
    local_matrix_check.py BUILD MATRIX --dump-columns  shiro-plan-dump's table: its "B sent" and
                                                       "part sent" columns are the rows each rank sends

Plans MATRIX for every strategy x partition x ranks, runs test_local_matrix
(each rank's rows of A from the plan: global row ids, global columns, values)
and compares them with the matrix as this script reads it with its own parser:
coordinate real/integer/pattern, general/symmetric/skew-symmetric, duplicates
summed in file order. Every row of A must belong to exactly one rank, with its
columns increasing and its values bit for bit (pattern files: has_values 0 and
every value 1).
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile


def read_mtx(path):
    """(m, k, rows, has_values): rows[i] = {j: value} of the expanded matrix."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        banner = f.readline().split()
        field, symmetry = banner[3].lower(), banner[4].lower()
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        m, k, _ = (int(x) for x in line.split())
        rows = {}
        for line in f:
            w = line.split()
            if not w or w[0].startswith("%"):
                continue
            i, j = int(w[0]) - 1, int(w[1]) - 1
            v = 1.0 if field == "pattern" else float(w[2])
            rows.setdefault(i, {})
            rows[i][j] = rows[i].get(j, 0.0) + v
            if i != j and symmetry in ("symmetric", "skew-symmetric", "hermitian"):
                rows.setdefault(j, {})
                mv = -v if symmetry == "skew-symmetric" else v
                rows[j][i] = rows[j].get(i, 0.0) + mv
    return m, k, rows, field != "pattern"


def parse_dump(text):
    """{rank: (nnz, has_values, {global row: [(j, v), ...]})} from test_local_matrix's output."""
    out, cur = {}, None
    for line in text.splitlines():
        w = line.split()
        if w[0] == "rank":
            cur = int(w[1])
            out[cur] = (int(w[5]), int(w[7]), {})
        elif w[0] == "row":
            out[cur][2][int(w[1])] = [(int(p.split(":")[0]), float(p.split(":")[1])) for p in w[2:]]
    return out


def compare(mtx, dump):
    """A list of differences between the ranks' rows and the matrix (empty: equal)."""
    m, _, rows, has_values = mtx
    errs, seen = [], {}
    for r, (nnz, hv, lrows) in sorted(dump.items()):
        if nnz != sum(len(x) for x in lrows.values()):
            errs.append(f"rank {r}: nnz {nnz} but {sum(len(x) for x in lrows.values())} entries listed")
        if nnz and hv != int(has_values):
            errs.append(f"rank {r}: has_values {hv}, the file {'has' if has_values else 'has no'} values")
        for g, ents in lrows.items():
            if g in seen:
                errs.append(f"row {g} on ranks {seen[g]} and {r}")
            seen[g] = r
            want = sorted(rows.get(g, {}).items())
            if [j for j, _ in ents] != [j for j, _ in want]:
                errs.append(f"rank {r} row {g}: columns {[j for j, _ in ents][:8]}..., the file has {[j for j, _ in want][:8]}...")
            elif [v for _, v in ents] != [v for _, v in want]:
                errs.append(f"rank {r} row {g}: values {[v for _, v in ents][:4]}..., the file has {[v for _, v in want][:4]}...")
    missing = [i for i in range(m) if i not in seen]
    if missing:
        errs.append(f"rows {missing[:8]} on no rank")
    return errs


def old_plan(build, gz):
    """A 2.0 plan: every rank's get_local_matrix fails with SHIRO_ERR_VERSION naming the version."""
    exe = os.path.join(build, "tests", "format", "test_local_matrix")
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "old.shiro.h5")
        with gzip.open(gz, "rb") as src, open(plan, "wb") as dst:
            shutil.copyfileobj(src, dst)
        t = subprocess.run([exe, plan], capture_output=True, text=True, timeout=120)
    if t.returncode == 3 and "format 2.0" in t.stdout and "plan the matrix again" in t.stdout:
        print(f"ok   {os.path.basename(gz)}: {t.stdout.strip()}")
        print("1 runs, 0 failures")
        return 0
    print(f"FAIL {os.path.basename(gz)}: exit {t.returncode}, want 3 and a message naming format 2.0\n{t.stdout}{t.stderr}")
    return 1


def dump_columns(build, matrix):
    """shiro-plan-dump's per-rank table names what it counts: "B sent" and "part sent" are the JSON's
    b_rows_sent and partial_rows_sent (rows SENT), not b_rows (rows owned)."""
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "d.shiro.h5")
        subprocess.run([os.path.join(build, "tools", "shiro-plan"), matrix, "--ranks", "4", "--gpus-per-node", "2",
                        "--strategy", "group", "-o", plan, "--quiet"], check=True)
        dump = os.path.join(build, "tools", "shiro-plan-dump")
        text = subprocess.run([dump, plan], capture_output=True, text=True, check=True).stdout
        js = json.loads(subprocess.run([dump, plan, "--json"], capture_output=True, text=True, check=True).stdout)
    lines = text.splitlines()
    head = next((l for l in lines if l.split()[:1] == ["rank"]), "")
    cols = [c.strip() for c in head.replace("C rows", "C_rows").replace("B sent", "B_sent").replace("part sent", "part_sent")
            .replace("nnz own", "nnz_own").replace("nnz others", "nnz_others").split()]
    if "B rows" in head or "B_sent" not in cols or "part_sent" not in cols:
        fails.append(f"table header {head.strip()!r}: want 'B sent' and 'part sent', no 'B rows'")
    else:
        rows = {int(l.split()[0]): l.split() for l in lines if l.split() and l.split()[0].isdigit()}
        for rs in js["rank_summary"]:
            got = rows.get(rs["rank"])
            want = (rs["b_rows_sent"], rs["partial_rows_sent"])
            if not got or (int(got[cols.index("B_sent")]), int(got[cols.index("part_sent")])) != want:
                fails.append(f"rank {rs['rank']}: table {got}, JSON sent B/partial rows {want}")
    for f in fails:
        print("FAIL " + f)
    print(f"{'ok  ' if not fails else 'FAIL'} shiro-plan-dump's columns: {head.strip()}")
    print(f"1 runs, {len(fails)} failures")
    return 1 if fails else 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("matrix", nargs="?")
    ap.add_argument("--strategies", default="joint,group")
    ap.add_argument("--partitions", default="block,nnz")
    ap.add_argument("--ranks", default="1,3,4:2")
    ap.add_argument("--old-plan")
    ap.add_argument("--dump-columns", action="store_true")
    a = ap.parse_args()
    if a.old_plan:
        return old_plan(a.build, a.old_plan)
    if a.dump_columns:
        return dump_columns(a.build, a.matrix)
    mtx = read_mtx(a.matrix)
    plan_exe = os.path.join(a.build, "tools", "shiro-plan")
    exe = os.path.join(a.build, "tests", "format", "test_local_matrix")
    runs = failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "t.shiro.h5")
        for part in a.partitions.split(","):
            for strategy in a.strategies.split(","):
                for entry in a.ranks.split(","):
                    r, g = (entry.split(":") + ["1"])[:2]
                    tag = f"{os.path.basename(a.matrix)} {strategy} {part} R={r} G={g}"
                    p = subprocess.run([plan_exe, a.matrix, "--ranks", r, "--gpus-per-node", g, "--strategy", strategy,
                                        "--partition", part, "-o", plan, "--quiet"], capture_output=True, text=True)
                    runs += 1
                    if p.returncode != 0:
                        print(f"FAIL {tag}: shiro-plan: {p.stderr.strip()}")
                        failures += 1
                        continue
                    t = subprocess.run([exe, plan], capture_output=True, text=True, timeout=300)
                    errs = [f"test_local_matrix exit {t.returncode}: {t.stderr.strip()}"] if t.returncode else []
                    dump = parse_dump(t.stdout) if not errs else {}
                    if not errs and len(dump) != int(r):
                        errs.append(f"{len(dump)} ranks printed, want {r}")
                    errs += compare(mtx, dump) if not errs else []
                    if errs:
                        failures += 1
                        print(f"FAIL {tag}:\n  " + "\n  ".join(errs[:10]))
                    else:
                        print(f"ok   {tag}: {sum(d[0] for d in dump.values())} nonzeros on {len(dump)} ranks")
    print(f"{runs} runs, {failures} failures")
    return 1 if failures or not runs else 0


if __name__ == "__main__":
    sys.exit(main())
