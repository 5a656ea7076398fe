#!/usr/bin/env python3
"""shiro installs like a library: `meson install --destdir` of this build into a
temporary directory, then, from there only,
  * the headers: shiro.h and every header it includes (shiro_status.h);
  * pkg-config --cflags --libs shiro (MPI through Requires) builds a C program
    that opens a plan written by the installed shiro-plan, runs one SpMM on one
    rank (MPI singleton) and checks C; it prints shiro_strerror(SHIRO_OK);
  * the installed shiro-spmm runs (--version) and takes libshiro from the
    install (its rpath), not the build;
  * libshiro_planner and shiro_planner.h: a C program built with them alone
    (-I, -L, -lshiro_planner) plans a 4 x 4 CSR matrix for 2 ranks into a plan
    the installed shiro-plan-dump --verify proves, and a column out of range
    is refused naming cols[1];
  * CMake's find_package(shiro) gives shiro::shiro (when cmake is installed);
  * as a Meson subproject, dependency('shiro') is libshiro and the tests and
    benchmarks are left out (configure only).

usage: install_check.py BUILD_DIR SOURCE_DIR MATRIX
Needs pkg-config and a C compiler (tools/dev/install-deps.sh); the MPI singleton
runs as root with tests/meson.build's mpi_env.
"""
import json
import os
import re
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "lib"))  # checklib
import checklib
from checklib import expect


def run(cmd, **kw):
    return checklib.run(cmd, timeout=240, **kw)


PLANNER_APP = r"""
#include <stdio.h>
#include <shiro_planner.h>
int main(int argc, char **argv) {
  const int64_t rowptr[5] = {0, 2, 3, 5, 6}, cols[6] = {0, 1, 2, 1, 3, 0};
  shiro_planner_matrix A = {.m = 4, .k = 4, .nnz = 6, .rowptr = rowptr, .cols = cols};
  shiro_planner_options o = shiro_planner_options_default();
  o.ranks = 2;
  shiro_planner_result res;
  shiro_error err;
  shiro_status st = shiro_plan_compile_csr(&A, &o, argv[1], &res, &err);
  printf("status %d strategy %s partition %s\n", (int)st, st ? err.message : res.strategy, res.partition);
  const int64_t bad[6] = {0, 4, 2, 1, 3, 0};
  A.cols = bad;
  st = shiro_plan_compile_csr(&A, &o, argv[1], &res, &err);
  printf("bad %d %s\n", (int)st, err.message);
  return argc < 2;
}
"""

APP = r"""
#include <stdio.h>
#include <stdlib.h>
#include <shiro.h>

/* One SpMM with B = 1: each row of C sums its row of A, so C sums to the
 * sum of A's values (karate: a pattern, nnz ones). */
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  shiro_plan *plan = NULL;
  shiro_ctx *ctx = NULL;
  shiro_error err;
  shiro_plan_info in;
  int rc = 1;
  if (shiro_plan_open_comm(argv[1], MPI_COMM_WORLD, &plan, &err) != SHIRO_OK || shiro_plan_get_info(plan, &in) != SHIRO_OK) {
    fprintf(stderr, "open: %s\n", err.message);
    goto done;
  }
  shiro_ctx_options o = shiro_ctx_options_default();
  o.dtype = SHIRO_FLOAT64;
  o.n = 2;
  if (shiro_ctx_create(plan, MPI_COMM_WORLD, &o, &ctx, &err) != SHIRO_OK) { fprintf(stderr, "ctx: %s\n", err.message); goto done; }
  double *B = malloc(sizeof(double) * 2 * (in.b_rows + 1)), *C = malloc(sizeof(double) * 2 * (in.c_rows + 1)), sum = 0;
  for (long long i = 0; i < 2 * in.b_rows; i++) B[i] = 1.0;
  if (shiro_spmm(ctx, B, C) != SHIRO_OK) { fprintf(stderr, "spmm: %s\n", shiro_ctx_last_error(ctx)); goto done; }
  for (long long i = 0; i < 2 * in.c_rows; i++) sum += C[i];
  printf("status %s; %lld x %lld, %lld nonzeros; sum of C %.1f\n", shiro_strerror(SHIRO_OK), (long long)in.m,
         (long long)in.k, (long long)in.nnz, sum);
  free(B);
  free(C);
  rc = 0;
done:
  shiro_ctx_destroy(&ctx);
  shiro_plan_close(&plan);
  MPI_Finalize();
  return rc;
}
"""

CMAKE = """cmake_minimum_required(VERSION 3.13)
project(shiro_cmake_user C)
find_package(shiro 0.1 REQUIRED)
add_executable(app app.c)
target_link_libraries(app PRIVATE shiro::shiro)
set_target_properties(app PROPERTIES INSTALL_RPATH "${shiro_LIBDIR}")
install(TARGETS app)
"""

SUBPROJECT = """project('shiro_meson_user', 'c')
subproject('shiro', default_options: ['cuda=disabled'])
executable('app', 'app.c', dependencies: dependency('shiro'))
"""


def main():
    build, src, matrix = (os.path.abspath(a) for a in sys.argv[1:4])
    meson, pkgconf = shutil.which("meson"), shutil.which("pkg-config")
    cc = os.environ.get("CC") or shutil.which("cc")
    if not meson or not pkgconf or not cc:
        print(f"meson {meson}, pkg-config {pkgconf}, cc {cc}: each is needed (tools/dev/install-deps.sh installs them)")
        return 1
    opts = {o["name"]: o["value"] for o in json.loads(run([meson, "introspect", build, "--buildoptions"]).stdout)}
    prefix, libdir_o, bindir_o, incdir_o = opts["prefix"], opts["libdir"], opts["bindir"], opts["includedir"]
    if opts.get("b_sanitize", "none") != "none":
        print(f"SKIP: a sanitizer build (b_sanitize={opts['b_sanitize']}): its libshiro needs the sanitizer runtime "
              "first, so a plain program cannot link it; install a plain build")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        dest = os.path.join(tmp, "dest")
        p = run([meson, "install", "-C", build, "--no-rebuild", "--quiet", "--destdir", dest])
        if not expect(p.returncode == 0, f"meson install --destdir (prefix {prefix})", p):
            return 1
        root = dest + prefix
        libdir, bindir, incdir = (os.path.join(root, d) for d in (libdir_o, bindir_o, incdir_o))

        # Headers: shiro.h and whatever it includes with quotes.
        h = os.path.join(incdir, "shiro.h")
        expect(os.path.exists(h), f"{h} installed")
        if os.path.exists(h):
            for inc in re.findall(r'#include "([^"]+)"', open(h).read()):
                expect(os.path.exists(os.path.join(incdir, inc)), f"shiro.h includes {inc}: installed beside it")

        # pkg-config, from the install only.
        pcdir = os.path.join(libdir, "pkgconfig")
        pc = open(os.path.join(pcdir, "shiro.pc")).read()
        expect(re.search(r"^Requires:.*\b(ompi-c|mpi|mpich|ompi)\b", pc, re.M) is not None, "shiro.pc: MPI in Requires")
        if "${pcfiledir}" not in pc:  # a build configured before shiro.pc became relocatable
            print("note: shiro.pc is not relocatable in this build (-Dpkgconfig.relocatable=false): its prefix is "
                  "pointed at the destdir in a copy")
            pcdir = os.path.join(tmp, "pc")
            os.makedirs(pcdir)
            with open(os.path.join(pcdir, "shiro.pc"), "w") as f:
                f.write(re.sub(r"^prefix=.*$", "prefix=" + root, pc, flags=re.M))
        env = dict(os.environ, PKG_CONFIG_PATH=pcdir + os.pathsep + os.environ.get("PKG_CONFIG_PATH", ""))
        env.pop("LD_LIBRARY_PATH", None)
        flags = run([pkgconf, "--cflags", "--libs", "shiro"], env=env)
        pclib = run([pkgconf, "--variable=libdir", "shiro"], env=env).stdout.strip()
        incs = {os.path.realpath(f[2:]) for f in flags.stdout.split() if f.startswith("-I")}
        expect(flags.returncode == 0 and os.path.realpath(incdir) in incs and "-lshiro" in flags.stdout
               and os.path.realpath(pclib) == os.path.realpath(libdir),
               f"pkg-config --cflags --libs shiro: {flags.stdout.strip()}", flags)
        # No private dependency in Cflags: only shiro's own include directory and those of what shiro.h
        # includes (MPI, through Requires). An application with its own (parallel) HDF5 gets no other.
        cflags = run([pkgconf, "--cflags", "shiro"], env=env).stdout.split()
        mpi_only = run([pkgconf, "--cflags"] + re.findall(r"^Requires:\s*(.*)$", pc, re.M)[0].replace(",", " ").split(),
                       env=env).stdout.split()
        extra = [f for f in cflags if f not in mpi_only and os.path.realpath(f[2:]) != os.path.realpath(incdir)]
        expect(not extra and not any("hdf5" in f.lower() for f in cflags),
               f"pkg-config --cflags shiro: its include directory and MPI's only (extra: {extra})")

        # The installed shiro-plan writes a plan; a program built with pkg-config's flags replays it.
        plan = os.path.join(tmp, "k.shiro.h5")
        p = run([os.path.join(bindir, "shiro-plan"), matrix, "--ranks", "1", "-o", plan, "--quiet"], env=env)
        expect(p.returncode == 0, "installed shiro-plan writes a plan", p)
        with open(os.path.join(tmp, "app.c"), "w") as f:
            f.write(APP)
        app = os.path.join(tmp, "app")
        c = run([cc, os.path.join(tmp, "app.c"), "-o", app] + flags.stdout.split() + [f"-Wl,-rpath,{pclib}"], env=env)
        if expect(c.returncode == 0, "cc app.c $(pkg-config --cflags --libs shiro)", c):
            r = run([app, plan], env=env)
            m = re.search(r"nonzeros; sum of C (\S+)", r.stdout)
            nnz = re.search(r"(\d+) nonzeros", r.stdout)
            expect(r.returncode == 0 and r.stdout.startswith("status ") and m and nnz
                   and float(m.group(1)) == 2 * int(nnz.group(1)),
                   f"the program replays the plan (one rank): {r.stdout.strip()}", r)
            ldd = run(["ldd", app], env=env).stdout
            expect(os.path.realpath(libdir) in ldd or libdir in ldd, "the program takes the installed libshiro")

        # libshiro_planner: a C program of its header and library alone plans a matrix.
        with open(os.path.join(tmp, "planner.c"), "w") as f:
            f.write(PLANNER_APP)
        papp, pplan = os.path.join(tmp, "planner"), os.path.join(tmp, "p.shiro.h5")
        c = run([cc, os.path.join(tmp, "planner.c"), "-o", papp, "-I" + incdir, "-L" + libdir, "-lshiro_planner",
                 f"-Wl,-rpath,{libdir}"], env=env)
        if expect(c.returncode == 0 and os.path.exists(os.path.join(libdir, "libshiro_planner.so.0")),
                  "cc planner.c -lshiro_planner (shiro_planner.h and libshiro_planner.so.0 installed)", c):
            r = run([papp, pplan], env=env)
            expect(r.returncode == 0 and "status 0 strategy joint partition block" in r.stdout
                   and "cols[1] = 4 is out of range (expected 0..3)" in r.stdout,
                   f"the program plans, and names a bad column: {r.stdout.strip()}", r)
            v = run([os.path.join(bindir, "shiro-plan-dump"), pplan, "--verify"], env=env)
            expect(v.returncode == 0, "installed shiro-plan-dump --verify proves its plan", v)

        # The installed shiro-spmm finds libshiro through its rpath.
        spmm = os.path.join(bindir, "shiro-spmm")
        ldd = run(["ldd", spmm], env=env).stdout
        line = next((ln for ln in ldd.splitlines() if "libshiro" in ln), "")
        expect("not found" not in line and dest in line, f"installed shiro-spmm: {line.strip()}")
        v = run([spmm, "--version"], env=env)
        expect(v.returncode == 0 and v.stdout.startswith("shiro-spmm "), "installed shiro-spmm --version runs", v)

        # CMake: find_package(shiro) reads shiro.pc through shiroConfig.cmake.
        cmake = shutil.which("cmake")
        if not cmake:
            print("note: cmake not installed: find_package(shiro) not checked")
        elif pcdir != os.path.join(libdir, "pkgconfig"):
            print("note: find_package(shiro) not checked: its shiro.pc is not relocatable, so it names /usr/local")
        else:
            cdir = os.path.join(tmp, "cmake")
            os.makedirs(cdir)
            shutil.copy(os.path.join(tmp, "app.c"), cdir)
            with open(os.path.join(cdir, "CMakeLists.txt"), "w") as f:
                f.write(CMAKE)
            cenv = dict(env, PKG_CONFIG_PATH=os.environ.get("PKG_CONFIG_PATH", ""))  # the config file finds shiro.pc
            cfg = run([cmake, "-S", cdir, "-B", os.path.join(cdir, "b"), f"-DCMAKE_PREFIX_PATH={root}"], env=cenv)
            bld = run([cmake, "--build", os.path.join(cdir, "b")], env=cenv) if cfg.returncode == 0 else cfg
            if expect(bld.returncode == 0, "cmake: find_package(shiro 0.1) and shiro::shiro build the program", bld):
                r = run([os.path.join(cdir, "b", "app"), plan], env=env)
                expect(r.returncode == 0 and "sum of C" in r.stdout, "the CMake-built program runs", r)
                # installed, the program finds libshiro through the INSTALL_RPATH line the README shows
                ins = run([cmake, "--install", os.path.join(cdir, "b"), "--prefix", os.path.join(cdir, "inst")], env=cenv)
                iapp = os.path.join(cdir, "inst", "bin", "app")
                r = run([iapp, plan], env=env) if ins.returncode == 0 else ins
                dyn = run(["readelf", "-d", iapp], env=env).stdout if ins.returncode == 0 else ""
                expect(r.returncode == 0 and "sum of C" in r.stdout and os.path.realpath(libdir) in
                       {os.path.realpath(d) for m in re.findall(r"R(?:UN)?PATH.*\[(.*)\]", dyn) for d in m.split(":")},
                       "the installed CMake program runs, libshiro found through INSTALL_RPATH ${shiro_LIBDIR}", r)

        # Meson subproject: dependency('shiro') is the override; no tests, no benchmarks (configure only).
        sdir = os.path.join(tmp, "mesonuser")
        os.makedirs(os.path.join(sdir, "subprojects"))
        os.symlink(src, os.path.join(sdir, "subprojects", "shiro"))
        shutil.copy(os.path.join(tmp, "app.c"), sdir)
        with open(os.path.join(sdir, "meson.build"), "w") as f:
            f.write(SUBPROJECT)
        s = run([meson, "setup", os.path.join(sdir, "b"), sdir])
        if expect(s.returncode == 0, "meson setup of a project with shiro as a subproject", s):
            t = json.loads(run([meson, "introspect", os.path.join(sdir, "b"), "--targets"]).stdout)
            names = {x["name"] for x in t}
            app_t = [x for x in t if x["name"] == "app"]
            expect(app_t and "shiro" in names and re.search(r"Dependency shiro found: YES \S+ \(overridden\)", s.stdout),
                   "dependency('shiro') is the subproject's libshiro (meson.override_dependency)", s)
            left = sorted(n for n in names if n.startswith(("test_", "mm-", "shiro-bench")))
            expect(not left, f"as a subproject, no tests or benchmarks are built ({left})")
            tests = json.loads(run([meson, "introspect", os.path.join(sdir, "b"), "--tests"]).stdout)
            expect(not tests, f"as a subproject, no tests are registered ({len(tests)})")
    print(f"{checklib.failures} failure(s)")
    return 1 if checklib.failures else 0


if __name__ == "__main__":
    sys.exit(main())
