"""fft_p (src/transforms/primitives/fft.py) bound directly against numpy.fft: FFT, IFFT, RFFT, IRFFT
over 1 to 3 trailing axes, odd and even lengths, complex64/complex128 (float32/float64 for RFFT) with
the dtype kept. The rules: the jvp is the transform of the tangent; the transposes (no complex
conjugation, so the real pairing Re(sum(a * b)) is preserved: <f(x), c> == <x, f^T(c)>; FFT and IFFT
are even complex-bilinear), including RFFT's truncation and IRFFT's doubled non-DC/Nyquist bins; the
batch rule with the batch axis after the transformed ones, against a Python loop; the errors."""
import numpy as np
import pytest

import array_namespace as xp
from prim_checks import check_vmap, raw
from transforms import jit, jvp, linear_transpose
from transforms.core import bind
from transforms.primitives import fft as F

ORACLE = {
    "FFT": lambda x, n: np.fft.fftn(x, axes=tuple(range(-len(n), 0))),
    "IFFT": lambda x, n: np.fft.ifftn(x, axes=tuple(range(-len(n), 0))),
    "RFFT": lambda x, n: np.fft.rfftn(x, axes=tuple(range(-len(n), 0))),
    "IRFFT": lambda x, n: np.fft.irfftn(x, s=n, axes=tuple(range(-len(n), 0))),
}
LENGTHS = [(8,), (7,), (4, 6), (3, 5), (2, 3, 4), (3, 2, 5)]


def _input(fft_type, lengths, dtype=np.float64, lead=(2,), seed=0):
    rng = np.random.default_rng(seed)
    shape = lead + tuple(lengths)
    if fft_type == "IRFFT":
        shape = shape[:-1] + (lengths[-1] // 2 + 1,)
    x = rng.standard_normal(shape)
    if fft_type != "RFFT":
        x = x + 1j * rng.standard_normal(shape)
        return x.astype(np.complex64 if dtype == np.float32 else np.complex128)
    return x.astype(dtype)


def _f(fft_type, lengths):
    return lambda a: bind(F.fft_p, a._v, fft_type=fft_type, fft_lengths=tuple(lengths))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("lengths", LENGTHS)
@pytest.mark.parametrize("fft_type", list(ORACLE))
def test_values_vs_numpy(fft_type, lengths, dtype):
    x = _input(fft_type, lengths, dtype)
    got = np.asarray(_f(fft_type, lengths)(xp.asarray(x)))
    want = ORACLE[fft_type](x.astype(np.complex128 if x.dtype.kind == "c" else np.float64), lengths)
    single = dtype == np.float32
    assert got.dtype == (want.astype(np.complex64 if want.dtype.kind == "c" else np.float32).dtype if single
                         else want.dtype)
    assert got.shape == want.shape
    scale = np.max(np.abs(want))
    np.testing.assert_allclose(got, want, rtol=0, atol=scale * (2e-6 if single else 1e-14))


@pytest.mark.parametrize("lengths", [(8,), (7,), (4, 5)])
@pytest.mark.parametrize("fft_type", list(ORACLE))
def test_jit_jvp_and_transpose(fft_type, lengths):
    f = _f(fft_type, lengths)
    x, t = _input(fft_type, lengths, seed=1), _input(fft_type, lengths, seed=2)
    want = ORACLE[fft_type](x, lengths)
    np.testing.assert_allclose(np.asarray(jit(f)(xp.asarray(x))), want, atol=1e-13)
    _, tan = jvp(f, (xp.asarray(x),), (xp.asarray(t),))          # linear: the jvp is f(t)
    np.testing.assert_allclose(np.asarray(tan), ORACLE[fft_type](t, lengths), atol=1e-13)
    # the transpose preserves the real pairing Re(sum(a * b)) -- cotangents are never conjugated
    rng = np.random.default_rng(3)
    y = np.asarray(f(xp.asarray(x)))
    c = rng.standard_normal(y.shape) + (1j * rng.standard_normal(y.shape) if y.dtype.kind == "c" else 0)
    (ct,) = linear_transpose(f, xp.asarray(x))(xp.asarray(c.astype(y.dtype)))
    ct = np.asarray(ct)
    assert ct.shape == x.shape and ct.dtype == x.dtype
    np.testing.assert_allclose(np.real(np.sum(y * c)), np.real(np.sum(x * ct)), rtol=1e-11)
    if fft_type in ("FFT", "IFFT"):                                # complex-linear: the full bilinear form
        np.testing.assert_allclose(np.sum(y * c), np.sum(x * ct), rtol=1e-11)


def test_irfft_transpose_against_the_explicit_matrix():
    # IRFFT on n = 6 as an R-linear map of (Re, Im) of 4 bins, its matrix built column by column from NumPy
    n = 6
    f = _f("IRFFT", (n,))
    cols = []
    for k in range(4):
        for unit in (1.0, 1j):
            e = np.zeros(4, complex)
            e[k] = unit
            cols.append(np.fft.irfft(e, n))
    M = np.stack(cols, 1)                       # (6, 8): output <- (Re b0, Im b0, Re b1, ...)
    c = np.random.default_rng(4).standard_normal(n)
    (ct,) = linear_transpose(f, xp.asarray(np.zeros(4, complex)))(xp.asarray(c))
    g = M.T @ c            # d<y, c>/d(Re, Im); Re((a + ib)(p + iq)) = ap - bq, so ct = g_re - i g_im
    np.testing.assert_allclose(np.real(np.asarray(ct)), g[0::2], atol=1e-14)
    np.testing.assert_allclose(-np.imag(np.asarray(ct)), g[1::2], atol=1e-14)


@pytest.mark.parametrize("fft_type", list(ORACLE))
def test_batching_vs_loop(fft_type):
    lengths = (4, 6)
    x = _input(fft_type, lengths, lead=(3,))
    f = _f(fft_type, lengths)
    check_vmap(f, [x], [0], rtol=1e-13, atol=1e-13)
    # the batch axis at the end: the rule moves it in front of the transformed axes
    xb = np.stack([_input(fft_type, lengths, lead=(), seed=s) for s in range(3)], axis=-1)
    check_vmap(f, [xb], [xb.ndim - 1], out_axes=2, rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("call, exc, text", [
    (lambda: F.fft(raw(np.ones(4, complex)), "DCT", (4,)), ValueError, "fft_type must be one of"),
    (lambda: F.fft(raw(np.ones(4, complex)), "RFFT", (4,)), TypeError, "RFFT requires a real floating operand"),
    (lambda: F.fft(raw(np.ones(4)), "FFT", (4,)), TypeError, "FFT requires a complex operand, got float64"),
    (lambda: F.fft(raw(np.ones((2, 4), complex)), "FFT", (2, 5)), ValueError, "does not match fft_lengths (2, 5)"),
    (lambda: F.fft(raw(np.ones(4, complex)), "IRFFT", (4,)), ValueError, "(expected (3,))"),
    (lambda: F.fft(raw(np.ones((2,) * 4, complex)), "FFT", (2,) * 4), ValueError, "1 to 3 trailing axes"),
])
def test_errors(call, exc, text):
    with pytest.raises(exc) as e:
        call()
    assert text in str(e.value)
