"""_lib.py — loads libshiro with ctypes and declares the C API of runtime/shiro.h.

No compiled extension: the structs and prototypes below mirror runtime/shiro.h
and base/shiro_status.h field for field (keep them in step). The library is
found, in this order, at $SHIRO_LIBRARY, at build/runtime/libshiro.so of the
source tree this package sits in (python/shiro -> ../../build), in the libdir
pkg-config gives for shiro (an installed shiro.pc; PKG_CONFIG_PATH for a prefix
of your own), and by the dynamic loader's search (an installed libshiro.so.0).

`import shiro` neither loads libshiro nor initializes MPI. The first use that
needs them (a Plan, plan_matrix, the library's path) imports mpi4py's MPI
module, which initializes MPI and loads libmpi with RTLD_GLOBAL (Open MPI's
plugins need it), and then loads libshiro, which binds to that same libmpi
(mpi4py must be built against the MPI libshiro links, as Debian's
python3-mpi4py and libopenmpi-dev are).
"""
import ctypes
import ctypes.util
import os
import sys


class _LazyMPI:
    """mpi4py.MPI, imported (so MPI initialized) at the first attribute asked of it."""

    def __getattr__(self, name):
        from mpi4py import MPI as mpi
        return getattr(mpi, name)


MPI = _LazyMPI()


def mpi_imported():
    """True once mpi4py.MPI is imported (so MPI initialized by it, or by the program)."""
    return "mpi4py.MPI" in sys.modules

# Status values (base/shiro_status.h).
OK = 0
ERR_ARG = 1

FLOAT32, FLOAT64, BFLOAT16, FLOAT16 = 0, 1, 2, 3
BACKENDS = {"cpu": 0, "cuda": 1}
TRANSPORTS = {"auto": 0, "nccl": 1, "mpi": 2}



def _mpi_comm_type():
    """MPI_Comm as ctypes passes it: an int in MPICH, a pointer in Open MPI (mpi4py demo/wrap-ctypes)."""
    return ctypes.c_int if MPI._sizeof(MPI.Comm) == ctypes.sizeof(ctypes.c_int) else ctypes.c_void_p


MPI_Comm = object()  # stands for _mpi_comm_type() in the prototypes below until the library is loaded


class shiro_error(ctypes.Structure):
    _fields_ = [("message", ctypes.c_char * 512)]


class shiro_plan_info(ctypes.Structure):
    _fields_ = [("ranks", ctypes.c_int32), ("gpus_per_node", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("m", ctypes.c_int64), ("k", ctypes.c_int64), ("nnz", ctypes.c_int64),
                ("c_rows", ctypes.c_int64), ("b_rows", ctypes.c_int64),
                ("c_first", ctypes.c_int64), ("b_first", ctypes.c_int64),
                ("strategy", ctypes.c_char_p), ("partition", ctypes.c_char_p),
                ("c_global", ctypes.POINTER(ctypes.c_int64)), ("b_global", ctypes.POINTER(ctypes.c_int64))]


class shiro_ctx_options(ctypes.Structure):
    _fields_ = [("backend", ctypes.c_int), ("dtype", ctypes.c_int), ("n", ctypes.c_int64),
                ("device", ctypes.c_int), ("transport", ctypes.c_int), ("timeout_ms", ctypes.c_int64),
                ("threads", ctypes.c_int)]


class shiro_traffic(ctypes.Structure):
    _fields_ = [("rows_sent", ctypes.c_int64), ("rows_received", ctypes.c_int64),
                ("inter_node_rows_sent", ctypes.c_int64),
                ("bytes_sent", ctypes.c_int64), ("bytes_received", ctypes.c_int64)]


_P = ctypes.c_void_p
_PROTOTYPES = {
    "shiro_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "shiro_plan_open": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(_P), ctypes.POINTER(shiro_error)]),
    "shiro_plan_get_info": (ctypes.c_int, [_P, ctypes.POINTER(shiro_plan_info)]),
    "shiro_plan_close": (None, [ctypes.POINTER(_P)]),
    "shiro_ctx_options_default": (shiro_ctx_options, []),
    "shiro_ctx_create": (ctypes.c_int, [_P, MPI_Comm, ctypes.POINTER(shiro_ctx_options), ctypes.POINTER(_P),
                                        ctypes.POINTER(shiro_error)]),
    "shiro_spmm": (ctypes.c_int, [_P, _P, _P]),
    "shiro_spmm_transpose": (ctypes.c_int, [_P, _P, _P]),
    "shiro_ctx_last_error": (ctypes.c_char_p, [_P]),
    "shiro_ctx_get_traffic": (ctypes.c_int, [_P, ctypes.POINTER(shiro_traffic)]),
    "shiro_ctx_destroy": (None, [ctypes.POINTER(_P)]),
}
# Declared when the library has them (runtime/shiro.h of a later build): the pattern's CSR and new values.
_OPTIONAL = {
    "shiro_plan_get_local_matrix": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_int),
                                                   ctypes.POINTER(ctypes.c_int64),
                                                   ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(ctypes.c_double),
                                                   ctypes.POINTER(shiro_error)]),
    "shiro_ctx_set_values": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_double)]),
    "shiro_ctx_set_values_dtype": (ctypes.c_int, [_P, ctypes.c_void_p, ctypes.c_int]),
    "shiro_ctx_get_threads": (ctypes.c_int, [_P, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_char_p)]),
    "shiro_plan_open_comm": (ctypes.c_int, [ctypes.c_char_p, MPI_Comm, ctypes.POINTER(_P), ctypes.POINTER(shiro_error)]),
    "shiro_spmm_n": (ctypes.c_int, [_P, _P, _P, ctypes.c_int64]),
    "shiro_spmm_transpose_n": (ctypes.c_int, [_P, _P, _P, ctypes.c_int64]),
    "shiro_sddmm": (ctypes.c_int, [_P, _P, _P, _P, ctypes.c_int64, ctypes.c_int]),
}

_lib = None
_path = None


class Error(Exception):
    """A failed shiro call: `status` (the shiro_status value; 0 for a library that could not be loaded),
    `status_name` (shiro_strerror's name of it) and the library's message (str(e)). Error(message,
    status) is an instance of the subclass for that status (ArgumentError, MismatchError, ...), so
    `except shiro.MismatchError` catches a launch that does not fit the plan and `except shiro.Error`
    catches everything."""

    def __new__(cls, message="", status=ERR_ARG, *args, **kwargs):
        if cls is Error:
            cls = _BY_STATUS.get(status, Error)
        return super().__new__(cls, message)

    def __init__(self, message="", status=ERR_ARG):
        super().__init__(message)
        self.status = status
        self.status_name = _lib.shiro_strerror(status).decode() if _lib is not None and status else ""


class ArgumentError(Error, ValueError):
    """SHIRO_ERR_ARG: a bad argument (a wrong shape, dtype, device, a NULL or out-of-range value)."""


class OutOfMemoryError(Error, MemoryError):
    """SHIRO_ERR_NOMEM: an allocation failed."""


class FileError(Error, OSError):
    """SHIRO_ERR_IO, SHIRO_ERR_PARSE, SHIRO_ERR_FORMAT: a file could not be read, parsed or is not a plan."""


class VersionError(Error):
    """SHIRO_ERR_VERSION: a plan file of a format version this library does not serve for the call."""


class MismatchError(Error):
    """SHIRO_ERR_MISMATCH: the plan and the launch disagree (rank count, rank, matrix)."""


class MPIError(Error):
    """SHIRO_ERR_MPI: an MPI call failed."""


class UnsupportedError(Error):
    """SHIRO_ERR_UNSUPPORTED: a valid request this build cannot serve (e.g. no CUDA backend)."""


class CUDAError(Error):
    """SHIRO_ERR_CUDA: a CUDA, cuSPARSE or NCCL call failed (or no device)."""


class InternalError(Error):
    """SHIRO_ERR_INTERNAL: a broken internal invariant (a bug, please report)."""


_BY_STATUS = {1: ArgumentError, 2: OutOfMemoryError, 3: FileError, 4: FileError, 5: FileError, 6: VersionError,
              7: MismatchError, 8: MPIError, 9: UnsupportedError, 10: CUDAError, 11: InternalError}
ERRORS = ("Error", "ArgumentError", "OutOfMemoryError", "FileError", "VersionError", "MismatchError", "MPIError",
          "UnsupportedError", "CUDAError", "InternalError")


def check_launch():
    """Raises MismatchError when MPI's world is one process but the environment says the job
    has several: torchrun / torch.distributed (WORLD_SIZE > 1 with LOCAL_RANK) or a Slurm step
    (SLURM_STEP_NUM_TASKS > 1) whose processes did not start MPI together, so that each would plan and
    replay alone. SHIRO_ALLOW_SINGLETON=1 turns the check off. Local: no communication."""
    if os.environ.get("SHIRO_ALLOW_SINGLETON") == "1" or MPI.COMM_WORLD.Get_size() != 1:
        return

    def count(name):
        try:
            return int(os.environ.get(name, "1"))
        except ValueError:
            return 1

    if count("WORLD_SIZE") > 1 and "LOCAL_RANK" in os.environ:
        raise MismatchError(
            f"shiro: this process is alone in its MPI world, but WORLD_SIZE={os.environ['WORLD_SIZE']} says the job "
            "has more (a torchrun / torch.distributed launch: each process would run shiro by itself). shiro's "
            f"ranks are MPI ranks: launch with `mpirun -np {os.environ['WORLD_SIZE']} python ...` (or srun with MPI "
            "support) and, for DDP, initialize torch.distributed from MPI's rank and size (python/README.md, "
            "\"DDP beside shiro\"). SHIRO_ALLOW_SINGLETON=1 skips this check.", 7)
    if count("SLURM_STEP_NUM_TASKS") > 1:
        raise MismatchError(
            f"shiro: this process is alone in its MPI world, but SLURM_STEP_NUM_TASKS="
            f"{os.environ['SLURM_STEP_NUM_TASKS']}: srun started the tasks without MPI's process manager "
            "(try `srun --mpi=pmix`, or mpirun). SHIRO_ALLOW_SINGLETON=1 skips this check.", 7)


def _pkg_config_libdir():
    """libshiro's directory as pkg-config knows it (an installed shiro.pc), or None."""
    import shutil
    import subprocess
    exe = shutil.which("pkg-config")
    if not exe:
        return None
    try:
        p = subprocess.run([exe, "--variable=libdir", "shiro"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return p.stdout.strip() if p.returncode == 0 and p.stdout.strip() else None


def candidates():
    """Where libshiro is looked for, in order (see the module's docstring)."""
    env = os.environ.get("SHIRO_LIBRARY")
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    tree = os.path.join(here, "..", "..", "build", "runtime", "libshiro.so")
    libdir = _pkg_config_libdir()
    installed = [os.path.join(libdir, "libshiro.so.0")] if libdir else []
    found = ctypes.util.find_library("shiro")
    return [os.path.normpath(tree)] + installed + ([found] if found else []) + ["libshiro.so.0"]


def load():
    """Returns the loaded library (loads it once); raises Error (status 0) naming every place tried."""
    global _lib, _path
    if _lib is not None:
        return _lib
    tried = []
    for path in candidates():
        if os.sep in path and not os.path.exists(path):
            tried.append(f"{path} (no such file)")
            continue
        comm_type = _mpi_comm_type()  # imports mpi4py.MPI first: MPI initialized, libmpi loaded
        try:
            lib = ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as e:
            tried.append(f"{path} ({e})")
            continue
        for name, (res, args) in _PROTOTYPES.items():
            f = getattr(lib, name)
            f.restype, f.argtypes = res, [comm_type if a is MPI_Comm else a for a in args]
        for name, (res, args) in _OPTIONAL.items():
            f = getattr(lib, name, None)
            if f is not None:
                f.restype, f.argtypes = res, [comm_type if a is MPI_Comm else a for a in args]
        _lib, _path = lib, path
        return lib
    raise Error("shiro: libshiro not found; build it (tools/dev/build.sh), then set SHIRO_LIBRARY to its "
                "build/runtime/libshiro.so or install it (meson install -C build) where pkg-config finds shiro.pc "
                "(PKG_CONFIG_PATH) or the loader finds libshiro.so.0. Tried: " + "; ".join(tried), 0)


def path():
    """The file libshiro was loaded from (loads it)."""
    load()
    return _path


def has(name):
    """True when the loaded library exports the C function `name`."""
    return getattr(load(), name, None) is not None


def comm_handle(comm):
    """The MPI_Comm of an mpi4py communicator, as ctypes passes it (mpi4py demo/wrap-ctypes)."""
    return _mpi_comm_type().from_address(MPI._addressof(comm))
