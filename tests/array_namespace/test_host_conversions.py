"""Host conversions of traced values raise; they never hand over the primal and drop the derivative
or the batch axis. Mixing with NumPy arrays and scalars is array arithmetic with the derivative intact.
Python decisions (bool/int/index) on concrete primals keep working under grad."""
import operator
import sys

import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import grad, jacfwd, jacrev, jit, jvp, linearize, make_jaxpr, vjp, vmap
from transforms.core import TracerArrayConversionError

X = np.array([0.5, 1.5, 2.5])


def _run(transform, f):
    x = xp.asarray(X)
    if transform == "grad":
        return grad(lambda v: xp.sum(f(v)))(x)
    if transform == "jvp":
        return jvp(f, (x,), (xp.ones_like(x),))
    if transform == "vjp":
        return vjp(f, x)
    if transform == "linearize":
        return linearize(f, x)
    if transform == "jacfwd":
        return jacfwd(f)(x)
    if transform == "jacrev":
        return jacrev(f)(x)
    if transform == "vmap":
        return vmap(f)(xp.reshape(x, (3, 1)))
    if transform == "make_jaxpr(vmap)":
        return make_jaxpr(vmap(f))(xp.reshape(x, (3, 1)))
    if transform == "jit":
        return jit(f, guards=False)(x)   # strict (JAX's); the default guards float/complex/item/tolist: below
    raise AssertionError(transform)


def _float(v):
    return xp.asarray(float(v[0]))


def _complex(v):
    return xp.asarray(complex(v[0]))


CONVERSIONS = {
    "np.asarray": lambda v: xp.asarray(np.asarray(v) * 2),
    "np.array": lambda v: xp.asarray(np.array(v)),
    "__array__": lambda v: xp.asarray(v.__array__()),
    "ufunc": lambda v: xp.asarray(np.sin(v)),
    "ufunc.reduce": lambda v: xp.asarray(np.add.reduce(v)),
    "__dlpack__": lambda v: v.__dlpack__() and v,
    "__dlpack__ v1": lambda v: v.__dlpack__(max_version=(1, 0)) and v,
    "np.from_dlpack": lambda v: xp.asarray(np.from_dlpack(v)),
    "tolist": lambda v: xp.asarray(v.tolist()),
    "item": lambda v: xp.asarray(v[0].item()),
    "float": _float,
    "complex": _complex,
}
TRANSFORMS = ["grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "vmap", "jit"]
NUMPY_CONVERSIONS = [c for c in CONVERSIONS if c not in ("tolist", "item", "float", "complex")]


@pytest.mark.parametrize("transform", TRANSFORMS)
@pytest.mark.parametrize("conv", list(CONVERSIONS))
def test_host_conversion_of_a_traced_value_raises(conv, transform):
    f = CONVERSIONS[conv]
    if transform == "vmap" and conv in ("float", "complex", "item"):
        f = {"float": lambda v: xp.asarray(float(v[0])), "complex": lambda v: xp.asarray(complex(v[0])),
             "item": lambda v: xp.asarray(v[0].item())}[conv]
    # (with values vmap runs a NumPy conversion element by element: test_numpy_conversions_under_vmap_...)
    how = "make_jaxpr(vmap)" if transform == "vmap" and conv in NUMPY_CONVERSIONS else transform
    with pytest.raises(TracerArrayConversionError) as info:
        _run(how, f)
    msg = str(info.value)
    assert isinstance(info.value, TypeError)
    kind = {"vmap": "vmap", "jit": "jit"}.get(transform, "jvp/grad")
    if transform == "linearize" or transform == "vjp" or transform == "grad" or transform == "jacrev":
        kind = "jvp/grad"
    assert kind in msg, msg
    assert "pure_callback" in msg and "xp." in msg


CONCRETE_WANT = {
    "np.asarray": X * 2, "np.array": X, "__array__": X, "ufunc": np.sin(X), "ufunc.reduce": np.sum(X),
    "__dlpack__": X, "__dlpack__ v1": X, "np.from_dlpack": X, "tolist": X, "item": X[0], "float": X[0],
    "complex": X[0] + 0j,
}


@pytest.mark.parametrize("conv", ["tolist", "item", "float", "complex"])
def test_guarded_conversions_under_jit_give_this_calls_values(conv):
    """Under jit with concrete arguments these conversions are guarded (transforms/jit_guards.py): each call
    gives eager's value for its own input; strict jit raises."""
    f = jit(CONVERSIONS[conv])
    for x in (X, X[::-1] * 3.0):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), np.asarray(CONVERSIONS[conv](xp.asarray(x))),
                                   rtol=1e-15)
    with pytest.raises(TracerArrayConversionError):
        jit(CONVERSIONS[conv], guards=False)(xp.asarray(X))


@pytest.mark.parametrize("conv", NUMPY_CONVERSIONS)
def test_numpy_conversions_under_vmap_run_element_by_element(conv):
    """A conversion to NumPy/DLPack of a batched value under vmap: vmap runs the function on each batch element in
    turn and stacks the results (transforms/vmap_loop.py), the loop's result."""
    f = CONVERSIONS[conv]
    B = np.stack([X, X[::-1] * 3.0, X - 7.0])
    got = vmap(f)(xp.asarray(B))
    np.testing.assert_allclose(np.asarray(got), np.stack([np.asarray(f(xp.asarray(b))) for b in B]), rtol=1e-15)


@pytest.mark.parametrize("conv", NUMPY_CONVERSIONS)
def test_numpy_conversions_under_jit_run_eagerly_with_this_calls_values(conv):
    """A conversion to NumPy/DLPack under jit with concrete arguments: that call runs eagerly inside the jitted
    call (transforms/jit.py), never a value of another call baked into the program; strict jit raises."""
    f = jit(CONVERSIONS[conv])
    for x in (X, X[::-1] * 3.0, X - 7.0):
        np.testing.assert_allclose(np.asarray(f(xp.asarray(x))), np.asarray(CONVERSIONS[conv](xp.asarray(x))),
                                   rtol=1e-15)
    with pytest.raises(TracerArrayConversionError):
        jit(CONVERSIONS[conv], guards=False)(xp.asarray(X))


@pytest.mark.parametrize("conv", list(CONVERSIONS))
def test_host_conversions_of_concrete_values_still_work(conv):
    out = CONVERSIONS[conv](xp.asarray(X))
    np.testing.assert_allclose(np.asarray(out), CONCRETE_WANT[conv], rtol=1e-15)


def test_buffer_protocol_never_hands_over_a_primal():
    """memoryview of a traced array raises: our conversion error where Python has __buffer__ (3.12+),
    Python's own TypeError before that -- never a buffer of the primal."""
    want = TracerArrayConversionError if sys.version_info >= (3, 12) else TypeError
    with pytest.raises(want):
        grad(lambda v: xp.sum(xp.asarray(np.asarray(memoryview(v)))))(xp.asarray(X))


def test_xp_from_dlpack_of_our_own_array_is_the_same_value_derivative_intact():
    g = grad(lambda v: xp.sum(xp.from_dlpack(v) ** 2))(xp.asarray(X))
    np.testing.assert_allclose(np.asarray(g), 2 * X)


def test_error_names_the_argument():
    with pytest.raises(TracerArrayConversionError, match=r"args\[1\]"):
        grad(lambda a, v: a * float(v[0]), argnums=(0, 1))(1.0, xp.asarray(X))
    with pytest.raises(TracerArrayConversionError, match="'v'"):
        jit(lambda v: xp.asarray(np.asarray(v)), guards=False)(xp.asarray(X))


MIXED = {
    "x * ndarray": lambda v: v * np.ones(3) * 2.0,
    "ndarray * x": lambda v: np.full(3, 2.0) * v,
    "x + ndarray": lambda v: (v + np.arange(3.0)) * v,
    "ndarray - x": lambda v: np.arange(3.0) - v * v,
    "x * np.float64": lambda v: v * np.float64(3.0),
    "np.float64 * x": lambda v: np.float64(3.0) * v * v,
    "x / np.int64": lambda v: v / np.int64(4),
    "np.float32 + x": lambda v: np.float32(1.5) + v ** 2,
    "x ** np.int32": lambda v: v ** np.int32(3),
    "x @ ndarray": lambda v: (v @ np.ones((3, 3))) * v,
    "ndarray @ x": lambda v: (np.arange(9.0).reshape(3, 3) @ v) * v,
}


@pytest.mark.parametrize("case", list(MIXED))
def test_numpy_operands_are_array_arithmetic_with_the_derivative_intact(case):
    f = MIXED[case]
    x = xp.asarray(X)
    out = f(x)
    assert type(out) is type(x)
    np.testing.assert_allclose(np.asarray(out), f(X), rtol=1e-12)
    g = grad(lambda v: xp.sum(f(v)))(x)
    want = central_diff(lambda v: float(np.sum(f(v))), X)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(jit(f)(x)), f(X), rtol=1e-12)
    loop = np.stack([np.asarray(f(xp.asarray(X * k))) for k in (1.0, 2.0)])
    np.testing.assert_allclose(np.asarray(vmap(f)(xp.asarray(np.stack([X, 2 * X])))), loop, rtol=1e-12)


def test_numpy_operands_keep_strict_promotion():
    x = xp.asarray(X, dtype=xp.float32)
    assert (x * np.float64(2.0)).dtype == xp.float32          # a NumPy scalar is a weak Python number
    assert (x * np.ones(3)).dtype == xp.float64               # a NumPy array has its own dtype
    with pytest.raises(TypeError):
        xp.asarray([1, 2, 3]) + np.ones(3)                    # int64 array + float64 array: no mixed kinds


def test_python_decisions_on_concrete_primals_work_under_grad():
    def f(v):
        s = v[0] * 3.0 if v[0] > 0 else v[0] * 5.0           # bool() of a comparison
        n = int(v[1])                                          # int(): derivative zero
        k = operator.index(xp.astype(v[2] > 2, xp.int64))     # index of an integer value
        for _ in range(n):
            s = s * v[1]
        return s + v[k]
    want = central_diff(lambda a: float(np.asarray(f(xp.asarray(a)))), X)
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(X))), want, rtol=1e-6, atol=1e-8)


def test_scipy_numpy_fallback_raises_under_grad_and_works_eagerly():
    import scipy.special as sc
    x = xp.asarray(np.array([0.1, 0.4, 0.7]))
    np.testing.assert_allclose(np.asarray(sc.ellipe(x)), sc.ellipe(np.asarray(x)))   # eagerly: NumPy's answer
    with pytest.raises(TracerArrayConversionError):
        grad(lambda v: xp.sum(sc.ellipe(v)))(x)
    with pytest.raises(TracerArrayConversionError):
        jit(sc.ellipe, guards=False)(x)
    y = xp.asarray(np.array([0.2, 0.9]))   # guarded jit: the fallback runs eagerly inside the jitted call
    f = jit(sc.ellipe)
    for v in (x, x * 0.5, y):
        np.testing.assert_allclose(np.asarray(f(v)), sc.ellipe(np.asarray(v)), rtol=1e-15)
