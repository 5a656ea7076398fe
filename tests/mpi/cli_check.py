#!/usr/bin/env python3
"""The tools' command lines as a new user meets them: --version and --help on
every tool (exit 0, on stdout), complete usage text, shiro-spmm's argument
errors once per launch, its --layout both, (not once per rank) with one exit status, --backend
cuda without CUDA an error (77 only for "no CUDA device"), shiro-plan's
warnings for rank counts that make no sense and its up-front refusal of an R
whose R x R tables cannot fit, and tools/dev/demo.sh naming the strategy it wrote.

usage: cli_check.py BUILD_DIR SOURCE_DIR MATRIX   (MATRIX: karate, 34 x 34)
Needs mpirun and the mpi_env of tests/meson.build.
"""
import json
import os
import re
import shutil
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "lib"))  # checklib
import checklib
from checklib import expect


def run(cmd, **kw):
    return checklib.run(cmd, timeout=240, **kw)


def config(build, name):
    text = open(os.path.join(build, "shiro_config.h")).read()
    m = re.search(rf"#define {name} (\S+)", text)
    return m.group(1).strip('"') if m else None


def main():
    build, src, matrix = (os.path.abspath(a) for a in sys.argv[1:4])
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    tools = os.path.join(build, "tools")
    exe = {"shiro-plan": os.path.join(tools, "shiro-plan"), "shiro-plan-dump": os.path.join(tools, "shiro-plan-dump"),
           "shiro-spmm": os.path.join(tools, "shiro-spmm"), "shiro-gen": os.path.join(tools, "gen", "shiro-gen")}
    version = config(build, "SHIRO_VERSION")
    header = open(os.path.join(src, "format", "plan_file.h")).read()
    fmt = "%s.%s" % (re.search(r"PLAN_VERSION_MAJOR (\d+)", header).group(1),
                     re.search(r"PLAN_VERSION_MINOR (\d+)", header).group(1))

    # --version and --help: exit 0, on stdout, nothing on stderr.
    for name, path in exe.items():
        p = run([path, "--version"])
        expect(p.returncode == 0 and p.stdout.startswith(f"{name} {version} ") and f"plan format {fmt}" in p.stdout
               and not p.stderr, f"{name} --version: '{name} {version}', plan format {fmt}", p)
        p = run([path, "--help"])
        expect(p.returncode == 0 and p.stdout.startswith("usage:") and not p.stderr and "--version" in p.stdout,
               f"{name} --help: usage on stdout, exit 0", p)
    p = run([exe["shiro-spmm"], "--help"])
    for needle in ["--warmup W", "(default 32)", "(default double)", "(default 10)", "(default 1)", "[--n N[,N...]]"]:
        expect(needle in p.stdout, f"shiro-spmm --help shows {needle!r}", p)
    p = run([exe["shiro-plan-dump"], "--help"])
    for needle in ["--heatmap OUT", "--heatmap-scale", "linear (default", "--verify", "--rank P"]:
        expect(needle in p.stdout, f"shiro-plan-dump --help shows {needle!r}", p)
    p = run([exe["shiro-plan-dump"]])
    expect(p.returncode == 2 and "no plan given" in p.stderr and "usage:" in p.stderr, "shiro-plan-dump alone: usage, exit 2", p)

    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "k.shiro.h5")
        p = run([exe["shiro-plan"], matrix, "--ranks", "3", "-o", plan, "--quiet"])
        expect(p.returncode == 0 and not p.stderr, "plan for 3 ranks, no warning", p)

        # shiro-spmm: one message per launch, one exit status for all ranks.
        for args, needle in [(["--n", "x"], "--n: expected an integer"), (["--bogus"], "unknown option '--bogus'"),
                             (["--dtype", "half"], "expected float, double, bfloat16 or float16, found 'half'"), ([], "no plan given")]:
            s = run([mpirun, "-np", "3", exe["shiro-spmm"]] + ([plan] if args else []) + args)
            expect(s.returncode == 2 and s.stderr.count(needle) == 1 and s.stderr.count("shiro-spmm:") == 1,
                   f"mpirun -np 3 shiro-spmm {' '.join(args)}: '{needle}' once, exit 2", s)
        s = run([mpirun, "-np", "3", exe["shiro-spmm"], "--help"])
        expect(s.returncode == 0 and s.stdout.count("usage:") == 1, "mpirun -np 3 shiro-spmm --help: usage once", s)
        s = run([mpirun, "-np", "3", exe["shiro-spmm"], "--version"])
        expect(s.returncode == 0 and s.stdout.count(f"shiro-spmm {version}") == 1, "mpirun -np 3 shiro-spmm --version: once", s)
        s = run([mpirun, "-np", "3", exe["shiro-spmm"], plan, "--check", "--help"])
        expect(s.returncode != 0 and "usage:" not in s.stdout, "--check --help: '--help' is --check's file, not the flag", s)

        # --layout both: row- and column-major side by side, both checked, their ratio printed.
        s = run([mpirun, "-np", "3", exe["shiro-spmm"], plan, "--layout", "both", "--direction", "both", "--n", "5",
                 "--iters", "2", "--check", matrix])
        expect(s.returncode == 0 and s.stdout.count("check: max error/bound") == 4 and "FAILED" not in s.stdout
               and s.stdout.count("column-major/row-major time") == 2 and s.stdout.count("transposed/forward time") == 2,
               "shiro-spmm --layout both --direction both: four checked runs, two ratios of each kind", s)

        # --backend cuda: built without CUDA, an error (exit 1, said once); built with it, 77 only for no device.
        s = run([mpirun, "-np", "3", exe["shiro-spmm"], plan, "--backend", "cuda", "--n", "2", "--iters", "1"])
        if config(build, "SHIRO_HAVE_CUDA") == "0":
            expect(s.returncode == 1 and s.stderr.count("built without CUDA") == 1,
                   "--backend cuda in a build without CUDA: exit 1, said once", s)
        else:
            expect(s.returncode == 0 or (s.returncode == 77 and "no CUDA device" in s.stderr),
                   f"--backend cuda in a CUDA build: ran (0) or no device (77), exit {s.returncode}", s)

        # --backend sim: only in tools/sim/simulate.sh's SimGrid build; here an error, exit 1, said once.
        s = run([mpirun, "-np", "3", exe["shiro-spmm"], plan, "--backend", "sim", "--n", "2", "--iters", "1"])
        expect(s.returncode == 1 and s.stderr.count("not the simulation build") == 1,
               "--backend sim outside the simulation build: exit 1, said once", s)

        # shiro-plan: rank counts that make no sense are accepted with a warning.
        p = run([exe["shiro-plan"], matrix, "--ranks", "35", "-o", plan, "--quiet"])
        expect(p.returncode == 0 and os.path.exists(plan) and "warning: 1 of the 35 ranks own no rows of A and C" in p.stderr
               and "34 rows" in p.stderr, "--ranks 35 on 34 rows: written, warned", p)
        p = run([exe["shiro-plan"], matrix, "--ranks", "2", "--gpus-per-node", "8", "-o", plan, "--quiet", "--json"])
        inter = json.loads(p.stdout)["volumes"]["joint"]["inter_node_rows"] if p.returncode == 0 else None
        expect(p.returncode == 0 and "warning: --gpus-per-node 8 is more than --ranks 2" in p.stderr
               and "no inter-node traffic" in p.stderr and inter == 0, "G 8 > R 2: written, warned, 0 inter-node rows", p)
        p = run([exe["shiro-plan"], matrix, "--ranks", "4", "--gpus-per-node", "2", "-o", plan, "--quiet"])
        expect(p.returncode == 0 and "warning" not in p.stderr, "R 4, G 2: no warning", p)
        # shiro-plan-dump's text: node tiers only where the plan has nodes (G > 1); with G = 1 (maybe one
        # node, maybe many) rows are counted between ranks, never called inter-node.
        d = run([exe["shiro-plan-dump"], plan])
        expect(d.returncode == 0 and re.search(r"volumes: \d+ rows moved, \d+ inter-node, \d+ intra-node", d.stdout)
               and " inter " in d.stdout, "dump of a G 2 plan: inter- and intra-node rows", d)
        g1 = os.path.join(tmp, "g1.shiro.h5")
        p = run([exe["shiro-plan"], matrix, "--ranks", "4", "-o", g1, "--quiet"])
        d = run([exe["shiro-plan-dump"], g1])
        expect(p.returncode == 0 and d.returncode == 0 and "inter-node" not in d.stdout and "intra-node" not in d.stdout
               and all(ln.split()[5] == "-" for ln in d.stdout.splitlines() if re.match(r"^\s+\d+\s", ln))
               and "counted between ranks" in d.stdout and re.search(r"volumes: \d+ rows moved\n", d.stdout),
               "dump of a G 1 plan: rows between ranks, no 'inter-node'", d)

        # An R whose per-rank and node-pair tables cannot fit: refused at once, named, nothing written.
        # (The builders' tables are sparse over the rank pairs; group's node-pair index is nodes².)
        big = os.path.join(tmp, "big.shiro.h5")
        t0 = time.time()
        p = run([exe["shiro-plan"], matrix, "--ranks", "1048576", "--gpus-per-node", "2", "-o", big])
        took = time.time() - t0
        expect(p.returncode == 1 and "R = 1048576 needs 8.8 TB for the per-rank and node-pair tables" in p.stderr
               and "memory" in p.stderr and not os.path.exists(big) and took < 10,
               f"--ranks 1048576 -G 2: refused in {took:.1f} s with what needs how much", p)
        mem = int(re.search(r"MemTotal:\s+(\d+) kB", open("/proc/meminfo").read()).group(1)) * 1024
        if mem < 80e9:
            p = run([exe["shiro-plan"], matrix, "--ranks", "100000", "--gpus-per-node", "2", "-o", big])
            expect(p.returncode == 1 and "R = 100000 needs 80 GB" in p.stderr and "two-tier" in p.stderr
                   and not os.path.exists(big), "--ranks 100000 -G 2 (auto): needs 80 GB, said up front", p)
            p = run([exe["shiro-plan"], matrix, "--ranks", "100000", "--gpus-per-node", "2", "--strategy", "joint",
                     "--compare"])
            expect(p.returncode == 1 and "R = 100000 needs 80 GB" in p.stderr and "two-tier" in p.stderr,
                   "--compare counts the two-tier tables (80 GB)", p)
            p = run([exe["shiro-plan"], matrix, "--ranks", "100000", "--gpus-per-node", "2", "--strategy", "hybrid",
                     "-o", big])
            # hybrid: group's node-pair tables and its own per-rank ones (its routing is per node pair
            # with blocks, sized with the blocks, no longer nodes² and R x nodes: 373 GB before d17f719)
            expect(p.returncode == 1 and "R = 100000 needs 80.1 GB" in p.stderr and not os.path.exists(big),
                   "--strategy hybrid counts its per-rank tables on top of group's (80.1 GB), said up front", p)
        else:
            print(f"skip --ranks 100000: this machine has {mem / 1e9:.0f} GB, the tables would fit")

        # shiro-plan-dump's heatmap scale.
        p = run([exe["shiro-plan-dump"], plan, "--heatmap", os.path.join(tmp, "h.svg"), "--heatmap-scale", "sqrt"])
        expect(p.returncode == 2 and "--heatmap-scale: expected linear or log, found 'sqrt'" in p.stderr
               and not os.path.exists(os.path.join(tmp, "h.svg")), "--heatmap-scale sqrt: refused", p)
        p = run([exe["shiro-plan-dump"], plan, "--heatmap-scale", "log"])
        expect(p.returncode == 2 and "--heatmap-scale goes with --heatmap" in p.stderr, "--heatmap-scale alone: refused", p)

        # Many more ranks than METIS can serve on parts of the graph (it prints "Cannot bisect a graph
        # with 0 vertices" with printf): --json stays JSON, and nothing of METIS reaches stdout.
        if config(build, "SHIRO_HAVE_METIS") == "1":
            eu = os.path.join(src, "tests", "data", "email-Eu-core.mtx")
            p = run([exe["shiro-plan"], eu, "--ranks", "512", "--gpus-per-node", "8", "--partition", "metis", "--strategy",
                     "joint", "-o", os.path.join(tmp, "m.h5"), "--json"])
            try:
                ok = json.loads(p.stdout)["ranks"] == 512
            except (ValueError, KeyError):
                ok = False
            expect(p.returncode == 0 and ok and "***" not in p.stdout + p.stderr,
                   "--partition metis at R = 512 on 1005 rows: valid JSON, METIS silent", p)

        # tools/dev/demo.sh says the strategy it wrote (the plan's, read back from the file).
        env = dict(os.environ, BUILD=build, DEMO_SKIP_SETUP="1")
        # 1 < G < R: the default is auto, the strategy the cost model predicts fastest (--compare says which)
        auto = run([exe["shiro-plan"], matrix, "--ranks", "4", "--gpus-per-node", "2", "--compare", "--json", "--quiet"])
        auto = json.loads(auto.stdout)["strategy"] if auto.returncode == 0 else "?"
        for ranks, gpn, want in [("4", "2", auto), ("2", "1", "joint")]:
            d = run([os.path.join(src, "tools", "dev", "demo.sh"), matrix, ranks, gpn], env=env)
            expect(d.returncode == 0 and f"== plan written with {want}:" in d.stdout and d.stdout.count(" ok") == 2,
                   f"demo.sh R {ranks} G {gpn}: 'plan written with {want}', replay checked", d)
        demo_plan = os.path.join(build, "demo.shiro.h5")
        if os.path.exists(demo_plan):
            os.unlink(demo_plan)
    print(f"{checklib.failures} failure(s)")
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
