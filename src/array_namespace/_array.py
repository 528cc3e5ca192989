"""The Array: a handle on an immutable value (a device buffer eagerly, a tracer under a transform).

Operators dispatch to the namespace functions. `x[idx] = v` and in-place operators rebind
the handle to the functionally updated value, so mutating library code works eagerly and
under every transform; mutating, inside a trace, an array captured from outside it is a
side effect and raises.
"""
from __future__ import annotations

import importlib
import sys

import numpy as np

from transforms.backend import backend
from transforms.ad import JVPTracer
from transforms.batching import BatchTracer
from transforms.core import EVAL, Tracer, trace_state, tracing, boxing
from transforms.devices import sharding_of as _sharding_of, shards_of as _shards_of
from transforms import returned as _returned

from . import _dtypes as D
from . import _helpers as H
from . import _views as VW

_DTYPE_OF = D._BY_NP


class Device:
    """A device of this namespace (wraps a runtime device); compared by identity of the runtime device.

    Parameters: d: the runtime device (the namespace makes Devices: x.device, the inspection API's devices()).
    Returns: the class; an instance equals (and hashes as) any Device wrapping the same runtime device.
    Raises: none.

    >>> xp.asarray([1.0]).device == xp.__array_namespace_info__().default_device()
    True
    """
    __slots__ = ("_d",)

    def __init__(self, d):
        self._d = d

    def __eq__(self, other):   # equal to a Device wrapping the same runtime device, and to that device itself
        return self._d == (other._d if isinstance(other, Device) else other)

    def __hash__(self):
        return hash(self._d)

    @property
    def runtime_device(self):
        """The backend's device this wraps (what transforms.devices() lists); an extension."""
        return self._d

    def __repr__(self):
        return f"Device({self._d.platform}:{self._d.id})"


def default_device():
    return Device(backend.default_device())


_DEVICES: dict = {}   # runtime device -> its Device (x.device makes none per call)


_MODULES: dict = {}   # name -> a sibling module, imported on first use (see _module)


def _module(name):
    """The sibling module `name`, imported on first use (it imports this one, so not at the top). A
    function-level relative import costs ~1.5 us per call (the import system resolves the package in
    Python); this is one dict lookup."""
    m = _MODULES.get(name)
    if m is None:
        m = _MODULES[name] = importlib.import_module(f"{__package__}.{name}")
    return m


class Array:
    # _base (None but on the results NumPy makes views): (the parent handle, kind, arg); _views: None or weak
    # references to the array's live views. Writes into any array of such a family reach all of it
    # (_views.py; _span: a view's elements' range in its root, worked out once). Like a NumPy view's .base,
    # _base keeps the parent alive (a chain x[0][1:] of temporaries too).
    __slots__ = ("_v", "_trace", "_base", "_views", "_span", "__weakref__")
    __array_priority__ = 100

    def __init__(self, *args, **kwargs):
        raise TypeError("Arrays are made by the namespace's creation functions, e.g. xp.asarray(...)")

    # ------------------------------------------------------------------ attributes
    @property
    def dtype(self):
        return _DTYPE_OF[self._v.aval.dtype]

    @property
    def shape(self):
        return self._v.aval.shape

    @property
    def ndim(self):
        return len(self._v.aval.shape)

    @property
    def size(self):
        n = 1
        for d in self._v.aval.shape:
            n *= d
        return n

    @property
    def device(self):
        v = self._v
        if not isinstance(v, Tracer):
            got = backend.sharding_of(v)
            if type(got) is tuple and len(got[0]) == 1:   # whole on one device: its Device (one per device)
                d = got[0][0]
                dev = _DEVICES.get(d)
                if dev is None:
                    dev = _DEVICES[d] = Device(d)
                return dev
        from ._sharded import device_of
        return device_of(self)

    def devices(self):
        """The devices holding x's value or a part of it (one for an ordinary array). (Extension, as JAX's.)

        Returns: set of Device.
        Raises: none.

        >>> xp.asarray([1.0]).devices() == {xp.asarray([1.0]).device}
        True
        """
        from ._sharded import devices_of
        return devices_of(self)

    @property
    def sharding(self):
        """Where the value lies over devices (transforms.devices.Sharding): a pmap result is split along axis 0
        over the pmap's devices; an ordinary array lies whole on one device. (Extension.)

        Returns: Sharding: its devices and how the value is split over them.
        Raises: none.

        >>> xp.asarray([1.0, 2.0]).sharding
        Sharding(on ...)
        """
        return _sharding_of(self._v)

    @property
    def addressable_shards(self):
        """Each device's block of the value (transforms.devices.Shard: device, index along axis 0, data as an
        array on that device alone), without copying. (Extension.)

        Returns: list of Shard: one per device holding part of the value (one for an ordinary array).
        Raises: none.

        >>> [s.data for s in xp.asarray([1.0, 2.0]).addressable_shards]
        [Array([1., 2.])]
        """
        return _shards_of(self._v, boxing.box)

    @property
    def T(self):
        if self.ndim != 2:
            raise ValueError(f"x.T requires a 2-D array, got {self.ndim} dimensions; use xp.matrix_transpose "
                             "or xp.permute_dims")
        return _module("_manipulation")._transposed(self, ((1, 0), (1, 0)))   # (permute_dims' plan for (1, 0))

    @property
    def mT(self):
        return _module("_linear_algebra").matrix_transpose(self)

    @property
    def aval(self):
        return self._v.aval

    @property
    def at(self):
        return _module("_indexing")._At(self)

    def __array_namespace__(self, *, api_version=None):
        array_namespace = sys.modules[__package__]   # (libraries ask on every call: no import statement)
        if api_version is not None and api_version not in array_namespace.SUPPORTED_VERSIONS:
            raise ValueError(f"api_version {api_version!r} is not supported; this namespace implements "
                             f"{', '.join(array_namespace.SUPPORTED_VERSIONS)}")
        return array_namespace

    # ---------------------------------------------------------------- conversions
    # Two kinds of conversion. A *decision* (bool/int/index: an `if`, a loop bound, a shape) may read
    # the primal under grad -- its derivative is zero. A *host value* (NumPy, DLPack, float/complex, a
    # NumPy ufunc) must not: handing over the primal would silently drop the tangent or batch axis.
    def _concrete(self, why):
        v = self._v
        if isinstance(v, Tracer):
            v = v.concrete(why, True)   # (under jit called with concrete values: a guard)
            if isinstance(v, Tracer) or not hasattr(v, "aval"):
                return np.asarray(v)
        return backend.to_numpy(v)

    def _host(self, why, guard=False):
        v = self._v
        if isinstance(v, Tracer):
            v = v.host_value(why, guard)
            if not hasattr(v, "aval"):
                return np.asarray(v)
        return backend.to_numpy(v)

    def __array__(self, dtype=None, copy=None):
        """A NumPy array of the value: a writable copy (NumPy and Cython code write into what np.asarray
        gives them), or with copy=False the read-only zero-copy view of the buffer."""
        out = self._host("converting an array to NumPy (np.asarray / np.array)")
        if dtype is not None and np.dtype(dtype) != out.dtype:
            if copy is False:
                raise ValueError("np.asarray(x, dtype=..., copy=False): changing the dtype needs a copy")
            return out.astype(dtype)
        if copy is False:
            return out
        return np.array(out, copy=True) if copy or not out.flags.writeable else out

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        """NumPy hands us `ndarray op x`, `np.float64(2) * x` and any ufunc applied to x.

        The arithmetic and comparison operators run as this namespace's functions (so `ndarray + x`
        is the same Array as `x + ndarray`, derivative intact); any other ufunc works on concrete
        arrays through NumPy and raises on a traced one.
        """
        name = _UFUNC_OPS.get(ufunc.__name__)
        if name is not None and method == "__call__" and not kwargs and len(inputs) == 2:
            import array_namespace
            a, b = (_operand(v) for v in inputs)
            if a is NotImplemented or b is NotImplemented:
                return NotImplemented
            if type(a) is not Array and type(b) is not Array:
                return NotImplemented
            return getattr(array_namespace, name)(a, b)
        why = f"passing an array to the NumPy ufunc np.{ufunc.__name__}"
        conv = [v._host(why) if type(v) is Array else v for v in inputs]
        out = kwargs.get("out")
        if out is not None and any(type(o) is Array for o in out):
            raise TypeError(f"np.{ufunc.__name__}(..., out=...): Arrays are immutable and cannot be written "
                            "into; use the returned value (or x[...] = value)")
        return getattr(ufunc, method)(*conv, **kwargs)

    def __buffer__(self, flags):   # the buffer protocol (Python 3.12+)
        return memoryview(self._host("reading an array through the buffer protocol (memoryview)"))

    def tolist(self):
        """The value as nested Python lists (a host conversion: raises on a traced value).

        Returns: list (nested x.ndim deep) of Python scalars; a Python scalar for a 0-d array.
        Raises: TracerArrayConversionError (a TypeError): for a traced value (under jit or vmap).

        >>> xp.asarray([[1, 2], [3, 4]]).tolist()
        [[1, 2], [3, 4]]
        """
        return self._host("x.tolist()", True).tolist()

    def item(self):
        """The single element as a Python scalar (a host conversion: raises on a traced value).

        Returns: bool, int, float or complex: the element.
        Raises: ValueError: if x does not have exactly one element. TracerArrayConversionError (a TypeError): for a
            traced value.

        >>> xp.asarray([[2.5]]).item()
        2.5
        """
        if self.size != 1:
            raise ValueError(f"x.item(): needs an array with exactly one element, got shape {self.shape}")
        if isinstance(self._v, Tracer) and getattr(self._v._trace, "shadow", None) is not None:
            # a guarded jit's trace: this call's value (a guard unless only returned; jit_guards.Shadow.number)
            v = self._v if not self.ndim else _module("_manipulation").reshape(self, ())._v
            return v._trace.shadow.number(v, "x.item()", sys._getframe(1), "item")
        return self._host("x.item()", True).item()

    def __bool__(self):
        if self.ndim:
            raise TypeError(f"bool() of an array with shape {self.shape} is ambiguous; use xp.any or xp.all")
        return bool(self._concrete("bool() (e.g. an `if` or `while` on an array)"))

    def __int__(self):
        if self.ndim:
            raise TypeError(f"int() needs a 0-d array, got shape {self.shape}")
        v = self._v
        if isinstance(v, Tracer) and self.dtype not in D.COMPLEX and getattr(v._trace, "shadow", None) is not None:
            return v._trace.shadow.number(v, "int()", sys._getframe(1), int)   # (as float(): Python's int of it)
        v = self._concrete("int()")
        if self.dtype in D.FLOATING and not np.isfinite(v):
            raise (OverflowError if np.isinf(v) else ValueError)(f"cannot convert {v} to int")
        return int(v)

    def __float__(self):
        if self.ndim:
            raise TypeError(f"float() needs a 0-d array, got shape {self.shape}")
        if self.dtype in D.COMPLEX:
            raise TypeError("float() of a complex array; use xp.real first")
        v = self._v
        if isinstance(v, Tracer):   # a float the function returns is the transform's output (transforms/returned.py)
            shadow = getattr(v._trace, "shadow", None)
            if shadow is not None:   # a guarded jit's trace: this call's value (a guard unless only returned)
                return shadow.number(v, "float()", sys._getframe(1))
            out = _returned.placeholder(v, sys._getframe(1))
            if out is not None:
                return out
        return float(self._host("float()", True))

    def __complex__(self):
        if self.ndim:
            raise TypeError(f"complex() needs a 0-d array, got shape {self.shape}")
        return complex(self._host("complex()", True))

    def __index__(self):
        if self.ndim or self.dtype not in D.INTEGER:
            raise TypeError(f"only 0-d integer arrays can be used as an index, got {self.dtype.name} "
                            f"with shape {self.shape}")
        return int(self._concrete("using an array as a Python index (__index__)"))

    def __len__(self):
        if not self.ndim:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.ndim:
            raise TypeError("iteration over a 0-d array")
        n = self.shape[0]
        if self.ndim == 1 and n > 1 and trace_state.trace is EVAL and not isinstance(self._v, Tracer):
            return _module("_indexing").elements(self, n)
        return (self[i] for i in range(n))

    __hash__ = None

    def __repr__(self):
        v = self._v
        if isinstance(v, Tracer):
            return f"Array(traced {v.aval.str_short()} by {v._trace.kind_name()})"
        arr = np.asarray(self)
        body = np.array2string(arr, separator=", ", prefix="Array(")
        suffix = "" if self.dtype in (D.float64, D.int64, D.bool_) else f", dtype={self.dtype.name}"
        return f"Array({body}{suffix})"

    __str__ = __repr__

    def __format__(self, spec):
        if self.ndim == 0 and not isinstance(self._v, Tracer):
            return format(np.asarray(self)[()], spec)
        return format(repr(self), spec)

    # ---------------------------------------------------------------- runtime
    def block_until_ready(self):
        if not isinstance(self._v, Tracer):
            self._v.block_until_ready()
        return self

    def is_ready(self):
        return True if isinstance(self._v, Tracer) else self._v.is_ready()

    def to_device(self, device, /, *, stream=None):
        if stream is not None:
            raise ValueError("to_device: streams are not supported on this device")
        from ._sharded import to_device
        return to_device(self, device)

    def __dlpack_device__(self):
        return (1, 0)   # kDLCPU, device 0

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """Export through DLPack without copying (read-only-flagged for DLPack >= 1.0 consumers).

        Parameters: stream: ignored (CPU data). max_version (tuple or None): the consumer's highest DLPack version.
            dl_device (tuple or None): must be None or (1, 0), the CPU. copy (bool or None): True exports a copy.
        Returns: a DLPack capsule of x's data.
        Raises: BufferError: for another device. TracerArrayConversionError (a TypeError): for a traced value.

        >>> np.from_dlpack(xp.asarray([1.0, 2.0]))
        array([1., 2.])
        """
        if dl_device is not None and tuple(dl_device) != (1, 0):
            raise BufferError(f"__dlpack__: cannot export to device {dl_device}; the data lives on the CPU (1, 0)")
        versioned = max_version is not None and tuple(max_version)[0] >= 1
        if copy:
            arr = np.array(self._host("exporting through DLPack"), copy=True)
            return arr.__dlpack__(max_version=tuple(max_version)) if versioned else arr.__dlpack__()
        if versioned:   # a read-only view of the device buffer, flagged read-only in the capsule
            arr = self._host("exporting through DLPack")
            if min(arr.strides, default=0) < 0:   # (a flipped view: torch aborts the process on negative strides)
                if copy is False:
                    raise BufferError("__dlpack__: the data is laid out with negative strides (a flipped view), "
                                      "which DLPack consumers may not take; export with copy=None or copy=True")
                arr = np.ascontiguousarray(arr)
            return arr.__dlpack__(max_version=tuple(max_version), copy=False)
        if isinstance(self._v, Tracer):
            self._host("exporting through DLPack")   # raises the conversion error
        return backend.to_dlpack(self._v)   # DLPack 0.x: the device buffer itself

    # -------------------------------------------------------------- mutation
    def _rebind(self, new, what):
        """Point this handle at `new`'s value (the functional update of x[...] = v / x op= y); a slice
        taken by basic indexing passes the write on to the array it was taken from."""
        with VW.LOCK:
            self._rebind_locked(new, what)

    def _rebind_locked(self, new, what, key=None):
        cur = trace_state.trace
        if self._trace is not cur and not (cur is EVAL and not isinstance(self._v, Tracer)):
            VW.check_writable(self, what, cur)
        a, b = new._v.aval, self._v.aval
        if a.dtype != b.dtype:   # (NumPy dtypes: C comparisons, not the namespace's DType)
            raise TypeError(f"{what} would change the dtype from {self.dtype.name} to {new.dtype.name}; "
                            "in-place operations keep the array's dtype")
        if a.shape != b.shape:
            raise ValueError(f"{what} would change the shape from {self.shape} to {new.shape}")
        if getattr(self, "_base", None) is None and not getattr(self, "_views", None):
            self._v = new._v   # (no view shares its data: the common case)
            self._trace = cur
        else:
            VW.write(self, new._v, what, key)

    def __setitem__(self, key, value):
        with VW.LOCK:
            if type(value) is Array and value._base is not None and VW.wrote_through(value, self, key):
                return   # `x[k] op= v`: the slice's in-place update already wrote itself into x[k]
            self._set_locked(key, value)

    def _set_locked(self, key, value):
        # sole: this handle the only holder of its value (its slot and getrefcount's argument), so x's memory may take
        # the write (NumPy's cost; a copy of x per write is quadratic in a loop). Eagerly a view family's arrays read
        # one memory, which takes the write (_views.write_eager); under a transform the family path runs (write)
        sole = sys.getrefcount(self._v) <= 2
        family = VW.has_views(self)
        if not tracing[0] or trace_state.trace is EVAL:
            # eagerly: a value of x's dtype (an Array, or a Python scalar converted as update does) goes straight into
            # x's memory where x is sole, else into a copy of it (copy=not sole: another array keeps the old values),
            # where the backend takes the key (update's first step; the aval is unchanged); a view family's, into
            # its one memory that all of it reads (_views.write_eager)
            dt = self._v.aval.dtype
            if type(value) is Array and value._v.aval.dtype == dt:
                v = value._v   # (binary's result for a value of x's dtype, without its call: an element loop's case)
            elif type(value) is Array or type(value) in H._SCALAR_SET:
                v, vdt = H.binary("__setitem__", self, value, broadcast=False)[1:]   # (no handle left on x's value)
                v = v if vdt == dt else None
            else:
                v = None
            if v is not None and family:
                if VW.write_eager(self, H.host_key(key), v):
                    return
            elif v is not None:
                out = backend.eager_setitem(self._v, H.host_key(key), v, copy=not sole)
                if out is not None:
                    self._v = out
                    self._trace = EVAL
                    return
        elif sole and type(self._v) is BatchTracer and self._trace is trace_state.trace and not VW.has_views(self) and (
                type(value) is Array or type(value) in H._SCALAR_SET):
            out = VW.batched_set(self, key, value)
            if out is not None:
                self._v = out
                return
        if sole and type(self._v) is JVPTracer and sys.getrefcount(self._v.primal) <= 2 and not VW.has_views(self):
            trace_state.given_up = self._v.primal   # (under grad, eagerly: transforms/core.py, given_up)
        try:
            self._rebind_locked(_module("_indexing").update(self, key, value, "set", "__setitem__", in_place=sole),
                                "x[...] = value", key)
        finally:
            trace_state.given_up = None

    def __getitem__(self, key):
        v = self._v
        if not tracing[0]:   # x[i, j]: one element, eagerly, straight from the backend (one C call: a loop's read)
            out = backend.eager_element(v, key)
            if out is not None:
                return H.wrap(out)
        one = VW.selects_one_element(key) and (1 if type(key) is int else len(key)) == len(v.aval.shape)
        view = not one and VW._is_basic_key(key)
        declined = False
        if not tracing[0] and (one or view) and v.aval.shape:
            # eagerly, ints / slices / None / Ellipsis straight from the backend's basic indexing: x[i, j] one
            # element (a copy: NumPy's scalar), the commonest read in a loop; any other a view of x's memory (None:
            # _indexing's path, which also raises an index out of range)
            out = backend.eager_getitem(v, key, view)
            if out is None and view and (k := VW.int_bounds(key)) is not None:   # (slice bounds as ints: x[:n])
                key = k
                out = backend.eager_getitem(v, key, view)
            if out is not None:
                return VW.view_of(H.wrap(out), self, "index", key, v) if view else H.wrap(out)
            declined = True
        out = _module("_indexing").getitem(self, key, view, declined)
        if out is not self and view:
            VW.view_of(out, self, "index", key, v)
        return out


_OPERAND_TYPES = (Array, bool, int, float, complex)


def _operand(v):
    """An operator's other operand: Arrays and Python scalars as they are; a NumPy scalar as the Python
    number it is (weak, like a literal); a NumPy array as an Array of its dtype (strict promotion)."""
    if type(v) in _OPERAND_TYPES:
        return v
    if isinstance(v, np.generic):
        n = H.py_number(v)
        return NotImplemented if n is None else n
    if isinstance(v, np.ndarray) and v.dtype.kind in "biufc":
        return _module("_creation").asarray(v)
    return NotImplemented


_UFUNC_OPS = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
              "true_divide": "divide", "floor_divide": "floor_divide", "remainder": "remainder", "power": "pow",
              "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
              "left_shift": "bitwise_left_shift", "right_shift": "bitwise_right_shift", "matmul": "matmul",
              "less": "less", "less_equal": "less_equal", "greater": "greater", "greater_equal": "greater_equal",
              "equal": "equal", "not_equal": "not_equal"}


def _binop(name, fname, reflected=False, inplace=False):
    f = None
    what = f"x {name}= y"

    def op(self, other):
        nonlocal f
        if f is None:
            import array_namespace
            f = getattr(array_namespace, fname)
        if type(other) not in _OPERAND_TYPES:
            other = _operand(other)
            if other is NotImplemented:
                return NotImplemented
        if inplace:
            with VW.LOCK:
                write = getattr(f, "in_place", None)   # (eagerly into x's memory where it may: _elementwise)
                if write is None or not write(self, other):
                    self._rebind_locked(f(self, other), what)
            return self
        return f(other, self) if reflected else f(self, other)
    return op


_OPS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide", "floordiv": "floor_divide",
        "mod": "remainder", "pow": "pow", "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
        "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift"}
_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "truediv": "/", "floordiv": "//", "mod": "%", "pow": "**",
            "and": "&", "or": "|", "xor": "^", "lshift": "<<", "rshift": ">>", "matmul": "@"}
for _n, _f in list(_OPS.items()) + [("matmul", "matmul")]:
    setattr(Array, f"__{_n}__", _binop(_SYMBOLS[_n], _f))
    setattr(Array, f"__r{_n}__", _binop(_SYMBOLS[_n], _f, reflected=True))
    setattr(Array, f"__i{_n}__", _binop(_SYMBOLS[_n], _f, inplace=True))

for _n, _f in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal", "eq": "equal",
               "ne": "not_equal"}.items():
    setattr(Array, f"__{_n}__", _binop(_n, _f))


def _unop(fname):
    f = None

    def op(self):
        nonlocal f
        if f is None:
            f = getattr(_module("_elementwise"), fname)
        return f(self)
    return op


Array.__neg__ = _unop("negative")
Array.__pos__ = _unop("positive")
Array.__abs__ = _unop("abs")
Array.__invert__ = _unop("bitwise_invert")

H.Array = Array
H.wrap = backend.box_fn(Array, H.wrap)   # (the backend's fastest form of it: the same Arrays)
boxing.box_type = Array
boxing.box = H.wrap
boxing.views = VW

from ._hints import install_array_hints  # noqa: E402

install_array_hints(Array)   # x.mean(), x.reshape(...): AttributeError naming the function to call (_hints.py)


# The docstrings of Array and of its attributes and runtime methods live in a table (the line budget).
from ._array_docs import document as _document  # noqa: E402
_document(Array)
