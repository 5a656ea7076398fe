#!/usr/bin/env python3
"""gen_check.py BUILD_ROOT — shiro-gen: generated files read back with the expected shape.

Checks, with the tools of BUILD_ROOT:
  * grid2d / grid3d (symmetric and general): shiro-plan reads them with the
    exact m, k and nnz of the stencil, and the size line's entry count;
  * rmat: 2^S x 2^S, E * 2^S entry lines, every one in range; the same seed
    gives the same bytes (whatever --threads, to a file or to stdout), another
    seed gives different bytes; --field real reads too;
  * bad arguments: exit status 2 and a message naming the argument; an
    unwritable output: exit status 1.
Exit status 0 if all pass; each failure is printed.
"""
import hashlib
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


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=False, **kw)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def header(path):
    """(banner, size line numbers, entry lines) of a Matrix Market file."""
    with open(path, "rb") as f:
        banner = f.readline().decode()
        line = f.readline()
        while line.startswith(b"%"):
            line = f.readline()
        size = [int(x) for x in line.split()]
        entries = sum(1 for _ in f)
    return banner, size, entries


def plan_shape(plan, path):
    """m, k, nnz as shiro-plan reads them (the CSR after summing duplicates)."""
    r = run([plan, path, "--ranks", "2", "--compare", "--json", "--quiet"])
    if r.returncode != 0:
        return None
    j = json.loads(r.stdout)
    return j["m"], j["k"], j["nnz"]


def main():
    build = sys.argv[1]
    gen = os.path.join(build, "tools", "gen", "shiro-gen")
    plan = os.path.join(build, "tools", "shiro-plan")
    with tempfile.TemporaryDirectory(prefix="shiro_gen_") as tmp:
        f = os.path.join(tmp, "m.mtx")

        # Grids: exact shape. Pairs of neighbours along each axis.
        grids = [
            ("grid2d", ["--nx", "40", "--ny", "30"], (40, 30, 1)),
            ("grid2d", ["--nx", "1", "--ny", "17", "--general"], (1, 17, 1)),
            ("grid2d", ["--nx", "123", "--ny", "77", "--general", "--threads", "2"], (123, 77, 1)),
            ("grid3d", ["--nx", "10", "--ny", "11", "--nz", "12"], (10, 11, 12)),
            ("grid3d", ["--nx", "5", "--ny", "4", "--nz", "30", "--general"], (5, 4, 30)),
        ]
        for kind, args, (nx, ny, nz) in grids:
            r = run([gen, kind] + args + ["-o", f])
            check(r.returncode == 0, "%s %s: exit %d %s" % (kind, args, r.returncode, r.stderr))
            n = nx * ny * nz
            pairs = (nx - 1) * ny * nz + nx * (ny - 1) * nz + nx * ny * (nz - 1)
            general = "--general" in args
            banner, size, lines = header(f)
            want_entries = n + (2 * pairs if general else pairs)
            check(("general" if general else "symmetric") in banner and " real " in banner,
                  "%s %s: banner %r" % (kind, args, banner))
            check(size == [n, n, want_entries] and lines == want_entries,
                  "%s %s: size line %s, %d entry lines; expected %d %d %d" % (kind, args, size, lines, n, n, want_entries))
            check(plan_shape(plan, f) == (n, n, n + 2 * pairs),
                  "%s %s: shiro-plan reads %s, expected (%d, %d, %d)" % (kind, args, plan_shape(plan, f), n, n, n + 2 * pairs))

        # R-MAT: shape, determinism, seeds.
        def rmat(out, seed, threads, extra=()):
            args = [gen, "rmat", "--scale", "11", "--edge-factor", "6", "--seed", str(seed),
                    "--threads", str(threads)] + list(extra)
            if out == "-":
                r = run(args + ["-o", "-"])
                return r.returncode, r.stdout
            r = run(args + ["-o", out])
            return r.returncode, None

        a, b, c = (os.path.join(tmp, x) for x in ("a.mtx", "b.mtx", "c.mtx"))
        check(rmat(a, 7, 1)[0] == 0, "rmat seed 7, 1 thread")
        check(rmat(b, 7, 2)[0] == 0, "rmat seed 7, 2 threads")
        check(rmat(c, 8, 2)[0] == 0, "rmat seed 8")
        check(sha(a) == sha(b), "rmat: the same seed gives different files for 1 and 2 threads")
        check(sha(a) != sha(c), "rmat: seeds 7 and 8 give the same file")
        rc, out = rmat("-", 7, 2)
        check(rc == 0 and out == open(a, "rb").read(), "rmat: -o - differs from the file")
        banner, size, lines = header(a)
        check("pattern general" in banner, "rmat banner %r" % banner)
        check(size == [2048, 2048, 6 * 2048] and lines == 6 * 2048,
              "rmat size line %s, %d entry lines" % (size, lines))
        with open(a) as fh:
            ok = True
            for line in fh:
                if line.startswith("%") or line.count(" ") != 1:
                    continue
                i, j = (int(x) for x in line.split())
                ok = ok and 1 <= i <= 2048 and 1 <= j <= 2048
            check(ok, "rmat: an index out of range")
        shape = plan_shape(plan, a)
        check(shape is not None and shape[:2] == (2048, 2048) and 0 < shape[2] <= 6 * 2048,
              "rmat: shiro-plan reads %s" % (shape,))
        # The R-MAT skew: vertex degrees far from uniform (the densest row
        # holds many times the mean), unscrambled: vertex 1 is the densest.
        rc, out = rmat("-", 7, 1, ["--no-scramble"])
        rows = {}
        for line in out.decode().splitlines()[3:]:
            i = int(line.split()[0])
            rows[i] = rows.get(i, 0) + 1
        check(rc == 0 and max(rows, key=rows.get) == 1 and rows[1] > 20 * 6,
              "rmat --no-scramble: densest row %s" % (max(rows, key=rows.get) if rows else None))
        # Real values.
        check(rmat(c, 7, 2, ["--field", "real"])[0] == 0, "rmat --field real")
        banner, size, lines = header(c)
        check("real general" in banner and lines == 6 * 2048, "rmat real: %r, %d lines" % (banner, lines))
        shape = plan_shape(plan, c)
        check(shape is not None and shape[:2] == (2048, 2048), "rmat real: shiro-plan reads %s" % (shape,))

        # Bad arguments: exit 2, the argument named.
        bad = [
            (["rmat", "--scale", "x", "--edge-factor", "4"], "--scale"),
            (["rmat", "--scale", "0", "--edge-factor", "4"], "--scale"),
            (["rmat", "--scale", "41", "--edge-factor", "4"], "--scale"),
            (["rmat", "--scale", "10"], "--edge-factor"),
            (["rmat", "--edge-factor", "4"], "--scale"),
            (["rmat", "--scale", "10", "--edge-factor", "-1"], "--edge-factor"),
            (["rmat", "--scale", "40", "--edge-factor", "1000000"], "--edge-factor"),
            (["rmat", "--scale", "10", "--edge-factor", "2", "--seed", "abc"], "--seed"),
            (["rmat", "--scale", "10", "--edge-factor", "2", "--field", "complex"], "--field"),
            (["rmat", "--scale", "10", "--edge-factor", "2", "--nx", "3"], "--nx"),
            (["rmat", "--scale", "10", "--edge-factor", "2", "-o"], "-o"),
            (["grid2d", "--nx", "0", "--ny", "3"], "--nx"),
            (["grid2d", "--nx", "3"], "--ny"),
            (["grid2d", "--nx", "3", "--ny", "3", "--nz", "3"], "--nz"),
            (["grid3d", "--nx", "3", "--ny", "3"], "--nz"),
            (["grid3d", "--nx", "3", "--ny", "3", "--nz", "2.5"], "--nz"),
            (["grid2d", "--nx", "3", "--ny", "3", "--threads", "0"], "--threads"),
            (["grid2d", "--nx", "3", "--ny", "3", "extra"], "extra"),
            (["cube", "--nx", "3"], "cube"),
        ]
        for args, name in bad:
            r = run([gen] + args + (["-o", f] if "-o" not in args else []))
            err = r.stderr.decode()
            check(r.returncode == 2 and name in err and err.startswith("shiro-gen: "),
                  "%s: exit %d, message %r (expected 2 naming %s)" % (args, r.returncode, err, name))
        r = run([gen])
        check(r.returncode == 2, "no arguments: exit %d" % r.returncode)
        r = run([gen, "--help"])
        check(r.returncode == 0 and b"rmat" in r.stdout, "--help")
        r = run([gen, "grid2d", "--nx", "3", "--ny", "3", "-o", os.path.join(tmp, "no", "such", "dir.mtx")])
        check(r.returncode == 1, "unwritable output: exit %d" % r.returncode)
    print("test_gen: %d failures" % failures)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
