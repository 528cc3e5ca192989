"""xp.fft against numpy.fft (values, dtypes, shapes, n/s/axes/norm), plus jit-vs-eager,
vmap-vs-loop and gradients (reverse and forward mode) against central finite differences."""
import numpy as np
import pytest

import array_namespace as xp
from transforms import grad, jit, jvp, vmap
from finite_diff import central_diff as _fd

FF = xp.fft
RNG = np.random.default_rng(7)
C = RNG.standard_normal((3, 8)) + 1j * RNG.standard_normal((3, 8))
R = RNG.standard_normal((3, 8))
C4 = RNG.standard_normal((2, 3, 4, 5)) + 1j * RNG.standard_normal((2, 3, 4, 5))
R4 = C4.real.copy()
NORMS = ["backward", "ortho", "forward"]


def close(got, want, tol=1e-10):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ------------------------------------------------------------------ 1-D transforms

@pytest.mark.parametrize("norm", NORMS)
def test_complex_1d(norm):
    x = xp.asarray(C)
    close(FF.fft(x, norm=norm), np.fft.fft(C, norm=norm))
    close(FF.ifft(x, norm=norm), np.fft.ifft(C, norm=norm))
    close(FF.fft(x, n=5, norm=norm), np.fft.fft(C, n=5, norm=norm))            # trimmed
    close(FF.ifft(x, n=11, axis=0, norm=norm), np.fft.ifft(C, n=11, axis=0, norm=norm))   # padded


@pytest.mark.parametrize("norm", NORMS)
def test_real_1d(norm):
    close(FF.rfft(xp.asarray(R), norm=norm), np.fft.rfft(R, norm=norm))
    close(FF.rfft(xp.asarray(R), n=5, axis=0, norm=norm), np.fft.rfft(R, n=5, axis=0, norm=norm))
    close(FF.irfft(xp.asarray(C), norm=norm), np.fft.irfft(C, norm=norm))
    close(FF.irfft(xp.asarray(C), n=7, norm=norm), np.fft.irfft(C, n=7, norm=norm))
    close(FF.hfft(xp.asarray(C), norm=norm), np.fft.hfft(C, norm=norm))
    close(FF.hfft(xp.asarray(C), n=9, norm=norm), np.fft.hfft(C, n=9, norm=norm))
    close(FF.ihfft(xp.asarray(R), norm=norm), np.fft.ihfft(R, norm=norm))


def test_single_precision():
    c32, r32 = C.astype(np.complex64), R.astype(np.float32)
    close(FF.fft(xp.asarray(c32)), np.fft.fft(c32).astype(np.complex64), 1e-5)
    close(FF.rfft(xp.asarray(r32)), np.fft.rfft(r32).astype(np.complex64), 1e-5)
    close(FF.irfft(xp.asarray(c32)), np.fft.irfft(c32).astype(np.float32), 1e-5)


def test_real_input_to_complex_transform():
    got = FF.fft(xp.asarray(R))
    assert got.dtype == np.complex128
    close(got, np.fft.fft(R))
    assert FF.fft(xp.asarray(R.astype(np.float32))).dtype == np.complex64


# ------------------------------------------------------------------ n-D transforms

@pytest.mark.parametrize("kw", [{}, {"s": (4, 6), "axes": (2, 3)}, {"axes": (0, 2)}, {"s": (3, 2), "axes": (3, 1)},
                                {"axes": (0, 1, 2, 3)}], ids=str)
def test_fftn_ifftn(kw):
    close(FF.fftn(xp.asarray(C4), **kw), np.fft.fftn(C4, **kw))
    close(FF.ifftn(xp.asarray(C4), norm="ortho", **kw), np.fft.ifftn(C4, norm="ortho", **kw))


@pytest.mark.parametrize("kw", [{}, {"s": (3, 6), "axes": (2, 3)}, {"s": (5, 4), "axes": (1, 3)}, {"axes": (2, 0)}],
                         ids=str)
def test_rfftn_irfftn(kw):
    close(FF.rfftn(xp.asarray(R4), **kw), np.fft.rfftn(R4, **kw))
    close(FF.irfftn(xp.asarray(C4), norm="forward", **kw), np.fft.irfftn(C4, norm="forward", **kw))


def test_round_trip():
    close(FF.irfftn(FF.rfftn(xp.asarray(R4)), s=R4.shape), R4)
    close(FF.ifft(FF.fft(xp.asarray(C))), C)


# ---------------------------------------------------------------------- helpers

@pytest.mark.parametrize("n", [1, 7, 8])
def test_frequencies(n):
    close(FF.fftfreq(n), np.fft.fftfreq(n))
    close(FF.fftfreq(n, d=0.25), np.fft.fftfreq(n, d=0.25))
    close(FF.rfftfreq(n, d=0.5), np.fft.rfftfreq(n, d=0.5))
    close(FF.rfftfreq(n, dtype=xp.float32), np.fft.rfftfreq(n).astype(np.float32), 1e-6)


def test_shifts():
    close(FF.fftshift(xp.asarray(R4)), np.fft.fftshift(R4))
    close(FF.ifftshift(xp.asarray(R4)), np.fft.ifftshift(R4))
    close(FF.fftshift(xp.asarray(R4), axes=(1, 3)), np.fft.fftshift(R4, axes=(1, 3)))
    close(FF.ifftshift(xp.asarray(R4), axes=2), np.fft.ifftshift(R4, axes=2))


def test_errors():
    with pytest.raises(TypeError, match="rfft.*complex128"):
        FF.rfft(xp.asarray(C))
    with pytest.raises(TypeError, match="fft.*int64"):
        FF.fft(xp.asarray(np.arange(4)))
    with pytest.raises(ValueError, match="norm"):
        FF.fft(xp.asarray(C), norm="none")
    with pytest.raises(ValueError, match="n must be"):
        FF.ifft(xp.asarray(C), n=0)
    with pytest.raises(ValueError, match="same length"):
        FF.fftn(xp.asarray(C4), s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="repeated"):
        FF.fftn(xp.asarray(C4), axes=(0, 0))
    with pytest.raises(TypeError, match="fftfreq"):
        FF.fftfreq(4, dtype=xp.int32)


def test_namespace_complete():
    assert set(FF.__all__) == {"fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft",
                               "ihfft", "fftfreq", "rfftfreq", "fftshift", "ifftshift"}


# ----------------------------------------------------------------- transforms

def _many(c, r):
    return (FF.fft(c, n=6), FF.ifftn(c, axes=(0, 1)), FF.rfft(r, norm="ortho"), FF.irfft(c),
            FF.hfft(c, n=5), FF.fftshift(r))


def test_jit_matches_eager():
    args = (xp.asarray(C4[0]), xp.asarray(R4[0]))
    for got, want in zip(jit(_many)(*args), _many(*args)):
        close(got, want, 1e-12)


def test_vmap_matches_loop():
    got = jit(vmap(_many))(xp.asarray(C4), xp.asarray(R4))
    single = jit(_many)
    for i in range(2):
        for g, w in zip(got, single(xp.asarray(C4[i]), xp.asarray(R4[i]))):
            close(np.asarray(g)[i], w, 1e-12)




W = RNG.standard_normal((3, 8))
_c = lambda x: xp.astype(x, xp.complex128)   # noqa: E731
GRAD_CASES = {   # name: (our scalar function of a real (3, 8) Array, the NumPy oracle)
    "fft": (lambda x: xp.sum(xp.real(FF.fft(x)) * xp.asarray(W)) + xp.sum(xp.imag(FF.fft(x, norm="ortho")) ** 2),
            lambda a: np.sum(np.fft.fft(a).real * W) + np.sum(np.fft.fft(a, norm="ortho").imag ** 2)),
    "ifft": (lambda x: xp.sum(xp.imag(FF.ifft(_c(x) * xp.asarray(W), n=10)) ** 2),
             lambda a: np.sum(np.fft.ifft(a * W, n=10).imag ** 2)),
    "rfft": (lambda x: xp.sum(xp.abs(FF.rfft(x, n=6)) ** 2 * xp.arange(1.0, 5.0)),
             lambda a: np.sum(np.abs(np.fft.rfft(a, n=6)) ** 2 * np.arange(1.0, 5.0))),
    "irfft": (lambda x: xp.sum(FF.irfft(_c(x) * (1 + 2j)) * xp.arange(14.0)),
              lambda a: np.sum(np.fft.irfft(a * (1 + 2j)) * np.arange(14.0))),
    "irfft_odd": (lambda x: xp.sum(FF.irfft(_c(x) * (2 - 1j), n=7) ** 3),
                  lambda a: np.sum(np.fft.irfft(a * (2 - 1j), n=7) ** 3)),
    "fftn": (lambda x: xp.sum(xp.abs(FF.fftn(_c(x))) * xp.asarray(W)),
             lambda a: np.sum(np.abs(np.fft.fftn(a)) * W)),
    "rfftn_irfftn": (lambda x: xp.sum(FF.irfftn(FF.rfftn(x) * (1 + 1j)) * xp.asarray(W)),
                     lambda a: np.sum(np.fft.irfftn(np.fft.rfftn(a) * (1 + 1j)) * W)),
}


@pytest.mark.parametrize("name", list(GRAD_CASES))
def test_grad_matches_finite_differences(name):
    f, f_np = GRAD_CASES[name]
    both = jit(lambda x, t: (grad(f)(x), jvp(f, (x,), (t,))[1]))
    t = RNG.standard_normal(R.shape)
    g, tout = both(xp.asarray(R), xp.asarray(t))
    want = _fd(f_np, R)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(float(tout), np.sum(want * t), rtol=1e-5, atol=1e-6)


def test_eager_grad():
    f, f_np = GRAD_CASES["rfft"]
    np.testing.assert_allclose(np.asarray(grad(f)(xp.asarray(R))), _fd(f_np, R), rtol=1e-5, atol=1e-6)


def test_numpy_integers_are_accepted_for_n_s_axes_and_frequencies():
    import numpy as np
    x = xp.asarray(np.arange(8.0))
    np.testing.assert_allclose(np.asarray(xp.fft.fft(x, n=np.int64(4))), np.fft.fft(np.arange(8.0), n=4))
    np.testing.assert_allclose(np.asarray(xp.fft.fftfreq(np.int32(5))), np.fft.fftfreq(5))
    np.testing.assert_allclose(np.asarray(xp.fft.rfftfreq(np.int64(6), d=0.5)), np.fft.rfftfreq(6, d=0.5))
    y = xp.reshape(x, (2, 4))
    np.testing.assert_allclose(np.asarray(xp.fft.fftn(y, s=(np.int64(2), np.int64(3)), axes=(np.int64(0), 1))),
                               np.fft.fftn(np.arange(8.0).reshape(2, 4), s=(2, 3), axes=(0, 1)))
    for bad in (4.0, True):
        with pytest.raises(TypeError, match="fft: n must be an int"):
            xp.fft.fft(x, n=bad)
