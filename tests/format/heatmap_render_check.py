#!/usr/bin/env python3
"""shiro-plan-dump --heatmap, rendered: plans a real matrix, writes its heatmap on
both scales, renders each with rsvg-convert and decodes the PNG (zlib, no PIL):
the picture must not be blank (a good share of non-white pixels, many distinct
colours: two colour bars and the cells) and the two scales must differ.

usage: heatmap_render_check.py BUILD_DIR MATRIX
Exit 77 (skipped) when rsvg-convert is missing (Debian: librsvg2-bin,
tools/dev/install-deps.sh installs it).
"""
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib


def read_png(path):
    """(width, height, rows of (r, g, b) tuples) of an 8-bit RGB or RGBA, non-interlaced PNG."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, ctype, _, _, interlace = hdr
    if depth != 8 or ctype not in (2, 6) or interlace:
        raise ValueError(f"{path}: depth {depth}, colour type {ctype}, interlace {interlace}: not handled")
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x * bpp:x * bpp + 3]) for x in range(w)])
        prev = line
    return w, h, rows


def main():
    build, matrix = sys.argv[1], sys.argv[2]
    rsvg = shutil.which("rsvg-convert")
    if not rsvg:
        print("SKIP: rsvg-convert not found (Debian package librsvg2-bin; tools/dev/install-deps.sh installs it)")
        return 77
    tools = os.path.join(build, "tools")
    failures = 0

    def expect(cond, what):
        nonlocal failures
        print(("ok   " if cond else "FAIL ") + what)
        failures += not cond

    with tempfile.TemporaryDirectory() as tmp:
        plan = os.path.join(tmp, "p.shiro.h5")
        p = subprocess.run([os.path.join(tools, "shiro-plan"), matrix, "--ranks", "8", "--gpus-per-node", "4", "-o", plan,
                            "--quiet"], capture_output=True, text=True, timeout=120)
        expect(p.returncode == 0, f"shiro-plan: exit {p.returncode} {p.stderr.strip()}")
        pixels = {}
        for scale in ("linear", "log"):
            svg, png = os.path.join(tmp, f"{scale}.svg"), os.path.join(tmp, f"{scale}.png")
            d = subprocess.run([os.path.join(tools, "shiro-plan-dump"), plan, "--heatmap", svg, "--heatmap-scale", scale],
                               capture_output=True, text=True, timeout=120)
            expect(d.returncode == 0, f"--heatmap-scale {scale}: exit {d.returncode} {d.stderr.strip()}")
            r = subprocess.run([rsvg, svg, "-o", png], capture_output=True, text=True, timeout=120)
            expect(r.returncode == 0 and os.path.exists(png), f"rsvg-convert {scale}: exit {r.returncode} {r.stderr.strip()}")
            if r.returncode != 0:
                continue
            w, h, rows = read_png(png)
            flat = [px for row in rows for px in row]
            colours = set(flat)
            ink = sum(1 for px in flat if px != (255, 255, 255)) / len(flat)
            hues = {px for px in colours if max(px) - min(px) > 40}  # not grey: the ramps, not text anti-aliasing
            print(f"     {scale}: {w} x {h}, {len(colours)} distinct colours ({len(hues)} not grey), "
                  f"{100 * ink:.1f}% non-white")
            expect(w >= 400 and h >= 300, f"{scale}: size {w} x {h}")
            expect(len(colours) >= 50, f"{scale}: {len(colours)} distinct colours (>= 50: bars, cells, text)")
            expect(len(hues) >= 30, f"{scale}: {len(hues)} distinct non-grey colours (>= 30: the two colour ramps)")
            expect(ink >= 0.08, f"{scale}: {100 * ink:.1f}% non-white pixels (>= 8%)")
            pixels[scale] = flat
        if len(pixels) == 2:
            expect(pixels["linear"] != pixels["log"], "the two scales draw different pictures")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
