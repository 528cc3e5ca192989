"""The rest of the namespace against NumPy, table-driven, across dtype kinds; plus a meta-test
that every function of the standard is checked against an oracle somewhere in tests/ -- derived from
what the table rows call and from reading the test files it names, not from a list taken on trust."""
import ast
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import array_namespace as xp
from op_table import ALL_OPS
from test_completeness import FFT, LINALG, MAIN
from transforms import make_jaxpr

HERE = os.path.dirname(__file__)

INT, UINT, FLT, CPX, BOOL = ["int8", "int32", "int64"], ["uint8", "uint32"], ["float32", "float64"], \
    ["complex64", "complex128"], ["bool"]


def _data(rng, shape, dtype):
    if dtype == "bool":
        return rng.random(shape) > 0.5
    if dtype.startswith("uint"):
        return rng.integers(0, 50, shape).astype(dtype)
    if dtype.startswith("int"):
        return rng.integers(-50, 50, shape).astype(dtype)
    if dtype.startswith("complex"):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    v = rng.standard_normal(shape) * 3
    v.flat[:2] = [np.nan, -0.0][: v.size]
    return v.astype(dtype)


# name, xp function, numpy oracle, number of array inputs, dtypes
TABLE = [
    ("bitwise_and", xp.bitwise_and, np.bitwise_and, 2, INT + UINT + BOOL),
    ("bitwise_or", xp.bitwise_or, np.bitwise_or, 2, INT + UINT + BOOL),
    ("bitwise_xor", xp.bitwise_xor, np.bitwise_xor, 2, INT + UINT + BOOL),
    ("bitwise_invert", xp.bitwise_invert, np.invert, 1, INT + UINT + BOOL),
    ("bitwise_left_shift", lambda a, b: xp.bitwise_left_shift(a, b % 4), lambda a, b: np.left_shift(a, b % 4), 2,
     INT + UINT),
    ("bitwise_right_shift", lambda a, b: xp.bitwise_right_shift(a, b % 4), lambda a, b: np.right_shift(a, b % 4), 2,
     INT + UINT),
    ("logical_and", xp.logical_and, np.logical_and, 2, BOOL),
    ("logical_or", xp.logical_or, np.logical_or, 2, BOOL),
    ("logical_xor", xp.logical_xor, np.logical_xor, 2, BOOL),
    ("logical_not", xp.logical_not, np.logical_not, 1, BOOL),
    ("isnan", xp.isnan, np.isnan, 1, INT + FLT + CPX),
    ("isinf", xp.isinf, np.isinf, 1, INT + FLT + CPX),
    ("isfinite", xp.isfinite, np.isfinite, 1, INT + FLT + CPX),
    ("signbit", xp.signbit, np.signbit, 1, FLT),
    ("nextafter", xp.nextafter, np.nextafter, 2, FLT),
    ("equal", xp.equal, np.equal, 2, INT + FLT + CPX + BOOL),
    ("not_equal", xp.not_equal, np.not_equal, 2, INT + FLT + CPX + BOOL),
    ("less", xp.less, np.less, 2, INT + UINT + FLT),
    ("less_equal", xp.less_equal, np.less_equal, 2, INT + FLT),
    ("greater", xp.greater, np.greater, 2, INT + FLT),
    ("greater_equal", xp.greater_equal, np.greater_equal, 2, INT + UINT + FLT),
    ("floor_divide", lambda a, b: xp.floor_divide(a, xp.where(b == 0, xp.ones_like(b), b)),
     lambda a, b: np.floor_divide(a, np.where(b == 0, 1, b)), 2, INT + UINT + FLT),
    ("remainder", lambda a, b: xp.remainder(a, xp.where(b == 0, xp.ones_like(b), b)),
     lambda a, b: np.remainder(a, np.where(b == 0, 1, b)), 2, INT + UINT + FLT),
    ("positive", xp.positive, np.positive, 1, INT + FLT + CPX),
    ("negative_int", xp.negative, np.negative, 1, INT + CPX),
    ("abs_int", xp.abs, np.abs, 1, INT + UINT + CPX),
    ("square_int", xp.square, np.square, 1, INT + CPX),
    ("sign_int", xp.sign, np.sign, 1, INT + UINT),
    ("real", xp.real, np.real, 1, CPX),
    ("imag", xp.imag, np.imag, 1, CPX),
    ("conj", xp.conj, np.conj, 1, CPX),
    ("add_int", xp.add, np.add, 2, INT + UINT + CPX),
    ("multiply_int", xp.multiply, np.multiply, 2, INT + UINT + CPX),
    ("maximum_int", xp.maximum, np.maximum, 2, INT + UINT),
    ("clip_int", lambda a: xp.clip(a, -5, 20), lambda a: np.clip(a, -5, 20), 1, INT),
    ("sum_int", xp.sum, lambda a: np.sum(a, dtype=np.uint64 if a.dtype.kind == "u" else np.int64), 1, INT + UINT),
    ("prod_cpx", xp.prod, np.prod, 1, CPX),
    ("max_int", lambda a: xp.max(a, axis=-1), lambda a: np.max(a, axis=-1), 1, INT + UINT + BOOL),
    ("argmax", lambda a: xp.argmax(a, axis=-1), lambda a: np.argmax(a, axis=-1), 1, INT + FLT + BOOL),
    ("argmin", lambda a: xp.argmin(a, axis=0, keepdims=True), lambda a: np.argmin(a, axis=0, keepdims=True), 1,
     INT + FLT),
    ("any", lambda a: xp.any(a, axis=-1), lambda a: np.any(a, axis=-1), 1, BOOL + INT + FLT),
    ("all", lambda a: xp.all(a, keepdims=True), lambda a: np.all(a, keepdims=True), 1, BOOL + INT + FLT),
    ("moveaxis", lambda a: xp.moveaxis(a, 0, -1), lambda a: np.moveaxis(a, 0, -1), 1, INT + FLT + BOOL),
    ("repeat", lambda a: xp.repeat(a, 2, axis=0), lambda a: np.repeat(a, 2, axis=0), 1, INT + FLT),
    ("tile", lambda a: xp.tile(a, (2, 1)), lambda a: np.tile(a, (2, 1)), 1, INT + FLT + CPX),
    ("unstack", lambda a: xp.stack(xp.unstack(a, axis=-1)), lambda a: np.stack(list(np.moveaxis(a, -1, 0))), 1,
     INT + FLT),
    ("triu", lambda a: xp.triu(a, k=1), lambda a: np.triu(a, k=1), 1, INT + FLT + BOOL),
    ("expand_dims", lambda a: xp.expand_dims(a, axis=(0, -1)), lambda a: np.expand_dims(a, (0, -1)), 1, INT + FLT),
    ("vecdot", lambda a, b: xp.vecdot(a, b), lambda a, b: np.sum(np.conj(a) * b, axis=-1, dtype=a.dtype), 2,
     INT + FLT + CPX),
    ("astype", lambda a: xp.astype(a, xp.float64), lambda a: a.astype(np.float64), 1, INT + UINT + BOOL + FLT),
    ("zeros_like", xp.zeros_like, np.zeros_like, 1, INT + FLT + CPX + BOOL),
    ("ones_like", xp.ones_like, np.ones_like, 1, INT + FLT + CPX + BOOL),
    ("full_like", lambda a: xp.full_like(a, 1), lambda a: np.full_like(a, 1), 1, INT + FLT + CPX),
]


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
@given(data=st.data())
def test_against_numpy(row, data):
    name, fn, np_fn, nargs, dtypes = row
    dtype = data.draw(st.sampled_from(dtypes), label="dtype")
    shape = data.draw(st.sampled_from([(3, 4), (2, 2, 3)]), label="shape")
    rng = np.random.default_rng(data.draw(st.integers(0, 1000), label="seed"))
    vals = [_data(rng, shape, dtype) for _ in range(nargs)]
    got = fn(*[xp.asarray(v) for v in vals])
    with np.errstate(all="ignore"):
        want = np.asarray(np_fn(*vals))
    assert got.shape == want.shape, f"{name}: shape {got.shape} != {want.shape}"
    assert got.dtype == want.dtype, f"{name}: dtype {got.dtype} != NumPy's {want.dtype}"
    single = dtype in ("float32", "complex64")
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5 if single else 1e-12, atol=1e-6 if single else 0,
                               equal_nan=True)


def test_creation_and_dtype_functions():
    assert np.array_equal(np.asarray(xp.empty((2, 3))).shape, (2, 3)) and xp.empty_like(xp.ones(2)).shape == (2,)
    np.testing.assert_array_equal(np.asarray(xp.full((2, 2), 7, dtype=xp.int8)), np.full((2, 2), 7, np.int8))
    np.testing.assert_array_equal(np.asarray(xp.eye(3, 4, k=-1)), np.eye(3, 4, k=-1))
    np.testing.assert_allclose(np.asarray(xp.linspace(0.0, 1.0, 7)), np.linspace(0.0, 1.0, 7))
    np.testing.assert_allclose(np.asarray(xp.linspace(2.0, 3.0, 4, endpoint=False)),
                               np.linspace(2.0, 3.0, 4, endpoint=False))
    xs, ys = xp.meshgrid(xp.arange(3), xp.arange(2))
    want_x, want_y = np.meshgrid(np.arange(3), np.arange(2))
    assert np.array_equal(np.asarray(xs), want_x) and np.array_equal(np.asarray(ys), want_y)
    a, b = xp.broadcast_arrays(xp.ones((3, 1)), xp.ones(4))
    assert a.shape == b.shape == (3, 4) and xp.broadcast_shapes((3, 1), (4,)) == (3, 4)
    assert xp.can_cast(xp.int8, xp.int16) and not xp.can_cast(xp.int64, xp.int8)
    assert not xp.can_cast(xp.float64, xp.int64)
    assert xp.finfo(xp.float32).eps == np.finfo(np.float32).eps and xp.finfo(xp.complex64).dtype == xp.float32
    assert xp.iinfo(xp.uint8).max == 255 and xp.iinfo(xp.int16).min == -32768
    assert xp.isdtype(xp.int8, "signed integer") and xp.isdtype(xp.float32, ("integral", "real floating"))
    assert not xp.isdtype(xp.complex64, "real floating") and xp.isdtype(xp.bool, xp.bool)
    assert xp.result_type(xp.int8, xp.uint8, 1) == xp.int16
    with pytest.raises(ValueError):
        xp.isdtype(xp.int8, "nonsense")
    with pytest.raises(TypeError):
        xp.finfo(xp.int8)


def test_error_types_of_the_rest():
    with pytest.raises(TypeError):
        xp.logical_and(xp.ones(2), xp.ones(2))            # floats are not boolean
    with pytest.raises(TypeError):
        xp.bitwise_and(xp.ones(2), xp.ones(2))
    with pytest.raises(TypeError):
        xp.signbit(xp.arange(2))
    with pytest.raises(ValueError):
        xp.squeeze(xp.ones((2, 3)), axis=0)
    with pytest.raises(IndexError):
        xp.moveaxis(xp.ones((2, 3)), 2, 0)
    with pytest.raises(ValueError):
        xp.stack([xp.ones(2), xp.ones(3)])
    with pytest.raises(ValueError):
        xp.arange(0, 5, 0)


# Functions whose NumPy-oracle tests live in a dedicated file (of tests/array_namespace/); the meta-test
# below reads each file and fails unless a test there that compares against NumPy uses the function.
ALIASES = {"matmul", "matrix_transpose", "tensordot", "vecdot"}  # linalg.<f> is xp.<f> (test_linalg.py checks)
ELSEWHERE = {
    "test_namespace_table.py": "empty empty_like full eye linspace meshgrid broadcast_arrays broadcast_shapes "
                               "can_cast finfo iinfo isdtype result_type",
    "test_array.py": "asarray from_dlpack arange zeros ones",
    "test_indexing.py": "take take_along_axis",
    "test_sorting.py": "sort argsort searchsorted cumulative_sum cumulative_prod diff nonzero count_nonzero",
    "test_set.py": "isin unique_all unique_counts unique_inverse unique_values",
    "test_linalg.py": " ".join(n for n in LINALG if n not in ALIASES),
    "test_fft.py": " ".join(FFT),
    "test_dtypes.py": "__array_namespace_info__",
}
EXTENSIONS = {"linalg": LINALG, "fft": FFT}  # covered when every function of the extension is
NOT_FUNCTIONS = set("__array_api_version__ e inf nan newaxis pi bool int8 int16 int32 int64 uint8 uint16 uint32 uint64 float32 float64 "
                    "complex64 complex128".split())
_ASSERTS = {"assert_allclose", "assert_array_equal", "assert_equal", "array_equal", "allclose",
            "assert_array_almost_equal"}


def _mentions(node, name):
    return any(isinstance(n, ast.Name) and n.id == name or isinstance(n, ast.Attribute) and n.attr == name
               or isinstance(n, ast.Constant) and n.value == name for n in ast.walk(node))


def _asserts(fn, helpers=frozenset()):
    return any(isinstance(n, ast.Assert) or isinstance(n, ast.Call) and (
        isinstance(n.func, ast.Attribute) and n.func.attr in _ASSERTS | helpers
        or isinstance(n.func, ast.Name) and n.func.id in _ASSERTS | helpers) for n in ast.walk(fn))


def _compares_with_numpy(fn, helpers):
    """A test function that uses NumPy (np/scipy) and asserts: an assert, a numpy.testing call, or a call
    of a helper of its module that asserts (e.g. `close(got, want)`)."""
    return (_mentions(fn, "np") or _mentions(fn, "sc")) and _asserts(fn, helpers)


def oracle_tests_using(path, name):
    """The NumPy-comparing test functions of `path` that use `name`: directly, or through a module-level
    table or helper that they (or their parametrisation) read."""
    tree = ast.parse(open(path).read())
    tests = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]
    helpers = frozenset(n.name for n in tree.body if isinstance(n, ast.FunctionDef) and n not in tests
                        and _asserts(n))
    oracle = [t for t in tests if _compares_with_numpy(t, helpers)]
    found = set()
    for top in tree.body:
        if not _mentions(top, name):
            continue
        if top in tests:
            found |= {top.name} if top in oracle else set()
            continue
        labels = ([top.name] if isinstance(top, (ast.FunctionDef, ast.ClassDef)) else
                  [t.id for t in ast.walk(top) if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)])
        found |= {t.name for t in oracle if any(_mentions(t, lb) for lb in labels)}
    return found


def namespace_functions_called(fn, args):
    """The namespace functions that `fn` calls when traced on `args` (spying on the module's attributes),
    plus `fn` itself or what it closes over if that is a namespace function."""
    originals = {n: getattr(xp, n) for n in MAIN if n not in NOT_FUNCTIONS and callable(getattr(xp, n, None))}
    by_id = {id(f): n for n, f in originals.items()}
    inner = [c.cell_contents for c in (getattr(fn, "__closure__", None) or ())]
    called = {by_id[id(f)] for f in [fn] + inner if id(f) in by_id}

    def spy(name, f):
        def g(*a, **k):
            called.add(name)
            return f(*a, **k)
        return g
    with pytest.MonkeyPatch.context() as mp:
        for n, f in originals.items():
            mp.setattr(xp, n, spy(n, f))
        make_jaxpr(fn)(*args)
    return called


def test_elsewhere_lists_only_what_those_files_test():
    wrong = [f"{name} in {file}" for file, names in ELSEWHERE.items() for name in names.split()
             if not oracle_tests_using(os.path.join(HERE, file), name)]
    assert not wrong, f"listed as NumPy-oracle tested but no NumPy-comparing test there uses them: {wrong}"


def test_every_function_has_an_oracle_test():
    """Covered: called by a row of the op table or of TABLE above (both compare with NumPy), or listed in
    ELSEWHERE (which test_elsewhere_lists_only_what_those_files_test verifies)."""
    rng = np.random.default_rng(0)
    covered = set()
    for op in ALL_OPS:
        covered |= namespace_functions_called(op.fn, [xp.asarray(v) for v in op.inputs(rng, op.shapes[-1],
                                                                                       "float64")])
    for name, fn, _, nargs, dtypes in TABLE:
        covered |= namespace_functions_called(fn, [xp.asarray(_data(rng, (3, 4), dtypes[0]))] * nargs)
    for names in ELSEWHERE.values():
        covered |= set(names.split())
    covered |= {ext for ext, names in EXTENSIONS.items() if set(names) <= covered}
    missing = [n for n in MAIN if n not in covered and n not in NOT_FUNCTIONS]
    assert not missing, f"functions without an oracle test: {missing}"


@pytest.mark.parametrize("row", TABLE, ids=[r[0] for r in TABLE])
def test_jit_and_vmap_match_eager(row):
    """Every row also runs under jit (vs eager and NumPy) and vmap (vs a Python loop over the batch and
    NumPy on each example)."""
    from transforms import jit, vmap
    name, fn, np_fn, nargs, dtypes = row
    dtype = dtypes[-1] if "bool" not in dtypes[-1] or len(dtypes) == 1 else dtypes[0]
    rng = np.random.default_rng(11)
    batch = [_data(rng, (2, 3, 4), dtype) for _ in range(nargs)]
    eager = [np.asarray(fn(*[xp.asarray(b[i]) for b in batch])) for i in range(2)]
    jitted = np.asarray(jit(fn)(*[xp.asarray(b[0]) for b in batch]))
    np.testing.assert_array_equal(jitted, eager[0]) if jitted.dtype.kind in "biu" else \
        np.testing.assert_allclose(jitted, eager[0], rtol=1e-6, equal_nan=True)
    mapped = np.asarray(vmap(fn)(*[xp.asarray(b) for b in batch]))
    np.testing.assert_allclose(mapped, np.stack(eager), rtol=1e-6, equal_nan=True)
    with np.errstate(all="ignore"):
        oracle = [np.asarray(np_fn(*[b[i] for b in batch])) for i in range(2)]
    assert jitted.dtype == oracle[0].dtype and mapped.dtype == oracle[0].dtype, f"{name}: dtype under jit/vmap"
    single = dtype in ("float32", "complex64")
    tol = dict(rtol=1e-5 if single else 1e-12, atol=1e-6 if single else 0, equal_nan=True)
    np.testing.assert_allclose(jitted, oracle[0], err_msg=f"{name}: jit vs NumPy", **tol)
    np.testing.assert_allclose(mapped, np.stack(oracle), err_msg=f"{name}: vmap vs NumPy", **tol)
