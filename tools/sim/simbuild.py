"""simbuild.py — builds shiro-spmm against SimGrid (smpicc) into its own folder.

Meson does not take smpicc as a compiler, so this writes a build.ninja of its
own into the build folder (default build-sim/, ignored by git) and runs ninja
there: incremental, header dependencies through depfiles. What is compiled:
libshiro's CPU runtime with the sim backend (runtime/*.c; not runtime/cuda/),
all of format/ and base/, the Matrix Market reader shiro-spmm --check uses
(compiler/input/{csr,mm_read,mm_input}.c, compiler/common/big_alloc.c),
tools/cli.c, tools/huge_pages.c, tools/shiro_spmm.c, tools/spmm_overlap.c and tools/sim/sim_shim.c,
with a shiro_config.h of its own: SHIRO_HAVE_SIM 1, SHIRO_HAVE_CUDA 0 and
every other SHIRO_HAVE_* of the root meson.build 0.
"""
import fcntl
import glob
import os
import re
import shutil
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXE = "shiro-spmm-sim"
EXTRA_SOURCES = ["compiler/input/csr.c", "compiler/input/mm_read.c", "compiler/input/mm_input.c",
                 "compiler/common/big_alloc.c", "tools/cli.c", "tools/huge_pages.c", "tools/shiro_spmm.c",
                 "tools/spmm_overlap.c", "tools/sim/sim_shim.c"]
INCLUDES = ["runtime", "format", "base", "compiler/input", "compiler/common", "tools"]


class BuildError(Exception):
    """The simulation build could not be made; str() says why."""


def sources():
    """The C files of the simulation build, relative to the repository root."""
    found = []
    for d in ("runtime", "format", "base"):
        found += sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, d, "*.c")))
    return found + EXTRA_SOURCES


def config_header():
    """shiro_config.h of the simulation build, from the root meson.build's conf.set10 names."""
    text = open(os.path.join(ROOT, "meson.build")).read()
    version = re.search(r"project\([^)]*version:\s*'([^']+)'", text, re.S)
    names = sorted(set(re.findall(r"conf\.set10\('([A-Z0-9_]+)'", text)) | {"SHIRO_HAVE_CUDA", "SHIRO_HAVE_SIM"})
    lines = ["/* shiro_config.h of the simulation build (tools/sim/simbuild.py) */", "#pragma once"]
    lines += [f"#define {n} {1 if n == 'SHIRO_HAVE_SIM' else 0}" for n in names]
    lines.append(f'#define SHIRO_VERSION "{version.group(1) if version else "unknown"}"')
    return "\n".join(lines) + "\n"


def version_header():
    """shiro_version.h of the simulation build: runtime/shiro_version.h.in with the root meson.build's
    project version, as Meson's configure_file makes it for the real build."""
    text = open(os.path.join(ROOT, "meson.build")).read()
    m = re.search(r"project\([^)]*version:\s*'([^']+)'", text, re.S)
    version = m.group(1) if m else "0.0.0"
    parts = (version.split(".") + ["0", "0", "0"])[:3]
    template = open(os.path.join(ROOT, "runtime", "shiro_version.h.in")).read()
    for key, value in (("MAJOR", parts[0]), ("MINOR", parts[1]), ("PATCH", parts[2]), ("VERSION", version)):
        template = template.replace(f"@{key}@", value)
    return template


def _pkg(flag, name, fallback):
    try:
        out = subprocess.run(["pkg-config", flag, name], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        if out.returncode == 0:
            return out.stdout.split()
    except OSError:
        pass
    return fallback


def ninja_file(build):
    """The text of build.ninja for the build folder `build`."""
    cflags = ["-O2", "-g", "-std=gnu11", "-fopenmp", "-ffp-contract=off", "-Wall", "-Wno-unused-parameter",
              "-Werror=implicit-function-declaration", f"-I{build}"] + [f"-I{os.path.join(ROOT, d)}" for d in INCLUDES]
    cflags += _pkg("--cflags", "hdf5-serial", ["-I/usr/include/hdf5/serial"])
    libs = _pkg("--libs", "hdf5-serial", ["-L/usr/lib/x86_64-linux-gnu/hdf5/serial", "-lhdf5"]) + ["-lz", "-lm"]
    # cli_finish_stdout closes stdout; under SMPI every rank shares it (sim_shim.c).
    ldflags = ["-fopenmp", "-Wl,--wrap=fclose"] + libs
    L = ["# made by tools/sim/simbuild.py; do not edit", f"cflags = {' '.join(cflags)}", f"ldflags = {' '.join(ldflags)}",
         "rule cc", "  command = smpicc $cflags -MD -MF $out.d -c $in -o $out", "  depfile = $out.d", "  deps = gcc",
         "  description = smpicc $in", "rule link", "  command = smpicc $in -o $out $ldflags", "  description = link $out"]
    objs = []
    for src in sources():
        obj = "obj/" + src.replace("/", "_")[:-2] + ".o"
        objs.append(obj)
        L.append(f"build {obj}: cc {os.path.join(ROOT, src)}")
    L.append(f"build {EXE}: link {' '.join(objs)}")
    L.append(f"default {EXE}")
    return "\n".join(L) + "\n"


def _write_if_changed(path, text):
    try:
        if open(path).read() == text:
            return
    except OSError:
        pass
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)


def build(folder, log):
    """Builds (or brings up to date) the simulation program in `folder`; returns
    its path. Several processes may call it at once (a lock file serializes
    them). log(text) gets the build's output on failure. Raises BuildError."""
    for tool, pkg in (("smpicc", "libsimgrid-dev"), ("smpirun", "libsimgrid-dev"), ("ninja", "ninja-build")):
        if not shutil.which(tool):
            raise BuildError(f"{tool} not found: install {pkg} (tools/dev/install-deps.sh --sim)")
    folder = os.path.abspath(folder)
    os.makedirs(os.path.join(folder, "obj"), exist_ok=True)
    with open(os.path.join(folder, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        _write_if_changed(os.path.join(folder, "shiro_config.h"), config_header())
        _write_if_changed(os.path.join(folder, "shiro_version.h"), version_header())
        _write_if_changed(os.path.join(folder, "build.ninja"), ninja_file(folder))
        p = subprocess.run(["ninja", "-C", folder], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if p.returncode != 0:
            log(p.stdout)
            raise BuildError(f"the simulation build in {folder} failed (ninja exit {p.returncode}; output above)")
    return os.path.join(folder, EXE)
