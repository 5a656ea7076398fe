#!/usr/bin/env python3
"""Runs test_heatmap, then parses every SVG it wrote with Python's XML parser:
the images must be well-formed XML (what a browser needs to open them), SVG in
the SVG namespace, with a size, a title per drawn cell and valid colours; no two
labels of the legend overlap (boxes estimated from the font size); and on the
linear scale close counts (386, 704 of 1000) get colours far apart, farther
than on the log scale.

usage: heatmap_check.py TEST_HEATMAP_EXE
"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def text_box(t):
    """(x0, y0, x1, y1) of a <text>, estimated: 0.6 em a character, 0.75 em above the baseline, 0.25 below."""
    fs = float(t.get("font-size", t.attrib.get("_fs", "11")))
    x, y, w = float(t.get("x")), float(t.get("y")), 0.6 * fs * len(t.text or "")
    anchor = t.get("text-anchor", "start")
    x0 = x - w / 2 if anchor == "middle" else x - w if anchor == "end" else x
    if t.get("dominant-baseline") == "middle":
        return (x0, y - fs / 2, x0 + w, y + fs / 2)
    return (x0, y - 0.75 * fs, x0 + w, y + 0.25 * fs)


def legend_overlaps(root):
    """Pairs of overlapping labels in the legend (the group holding "rows per call")."""
    for g in root.iter(SVG + "g"):
        texts = [t for t in g.findall(SVG + "text") if not t.get("transform")]
        if not any(t.text == "rows per call" for t in texts):
            continue
        for t in texts:
            t.attrib["_fs"] = g.get("font-size", "11")
        boxes = [(t.text, text_box(t)) for t in texts]
        return [(a, b) for i, (a, p) in enumerate(boxes) for (b, q) in boxes[i + 1:]
                if p[0] < q[2] and q[0] < p[2] and p[1] < q[3] and q[1] < p[3]]
    return None


def cell_fill(root, title_start):
    for r in root.iter(SVG + "rect"):
        t = r.find(SVG + "title")
        if t is not None and (t.text or "").startswith(title_start):
            h = r.get("fill")
            return tuple(int(h[i:i + 2], 16) for i in (1, 3, 5))
    return None


def main():
    exe = sys.argv[1]
    failures = 0

    def expect(cond, what):
        nonlocal failures
        if not cond:
            failures += 1
            print(f"FAIL {what}")

    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([exe, tmp], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=600)
        print(p.stdout, end="")
        expect(p.returncode == 0, f"test_heatmap exit {p.returncode}")
        names = sorted(f for f in os.listdir(tmp) if f.endswith(".svg"))
        expect(len(names) >= 7, f"images written: {names}")
        for name in names:
            path = os.path.join(tmp, name)
            try:
                root = ET.parse(path).getroot()
            except ET.ParseError as e:
                expect(False, f"{name}: not well-formed XML: {e}")
                continue
            expect(root.tag == SVG + "svg", f"{name}: root element {root.tag}")
            w, h = root.get("width"), root.get("height")
            expect(w and h and float(w) > 0 and float(h) > 0, f"{name}: size {w} x {h}")
            expect(root.get("viewBox") == f"0 0 {w} {h}", f"{name}: viewBox {root.get('viewBox')}")
            cells = [r for r in root.iter(SVG + "rect") if r.find(SVG + "title") is not None
                     and (r.find(SVG + "title").text or "").startswith("rank ")]
            expect(len(cells) > 0, f"{name}: no cell with a title")
            for r in cells:
                fill = r.get("fill", "")
                if not re.fullmatch(r"#[0-9a-f]{6}", fill):
                    expect(False, f"{name}: cell fill {fill!r}")
                    break
            ticks = [t.text for t in root.iter(SVG + "text")]
            expect(any(t and "destination rank" in t for t in ticks), f"{name}: no y axis title")
            expect(any(t and "source rank" in t for t in ticks), f"{name}: no x axis title")
            if name not in ("empty.svg", "one.svg"):
                over = legend_overlaps(root)
                expect(over == [], f"{name}: legend labels overlap: {over}")
            if name == "four.svg":
                expect(len(cells) == 16, f"four.svg: {len(cells)} titled cells, expected 16")
                titles = {c.find(SVG + "title").text for c in cells}
                expect("rank 3 \u2192 rank 2: 123456789 rows per call, intra-node" in titles,
                       "four.svg: exact count in a hover title")
                expect(any(g.tag == SVG + "linearGradient" for g in root.iter()), "four.svg: legend gradients")
            if name == "thirteen.svg":
                t = root.find(SVG + "title")
                expect(t is not None and t.text == "a<b & \"c\" 'd' >", f"thirteen.svg: title {t.text if t is not None else None!r}")
        dist = {}
        for scale in ("linear", "log"):
            path = os.path.join(tmp, f"close-{scale}.svg")
            if not os.path.exists(path):
                expect(False, f"close-{scale}.svg not written")
                continue
            root = ET.parse(path).getroot()
            a, b = cell_fill(root, "rank 2 \u2192 rank 0: 386 rows"), cell_fill(root, "rank 3 \u2192 rank 0: 704 rows")
            expect(a is not None and b is not None, f"close-{scale}.svg: cells 386 and 704 found")
            if a and b:
                dist[scale] = sum((x - y) ** 2 for x, y in zip(a, b)) ** 0.5
        print(f"colour distance of 386 and 704: {dist}")
        expect(dist.get("linear", 0) > 100, f"linear scale: 386 and 704 far apart ({dist.get('linear')})")
        expect(dist.get("linear", 0) > dist.get("log", 1e9), "linear scale tells 386 from 704 better than log")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
