"""The shape primitives of src/transforms/primitives/structural.py bound directly against NumPy:
broadcast_in_dim, reshape, transpose, concatenate, slice (strided), pad (negative and interior
padding), rev, iota. All but iota are linear: each transpose is checked by the dot-product identity
<f(x), c> == <x, f^T(c)> (pad's also with respect to its padding value, concatenate's with some
operands known), each batch rule against a Python loop (with the batch axis in the middle, and with
unbatched operands mixed in), and the abstract rules' errors."""
import numpy as np
import pytest

import array_namespace as xp
from prim_checks import check_jvp, check_transpose, check_vmap, raw
from transforms import jit, jvp, linear_transpose, vmap
from transforms.core import bind
from transforms.primitives import elementwise as E
from transforms.primitives import structural as S


def np_pad(x, pv, config):
    """NumPy oracle of pad: interior padding, then low/high edges (negative edges crop)."""
    for d, (lo, hi, interior) in enumerate(config):
        n = x.shape[d]
        if interior and n > 1:
            shape = list(x.shape)
            shape[d] = n + (n - 1) * interior
            y = np.full(shape, pv, x.dtype)
            idx = [slice(None)] * x.ndim
            idx[d] = slice(None, None, interior + 1)
            y[tuple(idx)] = x
            x = y
        shape = list(x.shape)
        shape[d] = max(lo, 0) + x.shape[d] + max(hi, 0)
        y = np.full(shape, pv, x.dtype)
        idx = [slice(None)] * x.ndim
        idx[d] = slice(max(lo, 0), max(lo, 0) + x.shape[d])
        y[tuple(idx)] = x
        crop = [slice(None)] * x.ndim
        crop[d] = slice(max(-lo, 0), y.shape[d] - max(-hi, 0))
        x = y[tuple(crop)]
    return x


X = np.arange(24, dtype=np.float64).reshape(2, 3, 4) - 7.5

# name -> (f on one raw value, NumPy oracle)
UNARY = {
    "broadcast_in_dim": (lambda v: bind(S.broadcast_in_dim_p, v, shape=(5, 2, 3, 4, 2),
                                        broadcast_dimensions=(1, 2, 3)),
                         lambda x: np.broadcast_to(x[None, ..., None], (5, 2, 3, 4, 2))),
    "broadcast_in_dim_ones": (lambda v: bind(S.broadcast_in_dim_p, S.slice_(v, (0, 0, 0), (2, 1, 4)), shape=(2, 6, 4),
                                             broadcast_dimensions=(0, 1, 2)),
                              lambda x: np.broadcast_to(x[:, :1], (2, 6, 4))),
    "reshape": (lambda v: bind(S.reshape_p, v, new_sizes=(4, 6)), lambda x: x.reshape(4, 6)),
    "transpose": (lambda v: bind(S.transpose_p, v, permutation=(2, 0, 1)), lambda x: x.transpose(2, 0, 1)),
    "slice": (lambda v: bind(S.slice_p, v, start_indices=(1, 0, 1), limit_indices=(2, 3, 4), strides=(1, 2, 2)),
              lambda x: x[1:2, 0:3:2, 1:4:2]),
    "slice_empty": (lambda v: bind(S.slice_p, v, start_indices=(0, 2, 0), limit_indices=(2, 2, 4),
                                   strides=(1, 1, 1)), lambda x: x[:, 2:2]),
    "rev": (lambda v: bind(S.rev_p, v, dimensions=(0, 2)), lambda x: x[::-1, :, ::-1]),
    # padding value 0: linear in x (a nonzero constant would make it affine); other values below
    "pad": (lambda v: bind(S.pad_p, v, S._scalar(0.0, np.float64),
                           padding_config=((1, 0, 0), (-1, 2, 1), (0, -2, 2))),
            lambda x: np_pad(x, 0.0, ((1, 0, 0), (-1, 2, 1), (0, -2, 2)))),
}
CONFIGS = [((0, 0, 0), (0, 0, 0), (0, 0, 0)), ((2, 1, 0), (0, 0, 3), (-3, -1, 0)), ((-1, -1, 0), (1, -4, 1), (1, 1, 1))]


@pytest.mark.parametrize("name", list(UNARY))
def test_values_eager_and_jit_vs_numpy(name):
    f, oracle = UNARY[name]
    want = oracle(X)
    got = np.asarray(f(raw(X)))
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.asarray(jit(lambda a: f(a._v))(xp.asarray(X))), want)


@pytest.mark.parametrize("config", CONFIGS)
def test_pad_configs_int_dtype(config):
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4)
    got = np.asarray(bind(S.pad_p, raw(x), S._scalar(7, np.int32), padding_config=config))
    np.testing.assert_array_equal(got, np_pad(x, 7, config))


@pytest.mark.parametrize("name", list(UNARY))
def test_transpose_dot_product_identity(name):
    check_transpose(lambda a: UNARY[name][0](a._v), X)


@pytest.mark.parametrize("config", CONFIGS)
def test_pad_transpose_in_operand_and_padding_value(config):
    rng = np.random.default_rng(3)
    x, pv = rng.standard_normal((2, 3, 4)), 0.7
    f = lambda a, p: bind(S.pad_p, a._v, p._v, padding_config=config)
    y = np_pad(x, pv, config)
    c = rng.standard_normal(y.shape)
    ct_x, ct_pv = linear_transpose(f, xp.asarray(x), xp.asarray(pv))(xp.asarray(c))
    # pad is linear in (x, pv) jointly: <pad(x, pv), c> == <x, ct_x> + pv * ct_pv
    np.testing.assert_allclose(np.sum(y * c), np.sum(x * np.asarray(ct_x)) + pv * float(ct_pv), rtol=1e-12)
    # ct_pv is the sum of c over the padding positions: pad(0, 1) marks them
    np.testing.assert_allclose(float(ct_pv), np.sum(c * np_pad(np.zeros_like(x), 1.0, config)), rtol=1e-12)


def test_concatenate_values_transpose_and_known_operands():
    rng = np.random.default_rng(0)
    a, b, c = rng.standard_normal((2, 1)), rng.standard_normal((2, 3)), rng.standard_normal((2, 2))
    got = np.asarray(bind(S.concatenate_p, raw(a), raw(b), raw(c), dimension=1))
    np.testing.assert_array_equal(got, np.concatenate([a, b, c], 1))
    ct = rng.standard_normal((2, 6))
    # b held fixed (a known operand): the transpose returns slices of ct for a and c only
    f = lambda u, w: bind(S.concatenate_p, u._v, raw(b), w._v, dimension=1)
    ta, tc = linear_transpose(f, xp.asarray(a), xp.asarray(c))(xp.asarray(ct))
    np.testing.assert_array_equal(np.asarray(ta), ct[:, :1])
    np.testing.assert_array_equal(np.asarray(tc), ct[:, 4:])
    check_transpose(lambda u: bind(S.concatenate_p, u._v, u._v, dimension=0), b)


def test_jvp_of_linear_primitives_is_the_primitive_of_the_tangent():
    for name in ("pad", "slice", "broadcast_in_dim", "transpose"):
        f, oracle = UNARY[name]
        check_jvp(lambda a: f(a._v), oracle, [X])


def test_iota_values_dtypes_and_zero_tangent():
    for dtype, shape, dim in ((np.int32, (3, 4), 1), (np.float32, (2, 3, 2), 0), (np.uint8, (5,), 0)):
        got = np.asarray(bind(S.iota_p, dtype=np.dtype(dtype), shape=shape, dimension=dim))
        want = np.broadcast_to(np.arange(shape[dim]).reshape([-1 if d == dim else 1 for d in range(len(shape))]),
                               shape).astype(dtype)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, want)
    out, tan = jvp(lambda a: E.mul(S.iota(np.float64, (3,), 0), a._v), (xp.asarray(2.0),), (xp.asarray(1.0),))
    np.testing.assert_array_equal(np.asarray(tan), [0.0, 1.0, 2.0])


# ------------------------------------------------------------------------------- batching
@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("axis", [0, 2])
def test_batch_rules_vs_loop(name, axis):
    f = UNARY[name][0]
    xb = np.stack([X + i for i in range(3)], axis=axis)
    check_vmap(lambda a: f(a._v), [xb], [axis])
    check_vmap(lambda a: f(a._v), [xb], [axis], out_axes=1)


PAD_CONFIG = ((1, -1, 1), (0, 2, 0))
PAD_X = np.arange(6.0).reshape(2, 3)
PAD_VALUES = np.array([-1.0, 5.0, 9.0])


def _pad(a, p):
    return bind(S.pad_p, a._v, p._v, padding_config=PAD_CONFIG)


def test_pad_batch_with_batched_padding_value_and_unbatched_operand():
    want = np.stack([np_pad(PAD_X + i, p, PAD_CONFIG) for i, p in enumerate(PAD_VALUES)])
    xb = np.stack([PAD_X + i for i in range(3)])
    np.testing.assert_array_equal(check_vmap(_pad, [xb, PAD_VALUES], [0, 0]), want)
    check_vmap(_pad, [PAD_X, PAD_VALUES], [None, 0])      # only the padding value is batched
    check_vmap(_pad, [np.moveaxis(xb, 0, 1), np.float64(2.0)], [1, None])


def test_pad_batch_with_batched_padding_value_and_operand_batched_off_axis_0():
    # the operand's batch axis in the middle and a batched padding value
    xb = np.stack([PAD_X + i for i in range(3)], axis=1)
    check_vmap(_pad, [xb, PAD_VALUES], [1, 0])


def test_concatenate_batch_with_unbatched_operands():
    a, b = np.arange(12.0).reshape(3, 2, 2), np.arange(4.0).reshape(2, 2) + 100
    f = lambda u, w: bind(S.concatenate_p, w._v, u._v, w._v, dimension=1)
    check_vmap(f, [a, b], [0, None])
    check_vmap(f, [np.moveaxis(a, 0, 2), b], [2, None])


def test_rev_batch_keeps_the_batch_axis_in_place():
    x = np.arange(24.0).reshape(2, 3, 4)
    got = vmap(lambda a: bind(S.rev_p, a._v, dimensions=(0,)), in_axes=1, out_axes=1)(xp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), x[::-1])


# ------------------------------------------------------------------------------- errors
@pytest.mark.parametrize("call, exc, text", [
    (lambda v: bind(S.reshape_p, v, new_sizes=(5, 5)), ValueError, "cannot reshape array of shape (2, 3, 4)"),
    (lambda v: bind(S.transpose_p, v, permutation=(0, 0, 1)), ValueError, "is not a permutation"),
    (lambda v: bind(S.broadcast_in_dim_p, v, shape=(2, 5, 4), broadcast_dimensions=(0, 1, 2)), ValueError,
     "cannot broadcast shape (2, 3, 4)"),
    (lambda v: bind(S.slice_p, v, start_indices=(0, 0, 0), limit_indices=(2, 4, 4), strides=(1, 1, 1)),
     IndexError, "out of bounds for axis 1 of size 3"),
    (lambda v: bind(S.slice_p, v, start_indices=(0, 0, 0), limit_indices=(2, 3, 4), strides=(1, 0, 1)),
     IndexError, "slice [0:3:0]"),
    (lambda v: bind(S.pad_p, v, S._scalar(0, np.float32), padding_config=((0, 0, 0),) * 3), TypeError,
     "pad value must be a scalar of the operand's dtype"),
    (lambda v: bind(S.pad_p, v, S._scalar(0, np.float64), padding_config=((0, -3, 0), (0, 0, 0), (0, 0, 0))),
     ValueError, "pad config"),
    (lambda v: bind(S.concatenate_p, v, bind(S.transpose_p, v, permutation=(0, 2, 1)), dimension=0), ValueError,
     "differ outside axis 0"),
    (lambda v: bind(S.concatenate_p, v, S.full((2, 3, 4), 0, np.float32), dimension=0), TypeError,
     "must share a dtype"),
])
def test_abstract_errors(call, exc, text):
    with pytest.raises(exc) as e:
        call(raw(X))
    assert text in str(e.value)
    with pytest.raises(exc):                       # the same check under tracing
        jit(lambda a: call(a._v))(xp.asarray(X))


def test_inverse_permutation_undoes_every_permutation_as_numpys_argsort():
    import itertools
    for n in range(5):
        for p in itertools.permutations(range(n)):
            inv = S.inverse_permutation(p)
            assert inv == tuple(int(i) for i in np.argsort(p)) and tuple(p[i] for i in inv) == tuple(range(n))
