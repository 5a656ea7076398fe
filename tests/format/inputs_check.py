#!/usr/bin/env python3
"""inputs_check.py BUILD_ROOT — shiro-plan --format edgelist and csr-h5 end to end.

With the tools of BUILD_ROOT:
  * an R-MAT graph from shiro-gen as .mtx, as the HDF5 CSR file of
    shiro-gen --format csr-h5, and as SNAP edge lists (0-based with '#'
    comments and tabs, 1-based with --base 1) gives byte-identical plans for
    several strategies and partitions, and the same --compare volumes;
  * bad command lines exit 2 naming the argument; bad files exit 1 naming the
    file and line (edge list) or dataset (csr-h5), and leave no plan behind;
  * shiro-gen --format csr-h5 writes the same bytes on any number of threads,
    and refuses stdout and real values (exit 2).
Exit status 0 if all pass; each failure is printed."""
import filecmp
import json
import os
import subprocess
import sys
import tempfile

failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL", what)


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def mtx_to_edgelist(src, dst, base, fancy):
    """The entries of a general .mtx as an edge list, in the file's order."""
    with open(src) as f, open(dst, "w") as g:
        if fancy:
            g.write("# Directed graph: shiro-gen rmat\n# FromNodeId\tToNodeId\n")
        seen_size = False
        for n, line in enumerate(f):
            if line.startswith("%"):
                continue
            if not seen_size:
                seen_size = True
                continue
            i, j = line.split()[:2]
            sep = "\t" if fancy and n % 2 else " "
            g.write(f"{int(i) - 1 + base}{sep}{int(j) - 1 + base}\n")
            if fancy and n % 97 == 0:
                g.write("% a comment\n\n")


def main():
    build = sys.argv[1]
    plan = os.path.join(build, "tools", "shiro-plan")
    gen = os.path.join(build, "tools", "gen", "shiro-gen")
    with tempfile.TemporaryDirectory(prefix="shiro_inputs_") as d:
        mtx, h5 = os.path.join(d, "g.mtx"), os.path.join(d, "g.h5")
        el0, el1 = os.path.join(d, "g0.txt"), os.path.join(d, "g1.txt")
        r = run([gen, "rmat", "--scale", "10", "--edge-factor", "8", "-o", mtx])
        check(r.returncode == 0, f"shiro-gen mtx: {r.stderr}")
        r = run([gen, "rmat", "--scale", "10", "--edge-factor", "8", "--format", "csr-h5", "-o", h5])
        check(r.returncode == 0, f"shiro-gen csr-h5: {r.stderr}")
        h5b = os.path.join(d, "g1.h5")
        r = run([gen, "rmat", "--scale", "10", "--edge-factor", "8", "--format", "csr-h5", "--threads", "1", "-o", h5b])
        check(r.returncode == 0 and filecmp.cmp(h5, h5b, shallow=False),
              f"shiro-gen --format csr-h5: not the same bytes on 1 thread: {r.stderr}")
        mtx_to_edgelist(mtx, el0, 0, True)
        mtx_to_edgelist(mtx, el1, 1, False)
        inputs = {"mtx": [mtx], "csr-h5": [h5, "--format", "csr-h5"],
                  "edgelist0": [el0, "--format", "edgelist"],
                  "edgelist1": [el1, "--format", "edgelist", "--base", "1"]}
        for strat, part in [("joint", "block"), ("group", "block"), ("col", "nnz"), ("hier", "block"),
                            ("cola", "block")]:
            outs = {}
            for name, args in inputs.items():
                out = os.path.join(d, f"{name}.{strat}.shiro.h5")
                r = run([plan] + args + ["--ranks", "16", "--gpus-per-node", "4", "--strategy", strat,
                                         "--partition", part, "--threads", "2", "--quiet", "-o", out])
                check(r.returncode == 0, f"{name} {strat}: {r.stderr}")
                outs[name] = out
            for name, out in outs.items():
                check(os.path.exists(out) and filecmp.cmp(out, outs["mtx"], shallow=False),
                      f"{name} {strat}: plan differs from the .mtx's")
        vols = {}
        for name, args in inputs.items():
            r = run([plan] + args + ["--ranks", "32", "--gpus-per-node", "4", "--compare", "--json", "--quiet"])
            check(r.returncode == 0, f"{name} --compare: {r.stderr}")
            if r.returncode == 0:
                j = json.loads(r.stdout)
                vols[name] = (j["m"], j["k"], j["nnz"], j["volumes"])
        check(len({json.dumps(v, sort_keys=True) for v in vols.values()}) == 1, f"volumes differ: {vols}")

        # Bad command lines: exit 2, the argument named.
        for args, msg in [(["--format", "csv"], "--format: unknown format 'csv'"),
                          (["--format", "edgelist", "--base", "2"], "--base"),
                          (["--rows", "5"], "--base, --rows and --cols are for --format edgelist only"),
                          (["--format", "edgelist", "--cols", "0"], "--cols")]:
            r = run([plan, el0, "--ranks", "4", "-o", os.path.join(d, "x.h5")] + args)
            check(r.returncode == 2 and msg in r.stderr, f"{args}: exit {r.returncode}, {r.stderr!r}")
        # Bad files: exit 1, file and line / dataset named, no plan left.
        bad = os.path.join(d, "bad.txt")
        with open(bad, "w") as f:
            f.write("# c\n0 1\n1 2\n2 x\n")
        for args, msg in [([bad, "--format", "edgelist"], f"{bad}:4: expected target vertex id, found 'x'"),
                          ([bad, "--format", "edgelist", "--rows", "2", "--cols", "2"],
                           f"{bad}:3: target vertex id out of range (expected 0..1, found '2')"),
                          ([bad, "--format", "csr-h5"], f"{bad}: not an HDF5 file"),
                          ([mtx, "--format", "csr-h5"], f"{mtx}: not an HDF5 file"),
                          ([h5, "--format", "edgelist"], f"{h5}:1: expected"),
                          ([os.path.join(d, "none.h5"), "--format", "csr-h5"], "none.h5: cannot open")]:
            out = os.path.join(d, "bad.shiro.h5")
            r = run([plan] + args + ["--ranks", "4", "-o", out])
            check(r.returncode == 1 and msg in r.stderr, f"{args}: exit {r.returncode}, {r.stderr!r}")
            check(not os.path.exists(out), f"{args}: a plan was left behind")
        # shiro-gen --format csr-h5: a file only, pattern R-MAT only.
        for args, msg in [(["rmat", "--scale", "4", "--edge-factor", "2", "--format", "csr-h5"], "needs -o FILE"),
                          (["rmat", "--scale", "4", "--edge-factor", "2", "--field", "real", "--format", "csr-h5",
                            "-o", os.path.join(d, "r.h5")], "pattern R-MAT only"),
                          (["grid2d", "--nx", "3", "--ny", "3", "--format", "csr-h5", "-o", os.path.join(d, "r.h5")],
                           "pattern R-MAT only"),
                          (["rmat", "--scale", "4", "--edge-factor", "2", "--format", "npz"], "--format")]:
            r = run([gen] + args)
            check(r.returncode == 2 and msg in r.stderr, f"shiro-gen {args}: exit {r.returncode}, {r.stderr!r}")
        check(not os.path.exists(os.path.join(d, "r.h5")), "shiro-gen left a file behind")
    print(f"inputs_check: {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
