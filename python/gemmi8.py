"""Python bindings for gemmi8 (libgemmi8.so) through ctypes.

numpy arrays go in and come out. Every array argument is checked (exact dtype,
shape, strides) before the C call, and a bad one raises TypeError or ValueError; a
status other than success from the library raises gemmi8.Error (or one of its
subclasses), whose message names the C function and the status, e.g.
"gemmi8_qu8s8_gemm: invalid parameter".

Matrices may be row-strided views (rows apart by any multiple of the element size,
elements of a row adjacent): the row stride goes to the C stride parameter. Other
layouts raise ValueError; pass np.ascontiguousarray(x) then.

The library is found through the environment variable GEMMI8_LIBRARY, else
../libgemmi8.so next to this file, else ctypes.util.find_library("gemmi8").
"""

import ctypes
import ctypes.util
import math
import os
import sys
import threading

import numpy as np

# ---------------------------------------------------------------------------------
# Constants of include/gemmi8.h
# ---------------------------------------------------------------------------------

PACK_ALIGNMENT = 64
B_NK = 0
B_KN = 1
QU8_MAX_K = 33025
QS8_MAX_K = 65793
QU8S8_MAX_K = 65793
QD8_MAX_K = 65793
BIN_MAX_K = 2**31 - 1
MAX_THREADS = 1024
THREADPOOL_SPIN_US = 100
THREADPOOL_SPIN_US_MAX = 1000000
BIN_ONE_PADDING = 0
BIN_ZERO_PADDING = 1

STATUS_SUCCESS = 0
STATUS_INVALID_PARAMETER = 1
STATUS_UNSUPPORTED_PARAMETER = 2
STATUS_OUT_OF_MEMORY = 3
STATUS_UNSUPPORTED_HARDWARE = 4

REQUANT_FIXEDPOINT = 0
REQUANT_FP32 = 1

_SCHEMES = {"onnx": 0, "tflite": 1}
_QRANGES = {"u8": 0, "s8": 1, "s8_symmetric": 2}
_QAXES = {"tensor": 0, "row": 1, "column": 2}
_BIN_KINDS = {"s32": 0, "f32": 1, "bits": 2, "threshold": 3, "qs8": 4, "f32_add": 5}

_U8 = np.dtype(np.uint8)
_S8 = np.dtype(np.int8)
_S32 = np.dtype(np.int32)
_U64 = np.dtype(np.uint64)
_F32 = np.dtype(np.float32)
_F64 = np.dtype(np.float64)

_INT32_MIN = -(2**31)
_INT32_MAX = 2**31 - 1


def bin_words(k):
    """uint64 words of a bit-packed row of k values (GEMMI8_BIN_WORDS)."""
    return k // 64 + (k % 64 != 0)


# ---------------------------------------------------------------------------------
# The library and its prototypes
# ---------------------------------------------------------------------------------


def _load_library():
    path = os.environ.get("GEMMI8_LIBRARY")
    if path:
        return ctypes.CDLL(path)
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "libgemmi8.so")
    if os.path.exists(here):
        return ctypes.CDLL(os.path.normpath(here))
    name = ctypes.util.find_library("gemmi8")
    if name:
        return ctypes.CDLL(name)
    raise OSError("gemmi8: libgemmi8.so not found (set GEMMI8_LIBRARY, build it with "
                  "make next to python/, or install it)")


_lib = _load_library()
library_path = _lib._name


class _Requant(ctypes.Structure):
    _fields_ = [("mode", ctypes.c_int), ("per_channel", ctypes.c_int),
                ("multiplier", ctypes.c_void_p), ("shift", ctypes.c_void_p),
                ("scale", ctypes.c_void_p), ("zero_point", ctypes.c_int32),
                ("min", ctypes.c_int32), ("max", ctypes.c_int32)]


class _Parallel(ctypes.Structure):
    _fields_ = [("parallel_for", ctypes.c_void_p), ("context", ctypes.c_void_p),
                ("threads", ctypes.c_size_t)]


class _PoolOptions(ctypes.Structure):
    _fields_ = [("spin_us", ctypes.c_uint32), ("reserved", ctypes.c_uint32 * 7)]


class _Geometry(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "kernel_height", "kernel_width", "stride_height", "stride_width",
        "dilation_height", "dilation_width", "padding_top", "padding_left",
        "padding_bottom", "padding_right", "groups", "group_input_channels",
        "group_output_channels")]


class _BinOutput(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("multiplier", ctypes.c_void_p),
                ("bias", ctypes.c_void_p), ("output_min", ctypes.c_float),
                ("output_max", ctypes.c_float), ("threshold", ctypes.c_void_p),
                ("greater", ctypes.c_void_p), ("bias_s32", ctypes.c_void_p),
                ("rq", ctypes.POINTER(_Requant))]


class _Q4Weights(ctypes.Structure):
    _fields_ = [("b", ctypes.c_void_p), ("b_stride", ctypes.c_size_t),
                ("block", ctypes.c_size_t), ("scale", ctypes.c_void_p),
                ("zero_point", ctypes.c_void_p), ("bias", ctypes.c_void_p)]


def _prototypes():
    St = ctypes.c_int  # gemmi8_status
    sz = ctypes.c_size_t
    vp = ctypes.c_void_p
    u32 = ctypes.c_uint32
    u8 = ctypes.c_uint8
    s8 = ctypes.c_int8
    i = ctypes.c_int
    f = ctypes.c_float
    d = ctypes.c_double
    cp = ctypes.c_char_p
    psz = ctypes.POINTER(sz)
    pvp = ctypes.POINTER(vp)
    pi32 = ctypes.POINTER(ctypes.c_int32)
    prq = ctypes.POINTER(_Requant)
    ppar = ctypes.POINTER(_Parallel)
    pgeo = ctypes.POINTER(_Geometry)
    gemm8 = [sz, sz, sz, vp, sz, vp, prq, vp, sz]
    gemm32 = [sz, sz, sz, vp, sz, vp, vp, sz]
    gemmf = [sz, sz, sz, vp, sz, vp, vp, vp, f, f, vp, sz]
    linear = [sz, sz, sz, vp, sz, vp, f, f, vp, sz, vp, sz, ppar]
    binf = [sz, sz, sz, vp, sz, vp, vp, vp, vp, sz]
    rows = [sz, sz, vp, sz, vp, sz, vp, vp]
    p = {
        "gemmi8_version": (cp, []),
        "gemmi8_status_string": (cp, [i]),
        "gemmi8_isa_name": (cp, []),
        "gemmi8_isa_compiled": (ctypes.POINTER(cp), []),
        "gemmi8_types_compiled": (ctypes.POINTER(cp), []),
        "gemmi8_isa_available": (St, [cp]),
        "gemmi8_isa_env_status": (St, []),
        "gemmi8_threadpool_options_init": (None, [ctypes.POINTER(_PoolOptions)]),
        "gemmi8_threadpool_create": (St, [sz, ctypes.POINTER(_PoolOptions), pvp]),
        "gemmi8_threadpool_destroy": (None, [vp]),
        "gemmi8_threadpool_threads": (sz, [vp]),
        "gemmi8_threadpool_parallel": (St, [vp, ppar]),
        "gemmi8_quantize_multiplier": (St, [d, pi32, pi32]),
        "gemmi8_quantize_multipliers": (St, [sz, vp, vp, vp]),
        "gemmi8_choose_qparams": (St, [i, i, sz, vp, vp, vp, vp]),
        "gemmi8_quantize_f32": (St, [i, i, i, sz, sz, vp, vp, vp, vp]),
        "gemmi8_dequantize_f32": (St, [i, i, sz, sz, vp, vp, vp, vp]),
        "gemmi8_quantize_bias": (St, [i, sz, vp, f, vp, i, vp]),
        "gemmi8_requant_scales": (St, [i, sz, f, vp, f, vp, vp, vp]),
        "gemmi8_calibration_create": (St, [sz, pvp]),
        "gemmi8_calibration_update": (St, [vp, sz, vp]),
        "gemmi8_calibration_range": (St, [vp, d, vp, vp]),
        "gemmi8_calibration_destroy": (None, [vp]),
        "gemmi8_quantize_rows_u8": (St, rows),
        "gemmi8_quantize_rows_s8": (St, rows),
        "gemmi8_qu8_pack_size": (St, [sz, sz, psz]),
        "gemmi8_qs8_pack_size": (St, [sz, sz, psz]),
        "gemmi8_qu8s8_pack_size": (St, [sz, sz, psz]),
        "gemmi8_qd8_pack_size": (St, [sz, sz, psz]),
        "gemmi8_qdu8_pack_size": (St, [sz, sz, psz]),
        "gemmi8_qd8_pack_q4_size": (St, [sz, sz, sz, psz]),
        "gemmi8_bin_pack_size": (St, [sz, sz, psz]),
        "gemmi8_qu8_pack": (St, [sz, sz, vp, sz, u32, u8, vp, i, vp, vp, sz]),
        "gemmi8_qs8_pack": (St, [sz, sz, vp, sz, u32, s8, vp, vp, sz]),
        "gemmi8_qu8s8_pack": (St, [sz, sz, vp, sz, u32, u8, vp, vp, sz]),
        "gemmi8_qd8_pack": (St, [sz, sz, vp, sz, u32, vp, vp, vp, sz]),
        "gemmi8_qdu8_pack": (St, [sz, sz, vp, sz, u32, vp, vp, vp, sz]),
        "gemmi8_qd8_pack_q4": (St, [sz, sz, ctypes.POINTER(_Q4Weights), vp, sz]),
        "gemmi8_bin_pack": (St, [sz, sz, vp, sz, u32, vp, sz]),
        "gemmi8_qu8_pack_alloc": (St, [sz, sz, vp, sz, u32, u8, vp, i, vp, pvp]),
        "gemmi8_qs8_pack_alloc": (St, [sz, sz, vp, sz, u32, s8, vp, pvp]),
        "gemmi8_qu8s8_pack_alloc": (St, [sz, sz, vp, sz, u32, u8, vp, pvp]),
        "gemmi8_qd8_pack_alloc": (St, [sz, sz, vp, sz, u32, vp, vp, pvp]),
        "gemmi8_qdu8_pack_alloc": (St, [sz, sz, vp, sz, u32, vp, vp, pvp]),
        "gemmi8_qd8_pack_q4_alloc": (St, [sz, sz, ctypes.POINTER(_Q4Weights), pvp]),
        "gemmi8_bin_pack_alloc": (St, [sz, sz, vp, sz, u32, pvp]),
        "gemmi8_packed_free": (None, [vp]),
        "gemmi8_qd8_linear_workspace_size": (St, [sz, sz, psz]),
        "gemmi8_qd8_linear_f32": (St, linear),
        "gemmi8_qdu8_linear_f32": (St, linear),
        "gemmi8_qd8_gemm_f32": (St, gemmf),
        "gemmi8_qd8_gemm_f32_ex": (St, gemmf + [ppar]),
        "gemmi8_qdu8_gemm_f32": (St, gemmf),
        "gemmi8_qdu8_gemm_f32_ex": (St, gemmf + [ppar]),
        "gemmi8_bin_pack_rows_f32": (St, [sz, sz, vp, sz, vp, sz]),
        "gemmi8_bin_pack_rows_s8": (St, [sz, sz, vp, sz, vp, sz]),
        "gemmi8_bin_pack_rows_u8": (St, [sz, sz, vp, sz, u8, vp, sz]),
        "gemmi8_bin_gemm_s32": (St, gemm32),
        "gemmi8_bin_gemm_s32_ex": (St, gemm32 + [ppar]),
        "gemmi8_bin_gemm_f32": (St, binf),
        "gemmi8_bin_gemm_f32_ex": (St, binf + [ppar]),
        "gemmi8_bin_gemm_bits": (St, binf),
        "gemmi8_bin_gemm_bits_ex": (St, binf + [ppar]),
        "gemmi8_qu8_convolution_create": (St, [pgeo, vp, u8, vp, i, vp, prq, pvp]),
        "gemmi8_qs8_convolution_create": (St, [pgeo, vp, s8, vp, prq, pvp]),
        "gemmi8_qu8s8_convolution_create": (St, [pgeo, vp, u8, vp, prq, pvp]),
        "gemmi8_qu8_convolution_create_s32": (St, [pgeo, vp, u8, vp, i, vp, pvp]),
        "gemmi8_qs8_convolution_create_s32": (St, [pgeo, vp, s8, vp, pvp]),
        "gemmi8_qu8s8_convolution_create_s32": (St, [pgeo, vp, u8, vp, pvp]),
        "gemmi8_bin_convolution_create": (St, [pgeo, vp, u32, ctypes.POINTER(_BinOutput), pvp]),
        "gemmi8_convolution_setup": (St, [vp, sz, sz, sz, vp, sz, vp, sz, psz, psz]),
        "gemmi8_convolution_run": (St, [vp, ppar]),
        "gemmi8_convolution_memory": (St, [vp, psz, psz]),
        "gemmi8_convolution_destroy": (None, [vp]),
        "gemmi8_bin_max_pool": (St, [sz] * 4 + [vp, sz] + [sz] * 8 + [vp, sz, psz, psz]),
    }
    for t in ("qu8", "qs8", "qu8s8"):
        p["gemmi8_%s_gemm" % t] = (St, gemm8)
        p["gemmi8_%s_gemm_ex" % t] = (St, gemm8 + [ppar])
        p["gemmi8_%s_gemm_s32" % t] = (St, gemm32)
        p["gemmi8_%s_gemm_s32_ex" % t] = (St, gemm32 + [ppar])
    return p


class _Functions:
    """The C functions, with their argtypes and restype; None for a symbol absent
    from the library loaded (an older build)."""


def _absent(name):
    def absent(*args):
        raise NotImplementedError("%s: not exported by %s (a library older than the "
                                  "header)" % (name, library_path))
    absent.absent = True
    return absent


_f = _Functions()
_missing = []
for _name, (_res, _args) in _prototypes().items():
    try:
        _fn = getattr(_lib, _name)
    except AttributeError:
        setattr(_f, _name[7:], _absent(_name))
        _missing.append(_name)
        continue
    _fn.restype = _res
    _fn.argtypes = _args
    setattr(_f, _name[7:], _fn)  # without the gemmi8_ prefix
del _name, _res, _args


def has_symbol(name):
    """Whether the library loaded exports the C function name (e.g.
    "gemmi8_calibration_create")."""
    return name.startswith("gemmi8_") and hasattr(_f, name[7:]) and name not in _missing


def _need(name):
    return getattr(_f, name[7:])


# ---------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------


def status_string(status):
    """Name of a gemmi8 status, e.g. "invalid parameter"."""
    return _f.status_string(int(status)).decode()


class Error(Exception):
    """A gemmi8 function returned a status other than success. .status is the
    status (int), .name its name (gemmi8_status_string), .function the C function."""

    def __init__(self, function, status):
        self.function = function
        self.status = int(status)
        self.name = status_string(status)
        super().__init__("%s: %s" % (function, self.name))


class InvalidParameterError(Error):
    pass


class UnsupportedParameterError(Error):
    pass


class OutOfMemoryError(Error):
    pass


class UnsupportedHardwareError(Error):
    pass


_ERRORS = {1: InvalidParameterError, 2: UnsupportedParameterError, 3: OutOfMemoryError,
           4: UnsupportedHardwareError}


def _raise(function, status):
    raise _ERRORS.get(status, Error)(function, status)


# ---------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------


def _array(x, dt, name, fn):
    if not isinstance(x, np.ndarray):
        raise TypeError("%s: %s must be a numpy.ndarray of %s, not %s"
                        % (fn, name, dt, type(x).__name__))
    if x.dtype != dt:
        raise TypeError("%s: %s must have dtype %s, not %s" % (fn, name, dt, x.dtype))


_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _address(x):
    """The address of an array's first element. (Through the buffer protocol when it
    is writeable and C-contiguous: faster than x.ctypes.data.)"""
    try:
        return _addressof(_from_buffer(x))
    except (TypeError, ValueError, BufferError):
        return x.ctypes.data


def _mat(x, dt, name, fn):
    """A 2-D matrix with adjacent elements in a row: (rows, cols, address, row stride
    in elements)."""
    if type(x) is np.ndarray and x.dtype == dt and x.ndim == 2:
        # The common case first: a buffer export succeeds only for a writeable
        # C-contiguous array, and its address then tells the alignment.
        try:
            address = _addressof(_from_buffer(x))
        except (TypeError, ValueError, BufferError):
            pass
        else:
            if not address % dt.itemsize:
                rows, cols = x.shape
                return rows, cols, address, cols
    return _mat_strided(x, dt, name, fn)


def _mat_strided(x, dt, name, fn):
    _array(x, dt, name, fn)
    if x.ndim != 2:
        raise ValueError("%s: %s must be 2-D, not %d-D" % (fn, name, x.ndim))
    rows, cols = x.shape
    s0, s1 = x.strides
    isz = dt.itemsize
    if rows == 0 or cols == 0:
        return rows, cols, x.ctypes.data, cols  # the library refuses the zero size
    if s1 != isz and cols > 1:
        raise ValueError("%s: %s must have adjacent elements in a row (inner stride %d "
                         "bytes, not %d): pass np.ascontiguousarray()" % (fn, name, isz, s1))
    if rows <= 1:
        stride = cols
    else:
        if s0 % isz or s0 < cols * isz:
            raise ValueError("%s: %s row stride of %d bytes is not a multiple of %d at "
                             "least the row (%d elements): pass np.ascontiguousarray()"
                             % (fn, name, s0, isz, cols))
        stride = s0 // isz
    if not x.flags.aligned:
        raise ValueError("%s: %s is not aligned to its elements" % (fn, name))
    return rows, cols, x.ctypes.data, stride


def _out_mat(out, rows, cols, dt, name, fn):
    """The output matrix: a new one, or out checked. (array, address, row stride)."""
    if out is None:
        o = np.empty((rows, cols), dt)
        return o, _address(o), cols
    r, c, ptr, stride = _mat(out, dt, name, fn)
    if r != rows or c != cols:
        raise ValueError("%s: %s must have shape (%d, %d), not %s"
                         % (fn, name, rows, cols, out.shape))
    if not out.flags.writeable:
        raise ValueError("%s: %s is read-only" % (fn, name))
    return out, ptr, stride


def _vec(x, dt, n, name, fn):
    """A contiguous 1-D array of n values: its address."""
    _array(x, dt, name, fn)
    if x.ndim != 1 or x.shape[0] != n:
        raise ValueError("%s: %s must have shape (%d,), not %s" % (fn, name, n, x.shape))
    if not x.flags.c_contiguous or not x.flags.aligned:
        raise ValueError("%s: %s must be contiguous" % (fn, name))
    return x.ctypes.data


def _contig(x, dt, name, fn):
    _array(x, dt, name, fn)
    if not x.flags.c_contiguous or not x.flags.aligned:
        raise ValueError("%s: %s must be C-contiguous: pass np.ascontiguousarray()"
                         % (fn, name))
    return x.ctypes.data


def _int_in(v, lo, hi, name, fn):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError("%s: %s must be an int, not %s" % (fn, name, type(v).__name__))
    v = int(v)
    if v < lo or v > hi:
        raise ValueError("%s: %s = %d is outside %d..%d" % (fn, name, v, lo, hi))
    return v


def _float(v, name, fn):
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer,
                                                              np.floating)):
        raise TypeError("%s: %s must be a float, not %s" % (fn, name, type(v).__name__))
    return float(v)


def _enum(v, table, name, fn):
    if isinstance(v, str):
        try:
            return table[v]
        except KeyError:
            raise ValueError("%s: %s must be one of %s, not %r"
                             % (fn, name, ", ".join(table), v)) from None
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return int(v)  # passed through: the library checks it
    raise TypeError("%s: %s must be one of %s" % (fn, name, ", ".join(table)))


def _nhwc(x, dt, channels, name, fn):
    """A 4-D NHWC array whose pixels are evenly spaced (channel slices allowed):
    (batch, height, width, address, pixel stride in elements)."""
    _array(x, dt, name, fn)
    if x.ndim != 4:
        raise ValueError("%s: %s must be 4-D (batch, height, width, channels), not %d-D"
                         % (fn, name, x.ndim))
    b, h, w, c = x.shape
    if c != channels:
        raise ValueError("%s: %s must have %d channels (elements) a pixel, not %d"
                         % (fn, name, channels, c))
    isz = dt.itemsize
    s0, s1, s2, s3 = x.strides
    # the pixel stride: the stride of the innermost of batch, height, width that has
    # more than one element (a single pixel: its channels)
    ps = s2 if w > 1 else s1 if h > 1 else s0 if b > 1 else c * isz
    ok = ((s3 == isz or c <= 1) and ps > 0 and ps % isz == 0 and ps >= c * isz and
          (w == 1 or s2 == ps) and (h == 1 or s1 == w * ps) and (b == 1 or s0 == h * w * ps))
    if not ok:
        raise ValueError("%s: %s must hold its pixels evenly spaced, channels adjacent "
                         "(a C-contiguous array or a channel slice of one)" % (fn, name))
    if not x.flags.aligned:
        raise ValueError("%s: %s is not aligned to its elements" % (fn, name))
    return b, h, w, x.ctypes.data, ps // isz


def _pair(v, name):
    if isinstance(v, (int, np.integer)):
        return int(v), int(v)
    v = tuple(int(t) for t in v)
    if len(v) != 2:
        raise ValueError("%s must be an int or a pair" % name)
    return v


def _padding(v):
    """int, (height, width) or (top, left, bottom, right)."""
    if isinstance(v, (int, np.integer)):
        v = int(v)
        return v, v, v, v
    v = tuple(int(t) for t in v)
    if len(v) == 2:
        return v[0], v[1], v[0], v[1]
    if len(v) == 4:
        return v
    raise ValueError("padding must be an int, (height, width) or (top, left, bottom, right)")


def _check_nonneg(values, name):
    for v in values:
        if v < 0:
            raise ValueError("%s must not be negative" % name)


# ---------------------------------------------------------------------------------
# Version and instruction sets
# ---------------------------------------------------------------------------------


def version():
    """Version of the library loaded, "major.minor.patch"."""
    return _f.version().decode()


def isa_name():
    """The kernel-set level in use, e.g. "avx512vnni"."""
    return _f.isa_name().decode()


def _strings(p):
    out = []
    i = 0
    while p[i] is not None:
        out.append(p[i].decode())
        i += 1
    return out


def isa_compiled():
    """The levels compiled into this build, "generic" first."""
    return _strings(_f.isa_compiled())


def types_compiled():
    """The types this build holds, of "qu8", "qs8", "qu8s8", "bin" and "q4"."""
    return _strings(_f.types_compiled())


def isa_available(name):
    """True when the named level is compiled in and runs here, False when it is
    compiled in and this CPU lacks it; Error for a name that is no level of the
    build."""
    st = _f.isa_available(name.encode())
    if st == 0:
        return True
    if st == STATUS_UNSUPPORTED_HARDWARE:
        return False
    _raise("gemmi8_isa_available", st)


def isa_env_status():
    """What became of GEMMI8_ISA: a status (0: honoured, or unset)."""
    return int(_f.isa_env_status())


# ---------------------------------------------------------------------------------
# Objects of the library: thread pool, calibration, convolution
# ---------------------------------------------------------------------------------


class _Owner:
    """The owner of a handle of the library: self._h (None before it is made and once
    freed), freed by the class's _destroy through close() (again: nothing), at the
    end of a with block, or when the object goes. self._lock serializes the calls
    that use the handle."""

    _destroy = None  # each subclass: staticmethod(the C function that frees the handle)
    _h = None

    def __init__(self):
        self._lock = threading.Lock()

    def _handle(self):
        if not self._h:
            raise ValueError("%s: closed" % type(self).__name__)
        return self._h

    def _closed(self):
        """Called under the lock by close() once the handle is freed."""

    def close(self):
        """Frees the library's object (again: nothing)."""
        if self._h:
            with self._lock:
                h, self._h = self._h, None
                self._destroy(h)
                self._closed()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        h = self._h
        if h:
            self._h = None
            self._destroy(h)


class ThreadPool(_Owner):
    """gemmi8's thread pool: threads threads in all, the calling one included (0: one
    per CPU this process may use). Pass it as pool= to the GEMMs and
    Convolution.run; usable as a context manager (close() on exit: joins the threads
    and frees the pool). Calls with one pool are serialized by a lock (the library
    runs one parallel-for at a time)."""

    _destroy = staticmethod(_f.threadpool_destroy)

    def __init__(self, threads=0, spin_us=None):
        super().__init__()
        threads = _int_in(threads, 0, 2**63, "threads", "gemmi8_threadpool_create")
        opts = _PoolOptions()
        _f.threadpool_options_init(ctypes.byref(opts))
        if spin_us is not None:
            opts.spin_us = _int_in(spin_us, 0, 2**32 - 1, "spin_us", "gemmi8_threadpool_create")
        handle = ctypes.c_void_p()
        st = _f.threadpool_create(threads, ctypes.byref(opts), ctypes.byref(handle))
        if st:
            _raise("gemmi8_threadpool_create", st)
        self._h = handle.value
        self._parallel = _Parallel()
        st = _f.threadpool_parallel(self._h, ctypes.byref(self._parallel))
        if st:
            self.close()
            _raise("gemmi8_threadpool_parallel", st)
        self._ptr = ctypes.pointer(self._parallel)

    @property
    def threads(self):
        """Threads of the pool, the calling thread included (0 once closed)."""
        return _f.threadpool_threads(self._h) if self._h else 0

    def _par(self):
        if not self._h:
            raise ValueError("ThreadPool: the pool is closed")
        return self._ptr

    def __repr__(self):
        return "ThreadPool(threads=%d)" % self.threads


def _with_pool(pool, call):
    """Calls call(parallel pointer) under the pool's lock."""
    if not isinstance(pool, ThreadPool):
        raise TypeError("pool must be a gemmi8.ThreadPool, not %s" % type(pool).__name__)
    with pool._lock:
        return call(pool._par())


def _call(name, pool, plain, ex, *args):
    """plain(*args) without a pool, else ex(*args, the pool's parallel-for) under its
    lock (plain None: ex(*args, None) without a pool); raises Error for a status
    other than success."""
    if pool is not None:
        st = _with_pool(pool, lambda par: ex(*args, par))
    elif plain is not None:
        st = plain(*args)
    else:
        st = ex(*args, None)
    if st:
        _raise(name, st)


# ---------------------------------------------------------------------------------
# Requantization
# ---------------------------------------------------------------------------------


def quantize_multiplier(scale):
    """(multiplier, shift) of a real scale, as TFLite's QuantizeMultiplier."""
    scale = _float(scale, "scale", "gemmi8_quantize_multiplier")
    m = ctypes.c_int32()
    s = ctypes.c_int32()
    st = _f.quantize_multiplier(scale, ctypes.byref(m), ctypes.byref(s))
    if st:
        _raise("gemmi8_quantize_multiplier", st)
    return m.value, s.value


def quantize_multipliers(scale):
    """(multiplier, shift) int32 arrays of a float64 array of scales."""
    fn = "gemmi8_quantize_multipliers"
    _array(scale, _F64, "scale", fn)
    if scale.ndim != 1:
        raise ValueError("%s: scale must be 1-D" % fn)
    n = scale.shape[0]
    p = _vec(scale, _F64, n, "scale", fn)
    m = np.empty(n, _S32)
    s = np.empty(n, _S32)
    st = _f.quantize_multipliers(n, p, m.ctypes.data, s.ctypes.data)
    if st:
        _raise(fn, st)
    return m, s


class Requant:
    """Requantization of an 8-bit output (struct gemmi8_requant).

    mode "fixedpoint" (default): multiplier and shift (ints, or int32 arrays of one a
    channel), or scale (a float, or a float64/float32 array a channel) from which
    gemmi8_quantize_multiplier(s) derives them. mode "fp32": scale, a float or a
    float32 array a channel. A Python number is one value for every channel; a 1-D
    array is per channel and must hold N values (the GEMM's N, or groups * co).
    zero_point, min, max: the output's zero point and clamp window; min/max None
    means the whole range of the output type (0..255 or -128..127).
    The arrays are copied once and held as long as the object.
    """

    def __init__(self, scale=None, zero_point=0, min=None, max=None, *, mode="fixedpoint",
                 multiplier=None, shift=None):
        fn = "Requant"
        self.zero_point = _int_in(zero_point, _INT32_MIN, _INT32_MAX, "zero_point", fn)
        self.min = None if min is None else _int_in(min, _INT32_MIN, _INT32_MAX, "min", fn)
        self.max = None if max is None else _int_in(max, _INT32_MIN, _INT32_MAX, "max", fn)
        self.multiplier = self.shift = self.scale = None
        if mode in ("fixedpoint", REQUANT_FIXEDPOINT):
            self.mode = REQUANT_FIXEDPOINT
            if multiplier is not None or shift is not None:
                if scale is not None or multiplier is None or shift is None:
                    raise ValueError("%s: give multiplier and shift, or scale" % fn)
                self.multiplier = self._values(multiplier, _S32, "multiplier")
                self.shift = self._values(shift, _S32, "shift")
                if self.multiplier.shape != self.shift.shape or \
                        isinstance(multiplier, np.ndarray) != isinstance(shift, np.ndarray):
                    raise ValueError("%s: multiplier and shift must have the same shape" % fn)
                per = isinstance(multiplier, np.ndarray)
            elif scale is not None:
                if isinstance(scale, np.ndarray):
                    if scale.dtype != _F64 and scale.dtype != _F32:
                        raise TypeError("%s: scale must have dtype float64 or float32, "
                                        "not %s" % (fn, scale.dtype))
                    if scale.ndim != 1:
                        raise ValueError("%s: scale must be 1-D" % fn)
                    self.multiplier, self.shift = quantize_multipliers(
                        np.ascontiguousarray(scale, _F64))
                    per = True
                else:
                    m, s = quantize_multiplier(scale)
                    self.multiplier = np.array([m], _S32)
                    self.shift = np.array([s], _S32)
                    per = False
            else:
                raise ValueError("%s: give scale, or multiplier and shift" % fn)
        elif mode in ("fp32", REQUANT_FP32):
            self.mode = REQUANT_FP32
            if scale is None or multiplier is not None or shift is not None:
                raise ValueError("%s: fp32 mode takes scale (not multiplier, shift)" % fn)
            self.scale = self._values(scale, _F32, "scale")
            per = isinstance(scale, np.ndarray)
        else:
            raise ValueError("%s: mode must be 'fixedpoint' or 'fp32', not %r" % (fn, mode))
        self.per_channel = per
        first = self.multiplier if self.scale is None else self.scale
        self.channels = first.shape[0] if per else None
        self._ptrs = [None, None]  # unsigned, signed output

    @staticmethod
    def _values(v, dt, name):
        fn = "Requant"
        if isinstance(v, np.ndarray):
            _array(v, dt, name, fn)
            if v.ndim != 1 or v.shape[0] == 0:
                raise ValueError("%s: %s must be a non-empty 1-D array" % (fn, name))
            return np.array(v, dt)  # a copy: the struct points into it
        if dt.kind == "f":
            return np.array([_float(v, name, fn)], dt)
        return np.array([_int_in(v, _INT32_MIN, _INT32_MAX, name, fn)], dt)

    def _make(self, signed):
        lo, hi = (-128, 127) if signed else (0, 255)
        s = _Requant()
        s.mode = self.mode
        s.per_channel = 1 if self.per_channel else 0
        if self.mode == REQUANT_FIXEDPOINT:
            s.multiplier = self.multiplier.ctypes.data
            s.shift = self.shift.ctypes.data
        else:
            s.scale = self.scale.ctypes.data
        s.zero_point = self.zero_point
        s.min = lo if self.min is None else self.min
        s.max = hi if self.max is None else self.max
        p = ctypes.pointer(s)
        self._ptrs[signed] = p
        return p

    def _ptr(self, n, signed, fn):
        """The struct for an output of n channels (signed: int8)."""
        if self.channels is not None and self.channels != n:
            raise ValueError("%s: the requantization has %d channels, the output %d"
                             % (fn, self.channels, n))
        return self._ptrs[signed] or self._make(signed)

    def __repr__(self):
        if self.mode == REQUANT_FP32:
            what = "scale=%s" % (self.scale if self.per_channel else float(self.scale[0]))
        elif self.per_channel:
            what = "multiplier=%s, shift=%s" % (self.multiplier, self.shift)
        else:
            what = "multiplier=%d, shift=%d" % (self.multiplier[0], self.shift[0])
        return "Requant(%s, mode=%r, zero_point=%d, min=%s, max=%s)" % (
            what, "fp32" if self.mode else "fixedpoint", self.zero_point, self.min, self.max)

    @classmethod
    def from_scales(cls, a_scale, w_scale, c_scale, zero_point=0, min=None, max=None, *,
                    mode="fixedpoint", scheme="onnx"):
        """A layer's requantization from its operands' scales through
        gemmi8_requant_scales (w_scale: a float, or a float32 array a channel)."""
        scale, multiplier, shift = requant_scales(a_scale, w_scale, c_scale, scheme=scheme)
        if not isinstance(w_scale, np.ndarray):  # per tensor
            scale, multiplier, shift = float(scale[0]), int(multiplier[0]), int(shift[0])
        if mode in ("fp32", REQUANT_FP32):
            return cls(scale, zero_point, min, max, mode="fp32")
        return cls(zero_point=zero_point, min=min, max=max, mode="fixedpoint",
                   multiplier=multiplier, shift=shift)


# ---------------------------------------------------------------------------------
# Quantization helpers
# ---------------------------------------------------------------------------------


def _f32_values(v, name, fn, n=None):
    """A float or a 1-D float32 array: (array, is_array)."""
    if isinstance(v, np.ndarray):
        _array(v, _F32, name, fn)
        if v.ndim != 1 or (n is not None and v.shape[0] != n):
            raise ValueError("%s: %s must have shape (%s,), not %s"
                             % (fn, name, "n" if n is None else n, v.shape))
        return np.ascontiguousarray(v), True
    return np.array([_float(v, name, fn)], _F32), False


def choose_qparams(min, max, qrange="u8", scheme="onnx"):
    """Scale and zero point of each range [min, max] (gemmi8_choose_qparams). min, max:
    floats (then (float, int) is returned) or float32 arrays of one shape (then two
    arrays, float32 and int32). qrange: "u8", "s8" or "s8_symmetric"; scheme: "onnx"
    or "tflite"."""
    fn = "gemmi8_choose_qparams"
    c = _need(fn)
    lo, arr = _f32_values(min, "min", fn)
    hi, arr2 = _f32_values(max, "max", fn, lo.shape[0])
    if arr != arr2:
        raise TypeError("%s: min and max must both be arrays or both be numbers" % fn)
    sch = _enum(scheme, _SCHEMES, "scheme", fn)
    rng = _enum(qrange, _QRANGES, "qrange", fn)
    n = lo.shape[0]
    scale = np.empty(n, _F32)
    zp = np.empty(n, _S32)
    st = c(sch, rng, n, lo.ctypes.data, hi.ctypes.data, scale.ctypes.data, zp.ctypes.data)
    if st:
        _raise(fn, st)
    if arr:
        return scale, zp
    return float(scale[0]), int(zp[0])


def _axis_shape(x_shape, axis, fn):
    size = 1
    for d in x_shape:
        size *= d
    if axis == 1:  # row: the first dimension
        if len(x_shape) < 2:
            raise ValueError("%s: axis 'row' needs an array of 2 or more dimensions" % fn)
        rows = x_shape[0]
        return rows, (size // rows if rows else 0), rows
    if axis == 2:  # column: the last dimension
        if len(x_shape) < 1:
            raise ValueError("%s: axis 'column' needs an array of 1 or more dimensions" % fn)
        cols = x_shape[-1]
        return (size // cols if cols else 0), cols, cols
    cols = x_shape[-1] if x_shape else 1
    return (size // cols if cols else 0), cols, 1


def _qparams_arrays(scale, zero_point, count, fn):
    if isinstance(scale, np.ndarray):
        sp = _vec(scale, _F32, count, "scale", fn)
        s = scale
    else:
        s = np.full(count, _float(scale, "scale", fn), _F32)
        sp = s.ctypes.data
    if isinstance(zero_point, np.ndarray):
        zp = zero_point
        zpp = _vec(zero_point, _S32, count, "zero_point", fn)
    else:
        zp = np.full(count, _int_in(zero_point, _INT32_MIN, _INT32_MAX, "zero_point", fn), _S32)
        zpp = zp.ctypes.data
    return s, sp, zp, zpp


def _out_like(out, shape, dt, fn):
    """out (checked: C-contiguous, writeable, of shape and dt), or a new array."""
    if out is None:
        return np.empty(shape, dt)
    _contig(out, dt, "out", fn)
    if out.shape != shape or not out.flags.writeable:
        raise ValueError("%s: out must be a writeable array of shape %s" % (fn, shape))
    return out


def quantize_f32(x, scale, zero_point=0, qrange="u8", scheme="onnx", axis="tensor", out=None):
    """Quantizes a C-contiguous float32 array (gemmi8_quantize_f32) into uint8 ("u8")
    or int8 of the same shape. axis "tensor": one scale and zero point; "row": one a
    slice along the first dimension (per output channel of N x K or OHWI weights);
    "column": one a position along the last dimension (per channel of NHWC pixels).
    scale: a float or a float32 array of that many; zero_point: an int or an int32
    array."""
    fn = "gemmi8_quantize_f32"
    c = _need(fn)
    px = _contig(x, _F32, "x", fn)
    sch = _enum(scheme, _SCHEMES, "scheme", fn)
    rng = _enum(qrange, _QRANGES, "qrange", fn)
    ax = _enum(axis, _QAXES, "axis", fn)
    rows, cols, count = _axis_shape(x.shape, ax, fn)
    s, sp, zp, zpp = _qparams_arrays(scale, zero_point, count, fn)
    out = _out_like(out, x.shape, _U8 if rng == 0 else _S8, fn)
    st = c(sch, rng, ax, rows, cols, px, sp, zpp, out.ctypes.data)
    if st:
        _raise(fn, st)
    return out


def dequantize_f32(q, scale, zero_point=0, axis="tensor", qrange=None, out=None):
    """The inverse of quantize_f32 (gemmi8_dequantize_f32): a float32 array of q's
    shape. q: uint8 (range "u8") or int8 ("s8", or "s8_symmetric" if given)."""
    fn = "gemmi8_dequantize_f32"
    c = _need(fn)
    if not isinstance(q, np.ndarray) or q.dtype not in (_U8, _S8):
        raise TypeError("%s: q must be a numpy.ndarray of uint8 or int8" % fn)
    pq = _contig(q, q.dtype, "q", fn)
    if qrange is None:
        rng = 0 if q.dtype == _U8 else 1
    else:
        rng = _enum(qrange, _QRANGES, "qrange", fn)
        if (rng == 0) != (q.dtype == _U8):
            raise TypeError("%s: q's dtype %s does not match qrange %r" % (fn, q.dtype, qrange))
    ax = _enum(axis, _QAXES, "axis", fn)
    rows, cols, count = _axis_shape(q.shape, ax, fn)
    s, sp, zp, zpp = _qparams_arrays(scale, zero_point, count, fn)
    out = _out_like(out, q.shape, _F32, fn)
    st = c(rng, ax, rows, cols, pq, sp, zpp, out.ctypes.data)
    if st:
        _raise(fn, st)
    return out


def quantize_bias(bias, a_scale, w_scale, scheme="onnx"):
    """int32 bias (gemmi8_quantize_bias) of a float32 bias array at scale a_scale *
    w_scale (w_scale: a float, or a float32 array a channel)."""
    fn = "gemmi8_quantize_bias"
    c = _need(fn)
    _array(bias, _F32, "bias", fn)
    if bias.ndim != 1:
        raise ValueError("%s: bias must be 1-D" % fn)
    n = bias.shape[0]
    pb = _vec(bias, _F32, n, "bias", fn)
    ws, per = _f32_values(w_scale, "w_scale", fn, n if isinstance(w_scale, np.ndarray) else None)
    out = np.empty(n, _S32)
    st = c(_enum(scheme, _SCHEMES, "scheme", fn), n, pb, _float(a_scale, "a_scale", fn),
           ws.ctypes.data, 1 if per else 0, out.ctypes.data)
    if st:
        _raise(fn, st)
    return out


def requant_scales(a_scale, w_scale, c_scale, scheme="onnx"):
    """A layer's requantization from its scales (gemmi8_requant_scales): (scale
    float32, multiplier int32, shift int32) arrays of one value a channel (w_scale: a
    float, or a float32 array a channel)."""
    fn = "gemmi8_requant_scales"
    c = _need(fn)
    ws, _ = _f32_values(w_scale, "w_scale", fn)
    n = ws.shape[0]
    scale = np.empty(n, _F32)
    mult = np.empty(n, _S32)
    shift = np.empty(n, _S32)
    st = c(_enum(scheme, _SCHEMES, "scheme", fn), n, _float(a_scale, "a_scale", fn),
           ws.ctypes.data, _float(c_scale, "c_scale", fn), scale.ctypes.data,
           mult.ctypes.data, shift.ctypes.data)
    if st:
        _raise(fn, st)
    return scale, mult, shift


class Calibration(_Owner):
    """Ranges of activations over sample inputs (gemmi8_calibration_*). channels 1:
    one range over every value; C > 1: a range per channel of values given as rows of
    C (the last dimension of NHWC pixels). Usable as a context manager."""

    _destroy = staticmethod(_f.calibration_destroy)

    def __init__(self, channels=1):
        fn = "gemmi8_calibration_create"
        c = _need(fn)
        super().__init__()
        self.channels = _int_in(channels, 0, 2**63, "channels", fn)
        h = ctypes.c_void_p()
        st = c(self.channels, ctypes.byref(h))
        if st:
            _raise(fn, st)
        self._h = h.value

    def update(self, x):
        """Records the values of a C-contiguous float32 array (size a multiple of
        channels)."""
        fn = "gemmi8_calibration_update"
        p = _contig(x, _F32, "x", fn)
        with self._lock:
            st = _f.calibration_update(self._handle(), x.size, p)
        if st:
            _raise(fn, st)

    def range(self, percentile=100.0):
        """(min, max): float32 arrays of one value a channel."""
        fn = "gemmi8_calibration_range"
        lo = np.empty(self.channels, _F32)
        hi = np.empty(self.channels, _F32)
        with self._lock:
            st = _f.calibration_range(self._handle(), _float(percentile, "percentile", fn),
                                      lo.ctypes.data, hi.ctypes.data)
        if st:
            _raise(fn, st)
        return lo, hi


# ---------------------------------------------------------------------------------
# Dynamic quantization of rows
# ---------------------------------------------------------------------------------


def _quantize_rows(cfn, fn, dt, x, out):
    rows, k, px, xs = _mat(x, _F32, "x", fn)
    y, py, ys = _out_mat(out, rows, k, dt, "out", fn)
    scale = np.empty(rows, _F32)
    zp = np.empty(rows, _S32)
    st = cfn(rows, k, px, xs, py, ys, scale.ctypes.data, zp.ctypes.data)
    if st:
        _raise(fn, st)
    return y, scale, zp


def quantize_rows_u8(x, out=None):
    """Quantizes each row of a float32 matrix as ONNX DynamicQuantizeLinear:
    (uint8 rows, float32 scale a row, int32 zero point a row)."""
    return _quantize_rows(_f.quantize_rows_u8, "gemmi8_quantize_rows_u8", _U8, x, out)


def quantize_rows_s8(x, out=None):
    """Quantizes each row of a float32 matrix as XNNPACK's qd8: (int8 rows, float32
    scale a row, int32 zero point a row)."""
    return _quantize_rows(_f.quantize_rows_s8, "gemmi8_quantize_rows_s8", _S8, x, out)


# ---------------------------------------------------------------------------------
# Packed weights
# ---------------------------------------------------------------------------------


class PackedWeights:
    """Weights packed for the GEMMs of one type (kind: "qu8", "qs8", "qu8s8", "qd8",
    "qdu8" or "bin"), N x K. The packed buffer is owned: allocated by the library
    (freed with gemmi8_packed_free when the object goes) or a 64-byte aligned numpy
    buffer held by the object. It holds no pointers: tobytes() / frombytes() save and
    load it (for the same kernels)."""

    _free = _f.packed_free

    def __init__(self, kind, n, k, address, size, owner=None, q4_block=None):
        self.kind = kind
        self.n = n
        self.k = k
        self.size = size
        self.q4_block = q4_block
        self._owner = owner  # a numpy buffer, or None: the library's allocation
        self._address = address

    @property
    def address(self):
        return self._address

    def tobytes(self):
        """The packed buffer's bytes."""
        return ctypes.string_at(self._address, self.size)

    @classmethod
    def frombytes(cls, kind, n, k, data, q4_block=None):
        """Packed weights from bytes saved by tobytes() (copied to an aligned buffer)."""
        buf = aligned_empty(len(data))
        buf[:] = np.frombuffer(data, _U8)
        return cls(kind, n, k, buf.ctypes.data, len(data), buf, q4_block)

    def __del__(self):
        if getattr(self, "_owner", 1) is None and self._address:
            address, self._address = self._address, None
            self._free(address)

    def __repr__(self):
        return "PackedWeights(%r, n=%d, k=%d, %d bytes%s)" % (
            self.kind, self.n, self.k, self.size,
            "" if self.q4_block is None else ", q4 block %d" % self.q4_block)


def aligned_empty(nbytes, alignment=PACK_ALIGNMENT):
    """A 1-D uint8 array of nbytes starting at a multiple of alignment bytes."""
    raw = np.empty(nbytes + alignment, _U8)
    off = (-raw.ctypes.data) % alignment
    return raw[off:off + nbytes]


def pack_size(kind, n, k, q4_block=None):
    """Bytes of the packed form of N x K weights for kind ("qu8", "qs8", "qu8s8",
    "qd8", "qdu8", "bin"; q4_block for the 4-bit weights of pack_qd8_q4)."""
    size = ctypes.c_size_t()
    if q4_block is not None:
        fn = "gemmi8_qd8_pack_q4_size"
        st = _f.qd8_pack_q4_size(n, k, q4_block, ctypes.byref(size))
    else:
        if kind not in ("qu8", "qs8", "qu8s8", "qd8", "qdu8", "bin"):
            raise ValueError("pack_size: unknown kind %r" % (kind,))
        fn = "gemmi8_%s_pack_size" % kind
        st = getattr(_f, "%s_pack_size" % kind)(n, k, ctypes.byref(size))
    if st:
        _raise(fn, st)
    return size.value


def _layout(b, layout, fn):
    if layout in ("nk", B_NK):
        return B_NK
    if layout in ("kn", B_KN):
        return B_KN
    raise ValueError("%s: layout must be 'nk' or 'kn', not %r" % (fn, layout))


def _buffer(buffer, kind, n, k, fn, q4_block=None):
    size = pack_size(kind, n, k, q4_block)
    _array(buffer, _U8, "buffer", fn)
    if buffer.ndim != 1 or not buffer.flags.c_contiguous or not buffer.flags.writeable:
        raise ValueError("%s: buffer must be a writeable contiguous 1-D uint8 array" % fn)
    if buffer.ctypes.data % PACK_ALIGNMENT:
        raise ValueError("%s: buffer must start at a multiple of %d bytes (aligned_empty())"
                         % (fn, PACK_ALIGNMENT))
    if buffer.shape[0] < size:
        raise ValueError("%s: buffer holds %d bytes, the packed weights need %d"
                         % (fn, buffer.shape[0], size))
    return size


def _pack_common(b, dt, layout, fn):
    flags = _layout(b, layout, fn)
    r, c, pb, bs = _mat(b, dt, "b", fn)
    n, k = (r, c) if flags == B_NK else (c, r)
    return flags, n, k, pb, bs


def _finish_pack(kind, n, k, fn, alloc_call, into_call, buffer, q4_block=None):
    if buffer is None:
        h = ctypes.c_void_p()
        st = alloc_call(ctypes.byref(h))
        if st:
            _raise(fn + "_alloc", st)
        try:
            size = pack_size(kind, n, k, q4_block)
        except Error:
            _f.packed_free(h.value)
            raise
        return PackedWeights(kind, n, k, h.value, size, None, q4_block)
    size = _buffer(buffer, kind, n, k, fn, q4_block)
    st = into_call(buffer.ctypes.data, buffer.shape[0])
    if st:
        _raise(fn, st)
    return PackedWeights(kind, n, k, buffer.ctypes.data, size, buffer, q4_block)


def _opt_vec(x, dt, n, name, fn):
    return None if x is None else _vec(x, dt, n, name, fn)


def _b_zero_point(b_zero_point, n, fn):
    """qu8's weight zero point, an int or a uint8 array of n: (the array, which the
    caller holds through the call, its address, 1 per channel or 0 per tensor)."""
    if isinstance(b_zero_point, np.ndarray):
        return b_zero_point, _vec(b_zero_point, _U8, n, "b_zero_point", fn), 1
    bzp = np.array([_int_in(b_zero_point, 0, 255, "b_zero_point", fn)], _U8)
    return bzp, bzp.ctypes.data, 0


def pack_qu8(b, a_zero_point, b_zero_point, bias=None, layout="nk", buffer=None):
    """Packs uint8 weights, N x K (layout "nk") or K x N ("kn"). b_zero_point: an int
    (per tensor) or a uint8 array of N (per channel); bias: int32 array of N or None.
    buffer: None (the library allocates) or a 64-byte aligned uint8 array
    (aligned_empty(pack_size("qu8", n, k)))."""
    fn = "gemmi8_qu8_pack"
    flags, n, k, pb, bs = _pack_common(b, _U8, layout, fn)
    azp = _int_in(a_zero_point, 0, 255, "a_zero_point", fn)
    bzp, pz, per = _b_zero_point(b_zero_point, n, fn)
    pbias = _opt_vec(bias, _S32, n, "bias", fn)
    return _finish_pack(
        "qu8", n, k, fn,
        lambda h: _f.qu8_pack_alloc(n, k, pb, bs, flags, azp, pz, per, pbias, h),
        lambda p, size: _f.qu8_pack(n, k, pb, bs, flags, azp, pz, per, pbias, p, size),
        buffer)


def _pack_s8(kind, b, first, bias, layout, buffer):
    """Packs int8 weights for kind "qs8" or "qu8s8" (first: the activations' zero
    point; bias int32) or "qd8" or "qdu8" (first: the weights' float32 scales; bias
    float32)."""
    fn = "gemmi8_%s_pack" % kind
    flags, n, k, pb, bs = _pack_common(b, _S8, layout, fn)
    if kind in ("qd8", "qdu8"):
        args = (_vec(first, _F32, n, "scale", fn), _opt_vec(bias, _F32, n, "bias", fn))
    else:
        lo, hi = (-128, 127) if kind == "qs8" else (0, 255)
        args = (_int_in(first, lo, hi, "a_zero_point", fn), _opt_vec(bias, _S32, n, "bias", fn))
    alloc = getattr(_f, kind + "_pack_alloc")
    into = getattr(_f, kind + "_pack")
    return _finish_pack(
        kind, n, k, fn,
        lambda h: alloc(n, k, pb, bs, flags, *args, h),
        lambda p, size: into(n, k, pb, bs, flags, *args, p, size),
        buffer)


def pack_qs8(b, a_zero_point, bias=None, layout="nk", buffer=None):
    """Packs int8 symmetric weights for int8 activations of zero point a_zero_point."""
    return _pack_s8("qs8", b, a_zero_point, bias, layout, buffer)


def pack_qu8s8(b, a_zero_point, bias=None, layout="nk", buffer=None):
    """Packs int8 symmetric weights for uint8 activations of zero point a_zero_point."""
    return _pack_s8("qu8s8", b, a_zero_point, bias, layout, buffer)


def pack_qd8(b, scale, bias=None, layout="nk", buffer=None):
    """Packs int8 weights with a float32 scale a channel (and float32 bias or None)
    for qd8_gemm_f32 / qd8_linear_f32 (int8 rows)."""
    return _pack_s8("qd8", b, scale, bias, layout, buffer)


def pack_qdu8(b, scale, bias=None, layout="nk", buffer=None):
    """As pack_qd8, for qdu8_gemm_f32 / qdu8_linear_f32 (uint8 rows)."""
    return _pack_s8("qdu8", b, scale, bias, layout, buffer)


def pack_qd8_q4(b, k, scale, zero_point=None, bias=None, block=0, buffer=None):
    """Packs 4-bit weights for the qd8 GEMMs. b: uint8 (N, ceil(k / 2)), two nibbles
    a byte, low first; block: 0 (a scale a channel) or 32, 64, 128, 256 depths;
    scale: float32 (N, blocks); zero_point: uint8 (N, blocks) of 0..15, or None
    (signed nibbles); bias: float32 N or None."""
    fn = "gemmi8_qd8_pack_q4"
    n, cols, pb, bs = _mat(b, _U8, "b", fn)
    k = _int_in(k, 1, 2**62, "k", fn)
    if cols != (k + 1) // 2:
        raise ValueError("%s: b must have ceil(k / 2) = %d columns, not %d"
                         % (fn, (k + 1) // 2, cols))
    block = _int_in(block, 0, 2**62, "block", fn)
    blocks = 1 if block == 0 else (k + block - 1) // block
    ps = _contig(scale, _F32, "scale", fn)
    if scale.shape != (n, blocks):
        raise ValueError("%s: scale must have shape (%d, %d), not %s"
                         % (fn, n, blocks, scale.shape))
    pz = None
    if zero_point is not None:
        pz = _contig(zero_point, _U8, "zero_point", fn)
        if zero_point.shape != (n, blocks):
            raise ValueError("%s: zero_point must have shape (%d, %d), not %s"
                             % (fn, n, blocks, zero_point.shape))
    w = _Q4Weights(pb, bs, block, ps, pz, _opt_vec(bias, _F32, n, "bias", fn))
    wp = ctypes.byref(w)
    return _finish_pack(
        "qd8", n, k, fn,
        lambda h: _f.qd8_pack_q4_alloc(n, k, wp, h),
        lambda p, size: _f.qd8_pack_q4(n, k, wp, p, size),
        buffer, block)


def pack_bin(b, n, k, layout="nk", buffer=None):
    """Packs binary weights: layout "nk", b uint64 (n, bin_words(k)) (row n holds
    channel n's k bits); "kn", b uint64 (k, bin_words(n))."""
    fn = "gemmi8_bin_pack"
    flags = _layout(b, layout, fn)
    r, c, pb, bs = _mat(b, _U64, "b", fn)
    n = _int_in(n, 0, 2**62, "n", fn)
    k = _int_in(k, 0, 2**62, "k", fn)
    want = (n, bin_words(k)) if flags == B_NK else (k, bin_words(n))
    if (r, c) != want:
        raise ValueError("%s: b must have shape %s, not %s" % (fn, want, b.shape))
    return _finish_pack(
        "bin", n, k, fn,
        lambda h: _f.bin_pack_alloc(n, k, pb, bs, flags, h),
        lambda p, size: _f.bin_pack(n, k, pb, bs, flags, p, size),
        buffer)


def _packed(p, kind, fn):
    if not isinstance(p, PackedWeights):
        raise TypeError("%s: packed must be a gemmi8.PackedWeights, not %s"
                        % (fn, type(p).__name__))
    if p.kind != kind:
        raise ValueError("%s: weights packed for %s, not %s" % (fn, p.kind, kind))
    return p.n, p.k, p._address


# ---------------------------------------------------------------------------------
# Quantized GEMMs
# ---------------------------------------------------------------------------------


def _operands(a, dt, what, packed, kind, name):
    """A (M x K, dt) and weights packed for kind: (M, N, K, A's address, A's row
    stride, the packed weights' address)."""
    n, k, pb = _packed(packed, kind, name)
    m, ka, pa, sa = _mat(a, dt, what, name)
    if ka != k:
        raise ValueError("%s: %s has %d columns, the weights K = %d" % (name, what, ka, k))
    return m, n, k, pa, sa, pb


def _make_gemm(kind, in_dt, out_dt, signed):
    name = "gemmi8_%s_gemm" % kind
    plain = getattr(_f, kind + "_gemm")
    ex = getattr(_f, kind + "_gemm_ex")

    def gemm(a, packed, requant, out=None, pool=None):
        m, n, k, pa, sa, pb = _operands(a, in_dt, "a", packed, kind, name)
        if not isinstance(requant, Requant):
            raise TypeError("%s: requant must be a gemmi8.Requant" % name)
        rq = requant._ptr(n, signed, name)
        c, pc, sc = _out_mat(out, m, n, out_dt, "out", name)
        _call(name, pool, plain, ex, m, n, k, pa, sa, pb, rq, pc, sc)
        return c

    gemm.__name__ = gemm.__qualname__ = kind + "_gemm"
    gemm.__doc__ = (
        "C (M x N, %s) = A (M x K, %s) x packed %s weights, requantized by requant "
        "(a gemmi8.Requant). out: an M x N %s matrix to write (a row-strided view is "
        "fine); pool: a ThreadPool (the _ex call)." % (out_dt, in_dt, kind, out_dt))
    return gemm


def _make_gemm_s32(kind, in_dt):
    name = "gemmi8_%s_gemm_s32" % kind
    plain = getattr(_f, kind + "_gemm_s32")
    ex = getattr(_f, kind + "_gemm_s32_ex")

    def gemm_s32(a, packed, out=None, pool=None):
        m, n, k, pa, sa, pb = _operands(a, in_dt, "a", packed, kind, name)
        c, pc, sc = _out_mat(out, m, n, _S32, "out", name)
        _call(name, pool, plain, ex, m, n, k, pa, sa, pb, pc, sc)
        return c

    gemm_s32.__name__ = gemm_s32.__qualname__ = kind + "_gemm_s32"
    gemm_s32.__doc__ = ("C (M x N, int32) = the exact accumulators of A (M x K, %s) x "
                        "packed %s weights, bias included." % (in_dt, kind))
    return gemm_s32


qu8_gemm = _make_gemm("qu8", _U8, _U8, 0)
qs8_gemm = _make_gemm("qs8", _S8, _S8, 1)
qu8s8_gemm = _make_gemm("qu8s8", _U8, _U8, 0)
qu8_gemm_s32 = _make_gemm_s32("qu8", _U8)
qs8_gemm_s32 = _make_gemm_s32("qs8", _S8)
qu8s8_gemm_s32 = _make_gemm_s32("qu8s8", _U8)


# ---------------------------------------------------------------------------------
# Dynamically quantized rows, float output
# ---------------------------------------------------------------------------------


def _make_qd_gemm(kind, in_dt):
    name = "gemmi8_%s_gemm_f32" % kind
    plain = getattr(_f, kind + "_gemm_f32")
    ex = getattr(_f, kind + "_gemm_f32_ex")

    def gemm_f32(a, a_scale, a_zero_point, packed, out_min=-math.inf, out_max=math.inf,
                 out=None, pool=None):
        m, n, k, pa, sa, pb = _operands(a, in_dt, "a", packed, kind, name)
        ps = _vec(a_scale, _F32, m, "a_scale", name)
        pz = _vec(a_zero_point, _S32, m, "a_zero_point", name)
        lo = _float(out_min, "out_min", name)
        hi = _float(out_max, "out_max", name)
        c, pc, sc = _out_mat(out, m, n, _F32, "out", name)
        _call(name, pool, plain, ex, m, n, k, pa, sa, ps, pz, pb, lo, hi, pc, sc)
        return c

    gemm_f32.__name__ = gemm_f32.__qualname__ = kind + "_gemm_f32"
    gemm_f32.__doc__ = (
        "C (M x N, float32) from rows A (M x K, %s) quantized with a_scale (float32, "
        "M) and a_zero_point (int32, M), times weights packed by pack_%s, clamped to "
        "[out_min, out_max]." % (in_dt, kind))
    return gemm_f32


qd8_gemm_f32 = _make_qd_gemm("qd8", _S8)
qdu8_gemm_f32 = _make_qd_gemm("qdu8", _U8)


def linear_workspace_size(m, k):
    """Bytes of the workspace of qd8_linear_f32 / qdu8_linear_f32 for M x K."""
    size = ctypes.c_size_t()
    st = _f.qd8_linear_workspace_size(m, k, ctypes.byref(size))
    if st:
        _raise("gemmi8_qd8_linear_workspace_size", st)
    return size.value


def linear_workspace(m, k):
    """A workspace for qd8_linear_f32 / qdu8_linear_f32 of M x K (reusable)."""
    return aligned_empty(linear_workspace_size(m, k))


def _make_linear(kind):
    name = "gemmi8_%s_linear_f32" % kind
    cfn = getattr(_f, kind + "_linear_f32")

    def linear_f32(x, packed, out_min=-math.inf, out_max=math.inf, out=None,
                   workspace=None, pool=None):
        m, n, k, px, sx, pb = _operands(x, _F32, "x", packed, kind, name)
        lo = _float(out_min, "out_min", name)
        hi = _float(out_max, "out_max", name)
        c, pc, sc = _out_mat(out, m, n, _F32, "out", name)
        if workspace is None:
            pw, ws = None, 0
        else:
            _array(workspace, _U8, "workspace", name)
            if workspace.ndim != 1 or not workspace.flags.c_contiguous or \
                    not workspace.flags.writeable or workspace.ctypes.data % 64:
                raise ValueError("%s: workspace must be a writeable contiguous uint8 "
                                 "array at a 64-byte boundary (linear_workspace())" % name)
            pw, ws = workspace.ctypes.data, workspace.shape[0]
        _call(name, pool, None, cfn, m, n, k, px, sx, pb, lo, hi, pc, sc, pw, ws)
        return c

    linear_f32.__name__ = linear_f32.__qualname__ = kind + "_linear_f32"
    linear_f32.__doc__ = (
        "A dynamically quantized linear layer: float32 rows X (M x K) quantized by "
        "quantize_rows_%s, times weights packed by pack_%s, float32 M x N out. "
        "workspace: None (allocated by the call) or linear_workspace(m, k)."
        % ("s8" if kind == "qd8" else "u8", kind))
    return linear_f32


qd8_linear_f32 = _make_linear("qd8")
qdu8_linear_f32 = _make_linear("qdu8")


# ---------------------------------------------------------------------------------
# Binary
# ---------------------------------------------------------------------------------


def _bin_rows(fn, cfn, x, dt, out, extra=()):
    rows, k, px, xs = _mat(x, dt, "x", fn)
    o, po, so = _out_mat(out, rows, bin_words(k), _U64, "out", fn)
    st = cfn(rows, k, px, xs, *extra, po, so)
    if st:
        _raise(fn, st)
    return o


def bin_pack_rows_f32(x, out=None):
    """float32 rows -> uint64 (rows, bin_words(k)): a set bit where x < 0."""
    return _bin_rows("gemmi8_bin_pack_rows_f32", _f.bin_pack_rows_f32, x, _F32, out)


def bin_pack_rows_s8(x, out=None):
    """int8 rows -> uint64 (rows, bin_words(k)): a set bit where x < 0."""
    return _bin_rows("gemmi8_bin_pack_rows_s8", _f.bin_pack_rows_s8, x, _S8, out)


def bin_pack_rows_u8(x, zero_point, out=None):
    """uint8 rows -> uint64 (rows, bin_words(k)): a set bit where x < zero_point."""
    fn = "gemmi8_bin_pack_rows_u8"
    zp = _int_in(zero_point, 0, 255, "zero_point", fn)
    return _bin_rows(fn, _f.bin_pack_rows_u8, x, _U8, out, (zp,))


def _bin_a(a, packed, name):
    n, k, pb = _packed(packed, "bin", name)
    m, wa, pa, sa = _mat(a, _U64, "a", name)
    if wa != bin_words(k):
        raise ValueError("%s: a has %d words a row, K = %d bits needs %d"
                         % (name, wa, k, bin_words(k)))
    return n, k, pb, m, pa, sa


def bin_gemm_s32(a, packed, out=None, pool=None):
    """C (M x N, int32) = sum of the +1/-1 products of bit rows a (uint64, M x
    bin_words(K)) and the packed binary weights."""
    name = "gemmi8_bin_gemm_s32"
    n, k, pb, m, pa, sa = _bin_a(a, packed, name)
    c, pc, sc = _out_mat(out, m, n, _S32, "out", name)
    _call(name, pool, _f.bin_gemm_s32, _f.bin_gemm_s32_ex, m, n, k, pa, sa, pb, pc, sc)
    return c


def _bin_gemm_scaled(name, plain, ex, bits, a, packed, scale, bias, out, pool):
    """bin_gemm_f32 (bits False) and bin_gemm_bits (bits True)."""
    n, k, pb, m, pa, sa = _bin_a(a, packed, name)
    ps = _opt_vec(scale, _F32, n, "scale", name)
    pbias = _opt_vec(bias, _F32, n, "bias", name)
    if bits:
        c, pc, sc = _out_mat(out, m, bin_words(n), _U64, "out", name)
    else:
        c, pc, sc = _out_mat(out, m, n, _F32, "out", name)
    _call(name, pool, plain, ex, m, n, k, pa, sa, pb, ps, pbias, pc, sc)
    return c


def bin_gemm_f32(a, packed, scale=None, bias=None, out=None, pool=None):
    """C (M x N, float32) = acc * scale[n] + bias[n] (float32 arrays of N or None)."""
    return _bin_gemm_scaled("gemmi8_bin_gemm_f32", _f.bin_gemm_f32, _f.bin_gemm_f32_ex,
                            False, a, packed, scale, bias, out, pool)


def bin_gemm_bits(a, packed, scale=None, bias=None, out=None, pool=None):
    """C (M x bin_words(N), uint64): bit n set where acc * scale[n] + bias[n] < 0."""
    return _bin_gemm_scaled("gemmi8_bin_gemm_bits", _f.bin_gemm_bits, _f.bin_gemm_bits_ex,
                            True, a, packed, scale, bias, out, pool)


def bin_max_pool(input, channels, pool_size, stride=None, padding=0, out=None):
    """Max pooling of binary NHWC pixels: input uint64 (batch, H, W,
    bin_words(channels)) (a slice of wider pixels is fine); pool_size, stride: an int
    or (height, width) (stride default: pool_size); padding: an int, (height, width)
    or (top, left, bottom, right). Returns uint64 (batch, OH, OW, bin_words(channels))."""
    fn = "gemmi8_bin_max_pool"
    channels = _int_in(channels, 0, 2**62, "channels", fn)
    words = bin_words(channels)
    b, h, w, pin, sin = _nhwc(input, _U64, words, "input", fn)
    ph, pw = _pair(pool_size, "pool_size")
    sh, sw = _pair(pool_size if stride is None else stride, "stride")
    pt, pl, pbot, pr = _padding(padding)
    _check_nonneg((ph, pw, sh, sw, pt, pl, pbot, pr), fn + ": sizes")
    oh = (h + pt + pbot - ph) // sh + 1 if sh and h + pt + pbot >= ph else 0
    ow = (w + pl + pr - pw) // sw + 1 if sw and w + pl + pr >= pw else 0
    if out is None:
        out = np.empty((b, oh if oh > 0 else 1, ow if ow > 0 else 1, words), _U64)
        pout, sout = out.ctypes.data, words
    else:
        ob, _, _, pout, sout = _nhwc(out, _U64, words, "out", fn)
        if out.shape[:3] != (b, oh, ow) or not out.flags.writeable:
            raise ValueError("%s: out must be a writeable array of shape %s"
                             % (fn, (b, oh, ow, words)))
    rh = ctypes.c_size_t()
    rw = ctypes.c_size_t()
    st = _f.bin_max_pool(b, h, w, channels, pin, sin, ph, pw, sh, sw, pt, pl, pbot, pr,
                         pout, sout, ctypes.byref(rh), ctypes.byref(rw))
    if st:
        _raise(fn, st)
    if (rh.value, rw.value) != (oh, ow):
        raise RuntimeError("%s: output size %dx%d, expected %dx%d"
                           % (fn, rh.value, rw.value, oh, ow))
    return out


# ---------------------------------------------------------------------------------
# Convolution
# ---------------------------------------------------------------------------------


def conv_output_size(size, kernel, stride=1, dilation=1, padding_before=0, padding_after=0):
    """(size + padding - dilation * (kernel - 1) - 1) // stride + 1, or 0 when the
    dilated kernel is larger than the padded input."""
    span = dilation * (kernel - 1) + 1
    total = size + padding_before + padding_after
    if total < span or stride <= 0:
        return 0
    return (total - span) // stride + 1


class Convolution(_Owner):
    """A 2-D NHWC convolution operator (gemmi8_*_convolution_create, setup, run,
    memory, destroy).

    type: "qu8" (uint8 input and weights), "qs8" (int8 input, int8 weights), "qu8s8"
    (uint8 input, int8 weights) or "bin" (bit-packed input and weights).
    weights: OHWI, shape (groups * co, kernel_height, kernel_width, ci), C-contiguous
    (uint8 for qu8, int8 for qs8 / qu8s8; for bin, uint64 with bin_words(ci) words a
    tap, and input_channels=ci says the bits).
    stride, dilation: an int or (height, width); padding: an int, (height, width) or
    (top, left, bottom, right).
    8-bit: a_zero_point; b_zero_point (qu8: an int, or a uint8 array of groups * co);
    bias (int32 array of groups * co, or None); requant (a gemmi8.Requant: uint8 or
    int8 output) or None (int32 output, the _s32 operators).
    bin: output "s32", "f32", "f32_add", "bits", "threshold" or "qs8"; multiplier, bias
    (float32, f32, f32_add and bits; bias int32 for qs8), output_min, output_max (f32,
    f32_add), threshold (int32) and greater (uint8 or None) for threshold, requant for
    qs8; zero_padding. f32_add adds the float result to what the output holds (pass the
    shortcut as run's out=): a residual connection in the output stage.

    run(input) sets the operator up again when the input's or the output's address,
    shape or pixel stride changed, runs it and returns the output (uint8 / int8 /
    int32 / float32 (batch, OH, OW, channels), or uint64 words for the bit outputs).
    The operator holds raw pointers to its input and output: this object holds
    references to both until the next setup.
    """

    _destroy = staticmethod(_f.convolution_destroy)

    def __init__(self, type, weights, *, groups=1, stride=1, dilation=1, padding=0,
                 a_zero_point=0, b_zero_point=0, bias=None, requant=None,
                 input_channels=None, output="s32", multiplier=None,
                 output_min=-math.inf, output_max=math.inf, threshold=None, greater=None,
                 zero_padding=False):
        super().__init__()
        self.type = type
        if type not in ("qu8", "qs8", "qu8s8", "bin"):
            raise ValueError("Convolution: type must be 'qu8', 'qs8', 'qu8s8' or 'bin', "
                             "not %r" % (type,))
        wdt = {"qu8": _U8, "qs8": _S8, "qu8s8": _S8, "bin": _U64}[type]
        fn = ("gemmi8_bin_convolution_create" if type == "bin" else
              "gemmi8_%s_convolution_create%s" % (type, "" if requant is not None else "_s32"))
        pw = _contig(weights, wdt, "weights", fn)
        if weights.ndim != 4:
            raise ValueError("%s: weights must be 4-D (groups * co, kernel_height, "
                             "kernel_width, ci), not %d-D" % (fn, weights.ndim))
        groups = _int_in(groups, 1, 2**62, "groups", fn)
        oc, kh, kw, last = weights.shape
        if oc % groups:
            raise ValueError("%s: weights' %d output channels are not a multiple of groups "
                             "= %d" % (fn, oc, groups))
        co = oc // groups
        if type == "bin":
            ci = 64 * last if input_channels is None else \
                _int_in(input_channels, 1, 2**62, "input_channels", fn)
            if bin_words(ci) != last:
                raise ValueError("%s: weights must have bin_words(ci) = %d words a tap, "
                                 "not %d" % (fn, bin_words(ci), last))
        else:
            ci = last
        sh, sw = _pair(stride, "stride")
        dh, dw = _pair(dilation, "dilation")
        pt, pl, pb, pr = _padding(padding)
        _check_nonneg((sh, sw, dh, dw, pt, pl, pb, pr), fn + ": strides, dilations, paddings")
        g = _Geometry(kh, kw, sh, sw, dh, dw, pt, pl, pb, pr, groups, ci, co)
        self.geometry = dict(kernel_height=kh, kernel_width=kw, stride_height=sh,
                             stride_width=sw, dilation_height=dh, dilation_width=dw,
                             padding_top=pt, padding_left=pl, padding_bottom=pb,
                             padding_right=pr, groups=groups, group_input_channels=ci,
                             group_output_channels=co)
        n = groups * co
        h = ctypes.c_void_p()
        self.requant = requant
        if type == "bin":
            kind = _enum(output, _BIN_KINDS, "output", fn)
            o = _BinOutput()
            o.kind = kind
            o.output_min = _float(output_min, "output_min", fn)
            o.output_max = _float(output_max, "output_max", fn)
            o.multiplier = _opt_vec(multiplier, _F32, n, "multiplier", fn)
            if kind == 4:
                o.bias_s32 = _opt_vec(bias, _S32, n, "bias", fn)
                if requant is not None:
                    if not isinstance(requant, Requant):
                        raise TypeError("%s: requant must be a gemmi8.Requant" % fn)
                    o.rq = requant._ptr(n, 1, fn)
            else:
                o.bias = _opt_vec(bias, _F32, n, "bias", fn)
            o.threshold = _opt_vec(threshold, _S32, n, "threshold", fn)
            o.greater = _opt_vec(greater, _U8, n, "greater", fn)
            flags = BIN_ZERO_PADDING if zero_padding else BIN_ONE_PADDING
            st = _f.bin_convolution_create(ctypes.byref(g), pw, flags, ctypes.byref(o),
                                           ctypes.byref(h))
            self.in_dtype = _U64
            self.in_channels = bin_words(groups * ci)
            self.out_dtype = {0: _S32, 1: _F32, 2: _U64, 3: _U64, 4: _S8, 5: _F32}.get(kind, _S32)
            self.out_channels = bin_words(n) if kind in (2, 3) else n
        else:
            signed = type == "qs8"
            zr = (-128, 127) if signed else (0, 255)
            azp = _int_in(a_zero_point, zr[0], zr[1], "a_zero_point", fn)
            pbias = _opt_vec(bias, _S32, n, "bias", fn)
            rq = None
            if requant is not None:
                if not isinstance(requant, Requant):
                    raise TypeError("%s: requant must be a gemmi8.Requant" % fn)
                rq = requant._ptr(n, signed, fn)
            if type == "qu8":
                bzp, pz, per = _b_zero_point(b_zero_point, n, fn)
                if rq is not None:
                    st = _f.qu8_convolution_create(ctypes.byref(g), pw, azp, pz, per, pbias,
                                                   rq, ctypes.byref(h))
                else:
                    st = _f.qu8_convolution_create_s32(ctypes.byref(g), pw, azp, pz, per,
                                                       pbias, ctypes.byref(h))
            else:
                if rq is not None:
                    st = getattr(_f, type + "_convolution_create")(
                        ctypes.byref(g), pw, azp, pbias, rq, ctypes.byref(h))
                else:
                    st = getattr(_f, type + "_convolution_create_s32")(
                        ctypes.byref(g), pw, azp, pbias, ctypes.byref(h))
            self.in_dtype = _S8 if signed else _U8
            self.in_channels = groups * ci
            self.out_dtype = _S32 if rq is None else self.in_dtype
            self.out_channels = n
        if st:
            _raise(fn, st)
        self._h = h.value
        self._key = None
        self._input = None
        self._output = None

    def output_shape(self, batch, input_height, input_width):
        """(batch, OH, OW, output channels in elements)."""
        g = self.geometry
        return (batch,
                conv_output_size(input_height, g["kernel_height"], g["stride_height"],
                                 g["dilation_height"], g["padding_top"], g["padding_bottom"]),
                conv_output_size(input_width, g["kernel_width"], g["stride_width"],
                                 g["dilation_width"], g["padding_left"], g["padding_right"]),
                self.out_channels)

    def _setup(self, input, out):
        fn = "gemmi8_convolution_setup"
        b, ih, iw, pin, sin = _nhwc(input, self.in_dtype, self.in_channels, "input", fn)
        shape = self.output_shape(b, ih, iw)
        if out is None:
            prev = self._output
            # The last output is reused when nothing else holds it (no caller, no view:
            # the references are self._output, prev and getrefcount's argument).
            if prev is not None and prev.shape == shape and sys.getrefcount(prev) <= 3 \
                    and self._key is not None and self._key[:5] == (pin, sin, b, ih, iw):
                out = prev
            elif shape[1] == 0 or shape[2] == 0:
                # a kernel larger than the padded input: the library reports it
                out = np.empty((b, 1, 1, self.out_channels), self.out_dtype)
                self._call_setup(b, ih, iw, pin, sin, out.ctypes.data, self.out_channels,
                                 shape)
            else:
                out = np.empty(shape, self.out_dtype)
            del prev
        elif not isinstance(out, np.ndarray) or out.shape[:3] != shape[:3] or \
                not out.flags.writeable:
            raise ValueError("%s: out must be a writeable numpy array of shape %s"
                             % (fn, shape))
        _, _, _, pout, sout = _nhwc(out, self.out_dtype, self.out_channels, "out", fn)
        key = (pin, sin, b, ih, iw, pout, sout)
        if key != self._key:
            self._call_setup(b, ih, iw, pin, sin, pout, sout, shape)
            self._key = key
        # the operator points into both: held until the next setup
        self._input = input
        self._output = out
        return out

    def _call_setup(self, b, ih, iw, pin, sin, pout, sout, shape):
        oh = ctypes.c_size_t()
        ow = ctypes.c_size_t()
        st = _f.convolution_setup(self._handle(), b, ih, iw, pin, sin, pout, sout,
                                  ctypes.byref(oh), ctypes.byref(ow))
        if st:
            # a failed setup leaves the operator as it was
            _raise("gemmi8_convolution_setup", st)
        if (oh.value, ow.value) != shape[1:3]:
            self._key = None
            raise RuntimeError("gemmi8_convolution_setup: output %dx%d, expected %dx%d"
                               % (oh.value, ow.value, shape[1], shape[2]))

    def setup(self, input, out=None):
        """Sets the operator up for input (NHWC) and an output (out, or a new array);
        returns the output. Run then reads input and writes the output."""
        with self._lock:
            return self._setup(input, out)

    def run(self, input=None, out=None, pool=None):
        """Runs on input (NHWC; set up again when its address, shape or pixel stride,
        or the output's, changed; None: the input set up last) and returns the output:
        out, or a new array (or the last one, when nothing else holds it). pool: a
        ThreadPool."""
        with self._lock:
            if input is None:
                input = self._input
                if input is None:
                    raise ValueError("Convolution.run: not set up (pass an input)")
            c = self._setup(input, out)
            op = self._handle()
            if pool is None:
                st = _f.convolution_run(op, None)
            else:
                st = _with_pool(pool, lambda par: _f.convolution_run(op, par))
        if st:
            _raise("gemmi8_convolution_run", st)
        return c

    __call__ = run

    def memory(self):
        """(indirection bytes, workspace bytes) of the last setup."""
        a = ctypes.c_size_t()
        b = ctypes.c_size_t()
        with self._lock:
            st = _f.convolution_memory(self._handle(), ctypes.byref(a), ctypes.byref(b))
        if st:
            _raise("gemmi8_convolution_memory", st)
        return a.value, b.value

    def _closed(self):
        # the input and output the freed operator pointed into, and its setup
        self._input = self._output = self._key = None

    def __repr__(self):
        g = self.geometry
        return ("Convolution(%r, %dx%d, groups %d, %d -> %d channels a group)"
                % (self.type, g["kernel_height"], g["kernel_width"], g["groups"],
                   g["group_input_channels"], g["group_output_channels"]))
