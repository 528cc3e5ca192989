"""scipy cases: one row per call (functions scipy 1.17.1 marks array-API capable via xp_capabilities).

`LIB` rows name the scipy line that makes the transform impossible for any non-NumPy namespace
scipy has no native path for (it converts to NumPy to run compiled code: `cpu_only=True` in its
xp_capabilities, e.g. scipy/_lib/_array_api.py's np.asarray in the compiled-code branch).
"""
import numpy as np
import scipy.cluster.vq as vq
import scipy.fft as sfft
import scipy.integrate as si
import scipy.ndimage as ndi
import scipy.signal as sg
import scipy.special as sc
import scipy.stats as st

from array_api_compat import array_namespace

from ds_harness import LIB, Case


def _n(*shapes, lo=None, hi=None):
    """Inputs: standard normal (or uniform in [lo, hi]) float64 arrays of the given shapes."""
    def make(rng):
        if lo is None:
            return tuple(rng.standard_normal(s) for s in shapes)
        return tuple(rng.uniform(lo, hi, s) for s in shapes)
    return make


def _real(z):
    return array_namespace(z).real(z)


def _imag(z):
    return array_namespace(z).imag(z)


def _lib(*transforms, why):
    """LIB for the given transforms: the library's own line (file:line first) makes them impossible."""
    return {t: LIB for t in transforms} | {"why": why}


# scipy converts to NumPy to run compiled code for namespaces without a native implementation
# (`cpu_only=True` in its xp_capabilities): a host conversion of the traced value. Under jit (guarded) such a
# path runs eagerly inside the jitted call (transforms/jit.py), under vmap the function runs on each batch element
# in turn (transforms/vmap_loop.py); grad cannot: the value carries a tangent that NumPy would drop.
_CONVOLVE = _lib("grad", why="scipy/signal/_signaltools.py:1510 np.asarray(volume) (convolve is "
                 "cpu_only for non-CuPy/JAX namespaces)")
_CORRELATE = _lib("grad", why="scipy/signal/_signaltools.py:264 np.asarray(in1) (cpu_only)")
_DETREND = _lib("grad", why="scipy/signal/_signaltools.py:4266 np.asarray(data) (cpu_only)")
_REALTRANSFORMS = _lib("grad", why="scipy/fft/_realtransforms_backend.py:11 np.asarray(x): "
                       "dct/dst run pocketfft on NumPy for non-CuPy/JAX namespaces")
_GAUSS = _lib("grad", why="scipy/ndimage/_filters.py:842 np.asarray(input) (ndimage is cpu_only)")
_UNIFORM = _lib("grad", why="scipy/ndimage/_filters.py:1528 np.asarray(input) (cpu_only)")
# Python branches on array values (scipy does not claim jax_jit support for these in xp_capabilities)

SPECIAL = [
    Case("special.logsumexp", lambda x: sc.logsumexp(x, axis=-1), _n((4, 5))),
    Case("special.logsumexp_b", lambda x, b: sc.logsumexp(x, b=b, axis=0), lambda r: (r.standard_normal((4, 3)), r.uniform(0.5, 2, (4, 3))),
         argnums=(0, 1)),
    Case("special.softmax", lambda x: sc.softmax(x, axis=-1), _n((3, 4))),
    Case("special.log_softmax", lambda x: sc.log_softmax(x, axis=0), _n((3, 4))),
    Case("special.xlogy", sc.xlogy, _n((5,), (5,), lo=0.2, hi=3.0), argnums=(0, 1)),
    Case("special.xlog1py", sc.xlog1py, _n((5,), (5,), lo=0.2, hi=3.0), argnums=(0, 1)),
    Case("special.gammaln", sc.gammaln, _n((6,), lo=0.3, hi=6.0)),
    Case("special.psi", sc.psi, _n((6,), lo=0.3, hi=6.0), rtol=1e-9),
    Case("special.erf", sc.erf, _n((6,))),
    Case("special.erfc", sc.erfc, _n((6,))),
    Case("special.erfinv", sc.erfinv, _n((6,), lo=-0.9, hi=0.9), rtol=1e-9),
    Case("special.ndtr", sc.ndtr, _n((6,))),
    Case("special.ndtri", sc.ndtri, _n((6,), lo=0.05, hi=0.95), rtol=1e-9),
    Case("special.log_ndtr", sc.log_ndtr, _n((6,))),
    Case("special.expit", sc.expit, _n((6,))),
    Case("special.logit", sc.logit, _n((6,), lo=0.05, hi=0.95)),
    Case("special.entr", sc.entr, _n((6,), lo=0.1, hi=2.0)),
    Case("special.rel_entr", sc.rel_entr, _n((6,), (6,), lo=0.1, hi=2.0), argnums=(0, 1)),
    Case("special.i0", sc.i0, _n((6,)), rtol=1e-9),
    Case("special.i1e", sc.i1e, _n((6,)), rtol=1e-9),
    Case("special.gammainc", sc.gammainc, _n((6,), (6,), lo=0.5, hi=4.0), argnums=(1,), rtol=1e-9),
    # d/dx of zeta(x, q) has no closed form (our rules declare it); differentiate in q
    Case("special.zeta", lambda q: sc.zeta(2.5, q), _n((6,), lo=0.5, hi=4.0), rtol=1e-9),
]

STATS = [
    Case("stats.zscore", lambda x: st.zscore(x, axis=0), _n((6, 3))),
    Case("stats.zmap", lambda x, y: st.zmap(x, y, axis=0), _n((4, 3), (6, 3)), argnums=(0, 1)),
    Case("stats.skew", lambda x: st.skew(x, axis=-1), _n((3, 7))),
    Case("stats.kurtosis", lambda x: st.kurtosis(x, axis=-1), _n((3, 7))),
    Case("stats.moment3", lambda x: st.moment(x, order=3, axis=0), _n((7, 2))),
    Case("stats.variation", lambda x: st.variation(x, axis=0), _n((7, 2), lo=1.0, hi=3.0)),
    Case("stats.sem", lambda x: st.sem(x, axis=-1), _n((2, 6))),
    Case("stats.gmean", lambda x: st.gmean(x, axis=-1), _n((2, 6), lo=0.5, hi=3.0)),
    Case("stats.hmean", lambda x: st.hmean(x, axis=-1), _n((2, 6), lo=0.5, hi=3.0)),
    Case("stats.pmean", lambda x: st.pmean(x, 2.5, axis=-1), _n((2, 6), lo=0.5, hi=3.0)),
    Case("stats.tmean", lambda x: st.tmean(x, (-1.5, 1.5)), _n((9,))),
    Case("stats.tvar", lambda x: st.tvar(x), _n((9,))),
    Case("stats.entropy", lambda p: st.entropy(p, axis=-1), _n((2, 5), lo=0.1, hi=1.0)),
    Case("stats.describe", lambda x: tuple(st.describe(x, axis=0))[2:], _n((8, 2))),
    Case("stats.pearsonr", lambda x, y: tuple(st.pearsonr(x, y, axis=-1)), _n((2, 8), (2, 8)), argnums=(0, 1),
         rtol=1e-9),
    Case("stats.ttest_1samp", lambda x: tuple(st.ttest_1samp(x, 0.3, axis=-1)), _n((2, 8)), rtol=1e-9),
    Case("stats.ttest_ind", lambda x, y: tuple(st.ttest_ind(x, y, axis=-1)), _n((2, 8), (2, 6)), argnums=(0, 1),
         rtol=1e-9),
    Case("stats.ttest_rel", lambda x, y: tuple(st.ttest_rel(x, y, axis=-1)), _n((2, 8), (2, 8)), argnums=(0, 1),
         rtol=1e-9),
    Case("stats.skewtest", lambda x: tuple(st.skewtest(x, axis=-1)), _n((2, 20)), rtol=1e-9),
    Case("stats.kstat2", lambda x: st.kstat(x, 2), _n((9,))),
    Case("stats.boxcox_llf", lambda x: st.boxcox_llf(0.5, x), _n((9,), lo=0.5, hi=3.0)),
]

SIGNAL = [
    Case("signal.convolve", lambda x, h: sg.convolve(x, h, method="direct"), _n((8,), (3,)), argnums=(0, 1),
         **_CONVOLVE),
    Case("signal.correlate", lambda x, h: sg.correlate(x, h, mode="same", method="direct"), _n((8,), (3,)),
         argnums=(0, 1), **_CORRELATE),
    Case("signal.fftconvolve", lambda x, h: sg.fftconvolve(x, h), _n((8,), (3,)), argnums=(0, 1)),
    Case("signal.detrend", lambda x: sg.detrend(x, axis=-1), _n((2, 9)), **_DETREND),
    Case("signal.hilbert_imag", lambda x: _imag(sg.hilbert(x)), _n((8,))),
]

FFT = [
    Case("fft.fft_real", lambda x: _real(sfft.fft(x)), _n((8,))),
    Case("fft.rfft_imag", lambda x: _imag(sfft.rfft(x, norm="ortho")), _n((2, 8))),
    Case("fft.irfft", lambda x: sfft.irfft(sfft.rfft(x), n=8), _n((8,))),
    Case("fft.fftshift", lambda x: sfft.fftshift(x), _n((7,))),
    Case("fft.dct", lambda x: sfft.dct(x, type=2, norm="ortho"), _n((8,)), **_REALTRANSFORMS),
    Case("fft.idct", lambda x: sfft.idct(x, type=2), _n((8,)), **_REALTRANSFORMS),
    Case("fft.dst", lambda x: sfft.dst(x, type=2), _n((8,)), **_REALTRANSFORMS),
]

INTEGRATE = [
    Case("integrate.trapezoid", lambda y: si.trapezoid(y, dx=0.5, axis=-1), _n((2, 7))),
    Case("integrate.trapezoid_x", lambda y, x: si.trapezoid(y, x), _n((7,), (7,)), argnums=(0, 1)),
    # (simpson is NumPy-only in scipy 1.17.1: np_only in its xp_capabilities, it returns NumPy values)
    Case("integrate.cumulative_trapezoid", lambda y: si.cumulative_trapezoid(y, dx=0.2, initial=0), _n((7,))),
    Case("integrate.cumulative_simpson", lambda y: si.cumulative_simpson(y, dx=0.2), _n((7,))),
    Case("integrate.romb", lambda y: si.romb(y, dx=0.25), _n((9,))),
]

CLUSTER_NDIMAGE = [
    Case("cluster.vq.whiten", vq.whiten, _n((6, 3))),
    Case("ndimage.gaussian_filter", lambda x: ndi.gaussian_filter(x, 1.0), _n((5, 5)), **_GAUSS),
    Case("ndimage.uniform_filter1d", lambda x: ndi.uniform_filter1d(x, 3), _n((8,)), **_UNIFORM),
]

CASES = SPECIAL + STATS + SIGNAL + FFT + INTEGRATE + CLUSTER_NDIMAGE
