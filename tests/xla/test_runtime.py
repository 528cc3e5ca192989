"""The XLA runtime: host round trips for every dtype, the eager executable cache (bounded: LRU), async
results, flat memory (RSS over many shapes, live arrays over many jit/grad/vmap calls)."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _dtypes as D
from xla import runtime


@pytest.mark.parametrize("dtype", D.ALL, ids=[d.name for d in D.ALL])
def test_device_round_trip_every_dtype(dtype):
    host = (np.arange(6) % 3).astype(dtype).reshape(2, 3)
    a = xp.asarray(host)
    assert a.dtype == dtype
    back = np.asarray(a)
    assert back.dtype == dtype and np.array_equal(back, host)


def test_eager_executables_are_cached_by_signature():
    # the XLA path of a primitive (what runs where it has no host kernel, and on accelerators): a cached
    # single-op executable per signature
    from transforms.primitives import elementwise as E
    impl = runtime._make_impl(E.erf_p)
    erf = lambda a: impl(a._v)  # noqa: E731
    x, z, y = xp.ones(7), xp.zeros(7), xp.ones(8)
    before = len(runtime._exe_cache)
    erf(x)
    after_first = len(runtime._exe_cache)
    erf(x)
    erf(z)
    assert len(runtime._exe_cache) == after_first == before + 1
    erf(y)
    assert len(runtime._exe_cache) == after_first + 1


def test_host_data_is_copied_not_aliased():
    host = np.zeros(64)
    a = xp.asarray(host)
    host[:] = 1.0
    assert float(xp.sum(a)) == 0.0


def test_python_scalar_constants_are_cached():
    from transforms.primitives.elementwise import convert_element_type
    b1 = convert_element_type(2.5, np.dtype(np.float32), weak_type=True)
    b2 = convert_element_type(2.5, np.dtype(np.float32), weak_type=True)
    assert b1 is b2 and b1.aval.weak_type and b1.aval.dtype == np.float32


def test_compiled_jaxpr_cost_analysis():
    from transforms import jit
    compiled = jit(lambda a, b: a @ b).lower(xp.ones((8, 8)), xp.ones((8, 8))).compile()
    assert compiled.cost_analysis()["flops"] >= 2 * 8 * 8 * 8 - 64


# ------------------------------------------------------------------ bounded caches, no leaks
import gc  # noqa: E402
import os  # noqa: E402

from scipy import special as sps  # noqa: E402

from transforms import caches, grad, jit, vmap  # noqa: E402
from xla import _jaxlib  # noqa: E402


@pytest.fixture
def restore_cache_sizes():
    saved = caches.cache_sizes()
    yield
    for kind, n in saved.items():
        if caches.cache_size(kind) != n:
            caches.set_cache_size(kind, n)


def _erf(n):
    """erf on n elements on the XLA path (what runs without a host kernel): a cached single-op executable."""
    from transforms.primitives import elementwise as E
    x = np.linspace(-2.0, 2.0, n)
    got = np.asarray(runtime._make_impl(E.erf_p)(xp.asarray(x)._v))
    np.testing.assert_allclose(got, sps.erf(x), rtol=1e-13, atol=1e-15)


def test_eager_cache_evicts_least_recently_used_and_recompiles_on_return(restore_cache_sizes):
    caches.set_cache_size("eager", 3)
    assert len(runtime._exe_cache) <= 3 and runtime._exe_cache.maxsize == 3
    for n in (101, 102, 103):
        _erf(n)
    compiles = runtime.compile_calls[0]
    _erf(101)                              # a hit: now the most recent; 102 is the least
    assert runtime.compile_calls[0] == compiles
    _erf(104)                              # evicts 102
    _erf(101), _erf(103)
    assert runtime.compile_calls[0] == compiles + 1 and len(runtime._exe_cache) == 3
    _erf(102)                              # evicted: compiled again, same values
    assert runtime.compile_calls[0] == compiles + 2
    assert [k[2].shape for k in runtime._exe_cache] == [(101,), (103,), (102,)]


def _rss_mib():
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


@pytest.mark.slow
def test_rss_stays_flat_over_200_distinct_shapes_once_the_caches_are_full(restore_cache_sizes, monkeypatch):
    # (an executable costs ~190 KiB of RSS here: unbounded, the 150 shapes measured would add ~28 MiB; bounded
    # at 8, the caches are full from shape 16 on and RSS drifts < 2 MiB over those 150)
    monkeypatch.setenv("ARRAY_NAMESPACE_CACHE", "0")   # compile for real, never load from disk
    cap = 8
    for kind in ("eager", "jit", "jit_dispatch"):
        caches.set_cache_size(kind, cap)
    f = jit(lambda a: xp.sin(a) * 2.0 + 1.0)
    exes_before = len(_jaxlib.client().live_executables())   # (what earlier tests keep alive in their caches)
    rss = {}
    for n in range(1, 201):                # odd n: eager erf; even n: a jitted function
        if n % 2:
            _erf(n)
        else:
            np.testing.assert_allclose(np.asarray(f(xp.ones(n))), np.full(n, np.sin(1.0) * 2 + 1), rtol=1e-14)
        if n % 50 == 0:
            gc.collect()
            rss[n] = _rss_mib()
    assert len(runtime._exe_cache) == cap and len(f._jitted._cache) == cap
    assert _jaxlib._pjit_cache.size() <= cap
    assert len(_jaxlib.client().live_executables()) - exes_before < 4 * cap + 100   # unbounded: ~200
    grown = rss[200] - rss[50]             # (both caches full long before shape 50)
    assert grown < 7.5, rss                # MiB over 150 more shapes (~28 MiB unbounded)


def test_no_live_array_growth_over_jit_grad_and_vmap_calls():
    # eager ops alone: test_host_kernels_programs.py::test_no_buffer_or_host_value_leaks_over_100k_eager_ops
    f = lambda v: xp.sum(xp.sin(v) * v)  # noqa: E731
    g, vf = grad(f), vmap(lambda v: xp.sin(v) * 2.0)
    jf, jg, jv = jit(lambda v: v * 0.5 + 0.25), jit(grad(f)), jit(vmap(lambda v: xp.sin(v) * 2.0))
    x = xp.asarray(np.linspace(0, 1, 8))
    m = xp.reshape(x, (2, 4))
    for _ in range(3):
        x, y, z, w, u = jf(x), jg(x), jv(m), g(x), vf(m)
    gc.collect()
    live = len(_jaxlib.client().live_arrays())
    for i in range(20_000):                # 2 x 10^4 each of jit, jit(grad), jit(vmap) calls (a leak of one
        x = jf(x)                          # array in 10^4 calls would show; the suite's time is kept for others)
        y = jg(x)
        z = jv(m)
        if i % 20 == 0:                    # 1000 each of eager grad and vmap calls
            w, u = g(x), vf(m)
    gc.collect()
    assert len(_jaxlib.client().live_arrays()) <= live + 2
    xs = np.asarray(x)
    np.testing.assert_allclose(np.asarray(y), np.sin(xs) + xs * np.cos(xs), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(w), np.sin(xs) + xs * np.cos(xs), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(z), np.sin(np.asarray(m)) * 2, rtol=1e-14)


# ------------------------------------------------------------------ eager scalars and the host fast path

@pytest.mark.parametrize("dt", [np.float64, np.float32])
def test_signed_zero_and_nan_scalars_keep_their_values(dt):
    x = xp.asarray(np.array([1.0, -2.0], dt))
    for _ in range(2):   # (the second round reads the scalar caches)
        for s in (0.0, -0.0, 0.0):
            got = np.asarray(x * s)
            np.testing.assert_array_equal(np.signbit(got), np.signbit(np.array([1.0, -2.0], dt) * s))
            assert got.dtype == dt
        assert np.isnan(np.asarray(x + float("nan"))).all()
    z = xp.asarray(np.array([1 + 1j]))
    for s in (complex(0.0, 0.0), complex(-0.0, 0.0), complex(0.0, -0.0), complex(-0.0, -0.0)):
        got, want = np.asarray(z - s), np.array([1 + 1j]) - s
        np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
        np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


def test_numpy_scalars_convert_through_the_cache_with_their_signs_types_and_range_checks():
    """NumPy scalars (the literals staging folds) share the Python scalars' conversion cache: a signed zero,
    a NaN, the source type and an out-of-range integer each keep their own result."""
    conv = lambda v, dt, weak=False: np.asarray(runtime.to_numpy(   # noqa: E731
        runtime._convert_impl(v, new_dtype=np.dtype(dt), weak_type=weak)))
    for _ in range(2):   # (the second round reads the cache)
        for v in (np.float64(0.0), np.float64(-0.0), np.float32(-0.0), np.float64(0.0)):
            got = conv(v, np.float32)
            assert got.dtype == np.float32 and np.signbit(got) == np.signbit(v)
        assert np.isnan(conv(np.float64("nan"), np.float32))
        assert conv(np.int64(7), np.float64) == 7.0 and conv(np.float64(7.5), np.float64) == 7.5
        z = conv(np.complex128(complex(-0.0, 0.0)), np.complex64)
        assert np.signbit(z.real) and not np.signbit(z.imag)
        assert conv(np.int64(300), np.int16) == 300 and conv(np.int16(300), np.int64) == 300
        with pytest.raises(OverflowError, match="out of bounds for int8"):
            conv(np.int64(300), np.int8)


def test_a_donated_cached_scalar_is_made_anew():
    from array_namespace._helpers import weak_scalar, wrap
    from transforms import jit
    f64 = np.dtype(np.float64)
    v = weak_scalar(2.75, f64)
    assert weak_scalar(2.75, f64) is v   # eagerly reused
    jit(lambda t: t * 2, donate_argnums=0)(wrap(v))
    assert v.is_deleted()
    w = weak_scalar(2.75, f64)
    assert w is not v and not w.is_deleted()
    np.testing.assert_array_equal(np.asarray(xp.asarray([1.0]) + 2.75), [3.75])
    u = runtime._convert_impl(2.75, new_dtype=f64, weak_type=True)
    assert not u.is_deleted() and float(np.asarray(runtime.to_numpy(u))) == 2.75


@pytest.mark.parametrize("dt", [np.float32, np.float64, np.int32, np.bool_])
def test_host_results_have_exactly_the_abstract_aval(dt):
    from xla.host import HostValue
    a = xp.asarray(np.arange(6).reshape(2, 3).astype(dt))
    for out in (xp.sum(a), xp.max(a), xp.sum(a, axis=0), a == a, xp.reshape(a, (3, 2))):
        v = out._v
        if not runtime._kernels_on():
            continue
        assert type(v) is HostValue and type(v.np) is np.ndarray
        assert v.np.dtype == v.aval.dtype and v.np.shape == v.aval.shape


def test_host_impl_falls_back_for_scalars_and_declined_dtypes():
    from transforms.core import bind
    from transforms.primitives import elementwise as E
    x = xp.asarray(np.array([0.5, 2.0]))
    np.testing.assert_allclose(np.asarray(bind(E.add_p, x._v, 1.5)), [2.0, 3.5])   # a Python scalar operand
    z = xp.asarray(np.array([1 + 2j]))
    np.testing.assert_allclose(np.asarray(xp.log(z)), np.log(np.array([1 + 2j])))  # declined on host: XLA


# ------------------------------------------------------------------ HostImpl: the common eager call in C
from transforms.core import ShapedArray, impl_rules  # noqa: E402
from xla import host  # noqa: E402

_needs_c = pytest.mark.skipif(host.MODE != "host" or host.HostImpl is None,
                              reason="host kernels off, or NumPy's error state is no context variable: Python runs")


def _python_impl(prim):
    """The impl's Python path alone (what HostImpl runs for every case it does not cover)."""
    c, host.HostImpl = host.HostImpl, None
    try:
        return runtime._make_host_impl(prim, host.host_kernels[prim], runtime._make_impl(prim))
    finally:
        host.HostImpl = c


@_needs_c
@pytest.mark.parametrize("dt", [np.float32, np.float64, np.complex128, np.int64, np.int32, np.uint8, np.bool_])
def test_host_impl_equals_the_general_path_bit_for_bit(dt):
    """Each primitive through the C call gives the bits, dtype, shape and aval of the impl's Python path (and of
    NumPy), on a first and a repeat call, for one operand, two, an operand broadcast, and params."""
    from transforms.core import bind
    from transforms.primitives import elementwise as E
    from transforms.primitives import reductions as R
    rng = np.random.default_rng(3)
    x_np, y_np = [(rng.standard_normal((3, 4)) * 50).astype(dt) for _ in range(2)]
    x, y, r = xp.asarray(x_np)._v, xp.asarray(y_np)._v, xp.asarray(y_np[:1])._v
    cases = [(E.add_p, (x, y), {}), (E.mul_p, (x, r), {}), (E.eq_p, (x, y), {}),
             (R.reduce_sum_p, (x,), {"axes": (0,)}), (R.reduce_sum_p, (x,), {"axes": (1,)}),
             (R.reduce_sum_p, (x,), {"axes": (0, 1)}), (E.max_p, (x, y), {})]
    if np.dtype(dt).kind != "b":
        cases.append((E.neg_p, (x,), {}))
    if np.dtype(dt).kind in "fc":
        cases.append((E.exp_p, (x,), {}))
    for prim, args, params in cases:
        try:
            want = _python_impl(prim)(*args, **params)
        except TypeError:   # (a dtype the primitive refuses)
            continue
        want_np = np.asarray(want)
        assert want_np.tobytes() == np.asarray(bind(prim, *args, **params)).tobytes()
        impl = impl_rules[prim]
        assert type(impl) is host.HostImpl
        for _ in range(2):
            got = impl(*args, **params)
            assert type(got) is type(want) and got.aval == want.aval   # (a declined kernel: both XLA's)
            got_np = np.asarray(got)
            assert got_np.dtype == want_np.dtype and got_np.shape == want_np.shape
            assert got_np.tobytes() == want_np.tobytes()
    np.testing.assert_array_equal(np.asarray(impl_rules[E.add_p](x, y)), x_np + y_np)


@_needs_c
def test_host_impl_keys_a_signature_by_its_params_and_avals():
    """One operand with other params, or another operand of equal aval, is recognised as its own signature."""
    from transforms.primitives import reductions as R
    s = impl_rules[R.reduce_sum_p]
    a_np = np.arange(12.0).reshape(3, 4)
    a = xp.asarray(a_np)._v
    for _ in range(3):
        for axes in ((0,), (1,), (0, 1)):
            np.testing.assert_array_equal(np.asarray(s(a, axes=axes)), a_np.sum(axis=axes))
    b = xp.asarray(a_np[::-1].copy())._v
    np.testing.assert_array_equal(np.asarray(s(b, axes=(0,))), a_np[::-1].sum(axis=0))
    for k in range(300):   # (more signatures than the table holds: each still right)
        v = xp.asarray(np.full((k + 1,), 2.0))._v
        assert float(np.asarray(s(v, axes=(0,)))) == 2.0 * (k + 1)


@_needs_c
def test_host_impl_hands_every_other_case_to_the_python_path():
    from transforms import jit
    from transforms.core import bind
    from transforms.primitives import elementwise as E
    from transforms.primitives import reductions as R
    x = xp.asarray(np.array([0.5, 2.0]))
    np.testing.assert_allclose(np.asarray(bind(E.add_p, x._v, 1.5)), [2.0, 3.5])   # a Python scalar operand
    z = xp.asarray(np.array([1 + 2j]))
    for _ in range(2):   # (declined on host: XLA, on a repeat call as well)
        np.testing.assert_allclose(np.asarray(xp.log(z)), np.log(np.array([1 + 2j])))
    s = xp.asarray(np.array([1.0, 2.0]))._v
    for _ in range(2):   # a 0-d result (NumPy gives a scalar): boxed as a 0-d value
        out = impl_rules[R.reduce_sum_p](s, axes=(0,))
        assert type(out) is host.HostValue and type(out.np) is np.ndarray and out.np.shape == () and out.np == 3.0
    with np.errstate(all="raise"):   # kernels run quiet: the caller's error state is not theirs, and is kept
        zero = xp.asarray(np.array([0.0, 1.0]))
        for _ in range(2):
            assert np.asarray(xp.log(zero))[0] == -np.inf
        with pytest.raises(FloatingPointError):
            np.log(np.float64(0.0))
    w = xp.asarray(np.eye(3))
    for _ in range(2):
        w + w
    jit(lambda t: t * 2.0, donate_argnums=0)(w)
    with pytest.raises(RuntimeError, match="donated"):   # (a value with a deleted buffer: the Python path raises)
        w + w


@_needs_c
def test_host_impl_takes_a_value_whose_live_buffer_a_jit_call_made():
    """An array passed to a (non-donating) jitted function keeps its device buffer for the next jit call; eager
    primitives on it stay on the C call (its buffer asked is_deleted()), with the bits they had before."""
    from transforms import jit
    from transforms.primitives import elementwise as E
    from transforms.primitives import reductions as R
    x_np = np.random.default_rng(5).standard_normal((4, 5))
    x = xp.asarray(x_np)
    cases = [(E.add_p, lambda v: (v, v), {}), (E.exp_p, lambda v: (v,), {}), (R.reduce_sum_p, lambda v: (v,),
                                                                             {"axes": (1,)})]
    before = [np.asarray(impl_rules[p](*a(x._v), **k)).tobytes() for p, a, k in cases]
    jit(lambda t: t * 2.0)(x)
    assert x._v._buf is not None and not x._v._buf.is_deleted()
    for _ in range(2):
        outs = [impl_rules[p](*a(x._v), **k) for p, a, k in cases]
        assert all(type(o) is host.HostValue for o in outs)
        assert [np.asarray(o).tobytes() for o in outs] == before
    np.testing.assert_array_equal(np.asarray(outs[0]), x_np + x_np)


@pytest.mark.skipif(host.MODE != "host", reason="host-held eager values switched off")
def test_matmul_equals_numpy_eagerly_and_under_transforms():
    from transforms import jit, vmap
    rng = np.random.default_rng(8)
    a_np, b_np = rng.standard_normal((6, 4)), rng.standard_normal((4, 3))
    a, b = xp.asarray(a_np), xp.asarray(b_np)
    outs = [np.asarray(a @ b) for _ in range(4)]
    for o in outs:
        np.testing.assert_array_equal(o, outs[0])
        np.testing.assert_allclose(o, a_np @ b_np, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jit(lambda u: u @ b)(a)), a_np @ b_np, rtol=1e-14)
    np.testing.assert_allclose(np.asarray(jit(lambda: a @ b)()), a_np @ b_np, rtol=1e-14)   # (captured values)
    np.testing.assert_allclose(np.asarray(vmap(lambda r: xp.matmul(r[None, :], b))(a))[:, 0], a_np @ b_np,
                               rtol=1e-14)
    # a donated operand still raises the donated-value error on the next eager matmul
    jit(lambda t: t * 2.0, donate_argnums=0)(a)
    with pytest.raises(RuntimeError, match="donated"):
        a @ b
