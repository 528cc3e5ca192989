"""Host callbacks: pure_callback, io_callback, debug_print against NumPy, eagerly and under jit/vmap/grad."""
import threading

import numpy as np
import pytest

import array_namespace as xp
from finite_diff import central_diff
from transforms import (ShapeDtypeStruct, cond, custom_jvp, custom_vjp, debug_print, fori_loop, grad, io_callback,
                        jit, jvp, make_jaxpr, pure_callback, vmap)

EAGER_AND_JIT = [pytest.param(lambda f: f, id="eager"), pytest.param(jit, id="jit")]
SPECIAL = np.array([0.0, -0.0, 1.5, -2.25, 1e300, -1e-300, np.inf, -np.inf, np.nan])


def sds(x):
    return ShapeDtypeStruct(x.shape, x.dtype)


def _quiet_exp(v):
    with np.errstate(all="ignore"):
        return np.exp(v)


# ------------------------------------------------------------------------- pure_callback values

@pytest.mark.parametrize("tr", EAGER_AND_JIT)
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_pure_callback_matches_numpy(tr, dtype):
    with np.errstate(all="ignore"):
        vals = SPECIAL.astype(dtype) if dtype != "complex128" else SPECIAL + 1j * SPECIAL[::-1]
        want = np.exp(vals) * 2
    f = tr(lambda x: pure_callback(_quiet_exp, sds(x), x) * 2)
    got = np.asarray(f(xp.asarray(vals)))
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("tr", EAGER_AND_JIT)
def test_pure_callback_pytrees_kwargs_and_mixed_dtypes(tr):
    def host(a, b, *, scale):
        return {"prod": (a @ b) * scale, "argmax": np.argmax(a, axis=1).astype(np.int32), "pos": a > 0}

    def f(a, b):
        out_type = {"prod": ShapeDtypeStruct((3, 2), np.float64), "argmax": ShapeDtypeStruct((3,), np.int32),
                    "pos": ShapeDtypeStruct((3, 4), xp.bool)}
        return pure_callback(host, out_type, a, b, scale=xp.asarray(0.5))
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    out = tr(f)(xp.asarray(a), xp.asarray(b))
    want = host(a, b, scale=0.5)
    assert set(out) == set(want)
    for k in want:
        np.testing.assert_allclose(np.asarray(out[k]), want[k])
        assert np.asarray(out[k]).dtype == want[k].dtype


def test_callback_receives_numpy_arrays_eager_and_jit():
    seen = []

    def host(x):
        seen.append((type(x), x.shape, x.dtype))
        return x + 1
    for tr in (lambda f: f, jit):
        tr(lambda x: pure_callback(host, sds(x), x))(xp.ones((2, 3), dtype=xp.float32))
    assert seen == [(np.ndarray, (2, 3), np.dtype(np.float32))] * 2


def test_result_shape_dtypes_from_arrays_and_struct_repr():
    x = xp.asarray([1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(jit(lambda x: pure_callback(np.square, x, x))(x)), [1.0, 4.0])
    s = ShapeDtypeStruct([2, 3], xp.float32)
    assert s.shape == (2, 3) and s.ndim == 2 and s.size == 6 and s.dtype == xp.float32
    assert s == ShapeDtypeStruct((2, 3), np.float32) and "float32" in repr(s)
    with pytest.raises(TypeError, match="not an array dtype"):
        ShapeDtypeStruct((2,), object)
    with pytest.raises(TypeError, match="leaf 0.*shape"):
        pure_callback(np.sin, [3.0], x)


def test_pure_callback_in_jaxpr_and_dce():
    calls = []

    def host(x):
        calls.append(1)
        return x

    def f(x):
        pure_callback(host, sds(x), x)   # result unused: a pure callback may be dropped
        return x + 1
    assert "pure_callback" not in str(make_jaxpr(jit(f))(xp.ones(2)))
    jit(f)(xp.ones(2))
    assert calls == []
    text = str(make_jaxpr(lambda x: pure_callback(host, sds(x), x))(xp.ones(3)))
    assert "pure_callback[callback=host result_avals=(f64[3],)" in text


# ------------------------------------------------------------------------------ vmap methods

def _loop(host, xs, y):
    return np.stack([host(x, y) for x in xs])


@pytest.mark.parametrize("tr", EAGER_AND_JIT)
def test_vmap_sequential_calls_per_example(tr):
    shapes = []

    def host(x, y):
        shapes.append(x.shape)
        return np.sin(x) * y
    f = lambda x, y: pure_callback(host, sds(x), x, y, vmap_method="sequential")
    xs, y = np.arange(12.0).reshape(4, 3), np.array([1.0, -2.0, 3.0])
    got = tr(vmap(f, in_axes=(0, None)))(xp.asarray(xs), xp.asarray(y))
    want = _loop(lambda a, b: np.sin(a) * b, xs, y)
    np.testing.assert_allclose(np.asarray(got), want)
    assert shapes == [(3,)] * 4          # one call per batch element, unbatched y passed as is
    # batch axis not leading, and a nested vmap
    got = tr(vmap(f, in_axes=(1, None), out_axes=1))(xp.asarray(xs.T), xp.asarray(y))
    np.testing.assert_allclose(np.asarray(got), want.T)
    got = tr(vmap(vmap(f, in_axes=(0, None)), in_axes=(0, None)))(xp.asarray(xs.reshape(2, 2, 3)), xp.asarray(y))
    np.testing.assert_allclose(np.asarray(got), want.reshape(2, 2, 3))


@pytest.mark.parametrize("tr", EAGER_AND_JIT)
@pytest.mark.parametrize("method,y_shape", [("expand_dims", (1, 3)), ("broadcast_all", (4, 3))])
def test_vmap_single_call_methods(tr, method, y_shape):
    shapes = []

    def host(x, y):
        shapes.append((x.shape, y.shape))
        return np.sin(x) * y     # broadcasting works for both methods
    f = lambda x, y: pure_callback(host, sds(x), x, y, vmap_method=method)
    xs, y = np.arange(12.0).reshape(3, 4).T, np.array([1.0, -2.0, 3.0])
    got = tr(vmap(f, in_axes=(0, None)))(xp.asarray(xs), xp.asarray(y))
    np.testing.assert_allclose(np.asarray(got), _loop(lambda a, b: np.sin(a) * b, xs, y))
    assert shapes == [((4, 3), y_shape)]     # called once with the whole batch


def test_vmap_method_none_and_invalid():
    f = lambda x: pure_callback(np.sin, sds(x), x)
    for tr in (lambda f: f, jit):
        with pytest.raises(NotImplementedError, match="vmap_method"):
            tr(vmap(f))(xp.ones((2, 3)))
    with pytest.raises(ValueError, match="vmap_method"):
        pure_callback(np.sin, sds(xp.ones(2)), xp.ones(2), vmap_method="loop")


# ---------------------------------------------------------------------------- derivatives

def test_pure_callback_has_no_derivative():
    f = lambda x: xp.sum(pure_callback(np.sin, sds(x), x))
    for tr in (lambda f: f, jit):
        with pytest.raises(NotImplementedError, match=r"pure_callback\(sin\).*custom_jvp"):
            tr(grad(f))(xp.ones(3))
    with pytest.raises(NotImplementedError, match="custom_jvp"):
        jvp(f, (xp.ones(3),), (xp.ones(3),))


def test_integer_results_of_pure_callback_have_zero_derivative():
    def f(x):   # the index of the largest entry, found on the host, picks an entry to square
        i = pure_callback(lambda v: np.argmax(v), ShapeDtypeStruct((), np.int64), x)
        return x[i] ** 2
    x = np.array([0.5, 3.0, -1.0])
    want = central_diff(lambda v: float(v[np.argmax(v)] ** 2), x)
    for tr in (lambda f: f, jit):
        np.testing.assert_allclose(np.asarray(tr(grad(f))(xp.asarray(x))), want, rtol=1e-6)


def _host_f(x):      # a NumPy-only function and its derivative
    return np.sin(x) * np.exp(-x * x)


def _host_df(x):
    return (np.cos(x) - 2 * x * np.sin(x)) * np.exp(-x * x)


@custom_jvp
def f_cb(x):
    return pure_callback(_host_f, sds(x), x, vmap_method="sequential")


@f_cb.defjvp
def _f_cb_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return f_cb(x), pure_callback(_host_df, sds(x), x, vmap_method="expand_dims") * t


@custom_jvp
def f_xp(x):
    return pure_callback(_host_f, sds(x), x, vmap_method="broadcast_all")


@f_xp.defjvp
def _f_xp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return f_xp(x), (xp.cos(x) - 2 * x * xp.sin(x)) * xp.exp(-x * x) * t


@pytest.mark.parametrize("fn", [f_cb, f_xp], ids=["derivative_by_callback", "derivative_by_xp"])
@pytest.mark.parametrize("tr", EAGER_AND_JIT)
def test_custom_jvp_around_pure_callback(fn, tr):
    x = np.array([-1.3, 0.0, 0.4, 2.0])
    loss = lambda v: xp.sum(fn(v) ** 2)
    want = central_diff(lambda v: float(np.sum(_host_f(v) ** 2)), x)
    np.testing.assert_allclose(np.asarray(tr(grad(loss))(xp.asarray(x))), want, rtol=1e-6, atol=1e-8)
    per = tr(vmap(grad(lambda v: fn(v) ** 2)))(xp.asarray(x))
    np.testing.assert_allclose(np.asarray(per), want, rtol=1e-6, atol=1e-8)


def test_custom_vjp_around_pure_callback():
    @custom_vjp
    def f(x):
        return pure_callback(_host_f, sds(x), x)

    def fwd(x):
        return f(x), x

    def bwd(x, ct):
        return (pure_callback(_host_df, sds(x), x) * ct,)
    f.defvjp(fwd, bwd)
    x = np.array([0.2, -0.7, 1.1])
    want = central_diff(lambda v: float(np.sum(_host_f(v))), x)
    for tr in (lambda f: f, jit):
        np.testing.assert_allclose(np.asarray(tr(grad(lambda v: xp.sum(f(v))))(xp.asarray(x))), want, rtol=1e-6)


# ----------------------------------------------------------------------------- io_callback

@pytest.mark.parametrize("tr", EAGER_AND_JIT)
def test_io_callback_runs_once_per_call_even_if_unused(tr):
    count = [0]

    def bump(x):
        count[0] += 1
        return np.int64(count[0])

    def f(x):
        io_callback(bump, ShapeDtypeStruct((), np.int64), x)   # result unused: still runs
        return x * 2
    g = tr(f)
    for i in range(3):
        np.testing.assert_array_equal(np.asarray(g(xp.asarray([1.0, 2.0]))), [2.0, 4.0])
        assert count[0] == i + 1
    if tr is jit:
        assert "io_callback" in str(make_jaxpr(f)(xp.ones(2)))


@pytest.mark.parametrize("tr", EAGER_AND_JIT)
def test_io_callback_ordered_program_order_and_results(tr):
    log = []

    def rec(tag):
        def host(x):
            log.append((tag, x.tolist()))
            return np.float64(len(log))
        return host
    out_t = ShapeDtypeStruct((), np.float64)

    def f(x):
        a = io_callback(rec("a"), out_t, x, ordered=True)
        b = io_callback(rec("b"), out_t, x * 2, ordered=True)
        c = io_callback(rec("c"), out_t, x + 1, ordered=True)
        return a, b, c
    g = tr(f)
    for _ in range(2):
        log.clear()
        a, b, c = g(xp.asarray([1.0]))
        assert log == [("a", [1.0]), ("b", [2.0]), ("c", [2.0])]
        assert (float(a), float(b), float(c)) == (1.0, 2.0, 3.0)


def test_io_callback_in_loops_and_branches():
    log = []

    def body(i, c):
        io_callback(lambda i: log.append(("a", int(i))), None, i, ordered=True)
        io_callback(lambda i: log.append(("b", int(i))), None, i, ordered=True)
        return c + 1.0
    assert float(jit(lambda x: fori_loop(0, 3, body, x))(xp.asarray(0.0))) == 3.0
    assert log == [("a", 0), ("b", 0), ("a", 1), ("b", 1), ("a", 2), ("b", 2)]
    log.clear()
    pos = lambda: io_callback(lambda: log.append("pos") or np.float64(1.0), ShapeDtypeStruct((), np.float64))
    g = jit(lambda x: cond(x > 0, pos, lambda: x))
    assert float(g(xp.asarray(2.0))) == 1.0 and log == ["pos"]
    assert float(g(xp.asarray(-2.0))) == -2.0 and log == ["pos"]


def test_io_callback_vmap_and_grad():
    log = []
    f = lambda x: io_callback(lambda v: log.append(v.tolist()) or v * 10, sds(x), x)
    xs = np.arange(6.0).reshape(3, 2)
    for tr in (lambda f: f, jit):
        log.clear()
        np.testing.assert_array_equal(np.asarray(tr(vmap(f))(xp.asarray(xs))), xs * 10)
        assert log == xs.tolist()          # once per batch element, in batch order
    with pytest.raises(NotImplementedError, match="ordered=True"):
        vmap(lambda x: io_callback(lambda v: v, sds(x), x, ordered=True))(xp.asarray(xs))
    with pytest.raises(NotImplementedError, match=r"io_callback\(<lambda>\).*no derivative"):
        grad(lambda x: xp.sum(f(x)))(xp.ones(2))


# ----------------------------------------------------------------------------- debug_print

def test_debug_print_eager_jit_vmap_grad(capsys):
    def f(x):
        debug_print("x={x} total={} tag={tag}", xp.sum(x), x=x, tag="t")
        return x * 2
    x = xp.asarray([1.0, 2.5])
    assert debug_print("plain {}", x) is None
    assert capsys.readouterr().out == "plain [1.  2.5]\n"
    f(x)
    assert capsys.readouterr().out == "x=[1.  2.5] total=3.5 tag=t\n"
    g = jit(f)
    g.lower(x)                                 # tracing and lowering print nothing
    assert capsys.readouterr().out == ""
    g(x)
    g(x)
    assert capsys.readouterr().out == "x=[1.  2.5] total=3.5 tag=t\n" * 2
    for tr in (lambda f: f, jit):              # vmap: one line per batch element, in order
        tr(vmap(f))(xp.asarray([[1.0, 2.0], [3.0, 4.0]]))
        assert capsys.readouterr().out == "x=[1. 2.] total=3.0 tag=t\nx=[3. 4.] total=7.0 tag=t\n"
    for tr in (lambda f: f, jit):              # grad: the primal values, once
        np.testing.assert_array_equal(np.asarray(tr(grad(lambda v: xp.sum(f(v))))(x)), [2.0, 2.0])
        assert capsys.readouterr().out == "x=[1.  2.5] total=3.5 tag=t\n"


def test_debug_print_ordered_and_bad_format(capfd):
    def f(x):
        for i in range(3):
            debug_print("step {} {}", i, x + i, ordered=True)
        return x
    jit(f)(xp.asarray(1.0))
    assert capfd.readouterr().out == "step 0 1.0\nstep 1 2.0\nstep 2 3.0\n"
    with pytest.raises(ValueError, match="format string"):
        debug_print("{missing}", xp.ones(2))
    with pytest.raises(TypeError, match="fmt must be a str"):
        debug_print(xp.ones(2))


# ------------------------------------------------------------------------ errors from the host

def test_output_mismatch_errors_name_callback_output_and_types():
    x = xp.ones(3, dtype=xp.float32)
    short = lambda x: pure_callback(lambda v: v[:2], sds(x), x)
    wrong_dtype = lambda x: pure_callback(lambda v: v.astype(np.float64), sds(x), x)
    two = lambda x: pure_callback(lambda v: (v, v), (sds(x),), x)
    shape_msg = r"pure_callback\(<lambda>\): output 0 has shape \(2,\).*declares shape \(3,\)"
    with pytest.raises(ValueError, match=shape_msg):
        short(x)
    with pytest.raises(TypeError, match="output 0 has dtype float64.*declares dtype float32"):
        wrong_dtype(x)
    with pytest.raises(TypeError, match="returned 2 arrays"):
        two(x)
    # under jit the same exception reaches the caller, type and message, as eagerly (the process survives)
    for _ in range(2):   # (and again: a jit holding a callback stays off the C++ fast path, which would not)
        with pytest.raises(ValueError, match=shape_msg):
            jit(short)(x)
        with pytest.raises(TypeError, match="output 0 has dtype float64.*declares dtype float32"):
            jit(wrong_dtype)(x)
        with pytest.raises(TypeError, match="returned 2 arrays"):
            jit(two)(x)


def test_exception_inside_callback_surfaces():
    def host(v):
        if v[0] < 0:
            raise ArithmeticError("negative input reached the host")
        return v
    f = lambda x: pure_callback(host, sds(x), x)
    with pytest.raises(ArithmeticError, match="negative input"):
        f(xp.asarray([-1.0]))
    g = jit(f)
    for _ in range(2):   # under jit the original exception, as eagerly (issue 24: was XLA's RuntimeError)
        with pytest.raises(ArithmeticError, match="negative input reached the host") as e:
            g(xp.asarray([-1.0]))
        assert type(e.value) is ArithmeticError
        np.testing.assert_array_equal(np.asarray(g(xp.asarray([2.0]))), [2.0])   # still usable afterwards
    with pytest.raises(ZeroDivisionError):
        jit(lambda x: io_callback(lambda v: 1 / 0, None, x))(xp.ones(1))
    with pytest.raises(KeyError, match="boom"):   # inside vmap under jit too
        jit(vmap(lambda x: pure_callback(lambda v: {}["boom"], sds(x), x, vmap_method="sequential")))(xp.ones((2, 1)))


def test_threads_share_a_jitted_callback():
    f = jit(lambda a: pure_callback(lambda v: np.sin(v) + v.sum(), sds(a), a) * 2)
    results = {}

    def work(k):
        ok = []
        for i in range(25):
            a = np.arange(5.0) + 100 * k + i
            ok.append(np.allclose(np.asarray(f(xp.asarray(a))), (np.sin(a) + a.sum()) * 2))
        results[k] = all(ok)
    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: True, 1: True, 2: True, 3: True}


def test_a_callback_calls_a_jitted_function_and_the_namespace():
    """The CPU client runs a program on the calling thread (xla/_jaxlib.py), so a callback of a running program
    runs there too: a jitted call and eager namespace work inside it (each needing the runtime's locks and its
    own executions) complete, with the right values, from the main thread and from others."""
    inner = jit(lambda v: xp.sum(v * 2.0))

    def cb(v):
        w = xp.asarray(v)
        return np.asarray(inner(w) + xp.max(w), dtype=v.dtype)
    f = jit(lambda a: pure_callback(cb, ShapeDtypeStruct((), a.dtype), a @ a) + 1.0)
    a = np.arange(16.0).reshape(4, 4) / 10.0
    m = a @ a
    want = 2.0 * m.sum() + m.max() + 1.0
    np.testing.assert_allclose(float(f(xp.asarray(a))), want, rtol=1e-14)
    got = []
    threads = [threading.Thread(target=lambda: got.append(float(f(xp.asarray(a))))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    np.testing.assert_allclose(got, [want] * 3, rtol=1e-14)


def test_module_with_callbacks_compiles_only_from_ir():
    from xla import _jaxlib, runtime
    text = jit(lambda a: pure_callback(np.sin, sds(a), a)).lower(xp.ones(2)).as_text()
    assert _jaxlib.HOST_CALLBACK_TARGET in text
    with pytest.raises(RuntimeError, match="ir.Module"):
        _jaxlib.compile(text, runtime.default_device())
