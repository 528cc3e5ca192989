"""Complex transcendentals on the host: NumPy where it agrees with XLA, XLA elsewhere.

The oracle is the primitive's lowering run by XLA (test_host_kernels._xla). Grids: finite values
with +-0 parts, branch cuts (real axis beyond +-1, imaginary axis beyond +-i, the negative real
axis) from both sides, huge (1e300 / 1e37) and tiny (1e-300, 1e-20) parts. Where the kernel takes
the values, host == XLA (rtol 1e-13 for complex128, 2e-6 for complex64, signs of zeros included);
where it declines (a zero part for most functions, a non-finite part or result), the eager call
runs XLA and equals it.
"""
import numpy as np
import pytest

from transforms.primitives import elementwise as E
from xla import host, runtime
from xla.host import host_kernels
from xla.lower_elementwise import _H_COMPLEX

from test_host_kernels import _host, _xla, compare

pytestmark = pytest.mark.skipif(host.MODE == "xla", reason="host kernels switched off (ARRAY_NAMESPACE_EAGER=xla)")

CDTYPES = [np.dtype(np.complex64), np.dtype(np.complex128)]
COVERED = sorted(_H_COMPLEX, key=lambda p: p.name)
DECLINED = [E.sin_p, E.cos_p, E.sinh_p, E.cosh_p, E.atan_p, E.atanh_p, E.log1p_p, E.expm1_p, E.sign_p]


def grid(dt, zeros=True, nonfinite=False):
    ft = np.float32 if dt == np.complex64 else np.float64
    big, small = (1e37, 1e-37) if ft == np.float32 else (1e300, 1e-300)
    vals = [1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, -3.0, 1e-20, -1e-20, 1e-8, -1e-8, 0.999, 1.001, -1.001,
            10.0, -10.0, 100.0, -100.0, 88.0, -88.0, 700.0, -700.0, big, -big, small, -small, 1e10, -1e10]
    if zeros:
        vals += [0.0, -0.0]
    if nonfinite:
        vals += [np.inf, -np.inf, np.nan]
    r = np.array(vals, ft)
    out = np.empty((len(r), len(r)), dt)
    out.real, out.imag = r[:, None], r[None, :]
    return out.reshape(-1)


def _takes(prim, x):
    return host.run_quiet(host_kernels[prim], [x], {}) is not NotImplemented


@pytest.mark.parametrize("prim", COVERED, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_host_equals_xla_where_it_takes_the_values(prim, dt):
    x = grid(dt, zeros=_H_COMPLEX[prim])
    x = x[[_takes(prim, x[i:i + 1]) for i in range(len(x))]]   # (a non-finite result declines)
    assert len(x) > 500
    got = _host(prim, [x], {})
    assert got is not None and got[0].dtype == dt
    compare(got[0], _xla(prim, [x], {})[0], [x], f"{prim.name}[{dt.name}]")


@pytest.mark.parametrize("prim", COVERED, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", CDTYPES, ids=str)
def test_declined_values_run_on_xla_and_equal_it(prim, dt):
    x = grid(dt, zeros=True, nonfinite=True)
    assert not _takes(prim, x)
    bad = x[~np.isfinite(x)]
    assert not _takes(prim, bad[:3])
    if not _H_COMPLEX[prim]:
        assert not _takes(prim, np.array([1 - 0j, 2 + 1j], dt)) and not _takes(prim, np.array([0.5j], dt))
    got = np.asarray(prim.bind(x))                    # the eager path: XLA's executable
    assert got.dtype == dt
    compare(got, _xla(prim, [x], {})[0], [x], f"{prim.name}[{dt.name}] eager")


@pytest.mark.parametrize("prim", COVERED, ids=lambda p: p.name)
def test_finite_complex_inputs_compile_nothing(prim):
    for dt in CDTYPES:
        for n in (3, 7, 11):   # new shapes each
            x = np.linspace(0.3, 0.9, n * 2).astype(dt.type) + 1j * np.linspace(-0.7, 0.8, n * 2)
            x = x.astype(dt).reshape(2, n)
            before = runtime.compile_calls[0]
            out = prim.bind(x)
            assert runtime.compile_calls[0] == before, prim.name
            assert type(out) is host.HostValue and out.np.dtype == dt and out.np.shape == (2, n)


@pytest.mark.parametrize("prim", DECLINED, ids=lambda p: p.name)
def test_these_complex_functions_still_decline(prim):
    """sin/cos/sinh/cosh: XLA loses small parts (sinh(1e-20+1e-20j) has real part 0); atan/atanh:
    XLA gives inf near +-i / +-1; log1p: NumPy's is log(1 + z) (0 for z = 1e-20);
    expm1: NumPy's complex64 real part cancels (3e-5 relative near 0); sign: not done."""
    for dt in CDTYPES:
        assert not _takes(prim, np.array([0.5 + 0.25j], dt))
