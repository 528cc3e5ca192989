"""Boolean-mask updates with a fixed shape (x[mask] = v, x.at[mask].op(v) with a count-free value):
values vs NumPy eagerly and under jit (traced masks too), vmap vs a Python loop, gradients vs
finite differences, the data-dependent cases' errors, scipy functions that write x[mask] = scalar,
and the repeat / eye argument checks."""
import os

os.environ["SCIPY_ARRAY_API"] = "1"   # before scipy is imported anywhere in this module

import numpy as np  # noqa: E402
import pytest  # noqa: E402
from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import array_namespace as xp  # noqa: E402
from array_namespace._datadep import DataDependentShapeError  # noqa: E402
from finite_diff import central_diff, central_diff_args  # noqa: E402
from transforms import ConcretizationTypeError, grad, jit, make_jaxpr, vmap  # noqa: E402

RNG = np.random.default_rng(7)
MODES = ["set", "add", "subtract", "multiply", "divide", "power", "min", "max"]
DTYPES = {"bool": (np.bool_, xp.bool, True), "int32": (np.int32, xp.int32, 2), "int64": (np.int64, xp.int64, 3),
          "float32": (np.float32, xp.float32, 1.5), "float64": (np.float64, xp.float64, -0.75),
          "complex128": (np.complex128, xp.complex128, 1.5 - 2j)}
VALID = {"bool": ["set", "add", "multiply", "min", "max"],
         "int32": ["set", "add", "subtract", "multiply", "power", "min", "max"],
         "int64": ["set", "add", "subtract", "multiply", "power", "min", "max"],
         "float32": MODES, "float64": MODES,
         "complex128": ["set", "add", "subtract", "multiply", "divide", "power"]}
INVALID = [(d, m) for d in DTYPES for m in MODES if m not in VALID[d]]


def np_update(a, key, v, mode):
    """The NumPy oracle: a copy of a with a[key] combined with v."""
    b = a.copy()
    if mode == "set":
        b[key] = v
        return b
    cur, v = b[key], np.asarray(v, a.dtype)
    if a.dtype == np.bool_:
        f = {"add": np.logical_or, "multiply": np.logical_and, "min": np.minimum, "max": np.maximum}[mode]
    else:
        f = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
             "power": np.power, "min": np.minimum, "max": np.maximum}[mode]
    with np.errstate(all="ignore"):
        b[key] = f(cur, v).astype(a.dtype)
    return b


def base(dt, shape=(3, 4)):
    npdt = DTYPES[dt][0]
    if dt == "bool":
        return RNG.random(shape) < 0.5
    if dt.startswith("int"):
        return RNG.integers(-3, 4, shape).astype(npdt)
    a = RNG.uniform(0.5, 3.0, shape)
    if dt.startswith("complex"):
        a = a + 1j * RNG.uniform(-2, 2, shape)
    return a.astype(npdt)


def masks(shape):
    r = RNG.random(shape) < 0.5
    return {"none": np.zeros(shape, bool), "all": np.ones(shape, bool), "random": r}


def values(dt, v):
    """The same value as a Python scalar, a 0-d array and a size-1 array."""
    xdt = DTYPES[dt][1]
    return {"python": v, "0d": xp.asarray(v, dtype=xdt), "size1": xp.asarray([v], dtype=xdt)}


def check(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    tol = 1e-6 if want.dtype in (np.float32, np.complex64) else 1e-13
    if want.dtype.kind in "fc":
        np.testing.assert_allclose(got, want, rtol=tol, atol=0, equal_nan=True)
    else:
        np.testing.assert_array_equal(got, want)


def op(x, key, v, mode):
    return getattr(x.at[key], mode)(v)


@pytest.mark.parametrize("dt,mode", [(d, m) for d in DTYPES for m in VALID[d]])
def test_masked_update_values_eager_and_jit(dt, mode):
    a, v0 = base(dt), DTYPES[dt][2]
    x = xp.asarray(a)
    traced_mask = jit(lambda x, m, v: op(x, m, v, mode))
    python_v = jit(lambda x, m: op(x, m, v0, mode))
    for lead in (False, True):                 # mask of x's shape, or of its leading dim only
        for mname, m in masks(a.shape[:1] if lead else a.shape).items():
            want = np_update(a, m, v0, mode)
            mx = xp.asarray(m)
            for vname, v in values(dt, v0).items():
                check(op(x, mx, v, mode), want)
                y = xp.asarray(a, copy=True)
                if mode == "set":
                    y[mx] = v
                    check(y, want)
                if vname != "python":
                    check(traced_mask(x, mx, v), want)
            check(python_v(x, mx), want)


@pytest.mark.parametrize("dt,mode", INVALID)
def test_invalid_mode_dtype_pairs_raise_type_error(dt, mode):
    a, v0 = base(dt), DTYPES[dt][2]
    m = xp.asarray(masks(a.shape)["random"])
    with pytest.raises(TypeError):
        op(xp.asarray(a), m, v0, mode)
    with pytest.raises(TypeError):
        jit(lambda x, m: op(x, m, v0, mode))(xp.asarray(a), m)


def test_every_key_kind_agrees_on_dtype_rules():
    """Slices, integer arrays and masks go through different code; the dtype rules are the same."""
    b = np.array([True, False, True, False])
    keys = [(slice(0, 3), slice(0, 3)), (xp.asarray([0, 1, 2]), [0, 1, 2]),
            (xp.asarray([True, True, True, False]), [0, 1, 2])]
    for mode in ("add", "multiply", "min", "max"):
        for v in (True, False):
            for kx, kn in keys:
                check(op(xp.asarray(b), kx, v, mode), np_update(b, kn, v, mode))
    for kx, _ in keys:
        for x, mode in ((xp.asarray(b), "subtract"), (xp.asarray(b), "power"), (xp.asarray([1, 2, 3, 4]), "divide"),
                        (xp.asarray([1j, 2, 3, 4]), "min"), (xp.asarray([1j, 2, 3, 4]), "max")):
            with pytest.raises(TypeError):
                op(x, kx, 1, mode)


@st.composite
def shape_and_mask(draw):
    shape = tuple(draw(st.lists(st.integers(0, 4), min_size=0, max_size=3)))
    k = draw(st.integers(0, len(shape)))
    bits = draw(st.lists(st.booleans(), min_size=int(np.prod(shape[:k])), max_size=int(np.prod(shape[:k]))))
    return shape, np.array(bits, bool).reshape(shape[:k])


@given(shape_and_mask(), st.sampled_from(["set", "add", "max"]))
def test_masked_update_any_shape_and_leading_mask(sm, mode):
    shape, m = sm
    a = RNG.standard_normal(shape)
    want = np_update(a, m, 2.5, mode)
    check(op(xp.asarray(a), xp.asarray(m), 2.5, mode), want)
    check(jit(lambda x, m: op(x, m, 2.5, mode))(xp.asarray(a), xp.asarray(m)), want)


def test_masked_update_lowers_to_select():
    a = RNG.standard_normal((3, 4))
    text = str(make_jaxpr(lambda x, m: x.at[m].add(1.0))(xp.asarray(a), xp.asarray(a > 0)))
    assert "select_n" in text and "scatter" not in text and "gather" not in text


# ----------------------------------------------------------------------- combined keys
A3 = np.arange(60.0).reshape(3, 4, 5)
M3, M4, M5 = np.array([True, False, True]), np.array([False, True, True, False]), A3[0, 0] % 2 == 0
M34 = A3[..., 0] % 3 == 0
COMBINED = [  # (key with the mask as a placeholder "M", mask, value); values never need the count
    (("M", 0), M3, -1.0), ((Ellipsis, "M"), M5, -1.0), ((1, slice(None), "M"), M5, -2.0),
    (("M",), M34, 7.0), (("M", 2), M34, 7.0), ((slice(None, None, -1), "M"), M4, np.arange(5.0)),
    ((None, "M"), M3, 3.0), (("M", None, slice(1, 4, 2)), M3, np.array([[1.0], [2.0]])),
    ((0, "M", 3), M4, 9.0), (("M", slice(None), -1), M3, np.arange(4.0)),      # not adjacent: count first
    ((slice(None), "M", None), M4, np.ones((1, 5))), (("M",), M3, np.arange(20.0).reshape(4, 5)),
    (("M", slice(None, None, -2)), M3, np.ones((1, 1, 1, 1))), ((Ellipsis, "M", 1), M4, 5.0),
    (("M",), np.bool_(True), 4.0), ((0, "M"), np.bool_(False), 4.0), (("M", 1), np.bool_(True), 4.0),
]


def fill(key, m):
    return tuple(m if k == "M" else k for k in key)


@pytest.mark.parametrize("i", range(len(COMBINED)))
def test_combined_keys_match_numpy_eager_and_jit(i):
    key, m, v = COMBINED[i]
    want = np_update(A3, fill(key, m), v, "set")
    vx = xp.asarray(v) if isinstance(v, np.ndarray) else v
    check(xp.asarray(A3).at[fill(key, xp.asarray(m))].set(vx), want)

    def f(x, m):
        y = x * 1.0
        y[fill(key, m)] = vx
        return y
    check(jit(f)(xp.asarray(A3), xp.asarray(m)), want)


def test_traced_integer_next_to_mask():
    f = jit(lambda x, i, m: x.at[i, m].add(1.0))
    for i in (0, 2, -1, -3):
        check(f(xp.asarray(A3), xp.asarray(i), xp.asarray(M4)), np_update(A3, (i, M4), 1.0, "add"))
    # out of range: eager's IndexError where the call's values are known; clamped into range where not (strict
    # jit), as traced reads and updates are
    with pytest.raises(IndexError, match="index 7 is out of bounds"):
        f(xp.asarray(A3), xp.asarray(7), xp.asarray(M4))
    strict = jit(lambda x, i, m: x.at[i, m].add(1.0), guards=False)
    check(strict(xp.asarray(A3), xp.asarray(7), xp.asarray(M4)), np_update(A3, (2, M4), 1.0, "add"))


def test_data_dependent_cases_keep_a_clear_error():
    x, m = xp.asarray(A3[0]), xp.asarray(M4)
    with pytest.raises(DataDependentShapeError, match=r"__getitem__") as e:
        jit(lambda x, m: x[m], guards=False)(x, m)
    msg = str(e.value)
    for alt in ("xp.where(mask, x, fill)", "x.at[mask].set(v)", "xp.sum(xp.where(mask, x, 0))"):
        assert alt in msg
    with pytest.raises(ConcretizationTypeError):
        vmap(lambda x, m: x[m])(xp.asarray(A3), xp.asarray(A3 > 20))
    # a value with one entry per True element needs the count: eager only
    v = np.arange(2.0 * 5).reshape(2, 5)
    check(x.at[m].set(xp.asarray(v)), np_update(A3[0], M4, v, "set"))
    with pytest.raises(DataDependentShapeError, match=r"at\[\]\.set.*xp\.where\(mask, new_values, x\)"):
        jit(lambda x, m: x.at[m].set(xp.asarray(v)), guards=False)(x, m)
    g = vmap(lambda x, m: x.at[m].set(xp.ones((2, 5))))
    ms = np.tile(M4, (3, 1))   # every batch element has the same mask: its count is the one count
    check(g(xp.asarray(A3), xp.asarray(ms)), np.stack([np_update(A3[i], M4, np.ones((2, 5)), "set") for i in range(3)]))
    ms[1] = ~ms[1]             # element 1's mask differs but has the same count: only the count must agree
    check(g(xp.asarray(A3), xp.asarray(ms)),
          np.stack([np_update(A3[i], ms[i], np.ones((2, 5)), "set") for i in range(3)]))
    ms[1] = [True, True, True, False]   # element 1's mask has another count: vmap runs each element alone (as a
    with pytest.raises(ValueError, match=r"value of shape \(2, 5\).*indexed shape \(3, 5\)") as e:   # loop would)
        g(xp.asarray(A3), xp.asarray(ms))
    assert "batch element 1 of 3" in str(e.value.__notes__)   # (that element's own error, as eagerly)
    # a mask paired with an integer array: eager only
    idx = np.array([0, 4])
    check(x.at[xp.asarray(M4), xp.asarray(idx)].set(-1.0), np_update(A3[0], (M4, idx), -1.0, "set"))
    with pytest.raises(DataDependentShapeError):
        jit(lambda x, m: x.at[m, xp.asarray(idx)].set(-1.0), guards=False)(x, m)
    # wrong mask shape, wrong value shape: IndexError / ValueError, eagerly and under jit
    for g in (lambda x, m: x.at[m].set(1.0), jit(lambda x, m: x.at[m].set(1.0))):
        with pytest.raises(IndexError):
            g(x, xp.asarray(M3))
    for g in (lambda x, m: x.at[m].set(xp.ones(3)), jit(lambda x, m: x.at[m].set(xp.ones(3)))):
        with pytest.raises(ValueError):
            g(x, m)


# ------------------------------------------------------------------------------- vmap
def test_vmap_masked_updates_vs_loop():
    xs = RNG.standard_normal((4, 3, 5))
    ms = RNG.random((4, 3, 5)) < 0.5
    vs = RNG.standard_normal(4)

    def f(x, m, v):
        y = x * 1.0
        y[m] = v
        return y.at[m[:, 0], 1].multiply(2.0)

    def ref(x, m, v):
        return np_update(np_update(x, m, v, "set"), (m[:, 0], 1), 2.0, "multiply")
    X, Mb, V = xp.asarray(xs), xp.asarray(ms), xp.asarray(vs)
    check(vmap(f)(X, Mb, V), np.stack([ref(x, m, v) for x, m, v in zip(xs, ms, vs)]))          # all batched
    check(vmap(f, in_axes=(None, 0, None))(X[0], Mb, V[0]), np.stack([ref(xs[0], m, vs[0]) for m in ms]))
    check(vmap(f, in_axes=(0, None, None))(X, Mb[1], V[1]), np.stack([ref(x, ms[1], vs[1]) for x in xs]))
    check(vmap(f, in_axes=(0, None, 0))(X, Mb[2], V), np.stack([ref(x, ms[2], v) for x, v in zip(xs, vs)]))
    g = vmap(lambda x, m: x.at[..., m].max(0.0), in_axes=(0, 0))
    check(g(X, Mb[:, 0]), np.stack([np_update(x, (Ellipsis, m), 0.0, "max") for x, m in zip(xs, ms[:, 0])]))


# ------------------------------------------------------------------------------- grad
GX = RNG.uniform(0.5, 2.0, (3, 4))
GM = RNG.random((3, 4)) < 0.5
GW = RNG.standard_normal((3, 4))


@pytest.mark.parametrize("mode", MODES)
def test_grad_wrt_x_and_v_vs_finite_differences(mode):
    v0 = 1.3 if mode not in ("min", "max") else 1.234   # away from ties with GX
    w, m = xp.asarray(GW), xp.asarray(GM)

    def f(x, v, m):
        return xp.sum(w * xp.sin(op(x, m, v, mode)))
    jf = jit(f)
    want = central_diff_args(lambda a, b: float(jf(xp.asarray(a), xp.asarray(b), m)), [GX, np.asarray(v0)])
    gx, gv = grad(f, argnums=(0, 1))(xp.asarray(GX), xp.asarray(v0), m)
    np.testing.assert_allclose(np.asarray(gx), want[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gv), want[1], rtol=1e-6, atol=1e-8)
    # jit of grad: the mask is traced
    gx2, gv2 = jit(grad(f, argnums=(0, 1)))(xp.asarray(GX), xp.asarray(v0), m)
    np.testing.assert_allclose(np.asarray(gx2), want[0], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(gv2), want[1], rtol=1e-6, atol=1e-8)


def test_grad_of_set_is_exact():
    gx, gv = grad(lambda x, v: xp.sum(xp.asarray(GW) * x.at[xp.asarray(GM)].set(v)), argnums=(0, 1))(
        xp.asarray(GX), 2.0)
    np.testing.assert_array_equal(np.asarray(gx), np.where(GM, 0.0, GW))
    np.testing.assert_allclose(float(gv), GW[GM].sum(), rtol=1e-14)


def test_grad_ignores_non_finite_values_outside_the_mask():
    a = GX.copy()
    a[~GM] = np.inf
    a[0, ~GM[0]] = -1.0       # pow of a negative base at a fractional power: NaN outside the mask
    w = xp.asarray(GW)
    for mode in ("multiply", "divide", "power"):
        gv = grad(lambda v: xp.sum(w * op(xp.asarray(a), xp.asarray(GM), v, mode)))(1.5)
        am = a[GM]
        d = {"multiply": am, "divide": -am / 1.5 ** 2, "power": np.log(am) * am ** 1.5}[mode]
        np.testing.assert_allclose(float(gv), (GW[GM] * d).sum(), rtol=1e-12)
        gx = grad(lambda x: xp.sum(w * op(x, xp.asarray(GM), 1.5, mode)))(xp.asarray(np.where(GM, a, 0.7)))
        assert np.all(np.isfinite(np.asarray(gx)))
        np.testing.assert_array_equal(np.asarray(gx)[~GM], GW[~GM])


# ------------------------------------------------------------------------------ scipy
import scipy.stats as scipy_stats  # noqa: E402  (scipy is a test extra)
import scipy.special as scipy_special  # noqa: E402
import scipy.cluster.vq as scipy_vq  # noqa: E402
SA = RNG.standard_normal((5, 6))
SB = SA.copy()
SB[1, 2] = SB[3, :] = -np.inf         # logsumexp masks the -inf entries (and an all -inf row)


def test_scipy_zscore_under_jit():
    check(jit(scipy_stats.zscore)(xp.asarray(SA)), scipy_stats.zscore(SA))
    check(jit(lambda x: scipy_stats.zscore(x, axis=1))(xp.asarray(SA)), scipy_stats.zscore(SA, axis=1))


@pytest.mark.parametrize("axis", [None, 1])
def test_scipy_logsumexp_under_jit(axis):
    for a in (SA, SB):
        check(jit(lambda x: scipy_special.logsumexp(x, axis=axis))(xp.asarray(a)),
              np.asarray(scipy_special.logsumexp(a, axis=axis)))


def test_scipy_whiten_under_vmap():
    batch = RNG.standard_normal((4, 7, 3))
    check(vmap(scipy_vq.whiten)(xp.asarray(batch)), np.stack([scipy_vq.whiten(b) for b in batch]))


def test_scipy_gradients_vs_finite_differences():
    sa = SA[:3, :4]
    w = xp.asarray(RNG.standard_normal(sa.shape))
    lse = lambda x: scipy_special.logsumexp(x)                 # noqa: E731
    g = grad(lse)(xp.asarray(SB))
    want = np.exp(SB - scipy_special.logsumexp(SB))             # softmax; 0 at the -inf entries
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-12, atol=1e-15)
    jl = jit(lse)
    np.testing.assert_allclose(np.asarray(grad(lse)(xp.asarray(sa))),
                               central_diff(lambda v: float(jl(xp.asarray(v))), sa), rtol=1e-6, atol=1e-9)
    z = lambda x: xp.sum(w * scipy_stats.zscore(x))            # noqa: E731
    jz = jit(z)
    fd = central_diff(lambda v: float(jz(xp.asarray(v))), sa)
    np.testing.assert_allclose(np.asarray(grad(z)(xp.asarray(sa))), fd, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(np.asarray(jit(grad(z))(xp.asarray(sa))), fd, rtol=1e-6, atol=1e-8)


# ------------------------------------------------------------------ repeat and eye arguments
def test_repeat_rejects_floating_point_repeats():
    x = xp.asarray([1, 2, 3])
    for reps in (2.0, xp.asarray([1.0, 2.0, 0.0]), xp.asarray(2.5), xp.asarray([True, False, True])):
        with pytest.raises(TypeError, match="repeat: repeats"):
            xp.repeat(x, reps)
        with pytest.raises(TypeError, match="repeat: repeats"):
            jit(lambda x: xp.repeat(x, reps))(x)
    check(xp.repeat(x, xp.asarray([1, 0, 2])), np.repeat([1, 2, 3], [1, 0, 2]))
    check(xp.repeat(x, np.int64(2)), np.repeat([1, 2, 3], 2))


def test_eye_rejects_non_integer_k():
    for k in (1.5, 1.0, None):
        for n in (3, 200):                    # small (host-filled) and large (staged) eagerly
            with pytest.raises(TypeError, match="eye: k"):
                xp.eye(n, k=k)
        with pytest.raises(TypeError, match="eye: k"):
            jit(lambda: xp.eye(3, k=k))()
    check(jit(lambda: xp.eye(3, 4, k=np.int32(1)))(), np.eye(3, 4, k=1))
    check(xp.eye(200, k=-3), np.eye(200, k=-3))


def test_numpy_scalar_values_store_like_python_scalars():
    """sklearn writes `result[mask] = zero_division_value` with a NumPy float64 scalar."""
    a = np.array([1.0, 2.0, 3.0], np.float32)
    m = np.array([True, False, True])
    for v in (np.float64(7.5), np.int64(4), np.float32(-1.25)):
        y = xp.asarray(a, copy=True)
        y[xp.asarray(m)] = v
        check(y, np_update(a, m, v, "set"))
        check(jit(lambda x, m: x.at[m].add(v))(xp.asarray(a), xp.asarray(m)), np_update(a, m, v, "add"))
    with pytest.raises(TypeError):
        xp.asarray([1, 2]).at[0].set(np.float64(5.5))


def test_repeated_masked_updates_of_one_shape_follow_each_mask_and_value():
    # the binds are planned once per (shape, key form, value shape, mode): each call still takes its own mask
    # and value, and a bad value raises every time, before and after good calls of the same shapes
    rng = np.random.default_rng(11)
    for key_of in (lambda m: m, lambda m: (slice(None), m[0]), lambda m: (1, m[0])):
        for i in range(6):
            x0 = rng.standard_normal((4, 5))
            m0 = rng.random((4, 5)) < 0.5
            k_np, k_xp = key_of(m0), key_of(xp.asarray(m0))
            val = float(i) - 2.5
            want, got = x0.copy(), xp.asarray(x0)
            want[k_np] = val
            got[k_xp] = val
            np.testing.assert_array_equal(np.asarray(got), want)
            if not isinstance(k_np, tuple):
                want[k_np] *= 2.0
                got[k_xp] *= 2.0
                np.testing.assert_array_equal(np.asarray(got), want)
                with pytest.raises(ValueError, match="cannot be broadcast"):
                    got[k_xp] = xp.ones((3,))
