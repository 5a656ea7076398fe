"""shiro — Python bindings of libshiro (distributed SpMM from an offline plan), over ctypes.

    import shiro
    plan = shiro.Plan("g.shiro.h5")              # comm: an mpi4py communicator, default COMM_WORLD
    ctx = plan.context(n=16, dtype="float64")    # collective
    C = ctx.spmm(B)                              # this rank's rows of C = A·B (numpy or torch CPU arrays)
    X = ctx.spmm_t(Y)                            # this rank's rows of X = Aᵀ·Y
    ctx.close(); plan.close()                    # or `with` blocks

Every failure of the library raises shiro.Error carrying its status and message.
Collective calls (Plan.context, Context.spmm, spmm_t, set_values) must be made
by every rank of the communicator in the same order. See python/README.md.
"""
from __future__ import annotations

import atexit
import ctypes
import os
import sys
import warnings
import weakref
from typing import Any, Union

import numpy as np

from . import _lib
from ._lib import (MPI, ArgumentError, CUDAError, Error, FileError, InternalError, MismatchError, MPIError,
                   OutOfMemoryError, UnsupportedError, VersionError)
from ._plan_matrix import PlanWarning, plan_matrix

# What the calls take and give: numpy arrays, or torch tensors (torch is optional, so not named here).
Array = Union[np.ndarray, Any]

__version__ = "0.1.0"  # meson.build's project version (tests/python/python_check.py keeps them equal)

__all__ = ["Plan", "Context", "plan_matrix", "PlanWarning", "library_path", "to_bfloat16", "from_bfloat16", "__version__",  # the errors: _lib.ERRORS
           "Error", "ArgumentError", "OutOfMemoryError", "FileError", "VersionError", "MismatchError", "MPIError",
           "CUDAError", "UnsupportedError", "InternalError"]
assert set(_lib.ERRORS) <= set(__all__), "shiro.__all__ lacks an error class of _lib.ERRORS"

# dtype name -> (shiro_dtype, the numpy dtype of results, the element types an input may have). numpy has
# no bfloat16: its arrays are uint16 bit patterns (to_bfloat16 / from_bfloat16); float16 takes numpy
# float16 or such bit patterns; torch tensors of torch.bfloat16 / torch.float16 are taken as they are.
_DTYPES = {"float32": (_lib.FLOAT32, np.float32, ("float32",)), "float64": (_lib.FLOAT64, np.float64, ("float64",)),
           "bfloat16": (_lib.BFLOAT16, np.uint16, ("bfloat16", "uint16")),
           "float16": (_lib.FLOAT16, np.float16, ("float16", "uint16"))}
_ALIASES = {"float": "float32", "double": "float64", "half": "float16", "bf16": "bfloat16"}


def to_bfloat16(x: np.ndarray) -> np.ndarray:
    """A numpy array of floats as bfloat16 bit patterns (uint16), rounded to nearest even as libshiro
    rounds (NaN stays NaN): what a dtype="bfloat16" context takes from numpy. Local."""
    b = np.ascontiguousarray(x, np.float32).view(np.uint32)
    nan = (b & 0x7fffffff) > 0x7f800000
    r = ((b + 0x7fff + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(nan, ((b >> 16) | 0x40).astype(np.uint16), r)


def from_bfloat16(h: np.ndarray) -> np.ndarray:
    """bfloat16 bit patterns (a uint16 array) as float32 values (exact). Local."""
    return (np.ascontiguousarray(h, np.uint16).astype(np.uint32) << 16).view(np.float32)


def library_path() -> str:
    """The libshiro file this package uses (loads it: $SHIRO_LIBRARY, build/runtime/libshiro.so, the loader)."""
    return _lib.path()


# Every open plan and context, so that what the program did not close is released before mpi4py
# finalizes MPI (atexit runs this before mpi4py's own exit hook; a context's MPI objects cannot be
# freed after MPI_Finalize). Contexts first: a plan must outlive its contexts.
_live = weakref.WeakSet()


@atexit.register
def _release_all():
    for obj in sorted(list(_live), key=lambda o: isinstance(o, Plan)):
        obj.close()


def _mpi_alive():
    return _lib.mpi_imported() and MPI.Is_initialized() and not MPI.Is_finalized()


_previous_excepthook = sys.excepthook


def _abort_on_uncaught(exc_type, exc, tb):
    """An exception that ends this rank while shiro contexts are open would leave the other ranks
    waiting in their next collective call for ever: after Python prints it, the MPI job is aborted
    (MPI_Abort on COMM_WORLD), as `python -m mpi4py` does. SHIRO_NO_ABORT=1 leaves the job alone."""
    _previous_excepthook(exc_type, exc, tb)
    contexts = [o for o in list(_live) if isinstance(o, Context) and not o.closed]
    if contexts and os.environ.get("SHIRO_NO_ABORT") != "1" and _mpi_alive() and MPI.COMM_WORLD.Get_size() > 1:
        sys.stderr.write(f"shiro: rank {MPI.COMM_WORLD.Get_rank()} ends on an uncaught {exc_type.__name__} with "
                         f"{len(contexts)} shiro context(s) open: aborting the MPI job so that the other ranks do "
                         "not wait for it (SHIRO_NO_ABORT=1 to leave the job alone)\n")
        sys.stderr.flush()
        MPI.COMM_WORLD.Abort(1)


sys.excepthook = _abort_on_uncaught


class _Closable:
    """`with` and garbage collection both end in close(), which the class defines (idempotent)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_h", None):
            self.close()


class Plan(_Closable):
    """This rank's part of a plan file. Plan(path, comm) opens the part of comm's rank collectively
    (shiro_plan_open_comm: every rank of comm must call it; a failure on one rank, such as a launch
    with more ranks than the plan has, raises Error on every rank with that rank's message);
    Plan(path, comm, rank=r) opens rank r's part locally (shiro_plan_open), for tools that inspect
    parts. Both read metadata only. A libshiro without shiro_plan_open_comm opens locally.

    Attributes (copied at open): ranks, gpus_per_node, rank, m, k, nnz, c_rows, b_rows, strategy,
    partition, and c_global / b_global (numpy int64: global ids of this rank's rows of C (and A) and of B).
    `comm` is the communicator contexts are made over. close() (or leaving a `with` block) releases the
    plan once the last of its contexts is closed: a context keeps its plan alive."""

    def __init__(self, path: str | os.PathLike, comm: Any = None, rank: int | None = None) -> None:
        lib = _lib.load()
        _lib.check_launch()
        self.comm = MPI.COMM_WORLD if comm is None else comm
        self.path = str(path)
        self._h = ctypes.c_void_p()
        self._contexts = weakref.WeakSet()
        self._closing = False
        err = _lib.shiro_error()
        if rank is None and _lib.has("shiro_plan_open_comm"):
            st = lib.shiro_plan_open_comm(self.path.encode(), _lib.comm_handle(self.comm), ctypes.byref(self._h),
                                          ctypes.byref(err))
        else:
            rank = self.comm.Get_rank() if rank is None else int(rank)
            st = lib.shiro_plan_open(self.path.encode(), rank, ctypes.byref(self._h), ctypes.byref(err))
        if st != _lib.OK:
            raise Error(err.message.decode(errors="replace"), st)
        info = _lib.shiro_plan_info()
        lib.shiro_plan_get_info(self._h, ctypes.byref(info))
        for f in ("ranks", "gpus_per_node", "rank", "m", "k", "nnz", "c_rows", "b_rows"):
            setattr(self, f, int(getattr(info, f)))
        self.strategy = info.strategy.decode()
        self.partition = info.partition.decode()
        self.c_global = np.ctypeslib.as_array(info.c_global, (self.c_rows,)).copy() if self.c_rows else \
            np.zeros(0, np.int64)
        self.b_global = np.ctypeslib.as_array(info.b_global, (self.b_rows,)).copy() if self.b_rows else \
            np.zeros(0, np.int64)
        _live.add(self)

    def __repr__(self):
        state = "closed" if self.closed else f"rank {self.rank} of {self.ranks}"
        return f"<shiro.Plan {self.path!r} {self.m}x{self.k} {self.strategy}/{self.partition}, {state}>"

    @property
    def closed(self):
        """True once close() was called (the C plan may live on for contexts still open)."""
        return self._closing or not self._h

    def handle(self):
        """The open shiro_plan* (raises Error after close())."""
        if self.closed:
            raise Error(f"shiro.Plan {self.path!r} is closed")
        return self._h

    def context(self, n: int, dtype: str = "float64", backend: str = "cpu", device: int = -1, transport: str = "auto",
                timeout_ms: int = 0, threads: int = 0, checked: bool = True) -> Context:
        """A new Context for N = n columns (shiro_ctx_create: collective over self.comm). threads: the CPU
        kernels' OpenMP threads on this rank (0: OMP_NUM_THREADS if set, else this rank's share of its node).
        checked: agree across the ranks before each call (see Context)."""
        return Context(self, n, dtype, backend, device, transport, timeout_ms, threads, checked=checked)

    def local_matrix(self) -> Any:
        """This rank's rows of A as CSR with GLOBAL column ids: (indptr, indices, values), numpy int64,
        int64, float64; local row i is global row c_global[i] (shiro_plan_get_local_matrix). The order
        Context.set_values takes values in. A plan made from a pattern-only file gives values of 1.0
        (self.has_values is then False). Local; plans of format 2.0 raise Error (status 6)."""
        lib = _lib.load()
        if not _lib.has("shiro_plan_get_local_matrix"):
            raise Error(f"{_lib.path()} has no shiro_plan_get_local_matrix (an older libshiro)", 9)
        h = self.handle()
        err = _lib.shiro_error()
        nnz, hv = ctypes.c_int64(), ctypes.c_int()
        st = lib.shiro_plan_get_local_matrix(h, ctypes.byref(nnz), ctypes.byref(hv), None, None, None, ctypes.byref(err))
        if st != _lib.OK:
            raise Error(err.message.decode(errors="replace"), st)
        indptr = np.zeros(self.c_rows + 1, np.int64)
        indices = np.zeros(nnz.value, np.int64)
        values = np.zeros(nnz.value, np.float64)
        P = ctypes.POINTER
        st = lib.shiro_plan_get_local_matrix(h, ctypes.byref(nnz), ctypes.byref(hv),
                                             indptr.ctypes.data_as(P(ctypes.c_int64)),
                                             indices.ctypes.data_as(P(ctypes.c_int64)),
                                             values.ctypes.data_as(P(ctypes.c_double)), ctypes.byref(err))
        if st != _lib.OK:
            raise Error(err.message.decode(errors="replace"), st)
        self._nnz, self._has_values = nnz.value, bool(hv.value)
        return indptr, indices, values

    def _local_counts(self):
        """Fills self._nnz and self._has_values from shiro_plan_get_local_matrix (counts only). Local."""
        if getattr(self, "_nnz", None) is None:
            if not _lib.has("shiro_plan_get_local_matrix"):
                raise Error(f"{_lib.path()} has no shiro_plan_get_local_matrix (an older libshiro)", 9)
            err = _lib.shiro_error()
            nnz, hv = ctypes.c_int64(), ctypes.c_int()
            st = _lib.load().shiro_plan_get_local_matrix(self.handle(), ctypes.byref(nnz), ctypes.byref(hv), None,
                                                         None, None, ctypes.byref(err))
            if st != _lib.OK:
                raise Error(err.message.decode(errors="replace"), st)
            self._nnz, self._has_values = nnz.value, bool(hv.value)

    def local_nnz(self):
        """The number of this rank's nonzeros of A (entries of local_matrix()). Local."""
        self._local_counts()
        return self._nnz

    @property
    def has_values(self):
        """False when the plan was made from a pattern-only file (local_matrix() then gives 1.0 values)."""
        self._local_counts()
        return self._has_values

    def _forget(self, ctx):
        self._contexts.discard(ctx)
        if self._closing and not self._contexts:
            self._release()

    def _release(self):
        if self._h:
            _lib.load().shiro_plan_close(ctypes.byref(self._h))
        _live.discard(self)

    def close(self):
        """Closes the plan now, or when its last open context closes. Idempotent. Local."""
        self._closing = True
        if not self._contexts:
            self._release()


def _array_info(a, what):
    """(kind, pointer, shape, element type name, device) of a numpy array, a torch tensor or an object with
    __cuda_array_interface__; raises Error for anything else or a non-C-contiguous array."""
    if isinstance(a, np.ndarray):
        if not a.flags.c_contiguous:
            raise Error(f"{what}: the array is not C-contiguous (np.ascontiguousarray makes a copy that is)")
        return "numpy", a.ctypes.data, a.shape, str(a.dtype), "cpu"
    if type(a).__module__.startswith("torch"):
        import torch
        if isinstance(a, torch.Tensor):
            if not a.is_contiguous():
                raise Error(f"{what}: the tensor is not contiguous (.contiguous() makes a copy that is)")
            key = {torch.float32: "float32", torch.float64: "float64", torch.bfloat16: "bfloat16",
                   torch.float16: "float16"}.get(a.dtype)
            if key is None:
                raise Error(f"{what}: tensor of {a.dtype}, expected torch.float32, float64, bfloat16 or float16")
            return "torch", a.data_ptr(), tuple(a.shape), key, a.device.type
    cai = getattr(a, "__cuda_array_interface__", None)
    if cai is not None:
        if cai.get("strides") is not None:
            itemsize = np.dtype(cai["typestr"]).itemsize
            expect = tuple(int(np.prod(cai["shape"][i + 1:])) * itemsize for i in range(len(cai["shape"])))
            if tuple(cai["strides"]) != expect:
                raise Error(f"{what}: the device array is not C-contiguous")
        return "cuda", cai["data"][0], tuple(cai["shape"]), str(np.dtype(cai["typestr"])), "cuda"
    raise Error(f"{what}: expected a numpy array or a torch tensor, found {type(a).__name__}")


class Context(_Closable):
    """A plan replayed over a communicator for at most N columns of one value type (shiro_ctx_create).

    spmm(B) -> C = A·B and spmm_t(Y) -> X = Aᵀ·Y on this rank's rows; set_values(v) installs new values
    of A. B, Y: numpy arrays or torch tensors (CPU for backend "cpu"; CUDA tensors or
    __cuda_array_interface__ arrays for backend "cuda"), C-contiguous, shape (rows, w) for any width
    w from 1 to the context's n (the same w on every rank; shiro_spmm_n: one context, one set of
    buffers and one set_values serve every width, with the bits of a context made for w), of the
    context's dtype. Results have the input's kind and width; out= writes into a given array instead. The context holds
    its plan (the plan stays open while the context is). close() or leaving a `with` block releases it."""

    def __init__(self, plan, n, dtype="float64", backend="cpu", device=-1, transport="auto", timeout_ms=0, threads=0, *,
                 checked=True):
        lib = _lib.load()
        self.checked = bool(checked)
        self._calls = 0
        self.values_version = 0  # set_values calls so far (shiro.torch re-installs a forward's values)
        self._flags = np.zeros(7, np.int64)
        if dtype in (np.float32, np.float64, np.float16):
            dtype = np.dtype(dtype).name
        dtype = str(dtype).replace("torch.", "")
        dtype = _ALIASES.get(dtype, dtype)
        if dtype not in _DTYPES:
            raise Error(f"shiro.Context: dtype {dtype!r}, expected 'float32', 'float64', 'bfloat16' or 'float16'")
        if backend not in _lib.BACKENDS:
            raise Error(f"shiro.Context: backend {backend!r}, expected 'cpu' or 'cuda'")
        if transport not in _lib.TRANSPORTS:
            raise Error(f"shiro.Context: transport {transport!r}, expected 'auto', 'nccl' or 'mpi'")
        self._h = ctypes.c_void_p()
        self.plan = plan
        self.n = int(n)
        self.dtype = dtype
        self.np_dtype = np.dtype(_DTYPES[dtype][1])
        self.backend = backend
        self.c_rows, self.b_rows = plan.c_rows, plan.b_rows
        opts = lib.shiro_ctx_options_default()
        opts.backend, opts.dtype, opts.n = _lib.BACKENDS[backend], _DTYPES[dtype][0], self.n
        opts.device, opts.transport, opts.timeout_ms = int(device), _lib.TRANSPORTS[transport], int(timeout_ms)
        opts.threads = int(threads)
        err = _lib.shiro_error()
        st = lib.shiro_ctx_create(plan.handle(), _lib.comm_handle(plan.comm), ctypes.byref(opts),
                                  ctypes.byref(self._h), ctypes.byref(err))
        if st != _lib.OK:
            raise Error(err.message.decode(errors="replace"), st)
        plan._contexts.add(self)
        _live.add(self)
        if backend == "cpu" and _lib.has("shiro_ctx_get_threads"):
            t, why = self._threads()
            if "share cores" in why:  # the library says so when the user's count outnumbers the rank's CPUs
                warnings.warn(f"shiro.Context: {t} OpenMP threads per rank share cores ({why}); where mpirun binds "
                              f"each rank to a core (its default), launch with --bind-to none or --map-by slot:PE={t}, "
                              "else ask for fewer threads", RuntimeWarning, stacklevel=3)

    def _threads(self):
        lib = _lib.load()
        if not _lib.has("shiro_ctx_get_threads"):
            raise Error(f"{_lib.path()} has no shiro_ctx_get_threads (an older libshiro)", 9)
        if not self._h:
            raise Error("shiro.Context is closed")
        t, why = ctypes.c_int(), ctypes.c_char_p()
        lib.shiro_ctx_get_threads(self._h, ctypes.byref(t), ctypes.byref(why))
        return t.value, why.value.decode()

    @property
    def threads(self):
        """The OpenMP threads this rank's CPU kernels use per call (shiro_ctx_get_threads). Local."""
        return self._threads()[0]

    @property
    def threads_why(self):
        """How that thread count was chosen, in words ("2 CPUs on the node / 4 ranks there"). Local."""
        return self._threads()[1]

    def __repr__(self):
        state = "closed" if not self._h else f"rank {self.plan.rank}"
        return f"<shiro.Context n={self.n} {self.dtype} {self.backend}, {state}>"

    @property
    def closed(self):
        return not self._h

    def _check(self, a, rows, what, width=None):
        """(kind, pointer, width) of an input (width None: any from 1 to n) or an output of `width` columns."""
        kind, ptr, shape, dt, dev = _array_info(a, what)
        if width is not None and tuple(shape) != (rows, width):
            raise Error(f"{what}: shape {tuple(shape)}, expected ({rows}, {width}) (this rank's rows x the input's width)")
        if width is None and (len(shape) != 2 or shape[0] != rows or not 1 <= shape[1] <= self.n):
            raise Error(f"{what}: shape {tuple(shape)}, expected ({rows}, w) with 1 <= w <= {self.n} (this rank's rows x "
                        "a width up to the context's n)")
        if dt not in _DTYPES[self.dtype][2]:
            raise Error(f"{what}: dtype {dt}, expected {' or '.join(_DTYPES[self.dtype][2])} (the context's "
                        f"{self.dtype})")
        want = "cuda" if self.backend == "cuda" else "cpu"
        if dev != want:
            raise Error(f"{what}: a {dev} array, the {self.backend} backend takes {want} arrays")
        return kind, ptr, int(shape[1])

    def _out(self, like, kind, rows, width, out, what):
        if out is None:
            if kind == "numpy":
                return np.empty((rows, width), like.dtype)  # float16 or its bit patterns, as given
            if kind == "cuda":
                raise Error(f"{what}: give out= for a __cuda_array_interface__ array (only numpy arrays and torch "
                            "tensors get a result allocated)")
            import torch
            return torch.empty((rows, width), dtype=like.dtype, device=like.device)
        self._check(out, rows, what + " out", width)
        if isinstance(out, np.ndarray) and not out.flags.writeable:
            raise Error(f"{what} out: the array is read-only")
        return out

    def _agree(self, direction, width, failure, what):
        """The checked calls' agreement (one MPI_Allreduce of 7 integers): every rank learns whether
        any rank's arguments failed, and that all are at the same call in the same direction and
        width; on either, every rank raises (the failing ranks' messages gathered into each)."""
        self._calls += 1
        f = self._flags
        f[:] = (failure is not None, self._calls, -self._calls, direction, -direction, width, -width)
        got = np.empty_like(f)
        self.plan.comm.Allreduce(f, got, op=MPI.MAX)
        if got[0]:
            msgs = [m for m in self.plan.comm.allgather(None if failure is None else str(failure)) if m]
            status = failure.status if failure is not None else _lib.ERR_ARG
            raise Error(msgs[0] if failure is not None and len(msgs) == 1 else
                        f"{what}: failed on {len(msgs)} rank(s): " + "; ".join(msgs), status)
        if got[1] != -got[2] or got[3] != -got[4]:
            raise Error(f"{what}: the ranks are out of step (calls {-got[2]}..{got[1]}, "
                        f"{'mixed directions' if got[3] != -got[4] else 'one direction'}): every rank must make the "
                        "same calls of a context in the same order; this context cannot be trusted now", _lib.ERR_ARG)
        if got[5] != -got[6]:
            raise Error(f"{what}: the ranks passed different widths (from {-got[6]} to {got[5]} columns; this rank "
                        f"{width}): every rank must pass the same width; nothing was computed", _lib.ERR_ARG)

    def _call(self, fn, src, src_rows, dst_rows, out, what):
        if not self._h:
            raise Error(f"{what}: the context is closed")
        lib = _lib.load()
        direction = 1 if fn is lib.shiro_spmm else 2
        width = self.n
        try:
            kind, sptr, width = self._check(src, src_rows, what)
            if width != self.n and not _lib.has("shiro_spmm_n"):
                raise Error(f"{what}: width {width} below the context's n = {self.n}, and {_lib.path()} has no "
                            "shiro_spmm_n (an older libshiro)", 9)
            out = self._out(src, kind, dst_rows, width, out, what)
            dptr = _array_info(out, what)[1]
            failure = None
        except Error as e:
            if not self.checked:
                raise
            failure = Error(f"rank {self.plan.comm.Get_rank()}: {e}", e.status)
        if self.checked:
            self._agree(direction, width, failure, what)
        if width == self.n:
            st = fn(self._h, sptr or None, dptr or None)
        else:
            fn_n = lib.shiro_spmm_n if direction == 1 else lib.shiro_spmm_transpose_n
            st = fn_n(self._h, sptr or None, dptr or None, width)
        if st != _lib.OK:
            raise Error(_lib.load().shiro_ctx_last_error(self._h).decode(errors="replace"), st)
        return out

    def spmm(self, B: Array, out: Array | None = None) -> Array:
        """This rank's c_rows x w rows of C = A·B from its b_rows x w rows of B, for any width w from 1 to
        the context's n (the same on every rank). Collective."""
        return self._call(_lib.load().shiro_spmm, B, self.b_rows, self.c_rows, out, "shiro spmm: B")

    def spmm_t(self, Y: Array, out: Array | None = None) -> Array:
        """This rank's b_rows x w rows of X = Aᵀ·Y from its c_rows x w rows of Y, for any width w from 1
        to the context's n (the same on every rank). Collective (the first call derives the transposed
        program)."""
        return self._call(_lib.load().shiro_spmm_transpose, Y, self.c_rows, self.b_rows, out, "shiro spmm_t: Y")

    def sddmm(self, B: Array, G: Array, out: Array | None = None) -> Array:
        """The gradient of this rank's values of A (shiro_sddmm): for each of its nonzeros A_ij, in
        plan.local_matrix() (and set_values) order, <G_i, B_j> = sum_k G[i, k] * B[j, k], where B is this
        rank's b_rows x w rows of B and G = dL/dC its c_rows x w rows (w from 1 to the context's n, the
        same on every rank and for both). Returns a 1-D array of local_nnz() values of the context's
        dtype (numpy for numpy B, torch for torch B; out= writes into one), so that
        set_values(v - lr * ctx.sddmm(B, G)) is a descent step. Moves B and G with the plan's own
        messages (the forward's and the transposed program's). Collective; checked and agreed like
        spmm. CPU backend only."""
        what = "shiro sddmm"
        if not self._h:
            raise Error(f"{what}: the context is closed")
        lib = _lib.load()
        if not _lib.has("shiro_sddmm"):
            raise Error(f"{_lib.path()} has no shiro_sddmm (an older libshiro)", 9)
        width = self.n
        try:
            kind, bptr, width = self._check(B, self.b_rows, what + ": B")
            gptr = self._check(G, self.c_rows, what + ": G", width)[1]
            nnz = self.plan.local_nnz()
            if out is None:
                if kind == "numpy":
                    out = np.empty(nnz, self.np_dtype)
                else:
                    import torch
                    out = torch.empty(nnz, dtype=B.dtype, device=B.device)
            else:
                oshape, odt = _array_info(out, what + " out")[2:4]
                if tuple(oshape) != (nnz,) or odt != self.np_dtype:
                    raise Error(f"{what} out: shape {tuple(oshape)} {odt}, expected ({nnz},) {self.np_dtype} (this "
                                "rank's nonzeros, the context's dtype)")
            optr = _array_info(out, what + " out")[1]
            failure = None
        except Error as e:
            if not self.checked:
                raise
            failure = Error(f"rank {self.plan.comm.Get_rank()}: {e}", e.status)
        if self.checked:
            self._agree(3, width, failure, what)
        st = lib.shiro_sddmm(self._h, bptr or None, gptr or None, optr or None, width, _DTYPES[self.dtype][0])
        if st != _lib.OK:
            raise Error(lib.shiro_ctx_last_error(self._h).decode(errors="replace"), st)
        return out

    def set_values(self, values: Array) -> None:
        """Installs new values of this rank's nonzeros of A: one value per entry of plan.local_matrix(),
        in its order (shiro_ctx_set_values). float32 arrays (numpy or torch) go in as they are
        (shiro_ctx_set_values_dtype: a float32 context multiplies by those very floats); anything else
        as float64. Collective: the ranks first agree that every rank gave as
        many values as it has nonzeros (one small allreduce), so a wrong length on one rank raises Error
        on all instead of leaving the others waiting. Later calls of this context multiply with them."""
        lib = _lib.load()
        if not self._h:
            raise Error("shiro set_values: the context is closed")
        if not _lib.has("shiro_ctx_set_values"):
            raise Error(f"{_lib.path()} has no shiro_ctx_set_values (an older libshiro)", 9)
        if type(values).__module__.startswith("torch"):
            values = values.detach().cpu()
            import torch
            if values.dtype in (torch.bfloat16, torch.float16):  # bfloat16 has no numpy twin
                values = values.double()
            values = values.numpy()
        as_float = getattr(values, "dtype", None) == np.float32 and _lib.has("shiro_ctx_set_values_dtype")
        v = np.ascontiguousarray(values, dtype=np.float32 if as_float else np.float64)
        nnz = self.plan.local_nnz()
        mine = "" if v.shape == (nnz,) else f"rank {self.plan.rank}: {v.shape[0] if v.ndim == 1 else v.shape} " \
            f"values for its {nnz} nonzeros"
        wrong = [w for w in self.plan.comm.allgather(mine) if w]
        if wrong:
            raise Error("shiro set_values: expected one value per local nonzero; " + "; ".join(wrong), _lib.ERR_ARG)
        if as_float:
            st = lib.shiro_ctx_set_values_dtype(self._h, v.ctypes.data_as(ctypes.c_void_p), _lib.FLOAT32)
        else:
            st = lib.shiro_ctx_set_values(self._h, v.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
        if st != _lib.OK:
            raise Error(lib.shiro_ctx_last_error(self._h).decode(errors="replace"), st)
        self.values_version += 1

    def traffic(self) -> dict[str, int]:
        """This rank's rows and bytes per call (shiro_ctx_get_traffic) as a dict. Local."""
        if not self._h:
            raise Error("shiro traffic: the context is closed")
        t = _lib.shiro_traffic()
        st = _lib.load().shiro_ctx_get_traffic(self._h, ctypes.byref(t))
        if st != _lib.OK:
            raise Error(_lib.load().shiro_ctx_last_error(self._h).decode(errors="replace"), st)
        return {f: int(getattr(t, f)) for f, _ in t._fields_}

    def close(self):
        """Destroys the context (shiro_ctx_destroy: local) and lets its plan go. Idempotent. After
        MPI_Finalize the C context is left to the process's exit (its MPI objects cannot be freed)."""
        if self._h:
            if _mpi_alive():
                _lib.load().shiro_ctx_destroy(ctypes.byref(self._h))
            self._h = ctypes.c_void_p()
            _live.discard(self)
            self.plan._forget(self)
