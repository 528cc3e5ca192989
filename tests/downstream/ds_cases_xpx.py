"""array-api-extra 0.11.5 cases: one row per call. The oracle is the same call on NumPy arrays."""
import array_api_extra as xpx
import numpy as np
from array_api_compat import array_namespace

from ds_harness import LIB, NA, Case


def _ns(*a):
    return array_namespace(*a)


def _n(*shapes):
    return lambda rng: tuple(rng.standard_normal(s) for s in shapes)


def _ints(*shapes, hi=5):
    return lambda rng: tuple(rng.integers(0, hi, s) for s in shapes)


def _with_nans(*shape):
    """Normal values with NaNs at fixed places (a NaN entry's finite-difference derivative is 0)."""
    def make(rng):
        x = rng.standard_normal(shape)
        x.reshape(-1)[::3] = np.nan
        return (x,)
    return make


# The output's size depends on the input's values: vmap runs the function on each batch element in turn
# (transforms/vmap_loop.py), whose outputs of different sizes cannot be stacked. (In-place ops other than set()
# with a boolean mask read x[mask], _at.py:347, a size each element has its own of: that loop, stacked.)
_SETDIFF = "array_api_extra/_agnostic/_set.py:76 xp.unique_values(x1_) (data-dependent output size)"
_UNION = "array_api_extra/_agnostic/_set.py:88 xp.unique_values(concat) (data-dependent output size)"


def _complex(x, y):
    ns = _ns(x, y)
    return ns.astype(x, ns.complex128) + 1j * ns.astype(y, ns.complex128)


def _broadcast(x, y):
    return _ns(x).broadcast_to(x, xpx.broadcast_shapes(x.shape, y.shape))


CASES = [
    Case("xpx.atleast_nd", lambda x: xpx.atleast_nd(x, ndim=3), _n((4,))),
    Case("xpx.cov", lambda x: xpx.cov(x), _n((3, 6))),
    Case("xpx.cov_axis0", lambda x: xpx.cov(x, axis=0, correction=0), _n((6, 3))),
    Case("xpx.create_diagonal", lambda x: xpx.create_diagonal(x, offset=1), _n((4,))),
    Case("xpx.expand_dims", lambda x: xpx.expand_dims(x, axis=(0, 2)), _n((2, 3))),
    Case("xpx.kron", xpx.kron, _n((2, 2), (3, 2)), argnums=(0, 1)),
    Case("xpx.nunique", xpx.nunique, _ints((8,)), grad=NA),
    Case("xpx.pad", lambda x: xpx.pad(x, 2, constant_values=1.5), _n((2, 3))),
    Case("xpx.pad_widths", lambda x: xpx.pad(x, ((1, 0), (0, 2))), _n((2, 3))),
    Case("xpx.setdiff1d", xpx.setdiff1d, _ints((8,), (3,)), vmap=LIB, grad=NA, why=_SETDIFF),
    Case("xpx.union1d", xpx.union1d, _ints((5,), (4,)), vmap=LIB, grad=NA, why=_UNION),
    Case("xpx.isin", xpx.isin, _ints((6,), (3,)), grad=NA),
    Case("xpx.sinc", xpx.sinc, _n((6,))),
    Case("xpx.isclose", lambda a, b: xpx.isclose(a, a + 1e-3 * b, atol=5e-4), _n((8,), (8,)), grad=NA),
    Case("xpx.at_set_slice", lambda x, y: xpx.at(x, slice(1, 3)).set(y), _n((5,), (2,)), argnums=(0, 1)),
    Case("xpx.at_add_int", lambda x, y: xpx.at(x, 2).add(y), _n((5,), ()), argnums=(0, 1)),
    Case("xpx.at_multiply_slice", lambda x, y: xpx.at(x)[::2].multiply(y), _n((5,), (3,)), argnums=(0, 1)),
    Case("xpx.at_set_mask", lambda x: xpx.at(x, x > 0).set(0.0), _n((6,))),
    Case("xpx.at_min_mask", lambda x, y: xpx.at(x, x < 0).min(y), _n((6,), ()), argnums=(0, 1)),
    Case("xpx.apply_where", lambda x: xpx.apply_where(x > 0, x, lambda v: v ** 1.5, fill_value=-1.0),
         _n((6,))),
    Case("xpx.apply_where_f2", lambda x, y: xpx.apply_where(x > 0, (x, y), lambda a, b: a * b,
                                                            lambda a, b: a - b), _n((6,), (6,)), argnums=(0, 1)),
    Case("xpx.broadcast_shapes", _broadcast, _n((3, 1), (4,))),
    Case("xpx.one_hot", lambda i: xpx.one_hot(i, 5), _ints((6,)), grad=NA),
    Case("xpx.nan_to_num", lambda x: xpx.nan_to_num(x, fill_value=-2.0), _with_nans(6)),
    Case("xpx.nanmean", lambda x: xpx.nanmean(x), _with_nans(3, 4)),
    Case("xpx.nansum_axis", lambda x: xpx.nansum(x, axis=0), _with_nans(3, 4)),
    Case("xpx.nanmin_axis", lambda x: xpx.nanmin(x, axis=-1), _with_nans(3, 4)),
    Case("xpx.nanmax", lambda x: xpx.nanmax(x, axis=-1), _with_nans(3, 4)),
    Case("xpx.partition", lambda x: xpx.partition(x, 2)[..., 2], _n((2, 6))),
    Case("xpx.searchsorted", lambda s, v: xpx.searchsorted(_ns(s).sort(s), v), _n((6,), (4,)), grad=NA),
    Case("xpx.unravel_index", lambda i: xpx.unravel_index(i, (3, 4)), _ints((5,), hi=12), grad=NA),
    Case("xpx.deg2rad", xpx.deg2rad, _n((4,))),
    Case("xpx.angle", lambda x, y: xpx.angle(_complex(x, y)), _n((4,), (4,)), argnums=(0, 1)),
]
