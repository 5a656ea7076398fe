#!/usr/bin/env python3
"""Recomputes the strategy volumes of DESIGN.md from their definitions, with
code that shares nothing with shiro (its own Matrix Market parser, its own
matching), and compares them with `shiro-plan --compare --json`.

usage: volumes_check.py BUILD_DIR R:G[,R:G...] [--floors R:G[,R:G...]] MATRIX_OR_DIRECTORY...
(a directory stands for every *.mtx / *.mtx.gz in it; --floors: the (R, G) whose floors are
recomputed, default every one: a rank's stripe matchings are the costly part on large matrices)
Checks, per matrix and (R, G):
  * block, col, row, joint total/inter/intra rows equal the recomputation;
  * joint <= col and joint <= row, in total and on every tier;
  * group's inter-node rows equal the sum over ordered pairs of distinct nodes
    (N <- H) of the maximum matching of A(rows of N, columns of H) -- the
    minimum any node-level scheme can reach -- and group <= hier <= joint in
    inter-node rows;
  * cola (CoLa's scheme: B rows only, deduplicated per destination node and
    forwarded rail-aligned) equals its definition: inter-node rows = the sum
    over (source rank q, node N other than q's) of |union over p in N of
    Cols(A(p,q))|; intra-node rows = the sum over pairs inside a node of
    |Cols(A(p,q))| plus, for each such (q, N), |Cols(A(p,q))| for every p in
    N other than rail(N, q), the rank that received them and forwards them;
    and cola <= col in inter-node rows;
  * the floors (--json "floor"): for each node and each rank X, the rows that
    must leave it equal the maximum matching of the nonzeros (i, j) with j's
    owner in X and i's outside (its column stripe against all others), those
    that must enter it that of the nonzeros with i in X and j outside; every
    strategy's inter-node (total) rows are at least the nodes' (ranks') sum,
    and with two nodes group's inter-node rows equal it.
Matrices that do not exist are skipped; exit 77 if all were skipped.
"""
import collections
import glob
import gzip
import json
import os
import subprocess
import sys


def read_mm(path):
    """Pattern of a coordinate Matrix Market file: (m, k, set of (i, j)) 0-based."""
    opener = gzip.open if open(path, "rb").read(2) == b"\x1f\x8b" else open
    with opener(path, "rt") as f:
        banner = f.readline().lower().split()
        sym = banner[4] if len(banner) > 4 else "general"
        line = f.readline()
        while line.startswith("%") or not line.strip():
            line = f.readline()
        m, k, _ = (int(x) for x in line.split())
        pat = set()
        for line in f:
            t = line.split()
            if not t or t[0].startswith("%"):
                continue
            i, j = int(t[0]) - 1, int(t[1]) - 1
            pat.add((i, j))
            if sym != "general" and i != j:
                pat.add((j, i))
    return m, k, pat


def block_first(n, parts):
    return [p * n // parts for p in range(parts + 1)]


def owner_table(first):
    own = []
    for p in range(len(first) - 1):
        own += [p] * (first[p + 1] - first[p])
    return own


def max_matching(adj):
    """Maximum bipartite matching (Hopcroft-Karp): phases of a breadth-first layering from the free
    rows, then vertex-disjoint augmenting paths along the layers by iterative depth-first search."""
    match_row, match_col = {}, {}
    while True:
        dist, queue, found = {}, collections.deque(), False
        for r in adj:
            if r not in match_row:
                dist[r] = 0
                queue.append(r)
        while queue:
            r = queue.popleft()
            for c in adj[r]:
                w = match_col.get(c)
                if w is None:
                    found = True
                elif w not in dist:
                    dist[w] = dist[r] + 1
                    queue.append(w)
        if not found:
            return len(match_row)
        for root in [r for r in adj if r not in match_row]:
            stack, cols = [(root, iter(adj[root]))], []
            while stack:
                u, it = stack[-1]
                for c in it:
                    w = match_col.get(c)
                    if w is None:  # a free column: flip the path root .. u, c
                        cols.append(c)
                        for (r, _), col in zip(stack, cols):
                            match_row[r], match_col[col] = col, r
                        stack = []
                        break
                    if dist.get(w) == dist[u] + 1:
                        stack.append((w, iter(adj[w])))
                        cols.append(c)
                        break
                else:  # no way on from u in this phase
                    dist[u] = None
                    stack.pop()
                    if cols:
                        cols.pop()


def rail(node, r, G, R):
    """The rank of node `node` with r's local index; a smaller last node wraps."""
    size = min(G, R - node * G)
    return node * G + (r % G) % size


def recompute_cola(blocks, R, G):
    """cola's volumes from its definition: [total, inter, intra] rows."""
    cols = {(p, q): {j for a in adj.values() for j in a} for (p, q), adj in blocks.items()}
    union = {}
    inter = intra = 0
    for (p, q), c in cols.items():
        if p // G == q // G:
            intra += len(c)  # direct inside a node
            continue
        union.setdefault((q, p // G), set()).update(c)
        if p != rail(p // G, q, G, R):
            intra += len(c)  # forwarded by the rail-aligned rank of p's node
    inter = sum(len(u) for u in union.values())
    return [inter + intra, inter, intra]


def recompute(m, k, pat, R, G, with_floor=True):
    fr, fc = block_first(m, R), block_first(k, R)
    orow, ocol = owner_table(fr), owner_table(fc)
    blocks = {}
    for i, j in pat:
        p, q = orow[i], ocol[j]
        if p != q:
            blocks.setdefault((p, q), {}).setdefault(i, []).append(j)
    vols = {s: [0, 0, 0] for s in ("block", "col", "row", "joint")}
    nodes = {}
    for (p, q), adj in blocks.items():
        if p // G != q // G:
            merged = nodes.setdefault((p // G, q // G), {})
            for i, js in adj.items():
                merged.setdefault(i, []).extend(js)
    group_inter = sum(max_matching(adj) for adj in nodes.values())

    def add(s, p, q, rows):
        vols[s][0] += rows
        vols[s][1 if p // G != q // G else 2] += rows

    for p in range(R):
        for q in range(R):
            if p != q:
                add("block", p, q, fc[q + 1] - fc[q])
    for (p, q), adj in blocks.items():
        for a in adj.values():
            a.sort()
        ncols = len({j for a in adj.values() for j in a})
        mu = max_matching(adj)
        assert mu <= min(len(adj), ncols)
        add("col", p, q, ncols)
        add("row", p, q, len(adj))
        add("joint", p, q, mu)
    vols["cola"] = recompute_cola(blocks, R, G)

    def stripe_floors(g):
        """Per group of g ranks: the matchings of its column stripe (egress) and row stripe (ingress)."""
        n = (R + g - 1) // g
        out, inn = [dict() for _ in range(n)], [dict() for _ in range(n)]
        for i, j in pat:
            a, b = orow[i] // g, ocol[j] // g
            if a != b:
                out[b].setdefault(i, []).append(j)
                inn[a].setdefault(i, []).append(j)
        return [max_matching(adj) for adj in out], [max_matching(adj) for adj in inn]

    floors = {"node": stripe_floors(G), "rank": stripe_floors(1)} if with_floor else None
    out = {s: {"total_rows": v[0], "inter_node_rows": v[1], "intra_node_rows": v[2]} for s, v in vols.items()}
    return out, group_inter, floors


def check_floors(got_floor, floors, vols, R, G):
    """shiro-plan's floors equal the recomputed ones and no strategy moves fewer rows; messages of what fails."""
    bad = []
    for level, key in (("node", "inter_node_rows"), ("rank", "total_rows")):
        out, inn = floors[level]
        g = got_floor[level]
        if g["egress_rows"] != out or g["ingress_rows"] != inn:
            bad.append(f"{level} floors {g['egress_rows']} / {g['ingress_rows']}, recomputed {out} / {inn}")
        for s, v in vols.items():
            if v[key] < sum(out) or v[key] < sum(inn):
                bad.append(f"{s}: {key} {v[key]} below the {level} floor ({sum(out)} out, {sum(inn)} in)")
    if (R + G - 1) // G == 2 and vols["group"]["inter_node_rows"] != sum(floors["node"][0]):
        bad.append(f"two nodes: group's inter-node rows {vols['group']['inter_node_rows']} != the node floor "
                   f"{sum(floors['node'][0])}")
    return bad


def main():
    build, configs, mats, args = sys.argv[1], sys.argv[2], [], sys.argv[3:]
    floor_at = set(configs.split(","))
    if args[:1] == ["--floors"]:
        floor_at, args = set(args[1].split(",")), args[2:]
    for arg in args:
        mats += sorted(glob.glob(os.path.join(arg, "*.mtx*"))) if os.path.isdir(arg) else [arg]
    failures, checked = 0, 0
    for path in mats:
        if not os.path.exists(path):
            print(f"skip {path} (absent)")
            continue
        m, k, pat = read_mm(path)
        for rg in configs.split(","):
            R, G = (int(x) for x in rg.split(":"))
            with_floor = rg in floor_at
            out = subprocess.run([os.path.join(build, "tools", "shiro-plan"), path, "--ranks", str(R), "--gpus-per-node",
                                  str(G), "--compare", "--json", "--quiet", "--partition", "block",
                                  "--floor" if with_floor else "--no-floor"], stdout=subprocess.PIPE, text=True)
            doc = json.loads(out.stdout) if out.returncode == 0 else None
            got = doc["volumes"] if doc else None
            want, group_inter, floors = recompute(m, k, pat, R, G, with_floor)
            checked += 1
            ok = got is not None and all({key: got[s][key] for key in want[s]} == want[s] for s in want)  # not predicted_time_s
            if got:
                gi, hi, ji = (got[s]["inter_node_rows"] for s in ("group", "hier", "joint"))
                if gi != group_inter or not gi <= hi <= ji:
                    print(f"  inter-node rows: group {gi} (sum of node-pair matchings {group_inter}), hier {hi}, joint {ji}")
                    ok = False
                yi = got["hybrid"]["inter_node_rows"]  # per node pair joint's covers or group's
                if not gi <= yi <= ji:
                    print(f"  inter-node rows: hybrid {yi} outside [group {gi}, joint {ji}]")
                    ok = False
                if not got["cola"]["inter_node_rows"] <= got["col"]["inter_node_rows"]:
                    print(f"  inter-node rows: cola {got['cola']['inter_node_rows']} > col {got['col']['inter_node_rows']}")
                    ok = False
            for msg in check_floors(doc["floor"], floors, got, R, G) if got and with_floor else []:
                print(f"  floor: {msg}")
                ok = False
            for key in ("total_rows", "inter_node_rows", "intra_node_rows"):
                if got and not (got["joint"][key] <= got["col"][key] and got["joint"][key] <= got["row"][key]):
                    ok = False
            print(f"{'ok  ' if ok else 'FAIL'} {os.path.basename(path)} R={R} G={G}: " +
                  ", ".join(f"{s} {want[s]['total_rows']}" for s in want) +
                  f"; inter-node: joint {want['joint']['inter_node_rows']}, group {group_inter}")
            if not ok:
                print(f"  shiro-plan: {got}\n  recomputed: {want}")
                failures += 1
    if checked == 0:
        return 77
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
