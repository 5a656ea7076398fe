#!/usr/bin/env python3
"""Golden plan files: the format's promises pinned by committed witnesses.

    golden_check.py BUILD_ROOT [--regenerate | --add]

tests/data/golden/cases.tsv lists the cases (name, matrix in tests/data,
shiro-plan options). For each NAME, tests/data/golden/ holds

    NAME.shiro.h5.gz      the plan shiro-plan wrote (gzip -n; gunzip -k to inspect it)
    NAME.dump.json        `shiro-plan-dump NAME.shiro.h5 --json`
    NAME.verify.json      `shiro-plan-dump NAME.shiro.h5 --verify --json --matrix MATRIX`
    NAME.local.txt        (format 2.1 witnesses) `tests/test_local_matrix NAME.shiro.h5`: every
                          rank's local matrix, after its check of the plan's val_src

and this test checks, with the tools of BUILD_ROOT:

  (a) reading: the dump of the golden file equals NAME.dump.json byte for
      byte. Nothing in it depends on the build: "plan" is the path given
      (run here as the bare file name), "format_version" is the file's;
  (b) proving: `--verify --matrix` on the golden file passes, and its report
      equals NAME.verify.json (checksums, bounds, R4, symbolic execution,
      certificates, and the file's digests against today's digest code);
  (c) writing: planning the matrix again with the same options gives a plan
      whose dump and verify report equal the golden ones (format_version
      aside: a newer minor writer writes its own version), so a renumbered
      OPF_/XF_/PROG_ field (format/program.h), a changed digest or a changed
      op or record layout fails here or in (a)/(b).

The local matrices (NAME.local.txt, where it exists) are compared like the
dump, in (a) and (c).

The golden files are the witnesses of format 2.0 (PLAN_VERSION_MAJOR/MINOR
in format/plan_file.h, and format/README.md's version policy): every 2.x
reader must pass (a) and (b) on them unchanged. Regenerating them is a
format change, never a way to make this test pass:

    tests/format/golden_check.py BUILD_ROOT --regenerate

rewrites every golden file from today's tools. It refuses if (a) or (b)
fails on the committed files, unless --force: then the reader or the digest
has changed, which is a new major version, or shiro-plan-dump's report has
(a key added: check that only that changed, then --force). Only (c) failing means the
planner chose differently (other covers, another layout) for files of the
same format; say so in the commit that regenerates. The metis case also
depends on libmetis's partition (Debian 12's METIS 5.1.0, seed 1). When the
minor version grows, keep these files and add golden files of the new minor
beside them: a new line in cases.tsv, then

    tests/format/golden_check.py BUILD_ROOT --add

writes the files of the cases that have none, and only those (the v2.1-*
cases are format 2.1's witnesses, added that way).
"""
import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # tests/
GOLDEN = os.path.join(HERE, "data", "golden")
DATA = os.path.join(HERE, "data")


def cases():
    """The (name, matrix path, shiro-plan options) of cases.tsv, in order."""
    out = []
    with open(os.path.join(GOLDEN, "cases.tsv")) as f:
        for n, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.rstrip("\n").split("\t")
            if len(parts) != 3:
                sys.exit(f"{f.name}:{n}: want name<TAB>matrix<TAB>options, got {line!r}")
            out.append((parts[0], os.path.join(DATA, parts[1]), parts[2].split()))
    return out


def run(cmd, cwd):
    """Runs cmd in cwd; returns (exit status, stdout, stderr)."""
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300)
    return p.returncode, p.stdout, p.stderr


def reports(tools, cwd, name, matrix):
    """The dump and verify reports of cwd/NAME.shiro.h5, or an error string."""
    plan = name + ".shiro.h5"
    rc, dump, err = run([os.path.join(tools, "shiro-plan-dump"), plan, "--json"], cwd)
    if rc != 0:
        return None, None, f"shiro-plan-dump --json exit {rc}: {err.strip()}"
    rc, ver, err = run([os.path.join(tools, "shiro-plan-dump"), plan, "--verify", "--json", "--matrix", matrix], cwd)
    if rc != 0:
        return dump, None, f"shiro-plan-dump --verify --matrix exit {rc}: {err.strip()} {ver.strip()}"
    return dump, ver, None


def replan(tools, cwd, name, matrix, opts):
    """Plans matrix with opts into cwd/NAME.shiro.h5; None or an error string."""
    rc, _, err = run([os.path.join(tools, "shiro-plan"), matrix, *opts, "--quiet", "-o", name + ".shiro.h5"], cwd)
    return None if rc == 0 else f"shiro-plan exit {rc}: {err.strip()}"


def local_matrices(build, cwd, name):
    """test_local_matrix's report of cwd/NAME.shiro.h5, or (None, error)."""
    exe = os.path.join(build, "tests", "format", "test_local_matrix")
    if not os.access(exe, os.X_OK):
        return None, f"{exe}: not built"
    rc, out, err = run([exe, name + ".shiro.h5"], cwd)
    return (out, None) if rc == 0 else (None, f"test_local_matrix exit {rc}: {err.strip()} {out.strip()[-300:]}")


def read_text(path):
    with open(path) as f:
        return f.read()


def without_version(text):
    """A dump's JSON without format_version, for comparing files of two minors."""
    d = json.loads(text)
    d.pop("format_version", None)
    return d


def check(tools, work, only_missing=False):
    """(a), (b), (c) for every case; returns the list of failures."""
    fails = []
    for name, matrix, opts in cases():
        gdir, ndir = os.path.join(work, "golden", name), os.path.join(work, "new", name)
        os.makedirs(gdir)
        os.makedirs(ndir)
        missing = [n + s for n in (name,) for s in (".shiro.h5.gz", ".dump.json", ".verify.json")
                   if not os.path.exists(os.path.join(GOLDEN, n + s))]
        if missing:
            fails.append(f"{name} (missing): no {', '.join(missing)} in {GOLDEN}")
            continue
        local_path = os.path.join(GOLDEN, name + ".local.txt")
        want_local = read_text(local_path) if os.path.exists(local_path) else None
        with gzip.open(os.path.join(GOLDEN, name + ".shiro.h5.gz"), "rb") as src, \
                open(os.path.join(gdir, name + ".shiro.h5"), "wb") as dst:
            shutil.copyfileobj(src, dst)
        want_dump = read_text(os.path.join(GOLDEN, name + ".dump.json"))
        want_ver = read_text(os.path.join(GOLDEN, name + ".verify.json"))
        dump, ver, err = reports(tools, gdir, name, matrix)
        if dump is not None and dump != want_dump:
            fails.append(f"{name} (a): the dump of the golden file differs from {name}.dump.json:\n"
                         f"  want {want_dump.strip()}\n  got  {dump.strip()}")
        if want_local is not None:
            got, lerr = local_matrices(os.path.dirname(tools), gdir, name)
            if got != want_local:
                fails.append(f"{name} (a): the local matrices of the golden file differ from {name}.local.txt: "
                             f"{lerr or 'other rows, columns or values'}")
        if err:
            fails.append(f"{name} (a/b): golden file: {err}")
        elif ver != want_ver:
            fails.append(f"{name} (b): --verify of the golden file differs from {name}.verify.json:\n"
                         f"  want {want_ver.strip()}\n  got  {ver.strip()}")
        err = replan(tools, ndir, name, matrix, opts)
        if not err:
            dump, ver, err = reports(tools, ndir, name, matrix)
        if err:
            fails.append(f"{name} (c): re-planned ({' '.join(opts)}): {err}")
            continue
        if want_local is not None:
            got, lerr = local_matrices(os.path.dirname(tools), ndir, name)
            if got != want_local:
                fails.append(f"{name} (c): re-planning gives other local matrices than {name}.local.txt: "
                             f"{lerr or 'other rows, columns or values'}")
        if without_version(dump) != without_version(want_dump) or ver != want_ver:
            fails.append(f"{name} (c): re-planning {os.path.basename(matrix)} {' '.join(opts)} gives another plan:\n"
                         f"  golden dump   {want_dump.strip()}\n  re-planned    {dump.strip()}\n"
                         f"  golden verify {want_ver.strip()}\n  re-planned    {ver.strip()}")
        print(f"ok   {name}: {' '.join(opts)}")
    return fails


def regenerate(tools, work, only_missing=False):
    """Rewrites every golden file from today's shiro-plan and shiro-plan-dump (only_missing: writes
    the cases that have no files yet, with their local matrices, and leaves the others alone)."""
    for name, matrix, opts in cases():
        if only_missing and os.path.exists(os.path.join(GOLDEN, name + ".shiro.h5.gz")):
            continue
        d = os.path.join(work, "regen", name)
        os.makedirs(d)
        err = replan(tools, d, name, matrix, opts)
        dump, ver, err = (None, None, err) if err else reports(tools, d, name, matrix)
        if err:
            sys.exit(f"{name}: {err}")
        with open(os.path.join(d, name + ".shiro.h5"), "rb") as src, \
                open(os.path.join(GOLDEN, name + ".shiro.h5.gz"), "wb") as raw, \
                gzip.GzipFile(filename="", mode="wb", compresslevel=9, fileobj=raw, mtime=0) as dst:
            shutil.copyfileobj(src, dst)  # like gzip -n: no name, no time, the same bytes every run
        outs = [(".dump.json", dump), (".verify.json", ver)]
        if only_missing or os.path.exists(os.path.join(GOLDEN, name + ".local.txt")):
            local, lerr = local_matrices(os.path.dirname(tools), d, name)
            if lerr:
                sys.exit(f"{name}: {lerr}")
            outs.append((".local.txt", local))
        for suffix, text in outs:
            with open(os.path.join(GOLDEN, name + suffix), "w") as f:
                f.write(text)
        print(f"wrote {name}: {' '.join(opts)}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="the Meson build directory (its tools/ are used)")
    ap.add_argument("--regenerate", action="store_true", help="rewrite the golden files (a format change)")
    ap.add_argument("--force", action="store_true", help="with --regenerate: even if the committed files fail (a) or (b)")
    ap.add_argument("--add", action="store_true", help="write the files of the cases that have none (a new minor's witnesses)")
    a = ap.parse_args()
    tools = os.path.join(a.build, "tools")
    for t in ("shiro-plan", "shiro-plan-dump"):
        if not os.access(os.path.join(tools, t), os.X_OK):
            sys.exit(f"golden_check: {os.path.join(tools, t)}: not built")
    with tempfile.TemporaryDirectory(prefix="shiro-golden-") as work:
        fails = check(tools, work)
        if a.add:
            regenerate(tools, work, only_missing=True)
            return 0
        if a.regenerate:
            read_fails = [f for f in fails if " (c): " not in f and " (missing): " not in f]
            if read_fails and not a.force:
                print("\n".join(read_fails))
                sys.exit("golden_check: the committed golden files fail (a) or (b): today's reader or digest reads "
                         "2.0 files differently (a new major version, not a regeneration), or shiro-plan-dump reports "
                         "differently (then --force, and say so in the commit).")
            regenerate(tools, work)
            return 0
    for f in fails:
        print("FAIL " + f)
    if fails:
        print("(a)/(b) failing: the reader or the digest changed (a format change), or shiro-plan-dump's report did. (c) alone: the planner chose another "
              "plan; regenerating the golden files (--regenerate, see the top of this file) is then a deliberate commit.")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
