"""xla/lower_fft.py: the fft primitive in all four kinds (complex forward/inverse, real forward and
inverse), 1-D and n-D, float32 and float64, reached through xp.fft under jit, against numpy.fft."""
import numpy as np
import pytest

import array_namespace as xp
from lower_harness import Case, check, lowered_by, prims_of
from transforms import make_jaxpr

R = np.random.default_rng(0)
X = R.standard_normal((3, 8))
Z = X + 1j * R.standard_normal((3, 8))

CASES = [
    Case("fft-c128", xp.fft.fft, np.fft.fft, [Z], 1e-12, 1e-12),
    Case("fft-c64", xp.fft.fft, lambda z: np.fft.fft(z).astype(np.complex64), [Z.astype(np.complex64)], 2e-5, 2e-5),
    Case("ifft-axis0", lambda z: xp.fft.ifft(z, axis=0), lambda z: np.fft.ifft(z, axis=0), [Z], 1e-12, 1e-12),
    Case("rfft-f64", xp.fft.rfft, np.fft.rfft, [X], 1e-12, 1e-12),
    Case("rfft-f32", xp.fft.rfft, lambda x: np.fft.rfft(x).astype(np.complex64), [X.astype(np.float32)], 2e-5, 2e-5),
    Case("irfft-n", lambda z: xp.fft.irfft(z, n=8), lambda z: np.fft.irfft(z, n=8), [np.fft.rfft(X)], 1e-12, 1e-12),
    Case("fftn", xp.fft.fftn, np.fft.fftn, [Z], 1e-12, 1e-12),
    Case("irfftn-ortho", lambda z: xp.fft.irfftn(z, norm="ortho"), lambda z: np.fft.irfftn(z, norm="ortho"),
         [np.fft.rfftn(X)], 1e-12, 1e-12),
    Case("fft-special", xp.fft.fft, np.fft.fft, [np.array([0, np.inf, 0, 0], complex)]),
]


@pytest.mark.parametrize("case", CASES, ids=repr)
def test_jit_matches_numpy(case):
    check(case)


def test_every_fft_kind_is_lowered():
    kinds = set()
    for c in CASES:
        for e in make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args]).jaxpr.eqns:
            if e.prim.name == "fft":
                kinds.add(str(e.params["fft_type"]))
    assert len(kinds) == 4, kinds
    reached = set().union(*(prims_of(make_jaxpr(c.fn)(*[xp.asarray(a) for a in c.args])) for c in CASES))
    assert lowered_by("xla.lower_fft") - reached == set()
