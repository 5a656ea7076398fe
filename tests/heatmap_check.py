#!/usr/bin/env python3
"""Runs test_heatmap, then parses every SVG it wrote with Python's XML parser:
the images must be well-formed XML (what a browser needs to open them), SVG in
the SVG namespace, with a size, a title per drawn cell and valid colours.

usage: heatmap_check.py TEST_HEATMAP_EXE
"""
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


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
            if name == "four.svg":
                expect(len(cells) == 16, f"four.svg: {len(cells)} titled cells, expected 16")
                titles = {c.find(SVG + "title").text for c in cells}
                expect("rank 3 \u2192 rank 2: 123456789 rows per call, intra-node" in titles,
                       "four.svg: exact count in a hover title")
                expect(any(g.tag == SVG + "linearGradient" for g in root.iter()), "four.svg: legend gradients")
            if name == "thirteen.svg":
                t = root.find(SVG + "title")
                expect(t is not None and t.text == "a<b & \"c\" 'd' >", f"thirteen.svg: title {t.text if t is not None else None!r}")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
