"""Host kernels of the shape, reduction, indexing, sorting, fft and bits primitives: eager (host)
equals jit (XLA) per dtype, incl. special values; eager work on new shapes compiles nothing;
no value leaks over 10^5 eager ops; several threads run eager ops at once.
"""
import gc

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit
from transforms.jit import make_jaxpr
from xla import _jaxlib, compile_cache, host, runtime
from xla.host import HostValue, host_kernels

from test_host_kernels import assert_same, flushed, specials, subnormal
from thread_util import run_threads

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

NUM = ["int8", "int32", "uint8", "uint64", "float32", "float64", "complex64", "complex128"]
ALL = ["bool"] + NUM
REAL = [d for d in NUM if not d.startswith("complex")]


def grid(dtype, shape=(4, 6)):
    """A `shape` array cycling through the dtype's special values (NaN, inf, -0, int min/max, ...)."""
    s = specials(np.dtype(dtype))
    if s.dtype.kind in "fc":   # no subnormals: XLA reads them as 0 (test_host_kernels.py)
        s = s[~subnormal(s)]
    n = int(np.prod(shape))
    return np.resize(np.roll(s, 3), n).reshape(shape)


PROGRAMS = {   # name -> (function of one array, dtypes)
    "reshape+transpose": (lambda x: xp.permute_dims(xp.reshape(x, (6, 4)), (1, 0)), ALL),
    "broadcast": (lambda x: xp.broadcast_to(x[:, :1], (4, 6)) + x, [d for d in ALL if d != "bool"]),
    "concat": (lambda x: xp.concat([x, x[:2]], axis=0), ALL),
    "slice/stride": (lambda x: x[1:4:2, ::-2], ALL),
    "flip": (lambda x: xp.flip(x, axis=1), ALL),
    "pad-like (at.set)": (lambda x: x.at[1:3, 2].set(x[0, 0]), ALL),
    "take": (lambda x: xp.take(x, xp.asarray([3, 0, 0, 2]), axis=0), ALL),
    "fancy index": (lambda x: x[xp.asarray([1, 3]), xp.asarray([0, 5])], ALL),
    "take_along_axis": (lambda x: xp.take_along_axis(x, xp.asarray([[5, 0, 1]] * 4), axis=1), ALL),
    "at.add dup": (lambda x: x.at[xp.asarray([1, 1, 2])].add(x[:3]), [d for d in ALL if d != "bool"]),
    "sum": (lambda x: xp.sum(x, axis=1), NUM),
    "prod": (lambda x: xp.prod(x, axis=0), NUM),
    "max/min": (lambda x: xp.stack([xp.max(x, axis=1), xp.min(x, axis=1)]), REAL),
    "all/any": (lambda x: xp.stack([xp.all(x, axis=0), xp.any(x, axis=0)]), ALL),
    "argmax/argmin": (lambda x: xp.stack([xp.argmax(x, axis=1), xp.argmin(x, axis=0)[:4]]), ["bool"] + REAL),
    "cumulative_sum": (lambda x: xp.cumulative_sum(x, axis=1), NUM),
    "cumulative_prod": (lambda x: xp.cumulative_prod(x, axis=0), NUM),
    "sort": (lambda x: xp.sort(x, axis=1), ["bool"] + REAL),
    "argsort": (lambda x: xp.argsort(x, axis=0, stable=True), ["bool"] + REAL),
    "matmul": (lambda x: x @ xp.matrix_transpose(x), NUM),
    "tensordot": (lambda x: xp.tensordot(x, x, axes=([0, 1], [0, 1])), NUM),
    "vecdot batch": (lambda x: xp.vecdot(x, x[::-1], axis=1), NUM),
    "where": (lambda x: xp.where(x == x, x, x[0, 0]), ALL),
    "mean/var": (lambda x: xp.stack([xp.mean(x, axis=1), xp.var(x, axis=1)]), ["float32", "float64"]),
    "arange+reshape": (lambda x: xp.reshape(xp.arange(24, dtype=x.dtype), (4, 6)) + x, ["int32", "float64"]),
}


# results that sum many terms: XLA and NumPy associate differently, so they are compared on finite
# inputs with a tolerance scaled by the size of the terms (integers still exactly: they wrap alike)
SUMS = {"sum", "prod", "cumulative_sum", "cumulative_prod", "mean/var", "matmul", "tensordot", "vecdot batch"}


def assert_close_scaled(got, want, scale, what):
    assert got.dtype == want.dtype and got.shape == want.shape, what
    if got.dtype.kind not in "fc":
        return assert_same(got, want, what)
    eps = float(np.finfo(got.dtype).eps)
    np.testing.assert_allclose(got, want, rtol=64 * eps, atol=64 * eps * scale, err_msg=what)


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_program_eager_host_equals_jit(name):
    fn, dtypes = PROGRAMS[name]
    finite_only = name in SUMS
    runs = []
    for dt in dtypes:
        a = grid(dt)
        if finite_only and a.dtype.kind in "fc":   # (sums of inf and NaN: order-dependent NaN vs inf)
            a = np.where(np.isfinite(a) & (np.abs(a) < 1e3), a, 0.5).astype(a.dtype)
            if name == "cumulative_prod":
                a = np.where(np.abs(a) > 4, 1.5, a).astype(a.dtype)
        if name in ("matmul", "tensordot", "vecdot batch") and a.dtype.kind in "iu":
            a = (a % 5).astype(a.dtype)
        x = xp.asarray(a)
        before = runtime.compile_calls[0]
        got = fn(x)
        assert runtime.compile_calls[0] == before, f"{name}[{dt}] compiled eagerly"
        assert type(got._v) is HostValue
        runs.append((dt, a, x, got))
    # the jit oracle: every dtype's operand in one jitted function (one compile per program, not per dtype)
    wants = jit(lambda *xs: [fn(x) for x in xs])(*[x for _, _, x, _ in runs])
    for (dt, a, x, got), want in zip(runs, wants):
        g, w = np.asarray(got), np.asarray(want)
        if g.dtype.kind in "fc":
            g = flushed(g)   # XLA flushes subnormals (test_host_kernels.py)
        if name in SUMS:
            m = float(np.max(np.abs(a))) if a.size else 1.0
            scale = m ** 6 if name == "cumulative_prod" else (m * m * a.size if name in ("matmul", "tensordot", "vecdot batch", "mean/var") else m * a.size)
            assert_close_scaled(g, w, scale, f"{name}[{dt}]")
        else:
            assert_same(g, w, f"{name}[{dt}]")


def test_every_host_kernel_is_exercised():
    """Each primitive with a host kernel runs in some program above (or in test_host_kernels)."""
    seen = set()
    for fn, dtypes in PROGRAMS.values():
        a = grid(dtypes[-1])
        seen |= {e.prim for e in make_jaxpr(fn)(xp.asarray(a)).jaxpr.eqns}
    names = {p.name for p in seen}
    rest = {p.name for p in host_kernels} - names
    # elementwise kernels are covered per dtype in test_host_kernels; the remaining ones have their own tests
    from test_host_kernels import BINARY, UNARY
    rest -= {p.name for p in UNARY + BINARY} | {"select_n", "convert_element_type"}
    from test_host_kernels_lapack import LAPACK_PRIMS   # (the LAPACK family: tests/xla/test_host_kernels_lapack.py)
    rest -= {p.name for p in LAPACK_PRIMS}
    from test_host_special import SPECIAL_PRIMS   # (special functions: tests/xla/test_host_special.py)
    rest -= {p.name for p in SPECIAL_PRIMS}
    assert rest <= {"dynamic_slice", "dynamic_update_slice", "bitcast_convert_type", "cummax", "cummin",
                    "reduce_and", "reduce_or", "rev", "pad", "iota", "fft"}, rest


def test_dynamic_slice_update_pad_bitcast_cummax_host_equals_xla():
    from test_host_kernels import _host, xla_many
    from transforms.primitives import bits as B
    from transforms.primitives import indexing as I
    from transforms.primitives import sorting as T
    from transforms.primitives import structural as S
    x = grid("float64")
    i = grid("int32")
    cases = [
        (I.dynamic_slice_p, [x, np.array(3, np.int32), np.array(-2, np.int32)], dict(slice_sizes=(2, 3))),
        (I.dynamic_update_slice_p, [x, x[:2, :2] * 2, np.array(9, np.int64), np.array(1, np.int64)], {}),
        (S.pad_p, [x, np.array(-1.0)], dict(padding_config=((1, -1, 1), (-2, 3, 0)))),
        (S.pad_p, [i, np.array(7, np.int32)], dict(padding_config=((0, 0, 2), (2, -7, 1)))),
        (S.rev_p, [i], dict(dimensions=(0, 1))),
        (S.iota_p, [], dict(dtype=np.dtype(np.int16), shape=(3, 4), dimension=1)),
        (B.bitcast_convert_type_p, [x], dict(new_dtype=np.dtype(np.int64))),
        (B.bitcast_convert_type_p, [i], dict(new_dtype=np.dtype(np.float32))),
        (T.cummax_p, [x], dict(axis=1, reverse=True)),
        (T.cummin_p, [i], dict(axis=0, reverse=False)),
        (T.cumsum_p, [np.zeros((0, 3))], dict(axis=0, reverse=False)),
    ]
    # (xp.fft.* runs its primitives under an internal jit, so the fft kernel is checked here directly)
    from transforms.primitives import fft as F
    rng = np.random.default_rng(1)
    for cdt, rdt in ((np.complex64, np.float32), (np.complex128, np.float64)):
        c = (rng.standard_normal((3, 4, 6)) + 1j * rng.standard_normal((3, 4, 6))).astype(cdt)
        r = rng.standard_normal((3, 4, 6)).astype(rdt)
        cases += [(F.fft_p, [c], dict(fft_type="FFT", fft_lengths=(6,))),
                  (F.fft_p, [c], dict(fft_type="IFFT", fft_lengths=(4, 6))),
                  (F.fft_p, [r], dict(fft_type="RFFT", fft_lengths=(4, 6))),
                  (F.fft_p, [c[..., :4]], dict(fft_type="IRFFT", fft_lengths=(6,))),
                  (F.fft_p, [c[..., :4]], dict(fft_type="IRFFT", fft_lengths=(4, 7)))]
    from transforms.primitives import reductions as R
    for dt in ("bool", "int8", "int64"):
        g = grid(dt)
        cases += [(R.reduce_and_p, [g], dict(axes=(1,))), (R.reduce_or_p, [g], dict(axes=(0, 1))),
                  (R.reduce_max_p, [g[:, :0]], dict(axes=(1,)))]
    for (prim, args, params), want in zip(cases, xla_many(cases)):   # (XLA's answers: one program)
        got = _host(prim, args, params)
        assert got is not None and want is not None, prim
        for g_, w_ in zip(got, want):
            if prim.name == "fft":   # transforms sum terms in different orders
                assert_close_scaled(g_, w_, float(np.abs(args[0]).sum()), f"fft {params}")
            else:
                assert_same(flushed(g_) if g_.dtype.kind == "f" else g_, w_, f"{prim.name} {params}")


def test_eager_ops_on_new_shapes_compile_nothing(fresh_staged):
    rng = np.random.default_rng(0)
    before = runtime.compile_calls[0]
    for n in (3, 7, 12, 31):
        x = xp.asarray(rng.standard_normal((n, n + 1)))
        y = (x - xp.mean(x, axis=1, keepdims=True)) / xp.std(x, axis=1, keepdims=True)
        y = xp.where(y > 0, xp.sin(y), y * 2.0) @ xp.matrix_transpose(x)
        z = xp.sort(y[1:, ::2], axis=0)[xp.asarray([0, 1])]
        z = xp.concat([z, xp.cumulative_sum(z, axis=1)], axis=0)
        w = x.at[0, 1].set(5.0)
        k = xp.astype(x * 100, xp.int32) // 7 % 3 << 2
        v = xp.sqrt(xp.sum(x * x, axis=0)) + xp.var(x)   # (xp.linalg.* jit internally: see linalg.compiled) + xp.astype(xp.argmax(x, axis=1)[0], xp.float64)
        _ = [x[i] for i in range(n)]
        np.asarray(z), np.asarray(w), np.asarray(k), np.asarray(v)
    assert runtime.compile_calls[0] == before


def test_first_call_on_a_new_shape_is_not_a_compile(fresh_staged, monkeypatch):
    # (counted, not timed: every XLA executable, compiled or loaded from the disk cache, comes through it)
    compiles = []
    real = compile_cache.compile
    monkeypatch.setattr(compile_cache, "compile", lambda *a, **k: compiles.append(a) or real(*a, **k))
    for shape in ((17, 3), (19, 5), (23, 7)):
        x = np.arange(np.prod(shape), dtype=np.float64).reshape(shape)
        np.testing.assert_array_equal(np.asarray(xp.asarray(x) + 1.0), x + 1.0)
    assert compiles == []


def _live_host_values():
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is HostValue)


def test_no_buffer_or_host_value_leaks_over_100k_eager_ops():
    x = xp.asarray(np.linspace(0, 1, 8))
    for _ in range(100):
        x = x * 0.5 + 0.25
    live_dev = len(_jaxlib.client().live_arrays())
    live_host = _live_host_values()
    for i in range(25_000):
        x = xp.sin(x * 0.5 + 0.25)   # 4 eager ops per round (incl. the weak scalar conversions)
        if i % 5000 == 0:
            jit(lambda v: v + 1.0)(x)   # host value -> cached device buffer: freed with the value
    del i
    assert len(_jaxlib.client().live_arrays()) <= live_dev + 2
    assert _live_host_values() <= live_host + 2


def test_threads_run_eager_ops_at_once():
    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(200):
            a = rng.standard_normal((5 + seed, 3))
            x = xp.asarray(a)
            got = np.asarray(xp.sum(xp.exp(x) * 2.0, axis=1) - x[:, 0])
            np.testing.assert_allclose(got, (np.exp(a) * 2.0).sum(1) - a[:, 0], rtol=1e-12)
    run_threads(work)


def test_host_values_enter_jit_once_and_donation_consumes_them():
    x = xp.asarray(np.arange(1000.0))   # large enough to be 64-byte aligned: the buffer aliases the NumPy data
    f = jit(lambda v: v * 2.0)
    np.testing.assert_array_equal(np.asarray(f(x)), np.arange(1000.0) * 2)
    buf = x._v._buf
    assert buf is not None and np.asarray(buf).ctypes.data == x._v.np.ctypes.data   # zero copy
    f(x)
    assert x._v._buf is buf   # cached: the second call reuses it
    g = jit(lambda v: v + 1.0, donate_argnums=0)
    y = xp.asarray(np.ones(1000))
    np.testing.assert_array_equal(np.asarray(g(y)), 2.0)
    assert y._v.is_deleted()
    with pytest.raises(RuntimeError, match="donated"):
        y + 1.0


def test_host_arrays_given_out_are_read_only_copies_or_views():
    x = xp.asarray(np.arange(4.0))
    a = np.asarray(x)
    a[0] = 100.0   # np.asarray gives a writable copy (NumPy code writes into it) ...
    assert float(x[0]) == 0.0   # ... never the value itself
    v = x.__array__(copy=False)
    assert not v.flags.writeable


def test_a_large_unaligned_value_moves_once_to_aligned_memory_that_its_buffer_aliases():
    from transforms.core import ShapedArray
    from xla.host import HostValue, aligned_empty
    n = (1 << 20) // 8 + 3                       # just over 1 MiB of float64
    raw = aligned_empty((n + 1,), np.float64)
    raw[...] = np.arange(n + 1.0)
    hv = HostValue(raw[1:], ShapedArray((n,), np.dtype(np.float64)))   # 8 bytes off a 64-byte boundary
    given_out = hv.readonly()                     # a view handed out before: stays valid and equal
    assert hv.np.ctypes.data % 64 != 0
    buf = hv.buffer(runtime.default_device())
    assert hv.np.ctypes.data % 64 == 0            # moved (once): no second copy lives beside it
    assert np.asarray(buf).ctypes.data == hv.np.ctypes.data
    np.testing.assert_array_equal(hv.np, np.arange(1.0, n + 1.0))
    np.testing.assert_array_equal(given_out, hv.np)
    assert hv.buffer(runtime.default_device()) is buf
    # and eager work on it, and jit of it, agree with NumPy
    x = xp.asarray(np.arange(n, dtype=np.float64))
    y = x * 1.0                                   # a kernel's result: NumPy placed it
    np.testing.assert_allclose(np.asarray(jit(lambda v: xp.sum(v * 2.0))(y)), np.arange(n, dtype=np.float64).sum() * 2)
    np.testing.assert_array_equal(np.asarray(y + 1.0), np.arange(n, dtype=np.float64) + 1.0)
