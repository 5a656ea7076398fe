#!/usr/bin/env python3
"""Simulated time per SpMM call of every strategy over a set of matrices
(tools/sim/simulate.sh), as a markdown table, and a strong-scaling picture.

usage: tools/sim/sim_table.py [MATRIX...] [--ranks 32] [--gpn 4] [--n 64] [--dtype float]
                          [--machine tsubame4] [--strategies col,joint,hier,group,cola,hybrid]
                          [--compute none|model] [--build build] [--jobs 2] [--cache FILE]
       tools/sim/sim_table.py --scaling MATRIX --scaling-ranks 8,16,32,64,128 --svg OUT.svg [...]
Default matrices: every *.mtx / *.mtx.gz in ../shared/data/matrices.

The table: per matrix, the simulated ms per call of each strategy (the
fastest in bold), the inter-node MB it moves per call, the planner's
predicted ms beside the simulated ones (shiro-plan --compare --json --machine's
"predicted_time_s"), and what --strategy auto (shiro-plan's default when
1 < G < R) chooses on the same machine, strategy and partition (block, the time or
METIS's partition, whichever auto's plan is predicted faster on): the default plan's simulated
(predicted) ms and how it compares with the fastest of col, joint, hier and group, each
on the block partition. Under the table the
geometric means, and auto's against col's. With --compute model also the share of the compute inside stage 0
(the local multiply) that hides behind stage 0's messages, and how much the
modelled compute adds to the call (ms, against communication only). Results are kept
in --cache (default sim_table.cache.json in the current folder) and reused,
keyed by everything that decides them, so a table and a picture over the same
runs simulate once.
"""
import argparse
import concurrent.futures
import glob
import json
import math
import os
import subprocess
import sys
import tempfile
import threading

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIMULATE = os.path.join(ROOT, "tools", "simulate.sh")
COLORS = {"block": "#7f7f7f", "col": "#d62728", "row": "#8c564b", "joint": "#1f77b4", "hier": "#ff7f0e",
          "group": "#2ca02c", "cola": "#9467bd", "hybrid": "#17becf", "auto": "#000000"}


def name_of(path):
    return os.path.basename(path).split(".mtx")[0]


class Runner:
    """Plans and simulates, with a cache of results (thread-safe)."""

    def __init__(self, a):
        self.a, self.lock = a, threading.Lock()
        self.cache = {}
        if os.path.exists(a.cache):
            with open(a.cache) as f:
                self.cache = json.load(f)
        self.tmp = tempfile.mkdtemp(prefix="sim-table-")

    def key(self, matrix, R, strategy):
        a = self.a
        return "|".join(map(str, (os.path.abspath(matrix), os.path.getsize(matrix), R, a.gpn, a.n, a.dtype, a.machine,
                                  strategy, a.compute, a.iters, a.network or "")))

    def save(self):
        with self.lock:
            with open(self.a.cache + ".tmp", "w") as f:
                json.dump(self.cache, f, indent=1, sort_keys=True)
            os.replace(self.a.cache + ".tmp", self.a.cache)

    def plan(self, matrix, R, strategy):
        out = os.path.join(self.tmp, f"{name_of(matrix)}-{R}-{strategy}.h5")
        p = subprocess.run([os.path.join(self.a.build, "tools", "shiro-plan"), matrix, "--ranks", str(R),
                            "--gpus-per-node", str(self.a.gpn), "--strategy", strategy, "-o", out, "--quiet",
                            "--threads", "1"] + (["--machine", self.a.machine, "--n", str(self.a.n), "--dtype", self.a.dtype]
                                                 if strategy == "auto" else []), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            raise RuntimeError(f"shiro-plan {matrix} --strategy {strategy} --ranks {R}: {p.stderr.strip()}")
        return out

    def simulate(self, matrix, R, strategy):
        """simulate.sh's JSON for (matrix, R, strategy), from the cache when there."""
        k = self.key(matrix, R, strategy)
        with self.lock:
            if k in self.cache:
                return self.cache[k]
        plan = self.plan(matrix, R, strategy)
        cmd = [SIMULATE, plan, "--n", str(self.a.n), "--dtype", self.a.dtype, "--machine", self.a.machine,
               "--compute", self.a.compute, "--iters", str(self.a.iters), "--quiet"]
        if self.a.network:
            cmd += ["--network", self.a.network]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        os.remove(plan)
        if p.returncode != 0:
            raise RuntimeError(f"simulate.sh {name_of(matrix)} {strategy} R={R}: {p.stderr.strip()[-1500:]}")
        j = json.loads(p.stdout)
        print(f"  {name_of(matrix)} R={R} {strategy}: {1e3 * j['time_per_call_s']:.4f} ms/call "
              f"(simulated in {j['wall_s']:.0f} s)", file=sys.stderr)
        with self.lock:
            self.cache[k] = j
        self.save()
        return j

    def plan_json(self, matrix, R, extra):
        p = subprocess.run([os.path.join(self.a.build, "tools", "shiro-plan"), matrix, "--ranks", str(R),
                            "--gpus-per-node", str(self.a.gpn), "--json", "--quiet", "--machine",
                            self.a.machine, "--n", str(self.a.n), "--dtype", self.a.dtype] + extra,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0:
            return None
        try:
            return json.loads(p.stdout)
        except json.JSONDecodeError:
            return None

    def predicted(self, matrix, R):
        """(predicted_time_s per strategy on the block partition, from shiro-plan --compare --json
        --strategy auto --partition block --machine; and the default plan's (--strategy auto, its
        partition chosen too): (strategy, partition, predicted_time_s)), or ({}, None)."""
        j = self.plan_json(matrix, R, ["--compare", "--strategy", "auto", "--partition", "block"])
        d = self.plan_json(matrix, R, ["--compare", "--strategy", "auto"])  # --compare: nothing written
        try:
            vols = j["volumes"]
            s = d["strategy"]
            chosen = (s, d["partition"], d["volumes"][s]["predicted_time_s"])
        except (TypeError, KeyError):
            return {}, None
        return {s: v["predicted_time_s"] for s, v in vols.items() if "predicted_time_s" in v}, chosen

    def run_all(self, jobs):
        """Runs (matrix, R, strategy) jobs, jobs.jobs at a time; returns {job: JSON or error string}."""
        out = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=self.a.jobs) as ex:
            futs = {ex.submit(self.simulate, *j): j for j in jobs}
            for f in concurrent.futures.as_completed(futs):
                try:
                    out[futs[f]] = f.result()
                except RuntimeError as e:
                    print(f"error: {e}", file=sys.stderr)
                    out[futs[f]] = str(e)
        return out


def table(a, r, mats):
    strategies = a.strategies.split(",")
    jobs = [(m, a.ranks, s) for m in mats for s in strategies + (["auto"] if "auto" not in strategies else [])]
    res = r.run_all(jobs)
    got = {m: r.predicted(m, a.ranks) for m in mats}
    pred = {m: got[m][0] for m in mats}
    auto = {m: got[m][1] for m in mats}
    with_pred = any(pred.values())
    four = [s for s in ("col", "joint", "hier", "group") if s in strategies]
    print(f"R = {a.ranks}, G = {a.gpn}, N = {a.n} {a.dtype}, machine {a.machine}, compute {a.compute}: "
          f"simulated ms per call{' (predicted)' if with_pred else ''}; inter-node MB per call\n")
    head = ["matrix", "nnz"] + [f"{s} ms" for s in strategies] + ["fastest"]
    if with_pred:
        head += ["auto ms", "auto / fastest of " + "/".join(four)]
    head += [f"{s} MB" for s in strategies]
    if a.compute == "model":
        head += [f"{s} hidden, +ms" for s in strategies]
    print("| " + " | ".join(head) + " |")
    print("|---|" + "---:|" * (len(head) - 1))
    logs = {s: [] for s in strategies}
    ratios, auto_logs, col_logs = [], [], []
    for m in mats:
        js = {s: res[(m, a.ranks, s)] for s in strategies}
        ok = {s: j for s, j in js.items() if isinstance(j, dict)}
        if not ok:
            print(f"| {name_of(m)} | error |")
            continue
        best = min(ok, key=lambda s: ok[s]["time_per_call_s"])
        cells = [name_of(m), str(next(iter(ok.values()))["nnz"])]
        for s in strategies:
            if s not in ok:
                cells.append("error")
                continue
            t = f"{1e3 * ok[s]['time_per_call_s']:.3f}"
            if s in pred[m]:
                t += f" ({1e3 * pred[m][s]:.3f})"
            cells.append(f"**{t}**" if s == best else t)
            logs[s].append(math.log(ok[s]["time_per_call_s"]))
        cells.append(best)
        if with_pred:
            ja = res.get((m, a.ranks, "auto"))  # the default plan: auto's strategy and partition
            if auto[m] and isinstance(ja, dict) and all(s in ok for s in four):
                c, part, pt = auto[m]
                fastest = min(ok[s]["time_per_call_s"] for s in four)
                ratio = ja["time_per_call_s"] / fastest
                ratios.append(ratio)
                auto_logs.append(math.log(ja["time_per_call_s"]))
                if "col" in ok:
                    col_logs.append(math.log(ok["col"]["time_per_call_s"]))
                cells += [f"{c}, {part}: {1e3 * ja['time_per_call_s']:.3f} ({1e3 * pt:.3f})", f"{ratio:.2f}"]
            else:
                cells += [f"{auto[m][0] if auto[m] else '?'} (not simulated)", ""]
        cells += [f"{ok[s]['inter_node_bytes_per_call'] / 1e6:.2f}" if s in ok else "" for s in strategies]
        if a.compute == "model":  # stage 0's compute hidden; what the compute adds to the call
            cells += [f"{100 * ok[s]['overlap']['hidden_fraction']:.0f}%, "
                      f"{1e3 * (ok[s]['time_per_call_s'] - ok[s]['comm_only_time_per_call_s']):+.3f}"
                      if s in ok and ok[s].get("overlap") else "" for s in strategies]
        print("| " + " | ".join(cells) + " |")
    if all(len(v) == len(logs[strategies[0]]) and v for v in logs.values()):
        means = {s: math.exp(sum(v) / len(v)) for s, v in logs.items()}
        print(f"\ngeometric mean ms per call over {len(logs[strategies[0]])} matrices: " +
              ", ".join(f"{s} {1e3 * t:.4f}" for s, t in means.items()))
    if ratios:
        print(f"auto: <= 1.00x the fastest of {'/'.join(four)} on {sum(x <= 1.0 + 1e-9 for x in ratios)} of "
              f"{len(ratios)}, <= 0.90x on {sum(x <= 0.9 for x in ratios)}; worst {max(ratios):.2f}x" +
              (f"; geometric mean {math.exp((sum(col_logs) - sum(auto_logs)) / len(auto_logs)):.2f}x faster than col"
               if len(col_logs) == len(auto_logs) else ""))
    return 0


def scaling(a, r):
    strategies = a.strategies.split(",")
    ranks = [int(x) for x in a.scaling_ranks.split(",")]
    res = r.run_all([(a.scaling, R, s) for R in ranks for s in strategies])
    series = {s: [(R, res[(a.scaling, R, s)]["time_per_call_s"]) for R in ranks
                  if isinstance(res[(a.scaling, R, s)], dict)] for s in strategies}
    print(f"{name_of(a.scaling)}, G = {a.gpn}, N = {a.n} {a.dtype}, machine {a.machine}: simulated ms per call\n")
    print("| R | " + " | ".join(strategies) + " |")
    print("|---:|" + "---:|" * len(strategies))
    for R in ranks:
        row = [f"{1e3 * res[(a.scaling, R, s)]['time_per_call_s']:.4f}" if isinstance(res[(a.scaling, R, s)], dict)
               else "error" for s in strategies]
        print(f"| {R} | " + " | ".join(row) + " |")
    if a.svg:
        with open(a.svg, "w") as f:
            f.write(svg(series, f"{a.label or name_of(a.scaling)}: strong scaling on {a.machine} (simulated), "
                                f"N = {a.n} {a.dtype}, {a.gpn} GPUs per node", a.compute))
        print(f"\nwrote {a.svg}", file=sys.stderr)
    return 0


def svg(series, title, compute):
    """A log-log line chart of time per call against R, one line per strategy (no dependencies)."""
    W, H, left, right, top, bottom = 760, 460, 70, 120, 40, 50
    pts = [p for s in series.values() for p in s]
    xs = sorted({R for R, _ in pts})
    lo, hi = min(t for _, t in pts), max(t for _, t in pts)
    ylo, yhi = math.log10(lo * 1e3) - 0.06, math.log10(hi * 1e3) + 0.06  # ms, a little room around the data

    def X(R):
        span = math.log2(xs[-1]) - math.log2(xs[0]) or 1
        return left + (W - left - right) * (math.log2(R) - math.log2(xs[0])) / span

    def Y(t):
        return top + (H - top - bottom) * (yhi - math.log10(t * 1e3)) / (yhi - ylo)

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" '
           f'font-family="sans-serif" font-size="12">', f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="20" text-anchor="middle" font-size="13">{title}</text>']
    steps = (1, 2, 5) if yhi - ylo > 1.2 else (1, 1.5, 2, 3, 4, 5, 7)
    ticks = [m * 10.0 ** e for e in range(math.floor(ylo) - 1, math.ceil(yhi) + 1) for m in steps
             if ylo <= math.log10(m * 10.0 ** e) <= yhi]
    for v in ticks:  # ms
        yy = Y(v / 1e3)
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{W - right}" y2="{yy:.1f}" stroke="#ddd"/>')
        out.append(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{v:g}</text>')
    for R in xs:
        out.append(f'<line x1="{X(R):.1f}" y1="{top}" x2="{X(R):.1f}" y2="{H - bottom}" stroke="#eee"/>')
        out.append(f'<text x="{X(R):.1f}" y="{H - bottom + 16}" text-anchor="middle">{R}</text>')
    out.append(f'<rect x="{left}" y="{top}" width="{W - left - right}" height="{H - top - bottom}" fill="none" '
               f'stroke="#333"/>')
    out.append(f'<text x="{(left + W - right) / 2}" y="{H - 12}" text-anchor="middle">GPUs (R)</text>')
    out.append(f'<text x="16" y="{(top + H - bottom) / 2}" text-anchor="middle" transform="rotate(-90 16 '
               f'{(top + H - bottom) / 2})">ms per SpMM call ({"communication only" if compute == "none" else "with compute"})</text>')
    for i, (s, p) in enumerate(series.items()):
        c = COLORS.get(s, "#000")
        if len(p) > 1:
            out.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="' +
                       " ".join(f"{X(R):.1f},{Y(t):.1f}" for R, t in p) + '"/>')
        out += [f'<circle cx="{X(R):.1f}" cy="{Y(t):.1f}" r="3.5" fill="{c}"/>' for R, t in p]
        ly = top + 10 + 18 * i
        out.append(f'<line x1="{W - right + 12}" y1="{ly}" x2="{W - right + 36}" y2="{ly}" stroke="{c}" stroke-width="2"/>')
        out.append(f'<text x="{W - right + 42}" y="{ly + 4}">{s}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("matrices", nargs="*")
    ap.add_argument("--ranks", type=int, default=32)
    ap.add_argument("--gpn", type=int, default=4)
    ap.add_argument("--n", type=int, default=64)
    ap.add_argument("--dtype", default="float", choices=["float", "double"])
    ap.add_argument("--machine", default="tsubame4")
    ap.add_argument("--network", choices=["smpi", "ideal"])
    ap.add_argument("--strategies", default="col,joint,hier,group,cola,hybrid")
    ap.add_argument("--compute", default="none", choices=["none", "model"])
    ap.add_argument("--iters", type=int, default=3)
    ap.add_argument("--build", default="build", help="the meson build with shiro-plan (default build)")
    ap.add_argument("--jobs", type=int, default=2, help="simulations at once (default 2)")
    ap.add_argument("--cache", default="sim_table.cache.json")
    ap.add_argument("--scaling", metavar="MATRIX", help="strong scaling of one matrix instead of the table")
    ap.add_argument("--scaling-ranks", default="8,16,32,64,128")
    ap.add_argument("--svg", help="with --scaling: write the picture here")
    ap.add_argument("--label", help="with --scaling: the matrix's name in the title (default its file name)")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.build, "tools", "shiro-plan")):
        print(f"sim_table.py: no {a.build}/tools/shiro-plan (--build: the meson build folder)", file=sys.stderr)
        return 2
    r = Runner(a)
    if a.scaling:
        return scaling(a, r)
    mats = a.matrices or sorted(glob.glob(os.path.join(ROOT, "..", "shared", "data", "matrices", "*.mtx*")))
    return table(a, r, mats)


if __name__ == "__main__":
    sys.exit(main())
