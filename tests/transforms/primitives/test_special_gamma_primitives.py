"""zeta_chlo (src/transforms/primitives/special_gamma.py) bound directly against scipy: it exists only
inside the lowering of zeta, so no jaxpr shows it and only this test checks its own values (where it is
meant to be right: q > 0, finite x), eager, under jit and under vmap. It has no derivative (a declared gap: zeta_p
carries that)."""
import numpy as np
import pytest
import scipy.special as sc

import array_namespace as xp
from transforms import jit, vmap
from transforms.core import bind
from transforms.primitives import special_gamma as G

DIRECT = {"zeta_chlo": (G.zeta_chlo_p, sc.zeta)}   # primitive name -> (primitive, oracle) on q > 0

# x = inf or huge (q**-x overflowing) is outside it too: CHLO gives NaN where scipy gives inf or 1;
# xp.special.zeta answers those itself (its own tests check them)
X = np.array([1.5, 2.0, 2.5, 3.0, 4.0, 7.5, 12.0, 30.0, 1.0, 0.5, 60.0, np.nan])
Q = np.array([0.1, 0.5, 1.0, 2.0, 3.7, 10.0, 100.0, 1e4])
TOL = {np.float32: 2e-5, np.float64: 1e-12}   # atol: subnormal results flush to 0 in XLA on CPU


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_values_eager_jit_vmap(dtype):
    x, q = (a.astype(dtype) for a in np.meshgrid(X, Q, indexing="ij"))
    with np.errstate(all="ignore"):
        want = sc.zeta(x.astype(np.float64), q.astype(np.float64)).astype(dtype)
    f = lambda a, b: bind(G.zeta_chlo_p, a._v, b._v)
    args = (xp.asarray(x), xp.asarray(q))
    for how, got in (("eager", f(*args)), ("jit", jit(f)(*args)), ("vmap", vmap(f)(*args))):
        got = np.asarray(got)
        assert got.dtype == dtype, how
        np.testing.assert_allclose(got, want, rtol=TOL[dtype], atol=4 * np.finfo(dtype).tiny,
                                   equal_nan=True, err_msg=how)
