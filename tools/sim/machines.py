"""machines.py — machine models (JSON) and the SimGrid platforms made from them.

A machine file (tools/sim/README.md, "Machine files") says how GPUs are
wired; machine_platform() turns it into a SimGrid platform for R ranks, host
gpu<r> for rank r. Per GPU an NVLink port (SPLITDUPLEX: each direction its
own bandwidth) into a non-blocking switch; per node nics_per_node NICs
(SPLITDUPLEX; GPU i of a node uses NIC i mod nics_per_node) into a
non-blocking core. Routes: gpu a -> gpu b in the same node crosses NVLink(a)
up and NVLink(b) down; in another node NIC(a) up, the core's latency, NIC(b)
down. The core is never a link every flow shares: one such link puts every
flow in one component of SimGrid's max-min solver, which took R = 128 over
11 minutes on this project's 2-core build machine.

Two layouts, the same simulated times (tests/sim/sim_check.py checks it):
  flat   one zone (routing Full), a route per ordered pair of GPUs, the core's
         latency split between the two NICs. R² routes (2.2 MB of XML at
         R = 128), and the fastest to simulate: col on soc-Slashdot0902 at
         R = 128, one call, 27 s;
  zones  a zone per node (routing Full: its G GPUs and a gateway) and per
         ordered node pair a zoneRoute through a core link of its own
         (FATPIPE, no bandwidth limit: SimGrid refuses empty routes). G² + 2G
         routes per node and nodes² zoneRoutes, for R in the thousands; the
         core links are constraints of the solver all the same, and the same
         call took 74 s.
"""
import json
import os
import re
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
MACHINES_DIR = os.path.join(HERE, "machines")

# The H200's measured rates (tools/sim/README.md, "The compute model"): cuSPARSE CSR x row-major dense,
# the CUDA backend's algorithm, R-MAT scale 22, in TFLOP/s by N; the own gather kernel's TB/s.
H200_GPU = {
    "spmm_tflops": {"float": {"32": 1.22, "64": 1.65, "128": 2.39}, "double": {"32": 0.77, "64": 1.15, "128": 1.16}},
    "hbm_TBps": 3.0,
    "launch_us": 0.0,
}
NETWORK_MODELS = ("smpi", "ideal")


class MachineError(Exception):
    """A machine file or name that cannot be used; str() names the file and the field."""


def builtin_machines():
    """Names of the machines in tools/sim/machines (NAME.json)."""
    return sorted(f[:-5] for f in os.listdir(MACHINES_DIR) if f.endswith(".json"))


def _number(where, obj, key, default=None, positive=True, integer=False):
    """obj[key] as a number, checked; default when absent (None: required)."""
    if key not in obj:
        if default is None:
            raise MachineError(f"{where}.{key}: missing (required)" if where else f"{key}: missing (required)")
        return default
    v = obj[key]
    name = f"{where}.{key}" if where else key
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (integer and not isinstance(v, int)):
        raise MachineError(f"{name}: expected {'an integer' if integer else 'a number'}, found {json.dumps(v)}")
    if positive and not v > 0:
        raise MachineError(f"{name}: expected a number > 0, found {v}")
    if not positive and v < 0:
        raise MachineError(f"{name}: expected a number >= 0, found {v}")
    return v


def _object(where, obj, key, required=True):
    if key not in obj:
        if required:
            raise MachineError(f"{where + '.' if where else ''}{key}: missing (required)")
        return {}
    v = obj[key]
    if not isinstance(v, dict):
        raise MachineError(f"{where + '.' if where else ''}{key}: expected an object, found {json.dumps(v)}")
    return v


def _rate_table(where, table):
    """{"32": 0.95, ...} -> sorted [(32, 0.95), ...], checked."""
    if not isinstance(table, dict) or not table:
        raise MachineError(f"{where}: expected an object of N: TFLOP/s, found {json.dumps(table)}")
    out = []
    for n, r in table.items():
        if not re.fullmatch(r"[1-9][0-9]*", str(n)):
            raise MachineError(f"{where}: key {json.dumps(n)}: expected N, a positive integer")
        out.append((int(n), _number(where, table, n)))
    return sorted(out)


def check_machine(m):
    """Validates a machine object and returns it with every default filled in."""
    if not isinstance(m, dict):
        raise MachineError(f"expected a JSON object, found {type(m).__name__}")
    known = {"name", "description", "gpus_per_node", "nvlink", "nic", "nics_per_node", "core", "network_model", "gpu"}
    for key in m:
        if key not in known:
            raise MachineError(f"{key}: unknown field (expected some of {', '.join(sorted(known))})")
    out = {"name": m.get("name", ""), "description": m.get("description", "")}
    if not isinstance(out["name"], str) or not isinstance(out["description"], str):
        raise MachineError("name, description: expected strings")
    out["gpus_per_node"] = _number("", m, "gpus_per_node", integer=True)
    for link in ("nvlink", "nic"):
        o = _object("", m, link)
        out[link] = {"bandwidth_GBps": _number(link, o, "bandwidth_GBps"),
                     "latency_us": _number(link, o, "latency_us", positive=False)}
    out["nics_per_node"] = _number("", m, "nics_per_node", default=out["gpus_per_node"], integer=True)
    if out["nics_per_node"] > out["gpus_per_node"]:
        raise MachineError(f"nics_per_node: {out['nics_per_node']} is more than gpus_per_node "
                           f"{out['gpus_per_node']} (each GPU uses one NIC)")
    core = _object("", m, "core", required=False)
    out["core"] = {"latency_us": _number("core", core, "latency_us", default=0.0, positive=False)}
    out["network_model"] = m.get("network_model", "smpi")
    if out["network_model"] not in NETWORK_MODELS:
        raise MachineError(f"network_model: expected one of {', '.join(NETWORK_MODELS)}, "
                           f"found {json.dumps(out['network_model'])}")
    gpu = _object("", m, "gpu", required=False)
    tables = gpu.get("spmm_tflops", H200_GPU["spmm_tflops"])
    if not isinstance(tables, dict):
        raise MachineError(f"gpu.spmm_tflops: expected an object with float and double, found {json.dumps(tables)}")
    out["gpu"] = {"spmm_tflops": {}, "hbm_TBps": _number("gpu", gpu, "hbm_TBps", default=H200_GPU["hbm_TBps"]),
                  "launch_us": _number("gpu", gpu, "launch_us", default=0.0, positive=False)}
    for dt in ("float", "double"):
        out["gpu"]["spmm_tflops"][dt] = _rate_table(f"gpu.spmm_tflops.{dt}",
                                                    tables.get(dt, H200_GPU["spmm_tflops"][dt]))
    return out


def load_machine(spec):
    """A built-in machine's name, or a JSON machine file's path -> (machine, source).
    Raises MachineError naming the file (and the field) when it cannot be used."""
    if spec in builtin_machines():
        path = os.path.join(MACHINES_DIR, spec + ".json")
    elif os.path.exists(spec):
        path = spec
    else:
        raise MachineError(f"--machine {spec}: neither a built-in machine ({', '.join(builtin_machines())}) "
                           f"nor a machine file")
    try:
        with open(path) as f:
            raw = json.load(f)
    except json.JSONDecodeError as e:
        raise MachineError(f"{path}:{e.lineno}:{e.colno}: not JSON: {e.msg}")
    except (OSError, UnicodeDecodeError) as e:
        raise MachineError(f"{path}: cannot read: {e}")
    try:
        m = check_machine(raw)
    except MachineError as e:
        raise MachineError(f"{path}: {e}")
    if not m["name"]:
        m["name"] = os.path.splitext(os.path.basename(path))[0]
    return m, path


def _bw(gbps):
    return f"{gbps!r}GBps"


def _lat(us):
    return f"{us!r}us"


LAYOUTS = ("auto", "flat", "zones")
FLAT_MAX_RANKS = 256  # auto: flat up to here (R² routes: 2.2 MB of XML at R = 128), zones beyond


def machine_platform(m, ranks, layout="auto"):
    """The SimGrid platform XML (a string) of machine m for `ranks` ranks: hosts gpu0 .. gpu<ranks-1>.
    layout flat: one zone, a route per ordered pair of GPUs; zones: a zone per node (see the top of
    this file); auto: flat up to FLAT_MAX_RANKS ranks. Both give the same simulated times."""
    if layout == "auto":
        layout = "flat" if ranks <= FLAT_MAX_RANKS else "zones"
    G = m["gpus_per_node"]
    nodes = (ranks + G - 1) // G
    L = ["<?xml version='1.0'?>", '<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">',
         '<platform version="4.1">',
         f'<!-- machine {m["name"]}: {ranks} GPUs, {G} per node, layout {layout}; made by tools/sim/machines.py -->',
         '<zone id="world" routing="Full">']
    L += (_flat if layout == "flat" else _zones)(m, ranks, G, nodes)
    L += ['</zone>', '</platform>']
    return "\n".join(L) + "\n"


def _links(m, gpus, k, nic_latency_us, indent):
    """The NVLink ports of `gpus` (node k) and the node's NICs."""
    nv, nic = m["nvlink"], m["nic"]
    L = [f'{indent}<link id="gpu{r}-nvlink" bandwidth="{_bw(nv["bandwidth_GBps"])}" latency="{_lat(nv["latency_us"])}" '
         f'sharing_policy="SPLITDUPLEX"/>' for r in gpus]
    L += [f'{indent}<link id="node{k}-nic{i}" bandwidth="{_bw(nic["bandwidth_GBps"])}" latency="{_lat(nic_latency_us)}" '
          f'sharing_policy="SPLITDUPLEX"/>' for i in range(min(m["nics_per_node"], len(gpus)))]
    return L


def _nic(m, r, G):
    """The id of the NIC rank r uses: NIC (r mod G) mod nics_per_node of its node."""
    k = r // G
    return f"node{k}-nic{(r - k * G) % m['nics_per_node']}"


def _route(a, b, up, down, indent="  "):
    return (f'{indent}<route src="gpu{a}" dst="gpu{b}" symmetrical="NO"><link_ctn id="{up}" direction="UP"/>'
            f'<link_ctn id="{down}" direction="DOWN"/></route>')


def _flat(m, ranks, G, nodes):
    """One Full zone: every host, every link, a route per ordered pair; the core's latency is
    split between the two NICs of an inter-node route (the core itself is no constraint)."""
    L = [f'  <host id="gpu{r}" speed="1Gf"/>' for r in range(ranks)]
    for k in range(nodes):
        L += _links(m, range(k * G, min(ranks, (k + 1) * G)), k, m["nic"]["latency_us"] + m["core"]["latency_us"] / 2, "  ")
    for a in range(ranks):
        for b in range(ranks):
            if a != b:
                L.append(_route(a, b, f"gpu{a}-nvlink", f"gpu{b}-nvlink") if a // G == b // G
                         else _route(a, b, _nic(m, a, G), _nic(m, b, G)))
    return L


def _zones(m, ranks, G, nodes):
    """A zone per node, a zoneRoute per ordered node pair through its own core link."""
    L = []
    for k in range(nodes):
        gpus = range(k * G, min(ranks, (k + 1) * G))
        L.append(f'  <zone id="node{k}" routing="Full">')
        L += [f'    <host id="gpu{r}" speed="1Gf"/>' for r in gpus]
        L.append(f'    <router id="node{k}-gw"/>')
        L += _links(m, gpus, k, m["nic"]["latency_us"], "    ")
        for a in gpus:
            L += [_route(a, b, f"gpu{a}-nvlink", f"gpu{b}-nvlink", "    ") for b in gpus if b != a]
            L.append(f'    <route src="gpu{a}" dst="node{k}-gw" symmetrical="NO"><link_ctn id="{_nic(m, a, G)}" '
                     f'direction="UP"/></route>')
            L.append(f'    <route src="node{k}-gw" dst="gpu{a}" symmetrical="NO"><link_ctn id="{_nic(m, a, G)}" '
                     f'direction="DOWN"/></route>')
        L.append('  </zone>')
    core = _lat(m["core"]["latency_us"])
    pairs = [(a, b) for a in range(nodes) for b in range(nodes) if a != b]
    L += [f'  <link id="core{a}-{b}" bandwidth="1e9GBps" latency="{core}" sharing_policy="FATPIPE"/>' for a, b in pairs]
    L += [f'  <zoneRoute src="node{a}" dst="node{b}" gw_src="node{a}-gw" gw_dst="node{b}-gw" symmetrical="NO">'
          f'<link_ctn id="core{a}-{b}"/></zoneRoute>' for a, b in pairs]
    return L


def platform_hosts(path):
    """The host names a SimGrid platform XML file declares (<host id>, and the
    hosts of <cluster prefix radical suffix>). Raises MachineError naming the
    file when it cannot be read as one."""
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        raise MachineError(f"{path}: not a platform XML file: {e}")
    except OSError as e:
        raise MachineError(f"{path}: cannot read: {e}")
    if root.tag != "platform":
        raise MachineError(f"{path}: the root element is <{root.tag}>, expected <platform>")
    hosts = {h.get("id") for h in root.iter("host")}
    for c in root.iter("cluster"):
        prefix, suffix = c.get("prefix", ""), c.get("suffix", "")
        for part in (c.get("radical") or "").split(","):
            lo, _, hi = part.partition("-")
            try:
                for r in range(int(lo), int(hi or lo) + 1):
                    hosts.add(f"{prefix}{r}{suffix}")
            except ValueError:
                raise MachineError(f"{path}: cluster {c.get('id')}: radical {c.get('radical')!r} is not a range list")
    return hosts
