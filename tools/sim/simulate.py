#!/usr/bin/env python3
"""simulate.py — replays a shiro plan on a simulated GPU cluster (SimGrid SMPI).
tools/sim/simulate.sh is its entry point; tools/sim/README.md says what it measures.

usage: tools/sim/simulate.sh PLAN.h5 --n N --dtype float|double|bfloat16|float16 (--machine NAME|FILE.json | --platform FILE.xml)
                         [--compute none|model] [--iters K] [--warmup W] [--check MATRIX.mtx]
                         [--network smpi|ideal] [--layout auto|flat|zones] [--cfg NAME:VALUE]...
                         [--build-dir DIR] [--keep DIR] [--quiet]

Prints one JSON object on stdout and a summary on stderr. Exit status: 0 ok,
1 the build, the simulation or --check failed, 2 a bad command line, machine
file or platform file.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import machines  # noqa: E402
import simbuild  # noqa: E402

PROG = "simulate.sh"


class Usage(Exception):
    """A bad command line or input file: exit status 2."""


class Failure(Exception):
    """The build, the simulation or the check failed: exit status 1."""


def parse_args(argv):
    ap = argparse.ArgumentParser(prog=PROG, description="Replay a shiro plan on a simulated GPU cluster (SimGrid SMPI).")
    ap.add_argument("plan", help="a plan file (shiro-plan)")
    ap.add_argument("--n", type=int, required=True, help="columns of B and C")
    ap.add_argument("--dtype", choices=["float", "double", "bfloat16", "float16"], required=True)
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--machine", help=f"built-in ({', '.join(machines.builtin_machines())}) or a JSON machine file")
    where.add_argument("--platform", help="a SimGrid platform XML file with hosts gpu0 .. gpu<R-1>")
    ap.add_argument("--compute", choices=["none", "model"], default="none",
                    help="none: communication only (default); model: charge modelled GPU time for every compute op")
    ap.add_argument("--iters", type=int, default=3, help="timed calls (default 3, at most 60)")
    ap.add_argument("--warmup", type=int, default=1, help="untimed calls before them (default 1)")
    ap.add_argument("--check", metavar="MATRIX", help="shiro-spmm --check: compare C with a serial reference")
    ap.add_argument("--network", choices=machines.NETWORK_MODELS,
                    help="smpi: SimGrid's calibrated MPI model (the machine's default); ideal: links only")
    ap.add_argument("--layout", choices=machines.LAYOUTS, default="auto",
                    help=f"--machine's platform: flat (a route per GPU pair), zones (a zone per node), auto (flat up "
                         f"to {machines.FLAT_MAX_RANKS} ranks; the default)")
    ap.add_argument("--cfg", action="append", default=[], metavar="NAME:VALUE", help="more smpirun --cfg settings")
    ap.add_argument("--build-dir", default=os.path.join(simbuild.ROOT, "build-sim"),
                    help="the simulation build's folder (default build-sim/ in the repository)")
    ap.add_argument("--keep", metavar="DIR", help="keep the platform, host file and per-rank records in DIR")
    ap.add_argument("--quiet", action="store_true", help="no summary on stderr")
    try:
        a = ap.parse_args(argv)
    except SystemExit as e:
        raise SystemExit(2 if e.code else 0)
    if not 1 <= a.n <= 1 << 20:
        raise Usage(f"--n {a.n}: expected 1 .. {1 << 20}")
    if not 1 <= a.iters <= 60:
        raise Usage(f"--iters {a.iters}: expected 1 .. 60 (the sim backend records 64 calls)")
    if not 0 <= a.warmup <= 3:
        raise Usage(f"--warmup {a.warmup}: expected 0 .. 3")
    for c in a.cfg:
        if ":" not in c:
            raise Usage(f"--cfg {c}: expected NAME:VALUE")
    if not os.path.isfile(a.plan):
        raise Usage(f"{a.plan}: no such plan file")
    if a.check and not os.path.isfile(a.check):
        raise Usage(f"--check {a.check}: no such matrix file")
    a.plan_path = os.path.abspath(a.plan)  # smpirun runs in the records' folder
    a.check_path = os.path.abspath(a.check) if a.check else None
    return a


def plan_facts(path):
    """Root attributes of a plan file (h5dump): ranks, gpus_per_node, strategy, m, k, nnz."""
    if not shutil.which("h5dump"):
        raise Failure("h5dump not found: install hdf5-tools (tools/dev/install-deps.sh)")
    keys = ["ranks", "gpus_per_node", "strategy", "m", "k", "nnz"]
    cmd = ["h5dump"] + [x for k in keys for x in ("-a", "/" + k)] + [path]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    facts = {}
    for k, v in re.findall(r'ATTRIBUTE "(\w+)".*?DATA \{\s*\(0\): ("?[^"\n]*"?)', p.stdout, re.S):
        facts[k] = v.strip('"') if v.startswith('"') else int(v)
    if p.returncode != 0 or any(k not in facts for k in keys):
        raise Usage(f"{path}: not a shiro plan (its root attributes ranks, gpus_per_node, strategy could not be read)")
    return facts


def network_cfg(model):
    """smpirun --cfg settings of a network model (README: "The network model")."""
    if model == "ideal":
        return ["smpi/bw-factor:0:1", "smpi/lat-factor:0:1", "network/TCP-gamma:0", "network/weight-S:0"]
    return []


def prepare_platform(a, facts, tmp):
    """(platform path, machine or None, network model, machine source): the platform to run on."""
    R = facts["ranks"]
    if a.platform:
        hosts = machines.platform_hosts(a.platform)
        missing = [f"gpu{r}" for r in range(R) if f"gpu{r}" not in hosts]
        if missing:
            raise machines.MachineError(f"{a.platform}: the plan has {R} ranks but the platform has no host "
                                        f"{', '.join(missing[:4])}{' ...' if len(missing) > 4 else ''} "
                                        f"(host r runs rank r: name them gpu0 .. gpu{R - 1})")
        return os.path.abspath(a.platform), None, a.network or "smpi", a.platform
    m, source = machines.load_machine(a.machine)
    path = os.path.join(tmp, f"{m['name']}-{R}.xml")
    with open(path, "w") as f:
        f.write(machines.machine_platform(m, R, a.layout))
    return path, m, a.network or m["network_model"], source


def model_env(m, compute):
    """The sim backend's environment for machine m (None: the backend's H200 defaults)."""
    env = {"SHIRO_SIM_COMPUTE": compute}
    if m:
        g = m["gpu"]
        for dt in ("float", "double"):
            env[f"SHIRO_SIM_SPMM_{dt.upper()}"] = ",".join(f"{n}:{r!r}" for n, r in g["spmm_tflops"][dt])
        env["SHIRO_SIM_HBM_TBPS"] = repr(g["hbm_TBps"])
        env["SHIRO_SIM_LAUNCH_US"] = repr(g["launch_us"])
    return env


def run_once(a, exe, platform, facts, network, menv, compute, records):
    """One smpirun of the plan; returns (records by rank, shiro-spmm's stdout, wall seconds)."""
    R = facts["ranks"]
    hostfile = os.path.join(records, "hosts")
    with open(hostfile, "w") as f:
        f.write("".join(f"gpu{r}\n" for r in range(R)))
    cfg = ["smpi/simulate-computation:no", "smpi/wtime:0", "smpi/test:0", "smpi/iprobe:0",
           "smpi/grow-injected-times:no", "smpi/host-speed:1Gf", "network/optim:Full"] + network_cfg(network) + a.cfg
    cmd = ["smpirun", "-platform", platform, "-hostfile", hostfile, "-np", str(R)] + [f"--cfg={c}" for c in cfg]
    cmd += ["--log=root.thres:warning", exe, a.plan_path, "--n", str(a.n), "--dtype", a.dtype, "--iters",
            str(a.iters), "--warmup", str(a.warmup), "--backend", "sim"] + (["--check", a.check_path] if a.check else [])
    env = dict(os.environ, OMP_NUM_THREADS="1", SHIRO_SIM_REPORT=records, **dict(menv, SHIRO_SIM_COMPUTE=compute))
    for old in os.listdir(records):
        if old.startswith("rank") and old.endswith(".json"):
            os.remove(os.path.join(records, old))
    t0 = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=records)
    wall = time.time() - t0
    said_all = p.stdout + p.stderr
    deadlock = "Deadlock detected" in said_all
    if p.returncode != 0 or deadlock:
        said = [x for x in said_all.splitlines() if x.strip() and "did not return 0" not in x]
        tail = "\n".join(said[:15] + (["..."] if len(said) > 15 else []))
        hint = ("\n(SimGrid stops some replays of persistent requests with \"Deadlock detected\" when it sends "
                "small messages detached (eagerly); --cfg smpi/send-is-detached-thresh:0 sends every message by "
                "rendezvous and lets them finish: tools/sim/README.md, \"Deadlocks\")" if deadlock else "")
        raise Failure(f"smpirun exit {p.returncode} (compute {compute}):\n{tail}{hint}")
    recs = {}
    name = f"-n{a.n}-{a.dtype}.json"
    for r in range(R):
        path = os.path.join(records, f"rank{r}{name}")
        try:
            with open(path) as f:
                recs[r] = json.load(f)
        except (OSError, json.JSONDecodeError) as e:
            raise Failure(f"the sim backend's record of rank {r} is missing or broken ({path}: {e}); "
                          f"was {exe} built with the sim backend?")
    return recs, p.stdout, wall


def mean(xs):
    return sum(xs) / len(xs) if xs else 0.0


def summarize(recs, a, facts):
    """Per-call and per-stage times (simulated seconds) from the ranks' records."""
    R, W, K = facts["ranks"], a.warmup, a.iters
    calls = range(W, W + K)
    for r, rec in recs.items():
        if len(rec["calls"]) < W + K:
            raise Failure(f"rank {r} recorded {len(rec['calls'])} calls, expected {W + K}")
    ends = [max(recs[r]["calls"][k]["end"] for r in recs) for k in calls]  # each call's last end
    spans = [e - min(recs[r]["calls"][k]["begin"] for r in recs) for e, k in zip(ends, calls)]
    window = (ends[-1] - min(recs[r]["calls"][W]["begin"] for r in recs)) / K
    # The ranks leave shiro-spmm's barrier before the clock (an MPI_Allreduce) tens of µs apart on
    # SimGrid's collectives (38 µs at R = 32 on tsubame4), and the first timed call absorbs that skew:
    # a harness artifact, larger than a small plan's whole call. A call in a loop (the model's, and an
    # application's) is timed from one call's last end to the next one's; with one timed call, from
    # the last rank's start to the last end.
    last_begin = max(recs[r]["calls"][W]["begin"] for r in recs)
    skew = last_begin - min(recs[r]["calls"][W]["begin"] for r in recs)
    total = (ends[-1] - ends[0]) / (K - 1) if K >= 2 else ends[0] - last_begin
    nst = len(recs[0]["stages"])
    row_bytes = a.n * {"float": 4, "double": 8, "bfloat16": 2, "float16": 2}[a.dtype]
    stages = []
    for s in range(nst):
        span, rank_max, blocked, crit = [], [], [], []
        for k in calls:
            st = {r: recs[r]["calls"][k]["stages"][s] for r in recs}
            span.append(max(v[2] for v in st.values()) - min(v[0] for v in st.values()))
            dur = {r: v[2] - v[0] for r, v in st.items()}
            r_max = max(dur, key=lambda r: (dur[r], -r))
            rank_max.append(dur[r_max])
            crit.append(r_max)
            blocked.append(max(v[2] - v[1] for v in st.values()))
        sent = [recs[r]["stages"][s] for r in range(R)]
        stages.append({
            "stage": s,
            "time_s": mean(rank_max),
            "critical_rank": crit[-1],
            "span_s": mean(span),
            "max_blocked_s": mean(blocked),
            "messages": sum(x["messages_sent"] for x in sent),
            "bytes": sum(x["rows_sent"] for x in sent) * row_bytes,
            "inter_node_bytes": sum(x["inter_node_rows_sent"] for x in sent) * row_bytes,
            "max_rank_bytes": max(x["rows_sent"] for x in sent) * row_bytes,
            "max_rank_inter_node_bytes": max(x["inter_node_rows_sent"] for x in sent) * row_bytes,
        })
    kinds = list(recs[0]["calls"][W]["compute_by_kind"])
    compute = {kd: max(mean([recs[r]["calls"][k]["compute_by_kind"][kd] for k in calls]) for r in recs)
               for kd in kinds}
    busiest = max(sum(mean([recs[r]["calls"][k]["compute_by_kind"][kd] for k in calls]) for kd in kinds) for r in recs)
    return {"time_per_call_s": total, "window_per_call_s": window, "barrier_skew_s": skew,
            "isolated_call_s": spans[0], "call_times_s": spans, "stages": stages,
            "compute_max_rank_s": dict(compute, total=busiest)}


def overlap(model_recs, none_recs, a):
    """How much of the compute inside stage 0 (the local multiply) hides behind stage 0's messages.
    Per rank and timed call: X = the compute charged between START 0 and WAIT 0. If the rank
    still blocked in WAIT 0 after it (with compute), its messages outlasted X: all of X hid.
    Otherwise they were in before X ended, and what hid is their time in flight, taken from the
    same call communication only (START 0 to the return of WAIT 0), at most X."""
    if not none_recs or not model_recs[0]["stages"]:
        return None
    calls = range(a.warmup, a.warmup + a.iters)
    xs, hidden, frac = {}, {}, {}
    for r, rec in model_recs.items():
        x_sum = h_sum = 0.0
        for k in calls:
            c = rec["calls"][k]
            x = c["compute_by_segment"][1]
            start, wait, done = c["stages"][0]
            t0 = none_recs[r]["calls"][k]["stages"][0][2] - none_recs[r]["calls"][k]["stages"][0][0]
            x_sum += x
            h_sum += x if done - wait > 1e-12 else min(x, max(t0, 0.0))
        xs[r], hidden[r] = x_sum / len(calls), h_sum / len(calls)
        frac[r] = hidden[r] / xs[r] if xs[r] > 0 else 1.0
    total = sum(xs.values())
    return {"stage0_compute_s_sum": total, "hidden_s_sum": sum(hidden.values()),
            "hidden_fraction": sum(hidden.values()) / total if total > 0 else 1.0,
            "hidden_fraction_min": min(frac.values()), "hidden_fraction_min_rank": min(frac, key=lambda r: (frac[r], r)),
            "stage0_compute_max_s": max(xs.values())}


def spmm_line(stdout):
    """shiro-spmm's own report: (ms/call, MB moved, MB inter-node, check verdict or None)."""
    g = re.search(r"([0-9.]+) ms/call over \d+ calls, ([0-9.]+) MB moved/call \(([0-9.]+) MB inter-node\)"
                  r"(?:; check: max error/bound \S+ (\w+))?", stdout)
    if not g:
        raise Failure(f"shiro-spmm printed no report line:\n{stdout}")
    return float(g.group(1)), float(g.group(2)), float(g.group(3)), g.group(4)


def summary_text(out):
    """The human summary (stderr)."""
    s = [f"{PROG}: {out['plan']}: {out['strategy']}, {out['ranks']} ranks ({out['gpus_per_node']} per node), "
         f"N={out['n']} {out['dtype']}, on {out['machine'] or out['platform']} ({out['network_model']} network), "
         f"compute {out['compute']}",
         f"  {1e3 * out['time_per_call_s']:.4f} ms per call (simulated, in a loop; {1e3 * out['isolated_call_s']:.4f} ms "
         f"the first, after a barrier {1e3 * out['barrier_skew_s']:.4f} ms skewed), {out['bytes_per_call'] / 1e6:.3f} MB moved, "
         f"{out['inter_node_bytes_per_call'] / 1e6:.3f} MB inter-node"]
    for st in out["stages"]:
        s.append(f"  stage {st['stage']}: {1e3 * st['time_s']:.4f} ms on the busiest rank ({st['critical_rank']}), "
                 f"{1e3 * st['span_s']:.4f} ms from first start to last end; {st['messages']} messages, "
                 f"{st['inter_node_bytes'] / 1e6:.3f} MB inter-node")
    if out["compute"] == "model":
        c = out["compute_max_rank_s"]
        s.append(f"  modelled compute, busiest rank: {1e3 * c['total']:.4f} ms (local multiply {1e3 * c['local_multiply']:.4f} ms)")
        o = out.get("overlap")
        if o:
            s.append(f"  stage-0 overlap: {100 * o['hidden_fraction']:.1f}% of the compute inside stage 0 hidden "
                     f"(least on rank {o['hidden_fraction_min_rank']}: {100 * o['hidden_fraction_min']:.1f}%); "
                     f"communication only {1e3 * out['comm_only_time_per_call_s']:.4f} ms per call")
    if out["check"]:
        s.append(f"  check: {out['check']}")
    s.append(f"  simulated in {out['wall_s']:.1f} s")
    return "\n".join(s)


def main(argv):
    a = parse_args(argv)
    facts = plan_facts(a.plan)
    tmp = a.keep or tempfile.mkdtemp(prefix="shiro-sim-")
    os.makedirs(tmp, exist_ok=True)
    try:
        platform, m, network, source = prepare_platform(a, facts, tmp)
        if m and m["gpus_per_node"] != facts["gpus_per_node"] and not a.quiet:
            print(f"{PROG}: note: the plan was made for {facts['gpus_per_node']} ranks per node, machine {m['name']} "
                  f"has {m['gpus_per_node']} GPUs per node (the plan's tiers are not the machine's nodes)",
                  file=sys.stderr)
        exe = simbuild.build(a.build_dir, lambda text: sys.stderr.write(text))
        menv = model_env(m, a.compute)
        recs, stdout, wall = run_once(a, exe, platform, facts, network, menv, a.compute, tmp)
        none_recs = None
        if a.compute == "model":  # the same plan communication only: what the compute adds, what hides
            sub = os.path.join(tmp, "comm-only")
            os.makedirs(sub, exist_ok=True)
            none_recs, _, wall2 = run_once(a, exe, platform, facts, network, menv, "none", sub)
            wall += wall2
        ms, mb, mb_inter, check = spmm_line(stdout)
        out = {"plan": a.plan, "strategy": facts["strategy"], "ranks": facts["ranks"],
               "gpus_per_node": facts["gpus_per_node"], "m": facts["m"], "k": facts["k"], "nnz": facts["nnz"],
               "n": a.n, "dtype": a.dtype, "machine": m["name"] if m else None, "machine_file": source if m else None,
               "platform": None if m else a.platform, "network_model": network, "compute": a.compute,
               "iters": a.iters, "warmup": a.warmup}
        out.update(summarize(recs, a, facts))
        out["bytes_per_call"] = sum(s["bytes"] for s in out["stages"])
        out["inter_node_bytes_per_call"] = sum(s["inter_node_bytes"] for s in out["stages"])
        out["spmm_reported_ms_per_call"] = ms
        out["spmm_reported_mb_inter_node"] = mb_inter
        if a.compute == "model":
            out["comm_only_time_per_call_s"] = summarize(none_recs, a, facts)["time_per_call_s"]
            out["overlap"] = overlap(recs, none_recs, a)
        out["check"] = check
        out["wall_s"] = wall
        print(json.dumps(out))
        if not a.quiet:
            print(summary_text(out), file=sys.stderr)
        if check is not None and check != "ok":
            raise Failure("--check failed")
        return 0
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (Usage, machines.MachineError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        sys.exit(2)
    except (Failure, simbuild.BuildError) as e:
        print(f"{PROG}: {e}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
