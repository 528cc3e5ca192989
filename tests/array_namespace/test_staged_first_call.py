"""array_namespace/_staged.py `compiled`: where eager work runs on host kernels, the first UNSTAGED_CALLS calls at
a signature run the plain body or its direct form (nothing staged, nothing compiled) and the staged body runs
from the call after. The two must agree bit for bit (the same host kernels on the same values), agree with jit within
floating tolerance, raise the same errors, and stage as before off the host kernels."""
import functools

import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _staged
from transforms import jaxpr_transforms as JT
from transforms import jit
from transforms.core import ShapedArray, Tracer

U = _staged.UNSTAGED_CALLS
calls = []


@_staged.compiled
def _body(x, /, *, k=2.0):
    calls.append((x.shape, isinstance(x._v, Tracer)))     # (traced: staged; else the plain first call)
    return xp.sum(x * x, axis=-1) * k


def _host_kernels_on():
    from xla import host, runtime
    return host.MODE != "xla" and runtime._kernels_on()


needs_host = pytest.mark.skipif(not _host_kernels_on(), reason="host kernels switched off: every call stages")


@pytest.fixture
def fresh(monkeypatch, fresh_staged):
    """Every compiled function meets its signatures afresh; staging counted from a cleared cache."""
    _staged.forget_signatures()
    yield
    _staged.forget_signatures()


def _stagings():
    return JT._staged_jaxpr.cache_info().misses


def _spd(rng, shape, dtype):
    n = shape[-1]
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    a = a @ np.swapaxes(a.conj(), -1, -2) + n * np.eye(n)
    return a.astype(dtype)


def _gen(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


# (name, function, input maker, kwargs): each on a new shape with batch dims
CASES = [
    ("inv", xp.linalg.inv, _spd, {}),
    ("det", xp.linalg.det, _spd, {}),
    ("slogdet", xp.linalg.slogdet, _spd, {}),
    ("eigh", xp.linalg.eigh, _spd, {}),
    ("eigvalsh", xp.linalg.eigvalsh, _spd, {}),
    ("cholesky", xp.linalg.cholesky, _spd, {}),
    ("cholesky_upper", xp.linalg.cholesky, _spd, {"upper": True}),
    ("qr", xp.linalg.qr, _gen, {}),
    ("svd", xp.linalg.svd, _gen, {"full_matrices": False}),
    ("svdvals", xp.linalg.svdvals, _gen, {}),
    ("pinv", xp.linalg.pinv, _gen, {}),
    ("matrix_rank", xp.linalg.matrix_rank, _gen, {}),
    ("matrix_power", xp.linalg.matrix_power, _spd, {}),
    ("vector_norm", xp.linalg.vector_norm, _gen, {}),
    ("vector_norm_axis", xp.linalg.vector_norm, _gen, {"axis": -1, "ord": 3, "keepdims": True}),
    ("matrix_norm", xp.linalg.matrix_norm, _gen, {}),
    ("matrix_norm_nuc", xp.linalg.matrix_norm, _gen, {"ord": "nuc"}),
    ("trace", xp.linalg.trace, _gen, {"offset": 1}),
    ("fft", xp.fft.fft, _gen, {}),
    ("ifft", xp.fft.ifft, _gen, {"n": 9, "norm": "ortho"}),
    ("fftn", xp.fft.fftn, _gen, {}),
    ("rfft", xp.fft.rfft, _gen, {}),
    ("irfft", xp.fft.irfft, _gen, {}),
    ("rfftn", xp.fft.rfftn, _gen, {"norm": "forward"}),
    ("hfft", xp.fft.hfft, _gen, {}),
    ("fftshift", xp.fft.fftshift, _gen, {}),
]
REAL_ONLY = {"rfft", "rfftn"}
DTYPES = [np.float64, np.float32, np.complex128, np.complex64]


def _call(name, f, x, kw):
    if name == "matrix_power":
        return f(x, 3)
    return f(x, **kw)


def _leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def _cases():
    for name, f, make, kw in CASES:
        for dt in DTYPES:
            if name in REAL_ONLY and np.dtype(dt).kind == "c":
                continue
            if name == "trace" and np.dtype(dt).kind == "c":
                continue
            yield pytest.param(name, f, make, kw, dt, id=f"{name}-{np.dtype(dt).name}")


def _first_input(name, make, dt):
    return xp.asarray(make(np.random.default_rng(abs(hash(name)) % 1000), (2, 5, 5), dt))


@functools.cache
def _jitted_cases(dt):
    """{name: jit(name's call)(its input)} for every case of dtype dt, from one jitted function returning them all
    (one compile per dtype, not one per case: compiling is what these tests spend their time on)."""
    cases = [(name, f, kw) for name, f, make, kw, d in (c.values for c in _cases()) if d is dt]
    xs = [_first_input(name, make, dt) for name, f, make, kw, d in (c.values for c in _cases()) if d is dt]
    outs = jit(lambda *vs: [_call(name, f, v, kw) for (name, f, kw), v in zip(cases, vs)])(*xs)
    return {name: _leaves(o) for (name, _, _), o in zip(cases, outs)}


@needs_host
@pytest.mark.parametrize("name,f,make,kw,dt", list(_cases()))
def test_first_call_is_plain_and_equals_the_staged_calls_bit_for_bit_and_jit(name, f, make, kw, dt, fresh):
    from xla import runtime
    x = _first_input(name, make, dt)
    c0, s0 = runtime.compile_calls[0], _stagings()
    first = _leaves(_call(name, f, x, kw))
    for _ in range(U - 1):
        for a, b in zip(first, _leaves(_call(name, f, x, kw))):
            np.testing.assert_array_equal(a, b)
    assert _stagings() == s0, "the first U calls at a signature stage nothing"
    second = _leaves(_call(name, f, x, kw))
    s1 = _stagings()
    assert s1 > s0, "the call after them stages"
    third = _leaves(_call(name, f, x, kw))
    assert _stagings() == s1
    assert runtime.compile_calls[0] == c0, "op by op on host kernels: nothing compiled"
    for a, b, c in zip(first, second, third):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(b, c)
    jitted = _jitted_cases(dt)[name]   # (jit(lambda v: _call(name, f, v, kw))(x), in one program per dtype)
    tol = 2e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-10
    for a, j in zip(first, jitted):
        assert a.dtype == j.dtype and a.shape == j.shape
        if name in ("eigh", "svd", "qr"):     # vectors are defined up to a sign/phase: compare the values
            continue
        np.testing.assert_allclose(a, j, rtol=tol, atol=tol * max(1.0, float(np.abs(j).max(initial=0))))


SPECIAL_FNAMES = ["inv", "det", "slogdet", "solve", "eigvalsh", "svdvals", "vector_norm", "matrix_norm", "fft"]
SPECIAL_KINDS = ["singular", "nan", "inf", "empty"]


@functools.cache
def _jitted_special(dt):
    """{(fname, kind): jit(f)(*args)} for every special-input case of dtype dt, from one jitted function."""
    keys = [(fname, kind) for fname in SPECIAL_FNAMES for kind in SPECIAL_KINDS]
    fs, argss = zip(*(_special_case(fname, kind, dt) for fname, kind in keys))
    sizes = [len(a) for a in argss]
    flat = [a for args in argss for a in args]

    def every(*flat):
        outs, at = [], 0
        for f, n in zip(fs, sizes):
            outs.append(f(*flat[at:at + n]))
            at += n
        return outs
    with np.errstate(all="ignore"):
        outs = jit(every)(*flat)
    return {key: _leaves(o) for key, o in zip(keys, outs)}


def _special_case(fname, kind, dt):
    f = getattr(xp.fft if fname == "fft" else xp.linalg, fname)
    n = 0 if kind == "empty" else 4
    a = np.arange(1.0, 1.0 + 3 * n * n).reshape(3, n, n).astype(dt)
    if fname == "fft" and not n:
        a = np.ones((3, 0, 4), dt)                   # (an empty batch: a length-0 transform is refused)
    if kind == "singular" and n:
        a[:, :, 1] = 2 * a[:, :, 0]            # rank deficient
    elif kind in ("nan", "inf") and n:
        a[1, 2, 3] = np.nan if kind == "nan" else np.inf
    x = xp.asarray(a)
    return f, ((x, xp.asarray(np.ones((3, n, 2), dt))) if fname == "solve" else (x,))


@needs_host
@pytest.mark.parametrize("dt", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("kind", SPECIAL_KINDS)
@pytest.mark.parametrize("fname", SPECIAL_FNAMES)
def test_first_and_staged_calls_agree_on_special_inputs(fname, kind, dt, fresh):
    f, args = _special_case(fname, kind, dt)
    with np.errstate(all="ignore"):
        runs = [_leaves(f(*args)) for _ in range(U + 2)]   # (unstaged, then staged)
        first, second, third = runs[0], runs[U], runs[U + 1]
        for run in runs[1:U]:
            for a1, a in zip(first, run):
                np.testing.assert_array_equal(a1, a)
    jitted = _jitted_special(dt)[fname, kind]   # (jit(f)(*args), every case of the dtype in one program)
    for a1, a2, a3, j in zip(first, second, third, jitted):
        np.testing.assert_array_equal(a1, a2)
        np.testing.assert_array_equal(a2, a3)
        assert a1.dtype == j.dtype and a1.shape == j.shape
        assert (np.isnan(a1) == np.isnan(j)).all()
        fin = np.isfinite(a1) & np.isfinite(j)
        if kind != "singular":     # (a singular solve's values are rounding noise, on either path)
            assert (np.isinf(a1) == np.isinf(j)).all()
            tol = 2e-4 if np.dtype(dt) == np.float32 else 1e-9
            np.testing.assert_allclose(a1[fin], j[fin], rtol=tol, atol=tol)


BAD = [   # (label, function of the Arrays, the Arrays): under jit the Arrays are traced, as when staged
    ("inv non-square", xp.linalg.inv, [(2, 3)]),
    ("inv 1-d", xp.linalg.inv, [(3,)]),
    ("inv int", xp.linalg.inv, [((2, 2), xp.int64)]),
    ("solve mismatch", xp.linalg.solve, [(3, 3), (4,)]),
    ("solve batch", xp.linalg.solve, [(2, 3, 3), (4, 3, 1)]),
    ("qr mode", lambda x: xp.linalg.qr(x, mode="r"), [(3, 3)]),
    ("vector_norm ord", lambda x: xp.linalg.vector_norm(x, ord="fro"), [(3,)]),
    ("vector_norm -inf empty", lambda x: xp.linalg.vector_norm(x, ord=-np.inf), [(0,)]),
    ("vector_norm axis", lambda x: xp.linalg.vector_norm(x, axis=2), [(2, 3)]),
    ("vector_norm repeated axis", lambda x: xp.linalg.vector_norm(x, axis=(1, -1)), [(2, 3)]),
    ("matrix_norm ord", lambda x: xp.linalg.matrix_norm(x, ord=3), [(2, 3)]),
    ("matrix_power Array n", xp.linalg.matrix_power, [(2, 2), ((), xp.int64)]),   # (n is static)
    ("matrix_power neg int", lambda x: xp.linalg.matrix_power(x, -1), [((2, 2), xp.int64)]),
    ("pinv rtol shape", lambda x, r: xp.linalg.pinv(x, rtol=r), [(2, 3, 3), (3,)]),
    ("fft norm", lambda x: xp.fft.fft(x, norm="nope"), [(4,)]),
    ("fft n", lambda x: xp.fft.fft(x, n=0), [(4,)]),
    ("fft Array n", lambda x, n: xp.fft.fft(x, n=n), [(4,), ((), xp.int64)]),
    ("fft axis", lambda x: xp.fft.fft(x, axis=1), [(4,)]),
    ("fft int", xp.fft.fft, [((4,), xp.int32)]),
    ("rfft complex", xp.fft.rfft, [((4,), xp.complex128)]),
    ("fft 0-d", xp.fft.fft, [()]),
    ("fftn repeated", lambda x: xp.fft.fftn(x, axes=(0, 0)), [(2, 2)]),
    ("rfftn no axes", lambda x: xp.fft.rfftn(x, axes=()), [(2, 2)]),
    ("trace Array offset", lambda x, k: xp.linalg.trace(x, offset=k), [(3, 3), ((), xp.int64)]),
]


def _arrays(specs):
    return [xp.ones(s[0], dtype=s[1]) if s and isinstance(s[0], tuple) else xp.ones(s) for s in specs]


def _error(f, args):
    with pytest.raises(Exception) as info:
        f(*args)
    return info.value


@pytest.mark.parametrize("label,f,specs", BAD, ids=[b[0] for b in BAD])
def test_errors_are_the_same_on_the_first_call_the_staged_calls_and_under_jit(label, f, specs, fresh):
    args = _arrays(specs)
    errs = [_error(f, args) for _ in range(U + 2)]   # (unstaged, then staged)
    assert len({type(e) for e in errs}) == 1 and len({str(e) for e in errs}) == 1, errs
    with pytest.raises(type(errs[0])) as info:
        jit(f, guards=False)(*args)   # (strict: the default jit guards an Array n that eager refuses)
    if type(errs[0]).__name__ != "ConcretizationTypeError":   # (that message names where it was asked)
        assert str(info.value) == str(errs[0])


@needs_host
def test_plain_body_runs_for_the_first_calls_at_a_signature_then_the_staged_one(fresh):
    calls.clear()
    for shape in [(3, 4)] * (U + 2) + [(5,)] * (U + 1) + [(3, 4)]:
        x = np.arange(float(np.prod(shape))).reshape(shape)
        np.testing.assert_allclose(np.asarray(_body(xp.asarray(x))), (x * x).sum(-1) * 2.0, rtol=1e-15)
    _body(xp.asarray(np.ones(5)), k=3.0)        # a new static value: a new signature, plain again
    assert calls == ([((3, 4), False)] * U + [((3, 4), True)] + [((5,), False)] * U + [((5,), True)]
                     + [((5,), False)]), calls


def test_an_array_for_a_static_parameter_is_staged_as_before(fresh):
    """matrix_power's n is static: an Array n takes no plain first call (it would be read there, and is
    refused when traced): the same ConcretizationTypeError on every call."""
    from transforms.core import ConcretizationTypeError
    for _ in range(2):
        with pytest.raises(ConcretizationTypeError):
            xp.linalg.matrix_power(xp.ones((2, 2)), xp.asarray(2))


def test_outputs_are_new_arrays(fresh):
    x = xp.asarray(np.arange(4.0))
    for _ in range(2):
        y = xp.fft.fftshift(x, axes=())
        assert y is not x
        np.testing.assert_array_equal(np.asarray(y), np.arange(4.0))


def test_off_the_host_kernels_the_first_call_stages(monkeypatch, fresh):
    """Host kernels switched off (as on an accelerator): a plain run would compile per primitive and
    shape, so the first call stages and compiles the body as before."""
    from xla import host
    monkeypatch.setattr(host, "MODE", "xla")
    assert not _staged._plain_runs_on_host(())
    assert not _staged._plain_runs_on_host((ShapedArray((3,), np.dtype(np.float64)),))
    calls.clear()
    x = np.arange(6.0).reshape(2, 3)
    out = _body(xp.asarray(x), k=5.0)
    np.testing.assert_allclose(np.asarray(out), (x * x).sum(-1) * 5.0, rtol=1e-15)
    assert calls == [((2, 3), True)], calls     # staged: traced
    s = _stagings()
    np.testing.assert_allclose(np.asarray(xp.linalg.vector_norm(xp.asarray(x))), np.linalg.norm(x))
    assert _stagings() == s + 1


@needs_host
def test_operands_over_the_op_by_op_size_limit_stage_on_the_first_call(monkeypatch, fresh):
    from xla import host_eager
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 8)
    calls.clear()
    _body(xp.asarray(np.ones((3, 4))), k=7.0)
    _body(xp.asarray(np.ones((2, 2))), k=7.0)
    assert calls == [((3, 4), True), ((2, 2), False)], calls


def test_whether_a_signature_runs_on_host_kernels_is_asked_once(monkeypatch, fresh):
    """How a signature runs is a static fact of its avals (issue 23: decided once, then kept): compiled asks
    _plain_runs_on_host at a signature's first call only, bucketed at a bucket's first call only."""
    asked = []
    real = _staged._plain_runs_on_host
    monkeypatch.setattr(_staged, "_plain_runs_on_host", lambda avals: asked.append(avals) or real(avals))
    x = np.arange(12.0).reshape(3, 4)
    for _ in range(U + 4):
        np.testing.assert_allclose(np.asarray(_body(xp.asarray(x))), (x * x).sum(-1) * 2.0, rtol=1e-15)
    assert len(asked) == 1, asked
    asked.clear()
    monkeypatch.setattr(_staged, "_SEEN", set())   # (buckets met afresh: earlier tests met this one)
    a = xp.asarray(np.linspace(0.1, 0.9, 5))
    first = np.asarray(xp.special.betainc(2.0, 3.0, a))
    for _ in range(4):
        np.testing.assert_array_equal(np.asarray(xp.special.betainc(2.0, 3.0, a)), first)
    assert len([av for av in asked if av and av[0].shape == (8,)]) == 1, asked   # (the bucket of 8, once)


@needs_host
def test_the_plain_first_rule_is_the_backends_way_for_a_body_holding_a_loop(monkeypatch):
    """_plain_runs_on_host asks the backend's policy for no particular body (xla/host_eager.eager_way(None, avals)):
    its answer is the way of a real staged body holding a loop at those avals, on either side of the loop limit."""
    from transforms.control_flow import while_raw
    from transforms.jaxpr_transforms import stage
    from xla import host_eager
    monkeypatch.setattr(host_eager, "LOOP_MAX_ELEMENTS", 12)
    monkeypatch.setattr(host_eager, "BY_OP_MAX_ELEMENTS", 30)   # (and below both limits, between, above both)
    for n, dt in ((12, np.float64), (13, np.float64), (6, np.float32), (40, np.complex64), (20, np.int8)):
        avals = (ShapedArray((n,), np.dtype(dt)),)
        body = stage(lambda a: while_raw(lambda v: np.False_, lambda v: [v], [a]), [ShapedArray((), np.dtype(dt))])
        way = host_eager.eager_way(body, avals)
        assert way == ("host" if n <= 12 else "compile"), (n, dt, way)
        assert _staged._plain_runs_on_host(avals) == (way == "host"), (n, dt, way)
