#!/usr/bin/env python3
"""The planner's cost model from the command line (no SimGrid needed).

usage: cost_check.py BUILD_DIR
  * shiro-plan --compare --json --machine M: every volumes entry has
    predicted_time_s (> 0) and its stages; the human summary prints them;
    dgx-h100 and a JSON machine file work; a faster NIC predicts less
  * --strategy auto (the default when 1 < G < R) is never predicted slower
    than any strategy it chose from (col, joint, hier, group, cola, hybrid): a
    property over matrices, R, G and machines; the JSON and the plan file
    (its root attribute strategy, read back by shiro-plan-dump) name the
    strategy chosen
  * --effort fast (the default) and exhaustive: --json's candidates name every
    partition weighed or skipped with its price and reason, exactly one is
    kept and it is the plan's (partition, strategy, prediction); the plan
    fast keeps equals, byte for byte, the plan of that strategy and partition
    given directly; at R above the rows METIS is skipped and --json stays JSON;
    a bad --effort is refused naming the option; where the time partition
    moved rows and hybrid's search on block's kept a pure routing, fast skips
    a second search on the time partition (a strategy candidate with its
    reason) and plans what exhaustive plans (f855_mat9_I, shared data)
  * where METIS's edge cut is weighed and not kept (bcsstk01 and west0067
    at R = 16, G = 4), fast lists metis-node and metis-vol as skipped with
    the reason, exhaustive weighs them, and both write the same file
  * shiro-plan-dump --machine: the prediction per stage with its bottleneck
    rank and link, the same time as shiro-plan's; its floors, recomputed from
    the plan file alone, equal what shiro-plan reported (rows per node and rank,
    time, term, place) and lie below its prediction; a 2.0 plan (no local
    matrices) says why it has none
  * bad machines: a name that is none, a file that is not JSON, a field
    missing, unknown, of the wrong type or out of range: exit 2 and a message
    naming the file and the field, no plan written
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "tests", "data")
MACHINES = os.path.join(ROOT, "tools", "sim", "machines")
CANDIDATES = ["col", "joint", "hier", "group", "cola", "hybrid"]
failures = []


def fail(what):
    print(f"FAIL {what}")
    failures.append(what)


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)


def plan_json(build, matrix, R, G, *extra):
    p = run([os.path.join(build, "tools", "shiro-plan"), matrix, "--ranks", str(R), "--gpus-per-node", str(G),
             "--json"] + list(extra))
    if p.returncode != 0:
        fail(f"shiro-plan {os.path.basename(matrix)} R={R} G={G} {' '.join(extra)}: exit {p.returncode}: {p.stderr.strip()}")
        return None, p
    return json.loads(p.stdout), p


def predictions(build, tmp):
    m = os.path.join(DATA, "email-Eu-core.mtx")
    # block: the default partition under auto depends on the machine (time, metis), and a faster
    # NIC must price the same plans lower
    j, p = plan_json(build, m, 16, 4, "--compare", "--machine", "tsubame4", "--partition", "block")
    if j is None:
        return
    for s, v in j["volumes"].items():
        t = v.get("predicted_time_s")
        if not (isinstance(t, float) and t > 0):
            fail(f"--compare --machine tsubame4: {s} has no predicted_time_s > 0: {v}")
        elif abs(sum(v["predicted_stages_s"]) - t) > 1e-9 * t + 1e-12:
            fail(f"{s}: the stages {v['predicted_stages_s']} do not sum to {t}")
    if j.get("machine") != "tsubame4":
        fail(f"JSON machine: {j.get('machine')!r}, expected tsubame4")
    if "predicted ms" not in p.stderr or "predicted on tsubame4" not in p.stderr:
        fail(f"the summary does not print the predictions: {p.stderr}")
    # a faster NIC: every strategy predicted no slower ... and the inter-node ones faster
    fast = os.path.join(tmp, "fast.json")
    with open(os.path.join(MACHINES, "tsubame4.json")) as f:
        d = json.load(f)
    d["nic"]["bandwidth_GBps"] = 100
    d["name"] = "fast-nic"
    with open(fast, "w") as f:
        json.dump(d, f)
    k, _ = plan_json(build, m, 16, 4, "--compare", "--machine", fast, "--partition", "block")
    if k is not None:
        for s in j["volumes"]:
            a, b = j["volumes"][s]["predicted_time_s"], k["volumes"][s]["predicted_time_s"]
            if b > a * (1 + 1e-12):
                fail(f"{s}: a 4x faster NIC predicts {b} s, more than tsubame4's {a} s")
        if k["volumes"]["col"]["predicted_time_s"] >= j["volumes"]["col"]["predicted_time_s"]:
            fail("col: a 4x faster NIC predicts no less")
        if k.get("machine") != "fast-nic":
            fail(f"machine file: JSON machine {k.get('machine')!r}, expected fast-nic")
    g, _ = plan_json(build, m, 16, 8, "--compare", "--machine", "dgx-h100", "--n", "32", "--dtype", "double")
    if g is not None and not all(v.get("predicted_time_s", 0) > 0 for v in g["volumes"].values()):
        fail("dgx-h100, N = 32 double: a strategy without a prediction")


def auto_property(build, tmp):
    """auto's plan is predicted no slower than any candidate, and the JSON and the file say which it is."""
    cases = [("email-Eu-core.mtx", 8, 4, "tsubame4"), ("email-Eu-core.mtx", 16, 4, "tsubame4"),
             ("ca-GrQc.mtx", 16, 4, "tsubame4"), ("ca-GrQc.mtx", 32, 4, "tsubame4"),
             ("bcspwr10.mtx", 16, 4, "tsubame4"), ("tech-routers-rf.mtx", 32, 4, "tsubame4"),
             ("ca-GrQc.mtx", 16, 8, "dgx-h100"), ("email-Eu-core.mtx", 32, 8, "dgx-h100"),
             ("karate.mtx", 8, 2, "tsubame4")]
    for name, R, G, mach in cases:
        m = os.path.join(DATA, name)
        j, _ = plan_json(build, m, R, G, "--compare", "--strategy", "auto", "--machine", mach)
        if j is None:
            continue
        v = j["volumes"]
        chosen = j["strategy"]
        if chosen not in CANDIDATES or j.get("strategy_choice") != "auto":
            fail(f"{name} R={R} G={G} {mach}: auto chose {chosen!r} ({j.get('strategy_choice')!r})")
            continue
        for s in CANDIDATES:
            if v[chosen]["predicted_time_s"] > v[s]["predicted_time_s"]:
                fail(f"{name} R={R} G={G} {mach}: auto's {chosen} is predicted {v[chosen]['predicted_time_s']} s, "
                     f"slower than {s}'s {v[s]['predicted_time_s']} s")
        # the plan written by default (auto when 1 < G < R, here with the same machine) is that strategy's
        out = os.path.join(tmp, f"{name}-{R}-{G}.h5")
        w, _ = plan_json(build, m, R, G, "--machine", mach, "-o", out, "--quiet")
        if w is None:
            continue
        if w["strategy"] != chosen:
            fail(f"{name} R={R} G={G}: the default plan is {w['strategy']}, --compare's auto chose {chosen}")
        if abs(w["volumes"][chosen]["predicted_time_s"] - v[chosen]["predicted_time_s"]) > 1e-15:
            fail(f"{name} R={R} G={G}: the plan's prediction {w['volumes'][chosen]} is not --compare's {v[chosen]}")
        d = run([os.path.join(build, "tools", "shiro-plan-dump"), out, "--json"])
        if d.returncode != 0 or json.loads(d.stdout)["strategy"] != chosen:
            fail(f"{name} R={R} G={G}: the plan file's strategy is not {chosen}: {d.stdout[:300]} {d.stderr}")
    # one node, or one rank per node: the default stays joint (group would move the same rows in two stages)
    for R, G in ((8, 1), (4, 8)):
        j, _ = plan_json(build, os.path.join(DATA, "karate.mtx"), R, G, "--compare")
        if j is not None and (j["strategy"] != "joint" or j.get("strategy_choice") != "given"):
            fail(f"karate R={R} G={G}: default strategy {j['strategy']} ({j.get('strategy_choice')}), expected joint")


def effort(build, tmp):
    """--effort: the candidates auto weighed, the one kept is the plan, and planning it directly gives the same file."""
    cases = [("email-Eu-core.mtx", 16, 4), ("ca-GrQc.mtx", 32, 4), ("bcspwr10.mtx", 16, 4),
             ("tech-routers-rf.mtx", 32, 4), ("karate.mtx", 8, 2), ("lp_afiro.mtx", 8, 2)]
    for name, R, G in cases:
        m = os.path.join(DATA, name)
        for eff in ("fast", "exhaustive"):
            out = os.path.join(tmp, f"{name}-{R}-{eff}.h5")
            j, _ = plan_json(build, m, R, G, "--effort", eff, "-o", out, "--quiet")
            if j is None:
                continue
            what = f"{name} R={R} G={G} --effort {eff}"
            cands = j.get("candidates")
            if j.get("effort") != eff or not isinstance(cands, list) or not cands:
                fail(f"{what}: effort {j.get('effort')!r}, candidates {cands!r}")
                continue
            for c in cands:
                if (c.get("candidate") not in ("partition", "strategy")
                        or c.get("partition") not in ("block", "time", "metis", "metis-node", "metis-vol", "hypergraph") or c.get("priced") not in ("plan", "estimate")
                        or c.get("status") not in ("kept", "weighed", "skipped") or c.get("strategy") not in CANDIDATES
                        or not (c.get("predicted_s") is None or c["predicted_s"] > 0) or not c.get("reason")):
                    fail(f"{what}: bad candidate {c}")
            kept = [c for c in cands if c.get("status") == "kept" and c.get("priced") == "plan"]
            for c in cands:  # a strategy skipped is never the plan's
                if c.get("candidate") == "strategy" and (c["status"] != "skipped" or c["strategy"] == j["strategy"]):
                    fail(f"{what}: strategy candidate {c}, the plan is {j['strategy']}")
            pred = j["volumes"][j["strategy"]]["predicted_time_s"]
            if (len(kept) != 1 or kept[0]["partition"] != j["partition"] or kept[0]["strategy"] != j["strategy"]
                    or abs(kept[0]["predicted_s"] - pred) > 1e-15):
                fail(f"{what}: kept {kept}, the plan is {j['strategy']} on {j['partition']} predicted {pred}")
                continue
            if eff != "fast" or j["partition"] == "time":  # time under auto balances with block's choice
                continue
            direct = os.path.join(tmp, f"{name}-{R}-direct.h5")
            d, _ = plan_json(build, m, R, G, "--strategy", j["strategy"], "--partition", j["partition"], "-o", direct,
                             "--quiet")
            if d is not None and open(direct, "rb").read() != open(out, "rb").read():
                fail(f"{what}: the plan differs from --strategy {j['strategy']} --partition {j['partition']}'s")
    # R above the rows (karate: 34): METIS is not asked (it would print on stdout), --json stays JSON
    for eff in ("fast", "exhaustive"):
        j, p = plan_json(build, os.path.join(DATA, "karate.mtx"), 64, 4, "--effort", eff, "-o",
                         os.path.join(tmp, f"k64-{eff}.h5"), "--quiet")
        if j is not None and not any(c["partition"] == "metis" and c["status"] == "skipped" for c in j["candidates"]):
            fail(f"karate R=64 --effort {eff}: metis not listed as skipped: {j['candidates']}")
    p = run([os.path.join(build, "tools", "shiro-plan"), os.path.join(DATA, "karate.mtx"), "--ranks", "8",
             "--gpus-per-node", "2", "--effort", "slow", "-o", os.path.join(tmp, "no.h5")])
    if p.returncode != 2 or "--effort" not in p.stderr or p.stdout or os.path.exists(os.path.join(tmp, "no.h5")):
        fail(f"--effort slow: exit {p.returncode}, stderr {p.stderr!r}, stdout {p.stdout!r}")


def time_hybrid_skip(build, tmp):
    """Fast auto on the time partition: no second hybrid search after a pure one on block's."""
    m = os.path.join(ROOT, "..", "shared", "data", "matrices", "f855_mat9_I.mtx.gz")
    if not os.path.exists(m):
        print(f"SKIP time partition's hybrid skip: {m} not found (the shared data is beside the project in CI)")
        return
    got = {}
    for eff in ("fast", "exhaustive"):
        j, _ = plan_json(build, m, 8, 2, "--effort", eff, "--machine", "tsubame4", "-o", os.path.join(tmp, f"f855-{eff}.h5"),
                         "--quiet")
        if j is None:
            return
        got[eff] = (j["strategy"], j["partition"], j["volumes"][j["strategy"]]["predicted_time_s"])
        skips = [c for c in j["candidates"] if c["candidate"] == "strategy" and c["partition"] == "time"]
        if eff == "fast" and (j["partition"] != "time" or j.get("hybrid", {}).get("candidate", 9) >= 3
                              or len(skips) != 1 or skips[0]["strategy"] != "hybrid"
                              or "pure routing" not in skips[0]["reason"]):
            fail(f"f855_mat9_I R=8 G=2 fast: partition {j['partition']}, hybrid {j.get('hybrid')}, skips {skips}")
    if got.get("fast") != got.get("exhaustive"):
        fail(f"f855_mat9_I R=8 G=2: fast planned {got.get('fast')}, exhaustive {got.get('exhaustive')}")


def metis_first_lost(build, tmp):
    """Fast: METIS's other objectives are not tried where the edge cut lost; exhaustive plans the same."""
    for name in ("bcsstk01.mtx", "west0067.mtx"):
        m = os.path.join(DATA, name)
        files = {}
        for eff in ("fast", "exhaustive"):
            files[eff] = os.path.join(tmp, f"lost-{name}-{eff}.h5")
            j, _ = plan_json(build, m, 16, 4, "--effort", eff, "--machine", "tsubame4", "-o", files[eff], "--quiet")
            if j is None:
                return
            got = {c["partition"]: c for c in j["candidates"] if c["partition"].startswith("metis")}
            what = f"{name} R=16 G=4 --effort {eff}"
            if set(got) != {"metis", "metis-node", "metis-vol"} or got["metis"]["status"] != "weighed":
                fail(f"{what}: METIS candidates {got}")
                continue
            for v in ("metis-node", "metis-vol"):
                skipped = got[v]["status"] == "skipped" and "other objectives are not tried" in got[v]["reason"]
                if skipped != (eff == "fast"):
                    fail(f"{what}: {v} {got[v]}")
        if open(files["fast"], "rb").read() != open(files["exhaustive"], "rb").read():
            fail(f"{name} R=16 G=4: fast and exhaustive wrote different plans")


def dump(build, tmp):
    m = os.path.join(DATA, "ca-GrQc.mtx")
    out = os.path.join(tmp, "dump.h5")
    j, _ = plan_json(build, m, 16, 4, "--strategy", "group", "--machine", "tsubame4", "-o", out, "--quiet")
    if j is None:
        return
    dump_exe = os.path.join(build, "tools", "shiro-plan-dump")
    p = run([dump_exe, out, "--machine", "tsubame4"])
    if p.returncode != 0 or "bottleneck rank" not in p.stdout or "stage 1:" not in p.stdout:
        fail(f"shiro-plan-dump --machine: exit {p.returncode}, no per-stage prediction: {p.stdout[-800:]} {p.stderr}")
    p = run([dump_exe, out, "--machine", "tsubame4", "--json"])
    if p.returncode != 0:
        fail(f"shiro-plan-dump --machine --json: exit {p.returncode}: {p.stderr}")
        return
    pr = json.loads(p.stdout).get("prediction", {})
    if abs(pr.get("time_per_call_s", 0) - j["volumes"]["group"]["predicted_time_s"]) > 1e-12:
        fail(f"dump's prediction {pr.get('time_per_call_s')} is not shiro-plan's {j['volumes']['group']}")
    for st in pr.get("stages", []):
        if not (0 <= st["bottleneck_rank"] < 16 and st["bottleneck_link"] in
                ("nvlink-send", "nvlink-recv", "nic-send", "nic-recv") and st["link_messages"] > 0):
            fail(f"dump's stage {st}: no bottleneck rank and link")
    if len(pr.get("stages", [])) != 2:
        fail(f"group's plan: {len(pr.get('stages', []))} stages predicted, expected 2")


def dump_floors(build, tmp):
    """shiro-plan-dump --machine recomputes the floors from the plan file alone (its ranks' local
    matrices): the same rows per node and rank, the same time floor, term and place as shiro-plan
    reported when it planned, on contiguous and row-list (metis) partitions, square and rectangular
    A, one tier and two; and the dump's prediction is never below its floor."""
    dump_exe = os.path.join(build, "tools", "shiro-plan-dump")
    cases = [("ca-GrQc.mtx", 16, 4, ["--strategy", "group", "--partition", "block"], "tsubame4", []),
             ("email-Eu-core.mtx", 8, 4, ["--partition", "metis"], "tsubame4", []),
             ("email-Eu-core.mtx", 8, 2, ["--strategy", "hybrid"], "dgx-h100", ["--n", "32", "--dtype", "double"]),
             ("lp_ship04l.mtx", 6, 2, ["--strategy", "joint"], "tsubame4", []),
             ("karate.mtx", 4, 1, ["--strategy", "joint", "--partition", "nnz"], "tsubame4", [])]
    for name, R, G, how, mach, width in cases:
        out = os.path.join(tmp, "floors.h5")
        what = f"{name} R={R} G={G} {' '.join(how)}"
        j, _ = plan_json(build, os.path.join(DATA, name), R, G, *how, "--machine", mach, *width, "-o", out, "--quiet")
        if j is None:
            continue
        p = run([dump_exe, out, "--machine", mach, "--json"] + width)
        if p.returncode != 0:
            fail(f"{what}: shiro-plan-dump --machine --json: exit {p.returncode}: {p.stderr}")
            continue
        d = json.loads(p.stdout)
        got, want = d.get("floor"), j.get("floor")
        if not got or not want:
            fail(f"{what}: no floor (dump {got}, shiro-plan {want})")
            continue
        for key in ("term", "at"):
            if got[key] != want[key]:
                fail(f"{what}: the dump's floor {key} {got[key]!r}, shiro-plan's {want[key]!r}")
        if abs(got["time_s"] - want["time_s"]) > 1e-9 * want["time_s"]:
            fail(f"{what}: the dump's time floor {got['time_s']}, shiro-plan's {want['time_s']}")
        for level in ("node", "rank"):
            for key in ("egress_rows", "ingress_rows"):
                if got[level][key] != want[level][key]:
                    fail(f"{what}: the dump's {level} {key} {got[level][key]}, shiro-plan's {want[level][key]}")
        if not d["prediction"]["time_per_call_s"] >= got["time_s"] > 0:
            fail(f"{what}: predicted {d['prediction']['time_per_call_s']} s, below its floor {got['time_s']} s")
        t = run([dump_exe, out, "--machine", mach] + width)
        if t.returncode != 0 or "x the floor; the floor's term: " + want["term"] not in t.stdout:
            fail(f"{what}: shiro-plan-dump --machine's text has no floor line: {t.stdout[-600:]} {t.stderr}")
    old = os.path.join(tmp, "v20.h5")
    with gzip.open(os.path.join(DATA, "golden", "karate-joint.shiro.h5.gz")) as f, open(old, "wb") as o:
        o.write(f.read())
    t = run([dump_exe, old, "--machine", "tsubame4"])
    if t.returncode != 0 or "floor: not computed (a format 2.0 plan" not in t.stdout:
        fail(f"a 2.0 plan: exit {t.returncode}, no reason for its missing floor: {t.stdout[-400:]} {t.stderr}")
    t = run([dump_exe, old, "--machine", "tsubame4", "--json"])
    if t.returncode != 0 or json.loads(t.stdout).get("floor", 0) is not None:
        fail(f"a 2.0 plan --json: exit {t.returncode}, floor not null: {t.stdout[-400:]} {t.stderr}")


def bad_machines(build, tmp):
    m = os.path.join(DATA, "karate.mtx")
    with open(os.path.join(MACHINES, "tsubame4.json")) as f:
        good = json.load(f)

    def variant(name, edit):
        d = json.loads(json.dumps(good))
        edit(d)
        path = os.path.join(tmp, name + ".json")
        with open(path, "w") as f:
            json.dump(d, f)
        return path

    def unknown(d): d["nics"] = 4
    def no_nic(d): del d["nic"]
    def zero_bw(d): d["nic"]["bandwidth_GBps"] = 0
    def neg_lat(d): d["nvlink"]["latency_us"] = -1
    def str_gpus(d): d["gpus_per_node"] = "4"
    def frac_gpus(d): d["gpus_per_node"] = 4.5
    def many_nics(d): d["nics_per_node"] = 8
    def bad_model(d): d["network_model"] = "fast"
    def bad_rate(d): d["gpu"]["spmm_tflops"]["float"] = {"x": 1}
    def bad_core(d): d["core"] = {"latency_us": "1"}
    cases = [(variant("unknown", unknown), ["nics", "unknown field"]),
             (variant("no-nic", no_nic), ["nic", "missing"]),
             (variant("zero-bw", zero_bw), ["nic.bandwidth_GBps", "> 0"]),
             (variant("neg-lat", neg_lat), ["nvlink.latency_us", ">= 0"]),
             (variant("str-gpus", str_gpus), ["gpus_per_node", "integer"]),
             (variant("frac-gpus", frac_gpus), ["gpus_per_node", "integer"]),
             (variant("many-nics", many_nics), ["nics_per_node", "more than gpus_per_node"]),
             (variant("bad-model", bad_model), ["network_model", "smpi, ideal"]),
             (variant("bad-rate", bad_rate), ["gpu.spmm_tflops.float", "positive integer"]),
             (variant("bad-core", bad_core), ["core.latency_us", "a number"])]
    notjson = os.path.join(tmp, "notjson.json")
    with open(notjson, "w") as f:
        f.write('{"name": "x",\n "gpus_per_node": 4,\n "nic": {"bandwidth_GBps": 25, }\n}\n')
    cases += [(notjson, [":3:", "not JSON"]), ("no-such-machine", ["no-such-machine", "tsubame4", "dgx-h100"]),
              (os.path.join(tmp, "missing-dir", "m.json"), ["m.json", "neither"])]
    for path, words in cases:
        out = os.path.join(tmp, "never.h5")
        for cmd in ([os.path.join(build, "tools", "shiro-plan"), m, "--ranks", "8", "--gpus-per-node", "4",
                     "--machine", path, "-o", out],
                    [os.path.join(build, "tools", "shiro-plan-dump"), os.path.join(tmp, "dump.h5"), "--machine", path]):
            p = run(cmd)
            want = words + ([path] if os.path.sep in path else [])
            if p.returncode != 2 or not all(w in p.stderr for w in want):
                fail(f"{os.path.basename(cmd[0])} --machine {path}: exit {p.returncode}, expected 2 and {want} in: "
                     f"{p.stderr.strip()}")
            if os.path.exists(out):
                fail(f"--machine {path}: a plan was written")
                os.remove(out)


def main():
    build = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        predictions(build, tmp)
        auto_property(build, tmp)
        effort(build, tmp)
        time_hybrid_skip(build, tmp)
        metis_first_lost(build, tmp)
        dump(build, tmp)
        dump_floors(build, tmp)
        bad_machines(build, tmp)
    print(f"{len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
