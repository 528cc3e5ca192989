"""xla/host_composites.py: the first eager call of an xp.linalg / xp.fft composite at a new signature runs
the composite directly on host kernels (no bind per primitive). It must be taken (not silently declined),
equal the plain body run op by op bit for bit (the same kernels on the same values), equal jit and NumPy
within tolerance, and decline -- the plain body then runs -- for inputs off its path."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _staged
from transforms import jit
from transforms.jaxpr_transforms import host_composites


def _host_kernels_on():
    from xla import host, runtime
    return host.MODE != "xla" and runtime._kernels_on()


pytestmark = pytest.mark.skipif(not _host_kernels_on(), reason="host kernels switched off: no direct forms")


@pytest.fixture
def counted(monkeypatch, fresh_op_budgets):
    """Counts, per composite, the direct calls and the ones that returned outputs."""
    _staged.forget_signatures()
    log = {}
    for name, fn in list(host_composites.items()):
        def spy(*a, _fn=fn, _name=name, **k):
            out = _fn(*a, **k)
            log.setdefault(_name, []).append(out is not None)
            return out
        monkeypatch.setitem(host_composites, name, spy)
    yield log
    _staged.forget_signatures()


def _spd(rng, shape, dtype):
    n = shape[-1]
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return (a @ np.swapaxes(a.conj(), -1, -2) + n * np.eye(n)).astype(dtype)


def _gen(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        a = a + 1j * rng.standard_normal(shape)
    return a.astype(dtype)


def _sym_np(a):
    return (a + np.swapaxes(a.conj(), -1, -2)) * 0.5


# (composite name, function of the Arrays, makers, NumPy oracle or None, vectors defined up to sign/phase)
CASES = [
    ("linalg.inv", xp.linalg.inv, [_spd], np.linalg.inv, False),
    ("linalg.det", xp.linalg.det, [_gen], np.linalg.det, False),
    ("linalg.slogdet", xp.linalg.slogdet, [_gen], np.linalg.slogdet, False),
    ("linalg.slogdet", xp.linalg.slogdet, [_spd], np.linalg.slogdet, False),
    ("linalg.solve", xp.linalg.solve, [_spd, _gen], np.linalg.solve, False),
    ("linalg.cholesky", xp.linalg.cholesky, [_spd], lambda a: np.linalg.cholesky(_sym_np(a)), False),
    ("linalg.cholesky", lambda x: xp.linalg.cholesky(x, upper=True), [_spd],
     lambda a: np.swapaxes(np.linalg.cholesky(_sym_np(a)).conj(), -1, -2), False),
    ("linalg.eigh", xp.linalg.eigh, [_spd], lambda a: np.linalg.eigh(_sym_np(a)), True),
    ("linalg.eigvalsh", xp.linalg.eigvalsh, [_spd], lambda a: np.linalg.eigvalsh(_sym_np(a)), False),
    ("linalg.svd", xp.linalg.svd, [_gen], np.linalg.svd, True),
    ("linalg.svd", lambda x: xp.linalg.svd(x, full_matrices=False), [_gen],
     lambda a: np.linalg.svd(a, full_matrices=False), True),
    ("linalg.svdvals", xp.linalg.svdvals, [_gen], lambda a: np.linalg.svd(a, compute_uv=False), False),
    ("linalg.qr", xp.linalg.qr, [_gen], np.linalg.qr, True),
    ("linalg.qr", lambda x: xp.linalg.qr(x, mode="complete"), [_gen], lambda a: np.linalg.qr(a, "complete"), True),
    ("linalg.vector_norm", xp.linalg.vector_norm, [_gen], lambda a: np.linalg.norm(a.ravel()), False),
    ("linalg.vector_norm", lambda x: xp.linalg.vector_norm(x, axis=-1, keepdims=True, ord=2.0), [_gen],
     lambda a: np.linalg.norm(a, axis=-1, keepdims=True), False),
    ("linalg.vector_norm", lambda x: xp.linalg.vector_norm(x, axis=(1, 0)), [_gen],
     lambda a: np.sqrt((np.abs(a) ** 2).sum(axis=(0, 1))), False),
    ("linalg.matrix_norm", xp.linalg.matrix_norm, [_gen], lambda a: np.linalg.norm(a, axis=(-2, -1)), False),
    ("linalg.matrix_norm", lambda x: xp.linalg.matrix_norm(x, keepdims=True), [_gen],
     lambda a: np.linalg.norm(a, axis=(-2, -1), keepdims=True), False),
    ("fft.fft", xp.fft.fft, [_gen], np.fft.fft, False),
    ("fft.fft", lambda x: xp.fft.fft(x, n=7, axis=0, norm="ortho"), [_gen],
     lambda a: np.fft.fft(a, n=7, axis=0, norm="ortho"), False),
    ("fft.fft", lambda x: xp.fft.fft(x, n=3, axis=1, norm="forward"), [_gen],
     lambda a: np.fft.fft(a, n=3, axis=1, norm="forward"), False),
    ("fft.ifft", xp.fft.ifft, [_gen], np.fft.ifft, False),
    ("fft.ifft", lambda x: xp.fft.ifft(x, n=9, axis=-2, norm="ortho"), [_gen],
     lambda a: np.fft.ifft(a, n=9, axis=-2, norm="ortho"), False),
    ("fft.rfft", xp.fft.rfft, [_gen], np.fft.rfft, False),
    ("fft.fftn", xp.fft.fftn, [_gen], np.fft.fftn, False),
    ("fft.fftn", lambda x: xp.fft.fftn(x, norm="ortho"), [_gen], lambda a: np.fft.fftn(a, norm="ortho"), False),
    ("fft.ifftn", xp.fft.ifftn, [_gen], np.fft.ifftn, False),
    ("fft.ifftn", lambda x: xp.fft.ifftn(x, norm="forward"), [_gen], lambda a: np.fft.ifftn(a, norm="forward"), False),
    ("fft.rfftn", xp.fft.rfftn, [_gen], np.fft.rfftn, False),
    ("fft.rfftn", lambda x: xp.fft.rfftn(x, norm="ortho"), [_gen], lambda a: np.fft.rfftn(a, norm="ortho"), False),
    ("fft.fftshift", xp.fft.fftshift, [_gen], np.fft.fftshift, False),
    ("fft.fftshift", lambda x: xp.fft.fftshift(x, axes=(0, -1)), [_gen],
     lambda a: np.fft.fftshift(a, axes=(0, -1)), False),
    ("fft.ifftshift", xp.fft.ifftshift, [_gen], np.fft.ifftshift, False),
    ("fft.ifftshift", lambda x: xp.fft.ifftshift(x, axes=1), [_gen], lambda a: np.fft.ifftshift(a, axes=1), False),
    ("fft.ifftshift", lambda x: xp.fft.ifftshift(x, axes=(1, 1)), [_gen],
     lambda a: np.roll(a, -2 * (a.shape[1] // 2), axis=1), False),
    ("fft.irfft", xp.fft.irfft, [_gen], np.fft.irfft, False),
    ("fft.irfft", lambda x: xp.fft.irfft(x, n=10, axis=0, norm="ortho"), [_gen],
     lambda a: np.fft.irfft(a, n=10, axis=0, norm="ortho"), False),
    ("fft.rfft", lambda x: xp.fft.rfft(x, n=8, axis=0, norm="forward"), [_gen],
     lambda a: np.fft.rfft(a, n=8, axis=0, norm="forward"), False),
]
SHAPES = [(4, 4), (3, 5, 5), (2, 1, 3, 3)]


def _leaves(out):
    return [np.asarray(o) for o in (out if isinstance(out, tuple) else (out,))]


def _params():
    for i, (name, f, makers, ref, vecs) in enumerate(CASES):
        for dt in (np.float64, np.float32, np.complex128, np.complex64):
            if name in ("fft.rfft", "fft.rfftn") and np.dtype(dt).kind == "c":
                continue
            for shape in SHAPES:
                yield pytest.param(name, f, makers, ref, vecs, dt, shape, id=f"{i}-{name}-{np.dtype(dt).name}-{shape}")


@pytest.mark.parametrize("name,f,makers,ref,vecs,dt,shape", list(_params()))
def test_direct_first_call_equals_the_plain_body_bit_for_bit_jit_and_numpy(name, f, makers, ref, vecs, dt, shape,
                                                                          counted):
    rng = np.random.default_rng(len(name) + len(shape))
    arrs = [m(rng, shape, dt) for m in makers]
    xs = [xp.asarray(a) for a in arrs]
    first = _leaves(f(*xs))
    assert counted.get(name) == [True], "the first call ran the direct form"
    with _staged_off():
        plain = _leaves(f(*xs))                      # the plain body, bound primitive by primitive
    assert counted[name] == [True], "(the plain run did not use it)"
    for a, p in zip(first, plain):
        assert a.dtype == p.dtype and a.shape == p.shape
        np.testing.assert_array_equal(a, p)
    jitted = _leaves(jit(f)(*xs))
    tol = 1e-4 if np.dtype(dt) in (np.float32, np.complex64) else 1e-10
    for a, j in zip(first, jitted):
        assert a.dtype == j.dtype and a.shape == j.shape
    want = ref(*arrs)
    want = [np.asarray(w) for w in (want if isinstance(want, tuple) else (want,))]
    if vecs:                  # vectors are defined up to a sign/phase: the values, and the factorisation
        if name == "linalg.eigh":
            first, jitted, want = first[:1], jitted[:1], want[:1]
        elif name == "linalg.svd":
            u, s, vh = first
            k = s.shape[-1]
            np.testing.assert_allclose((u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], arrs[0],
                                       rtol=tol * 10, atol=tol * 10 * max(1, np.abs(arrs[0]).max()))
            first, jitted, want = first[1:2], jitted[1:2], want[1:2]
        else:                 # qr: Q R == A, R upper
            q, r = first
            np.testing.assert_allclose(q @ r, arrs[0], rtol=tol * 10, atol=tol * 10 * max(1, np.abs(arrs[0]).max()))
            assert (np.tril(r, -1) == 0).all()
            return
    for a, j, w in zip(first, jitted, want):
        scale = max(1.0, float(np.abs(w).max(initial=0)))
        np.testing.assert_allclose(a, j, rtol=tol, atol=tol * scale)
        np.testing.assert_allclose(a, w, rtol=tol * 10, atol=tol * 10 * scale)


class _staged_off:
    """Every call runs the plain body (as a first call does), the direct forms switched off."""

    def __enter__(self):
        self.saved = dict(host_composites)
        host_composites.clear()
        _staged.forget_signatures()

    def __exit__(self, *exc):
        host_composites.update(self.saved)
        _staged.forget_signatures()


@pytest.mark.parametrize("label,call,arrays", [
    ("inv singular", xp.linalg.inv, [np.array([[1.0, 2.0], [2.0, 4.0]])]),
    ("inv nan", xp.linalg.inv, [np.array([[1.0, np.nan], [0.0, 1.0]])]),
    ("det inf", xp.linalg.det, [np.array([[np.inf, 0.0], [0.0, 1.0]])]),
    ("det empty", xp.linalg.det, [np.zeros((3, 0, 0))]),
    ("slogdet nan", xp.linalg.slogdet, [np.array([[np.nan, 0.0], [0.0, 1.0]])]),
    ("slogdet empty", xp.linalg.slogdet, [np.zeros((0, 0))]),
    ("eigh nan", xp.linalg.eigh, [np.array([[[1.0, 0.0], [0.0, 1.0]], [[np.nan, 0.0], [0.0, 1.0]]])]),
    ("svd inf", xp.linalg.svdvals, [np.array([[np.inf, 0.0], [0.0, 1.0]])]),
    ("solve broadcast", xp.linalg.solve, [np.eye(3)[None].repeat(2, 0) * 2.0, np.ones((1, 3, 2))]),
    ("solve dtypes", xp.linalg.solve, [np.eye(3), np.ones(3, np.float32)]),
    ("int inv", xp.linalg.inv, [np.eye(2, dtype=np.int64)]),
    ("fft int", xp.fft.fft, [np.arange(4)]),
    ("rfft complex", xp.fft.rfft, [np.ones(4, np.complex128)]),
    ("fft n=0", lambda x: xp.fft.fft(x, n=0), [np.ones(4)]),
    ("fft bad norm", lambda x: xp.fft.fft(x, norm="nope"), [np.ones(4)]),
    ("fft axis", lambda x: xp.fft.fft(x, axis=3), [np.ones(4)]),
    ("qr mode r", lambda x: xp.linalg.qr(x, mode="r"), [np.eye(3)]),
    ("vector_norm ord 3", lambda x: xp.linalg.vector_norm(x, ord=3), [np.ones(4)]),
    ("vector_norm ord inf", lambda x: xp.linalg.vector_norm(x, ord=np.inf), [np.ones(4)]),
    ("vector_norm ord True", lambda x: xp.linalg.vector_norm(x, ord=True), [np.ones(4)]),
    ("vector_norm repeated axis", lambda x: xp.linalg.vector_norm(x, axis=(1, -1)), [np.ones((2, 3))]),
    ("vector_norm axis out of range", lambda x: xp.linalg.vector_norm(x, axis=2), [np.ones((2, 3))]),
    ("vector_norm int", xp.linalg.vector_norm, [np.arange(3)]),
    ("matrix_norm nuc", lambda x: xp.linalg.matrix_norm(x, ord="nuc"), [np.eye(3)]),
    ("matrix_norm 1-d", xp.linalg.matrix_norm, [np.ones(3)]),
    ("irfft n=0", lambda x: xp.fft.irfft(x, n=0), [np.ones(4)]),
    ("irfft 1 point", xp.fft.irfft, [np.ones(1)]),
    ("fftshift 0-d", xp.fft.fftshift, [np.float64(1.0)]),
    ("fftn axes", lambda x: xp.fft.fftn(x, axes=(0,)), [np.ones((2, 3))]),
    ("fftn s", lambda x: xp.fft.fftn(x, s=(4, 4)), [np.ones((2, 3))]),
    ("fftn empty", xp.fft.fftn, [np.ones((2, 0))]),
    ("rfftn complex", xp.fft.rfftn, [np.ones((2, 3), np.complex64)]),
    ("fftshift no axes", lambda x: xp.fft.fftshift(x, axes=()), [np.ones(3)]),
    ("fftshift axis out of range", lambda x: xp.fft.fftshift(x, axes=1), [np.ones(3)]),
    ("fftshift float axis", lambda x: xp.fft.fftshift(x, axes=0.0), [np.ones(3)]),
])
def test_declined_inputs_run_the_plain_body(label, call, arrays, counted):
    xs = [xp.asarray(a) for a in arrays]
    with np.errstate(all="ignore"):
        try:
            got = _leaves(call(*xs))
        except Exception as e:           # the plain body's error, raised as under jit
            with pytest.raises(type(e)):
                jit(call)(*xs)
            got = None
        if got is not None:
            want = _leaves(jit(call)(*xs))
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.shape == w.shape
                assert (np.isnan(g) == np.isnan(w)).all()
    assert all(not ok for calls in counted.values() for ok in calls), "declined: the plain body ran"


@pytest.mark.parametrize("dt", [np.int32, np.int64, np.bool_, np.uint8, np.float16])
@pytest.mark.parametrize("shift", ["fftshift", "ifftshift"])
def test_shifts_of_any_dtype(shift, dt, counted):
    a = (np.arange(30).reshape(5, 6) % 3).astype(dt)
    got = getattr(xp.fft, shift)(xp.asarray(a))
    assert counted[f"fft.{shift}"] == [True]
    want = getattr(np.fft, shift)(a)
    assert np.asarray(got).dtype == want.dtype
    np.testing.assert_array_equal(np.asarray(got), want)
    np.testing.assert_array_equal(np.asarray(jit(getattr(xp.fft, shift))(xp.asarray(a))), want)


@pytest.mark.parametrize("dt", [np.float64, np.float32, np.complex64, np.int32, np.int64, np.uint8, np.int8])
@pytest.mark.parametrize("m,n", [(3, 4), (1, 5), (0, 3)])
def test_outer(dt, m, n, counted):
    rng = np.random.default_rng(m * 10 + n)
    a = (rng.standard_normal(m) * 100).astype(dt)
    b = (rng.standard_normal(n) * 100).astype(dt)
    with np.errstate(all="ignore"):
        got = np.asarray(xp.linalg.outer(xp.asarray(a), xp.asarray(b)))
        want = np.outer(a, b)
    assert counted["linalg.outer"] == [True]
    with _staged_off():
        plain = np.asarray(xp.linalg.outer(xp.asarray(a), xp.asarray(b)))
    assert got.dtype == want.dtype == plain.dtype
    np.testing.assert_array_equal(got, plain)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, np.asarray(jit(xp.linalg.outer)(xp.asarray(a), xp.asarray(b))))


def test_outer_declines_mixed_dtypes_and_bool(counted):
    a = xp.asarray(np.arange(3.0))
    got = xp.linalg.outer(a, xp.asarray(np.arange(2, dtype=np.float32)))
    assert got.dtype == xp.float64
    np.testing.assert_array_equal(np.asarray(got), np.outer(np.arange(3.0), np.arange(2.0)))
    with pytest.raises(TypeError):
        xp.linalg.outer(xp.asarray([True]), xp.asarray([False]))
    with pytest.raises(ValueError):
        xp.linalg.outer(xp.asarray(np.ones((2, 2))), a)
    assert counted["linalg.outer"] == [False, False, False]


@pytest.mark.parametrize("call", [
    lambda: xp.fft.fft(xp.ones(3), n=10 ** 12),
    lambda: xp.fft.irfft(xp.ones(3, dtype=xp.complex128), n=10 ** 12),
    lambda: xp.linalg.svd(xp.ones((3 * 10 ** 6, 1))),
    lambda: xp.linalg.qr(xp.ones((3 * 10 ** 6, 1)), mode="complete"),
    lambda: xp.linalg.outer(xp.ones(10 ** 6), xp.ones(10 ** 6)),
])
def test_outputs_past_the_size_limit_are_left_to_the_plain_body(call, counted):
    """(whose shape rules raise a typed MemoryError naming the shape and bytes, before allocating)"""
    with pytest.raises(MemoryError, match="shape.*bytes|bytes.*shape"):
        call()
    assert all(not ok for calls in counted.values() for ok in calls)


def test_weak_scalars_and_python_values_are_not_taken_directly(counted):
    x = xp.asarray(np.eye(3))
    y = xp.linalg.solve(x, xp.asarray([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(np.asarray(y), [1.0, 2.0, 3.0])
    assert counted["linalg.solve"] == [True]
    with pytest.raises(TypeError):
        xp.fft.fft(xp.asarray(np.ones(4)), n=xp.asarray(4))     # (n is static: an Array n is refused)
