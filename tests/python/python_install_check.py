#!/usr/bin/env python3
"""`pip install ./python` into a fresh virtual environment, and the package used from there.

usage: python_install_check.py BUILD_DIR SOURCE_DIR MATRIX
A copy of python/ (the source tree stays clean) is installed with pip (no network:
--no-build-isolation --no-deps) into `python3 -m venv --system-site-packages` made with an
interpreter that has numpy, scipy, mpi4py and torch; then, from a directory outside the source
tree, with the build's libshiro named by SHIRO_LIBRARY and shiro-plan by SHIRO_PLAN, under
mpirun -np 2: the imported package is the venv's (with py.typed: it has type hints), __version__ is pyproject.toml's, plan_matrix
plans the matrix and a context's spmm equals scipy's product. Exit 77 when venv, pip or
setuptools is missing (said why).
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from python_check import env_for, find_python  # noqa: E402


def main():
    build, src, matrix = (os.path.abspath(a) for a in sys.argv[1:4])
    py, why = find_python()
    if py is None:
        print(f"SKIP: no interpreter imports numpy, scipy, mpi4py and torch ({why})")
        return 77
    for mod in ("venv", "ensurepip", "setuptools"):  # one at a time: setuptools' distutils hack minds company
        probe = subprocess.run([py, "-c", f"import {mod}"], capture_output=True, text=True)
        if probe.returncode != 0:
            print(f"SKIP: {py} cannot import {mod} (Debian: python3-venv, python3-setuptools)")
            return 77
    with open(os.path.join(src, "python", "pyproject.toml")) as f:
        version = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    with tempfile.TemporaryDirectory() as tmp:
        pkg = os.path.join(tmp, "python")
        shutil.copytree(os.path.join(src, "python"), pkg, ignore=shutil.ignore_patterns("build", "*.egg-info"))
        venv = os.path.join(tmp, "venv")
        steps = [[py, "-m", "venv", "--system-site-packages", venv],
                 [os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q", "--no-build-isolation", "--no-deps",
                  "--no-index", pkg]]
        for cmd in steps:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
            if p.returncode != 0:
                print(f"FAIL {' '.join(cmd)}:\n{p.stdout}{p.stderr}")
                return 1
        env = env_for(build, src)
        env.pop("PYTHONPATH", None)  # the venv's package, not the source tree's
        plan = os.path.join(tmp, "g.shiro.h5")
        code = f"""
import os, numpy as np, scipy.io, shiro
from shiro import MPI
assert shiro.__file__.startswith({venv!r}), shiro.__file__
assert os.path.exists(os.path.join(os.path.dirname(shiro.__file__), 'py.typed')), 'py.typed not installed'
A = scipy.io.mmread({matrix!r}).tocsr()
shiro.plan_matrix(A, ranks=2, out={plan!r}, comm=MPI.COMM_WORLD)
B = np.random.default_rng(1).standard_normal((A.shape[1], 5))
with shiro.Plan({plan!r}) as plan, plan.context(5) as ctx:
    C = ctx.spmm(B[plan.b_global])
    ok = np.allclose(C, (A @ B)[plan.c_global], rtol=1e-12, atol=1e-12)
ok = MPI.COMM_WORLD.allreduce(ok, op=MPI.LAND)
if MPI.COMM_WORLD.rank == 0:
    print("version", shiro.__version__, "product", "ok" if ok else "WRONG")
"""
        mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
        p = subprocess.run([mpirun, "-np", "2", os.path.join(venv, "bin", "python"), "-c", code], capture_output=True,
                           text=True, env=env, cwd=tmp, timeout=300)
        ok = p.returncode == 0 and f"version {version} product ok" in p.stdout
        print(f"{'ok  ' if ok else 'FAIL'} pip install ./python into a venv; plan_matrix and spmm from it on 2 ranks")
        if not ok:
            print(p.stdout + p.stderr)
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
