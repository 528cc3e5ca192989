"""The docstrings of the Array class and of its attributes and runtime methods: a table that _array.py
applies at its end (`document`).

Why a table: written out in _array.py they would take it past the 600-line budget (tools/size_budget.py).
Members that carry a docstring in place (tolist, item, __dlpack__, sharding, addressable_shards) keep it
there, as Device does; tests/array_namespace/test_array_docs.py checks the two never overlap, and
tests/test_docstrings.py runs every example.
"""

ARRAY = """An n-dimensional array of the namespace: a handle on an immutable value (a device buffer eagerly, a
tracer while a transform traces).

Arrays come from the namespace's functions (xp.asarray, xp.zeros, ...), never from calling Array. They take
Python's operators (+ - * / // % ** @, comparisons, & | ^ ~ << >>, unary - + and abs(); a Python scalar
operand is weakly typed), indexing (x[key]; x[key] = v rebinds x to an updated value, as does x += y),
conversions (bool/int/float/complex of a 0-d array, len, iteration, np.asarray, DLPack) and the standard's
attributes (dtype, shape, ndim, size, device, T, mT).

Parameters: none (Array(...) is not a constructor: use xp.asarray).
Returns: the class; its instances are what every namespace function returns.
Raises: TypeError: if called directly.

>>> x = xp.asarray([1.0, 2.0, 3.0])
>>> (x * 2 + 1)[1:]
Array([5., 7.])
>>> x[0] = 10.0
>>> x
Array([10.,  2.,  3.])
"""

MEMBERS = {
    "dtype": """The element data type.

Returns: dtype: one of the namespace's dtypes (xp.float64, xp.int32, ...).
Raises: none.

>>> xp.asarray([1, 2]).dtype
array_namespace.int64
""",
    "shape": """The array's dimensions.

Returns: tuple of int: one size per axis (() for a 0-d array).
Raises: none.

>>> xp.zeros((2, 3)).shape
(2, 3)
""",
    "ndim": """The number of axes.

Returns: int: len(x.shape).
Raises: none.

>>> xp.zeros((2, 3)).ndim
2
""",
    "size": """The number of elements.

Returns: int: the product of x.shape (1 for a 0-d array).
Raises: none.

>>> xp.zeros((2, 3)).size
6
""",
    "device": """The device holding the array.

Returns: Device: the device x lies on; for an array over several devices (a pmap's result, an array laid
    out over a mesh) its sharding (transforms.devices.Sharding or transforms.NamedSharding), as JAX does:
    to_device and asarray(device=) accept either, and x.devices() lists the devices.
Raises: none.

>>> xp.asarray([1.0]).device == xp.asarray([2]).device
True
""",
    "aval": """The abstract value (shape and dtype) the engine sees: what jit and vmap trace with.

Returns: ShapedArray: x's shape and dtype (transforms.core).
Raises: none.

>>> xp.asarray([1.0, 2.0]).aval.shape
(2,)
""",
    "T": """The transpose of a 2-D array (a view of x).

Returns: Array: x with its two axes swapped.
Raises: ValueError: if x is not 2-D (use xp.matrix_transpose or xp.permute_dims).

>>> xp.asarray([[1, 2, 3]]).T
Array([[1],
       [2],
       [3]])
""",
    "mT": """The transpose of each matrix of x (its last two axes swapped; a view of x).

Returns: Array: of shape (..., N, M) for x of shape (..., M, N).
Raises: ValueError: if x has fewer than 2 dimensions.

>>> xp.ones((4, 2, 3)).mT.shape
(4, 3, 2)
""",
    "at": """Functional updates: x.at[key] has get(), set(v), add(v), subtract(v), multiply(v), divide(v), power(v),
min(v) and max(v), each returning an updated copy of x (x itself is unchanged; under jit one scatter).

Returns: an indexer; x.at[key] takes any key x[key] takes.
Raises: IndexError, TypeError: for a bad key or value (when a method is called).

>>> x = xp.asarray([1.0, 2.0, 3.0])
>>> x.at[1].set(10.0), x.at[0].add(5)
(Array([ 1., 10.,  3.]), Array([6., 2., 3.]))
>>> x
Array([1., 2., 3.])
""",
    "to_device": """x on the given device: x itself when it already lies there.

Parameters: device (Device or sharding): a Device puts the whole value on it (an array over several devices
    is gathered); a sharding (another array's x.device, a NamedSharding) lays x out as it says. stream: must be
    None.
Returns: Array: x, or x's value placed as asked.
Raises: ValueError: for a device of another process, an unknown device object, or a stream.

>>> x = xp.asarray([1.0])
>>> x.to_device(x.device) is x
True
""",
    "block_until_ready": """Wait until x's value is computed (dispatch is asynchronous); a traced x returns at once.

Returns: Array: x itself.
Raises: whatever error the computation of x raised.

>>> x = xp.asarray([1.0])
>>> x.block_until_ready() is x
True
""",
    "is_ready": """Whether x's value is computed (always True for a traced x).

Returns: bool: True once the buffer holds its value.
Raises: none.

>>> xp.asarray([1.0]).block_until_ready().is_ready()
True
""",
    "__dlpack_device__": """The DLPack device of x's data: (1, 0), the CPU (kDLCPU, device 0).

Returns: tuple of int: (device type, device id).
Raises: none.

>>> xp.asarray([1.0]).__dlpack_device__()
(1, 0)
""",
}


def document(array_cls):
    """Give Array and its members in MEMBERS their docstrings (called once, by _array.py)."""
    array_cls.__doc__ = ARRAY
    for name, doc in MEMBERS.items():
        array_cls.__dict__[name].__doc__ = doc   # a property's or a function's: both writable
