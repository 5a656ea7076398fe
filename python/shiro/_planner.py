"""_planner.py — libshiro_planner (compiler/api/shiro_planner.h) over ctypes: the plan compiler
as one call on arrays in memory, what shiro.plan_matrix runs in-process.

The library is found at $SHIRO_PLANNER_LIBRARY, else beside libshiro (the file _lib.path()
names): ../compiler/libshiro_planner.so in a build tree, libshiro_planner.so.0 in the same
directory installed, then by the dynamic loader's search. It is loaded RTLD_LOCAL: it carries
its own copy of base/ and format/ (hidden), and exports only the shiro_planner_* calls.
The structs below mirror shiro_planner.h field for field (keep them in step).
"""
import contextlib
import ctypes
import os
import platform

from . import _lib
from ._lib import Error

_I64P = ctypes.POINTER(ctypes.c_int64)


class shiro_planner_matrix(ctypes.Structure):
    _fields_ = [("m", ctypes.c_int64), ("k", ctypes.c_int64), ("nnz", ctypes.c_int64),
                ("rowptr", _I64P), ("rows", _I64P), ("cols", _I64P), ("values", ctypes.POINTER(ctypes.c_double))]


class shiro_planner_options(ctypes.Structure):
    _fields_ = [("ranks", ctypes.c_int32), ("gpus_per_node", ctypes.c_int32), ("strategy", ctypes.c_char_p),
                ("partition", ctypes.c_char_p), ("parts", ctypes.POINTER(ctypes.c_int32)),
                ("effort", ctypes.c_char_p), ("machine", ctypes.c_char_p), ("n", ctypes.c_int64),
                ("dtype_double", ctypes.c_int), ("threads", ctypes.c_int)]


class shiro_planner_result(ctypes.Structure):
    _fields_ = [("strategy", ctypes.c_char * 16), ("partition", ctypes.c_char * 16), ("nwarnings", ctypes.c_int32),
                ("warnings", ctypes.c_char * 2048)]


_planner = None

# glibc's mallopt parameters (malloc.h) and their defaults; madvise's MADV_HUGEPAGE (Linux).
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _GLIBC_DEFAULT = -1, -3, 128 * 1024
_MADV_HUGEPAGE, _HUGE = 14, 2 << 20


def _huge_heap(libc, nbytes):
    """Grows glibc's heap by about nbytes (blocks of 16 MiB, freed at once: the trim threshold keeps
    them) and asks for transparent huge pages on that range (madvise MADV_HUGEPAGE), so that what the
    planner allocates there faults in 2 MiB at a time, as under shiro-plan's
    glibc.malloc.hugetlb=1, instead of 4 KiB. Best effort: does nothing where a call is missing."""
    try:
        libc.sbrk.restype, libc.sbrk.argtypes = ctypes.c_void_p, [ctypes.c_ssize_t]
        libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
        libc.free.restype, libc.free.argtypes = None, [ctypes.c_void_p]
        libc.madvise.restype, libc.madvise.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        lo = libc.sbrk(0)
        blocks = [libc.malloc(16 << 20) for _ in range(max(0, nbytes >> 24))]
        hi = libc.sbrk(0)
        for b in blocks:
            libc.free(b)
    except AttributeError:
        return
    if lo and hi:
        start, end = (lo + _HUGE - 1) & ~(_HUGE - 1), hi & ~(_HUGE - 1)
        if end > start:
            libc.madvise(start, end - start, _MADV_HUGEPAGE)


@contextlib.contextmanager
def _planning_heap(nnz=0):
    """For the planning call, glibc's heap as shiro-plan runs it (tools/huge_pages.c): blocks below
    32 MiB from the heap rather than each a fresh mapping, and freed memory kept for reuse, so that
    METIS's coarse graphs, allocated afresh at every level, are not faulted in again each time.
    Afterwards the defaults (static: glibc's dynamic threshold ends here) and malloc_trim give the
    memory back. Not on other C libraries, nor with SHIRO_HUGEPAGES=0 (shiro-plan's own switch)."""
    libc = None
    if platform.libc_ver()[0] == "glibc" and os.environ.get("SHIRO_HUGEPAGES") != "0":
        try:
            libc = ctypes.CDLL(None)
            libc.mallopt(_M_MMAP_THRESHOLD, 32 << 20)
            libc.mallopt(_M_TRIM_THRESHOLD, 1 << 30)
            if nnz >= 1 << 20:  # about the planner's bytes per nonzero, within the trim threshold
                _huge_heap(libc, min(48 * nnz, 768 << 20))
        except (OSError, AttributeError):
            libc = None
    try:
        yield
    finally:
        if libc is not None:
            libc.mallopt(_M_TRIM_THRESHOLD, _GLIBC_DEFAULT)
            libc.mallopt(_M_MMAP_THRESHOLD, _GLIBC_DEFAULT)
            libc.malloc_trim(0)


def candidates():
    """Where libshiro_planner is looked for, in order (see the module's docstring), and why the places
    beside libshiro were not among them (None when they were)."""
    env = os.environ.get("SHIRO_PLANNER_LIBRARY")
    if env:
        return [env], None
    out = []
    try:
        libdir = os.path.dirname(os.path.realpath(_lib.path()))
        out += [os.path.normpath(os.path.join(libdir, "..", "compiler", "libshiro_planner.so")),
                os.path.join(libdir, "libshiro_planner.so.0")]
        why = None
    except Error as e:
        why = str(e)
    return out + ["libshiro_planner.so.0"], why


def load():
    """The loaded libshiro_planner (loaded once); raises Error (status 0) naming every place tried."""
    global _planner
    if _planner is not None:
        return _planner
    tried = []
    paths, no_libshiro = candidates()
    for path in paths:
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_LOCAL)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        lib.shiro_planner_options_default.restype = shiro_planner_options
        lib.shiro_planner_options_default.argtypes = []
        lib.shiro_plan_compile_csr.restype = ctypes.c_int
        lib.shiro_plan_compile_csr.argtypes = [ctypes.POINTER(shiro_planner_matrix),
                                               ctypes.POINTER(shiro_planner_options), ctypes.c_char_p,
                                               ctypes.POINTER(shiro_planner_result), ctypes.POINTER(_lib.shiro_error)]
        _planner = lib
        return lib
    if no_libshiro:  # the usual cause: a pip-installed package that finds no libshiro to sit beside
        raise Error("shiro.plan_matrix: libshiro_planner is looked for beside libshiro, and " + no_libshiro, 0)
    raise Error("shiro.plan_matrix: libshiro_planner not found; build it (ninja -C build) or set "
                "SHIRO_PLANNER_LIBRARY. Tried: " + "; ".join(tried), 0)


def _ptr(a, ctype):
    return None if a is None else a.ctypes.data_as(ctypes.POINTER(ctype))


def compile_csr(m, k, rowptr, rows, cols, values, out, ranks, gpus_per_node=1, strategy=None, partition=None,
                parts=None, threads=None):
    """shiro_plan_compile_csr on numpy arrays (int64 rowptr or rows, int64 cols, float64 values or None,
    int32 parts or None: C-contiguous, checked by the caller); returns (strategy, partition, [warnings]).
    Raises Error with the library's message and status."""
    lib = load()
    A = shiro_planner_matrix(int(m), int(k), int(cols.size), _ptr(rowptr, ctypes.c_int64), _ptr(rows, ctypes.c_int64),
                             _ptr(cols, ctypes.c_int64), _ptr(values, ctypes.c_double))
    o = lib.shiro_planner_options_default()
    o.ranks, o.gpus_per_node = int(ranks), int(gpus_per_node)
    o.strategy = None if strategy is None else str(strategy).encode()
    o.partition = None if partition is None else str(partition).encode()
    o.parts = _ptr(parts, ctypes.c_int32)
    o.threads = 0 if threads is None else int(threads)
    res, err = shiro_planner_result(), _lib.shiro_error()
    with _planning_heap(A.nnz):
        st = lib.shiro_plan_compile_csr(ctypes.byref(A), ctypes.byref(o), os.fsencode(out), ctypes.byref(res),
                                        ctypes.byref(err))
    if st != _lib.OK:
        raise Error(err.message.decode(errors="replace"), st)
    warns = [w for w in res.warnings.decode(errors="replace").split("\n") if w]
    return res.strategy.decode(), res.partition.decode(), warns
