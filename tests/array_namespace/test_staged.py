"""array_namespace/_staged.py: `compiled` stages a namespace function once per signature (Array
arguments traced, the rest static) and `bucketed` once per power-of-two size; values against NumPy,
eagerly and under jit/vmap (traced inline)."""
import numpy as np
import pytest

import array_namespace as xp
from array_namespace._staged import bucketed, compiled
from transforms import jit, vmap

calls = []


@compiled
def _scaled_norm(x, scale, *, squared=False):
    calls.append(("norm", x.shape, scale, squared))
    s = xp.sum(x * x, axis=-1)
    return (s if squared else xp.sqrt(s)) * scale


def _pair(a, b):
    calls.append(("pair", a.shape))
    return a * b + 1.0, a - b


def test_compiled_stages_once_per_signature_and_matches_numpy():
    calls.clear()
    x = np.arange(12.0).reshape(3, 4)
    want = np.sqrt((x * x).sum(-1)) * 2.0
    for _ in range(3):
        np.testing.assert_allclose(np.asarray(_scaled_norm(xp.asarray(x), 2.0)), want)
    assert calls == [("norm", (3, 4), 2.0, False)]           # traced once
    np.testing.assert_allclose(np.asarray(_scaled_norm(xp.asarray(x), 3.0, squared=True)), (x * x).sum(-1) * 3)
    _scaled_norm(xp.asarray(x[:2]), 2.0)
    assert len(calls) == 3                                     # a new static value, a new shape: new stagings
    _scaled_norm(xp.asarray(x), 2)                             # 2 is not 2.0: the static's type is in the key
    assert calls[-1] == ("norm", (3, 4), 2, False)


def test_compiled_under_transforms_traces_inline():
    x = np.arange(12.0).reshape(3, 4)
    want = np.sqrt((x * x).sum(-1)) * 2.0
    np.testing.assert_allclose(np.asarray(jit(lambda v: _scaled_norm(v, 2.0))(xp.asarray(x))), want)
    np.testing.assert_allclose(np.asarray(vmap(lambda v: _scaled_norm(v, 2.0))(xp.asarray(x))), want)


@pytest.mark.parametrize("shape", [(5,), (2, 3), (7,), (8,), (3, 3)])
def test_bucketed_matches_numpy_for_any_shape(shape):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal(shape), rng.standard_normal(shape)
    got = bucketed(_pair, (xp.asarray(a), xp.asarray(b)), (0.0, 0.0))
    np.testing.assert_allclose(np.asarray(got[0]), a * b + 1.0)
    np.testing.assert_allclose(np.asarray(got[1]), a - b)
    assert got[0].shape == shape


def test_bucketed_stages_once_per_power_of_two_bucket(monkeypatch):
    from array_namespace import _staged
    monkeypatch.setattr(_staged, "_BUCKETED", {})   # stage afresh (other tests staged _pair already)
    calls.clear()
    for n in (5, 6, 7, 8):                          # all pad to 8
        bucketed(_pair, (xp.ones(n), xp.ones(n)), (0.0, 0.0))
    bucketed(_pair, (xp.ones(9), xp.ones(9)), (0.0, 0.0))   # 16
    assert calls == [("pair", (8,)), ("pair", (16,))]
    out = jit(lambda a, b: bucketed(_pair, (a, b), (0.0, 0.0))[0])(xp.ones(3), xp.ones(3))
    np.testing.assert_allclose(np.asarray(out), np.full(3, 2.0))
    assert calls[-1] == ("pair", (3,))              # under jit: inline, no padding


def test_bucketed_special_functions_on_new_shapes_compile_nothing_on_the_cpu(fresh_staged):
    """xp.special's iterative functions (betainc, hyp1f1, lpmv: `bucketed`) run op by op on host kernels on the CPU
    -- their loops, lgamma and the rest all have one -- so new shapes compile nothing; values against scipy."""
    import scipy.special as sc   # (a test extra: pyproject [test])
    from xla import host, runtime
    if host.MODE == "xla" or not runtime._kernels_on():
        pytest.skip("host kernels switched off")
    from array_namespace import special
    before = runtime.compile_calls[0]
    for n in (3, 11, 20):
        a, b, x = np.linspace(0.5, 5.0, n), np.linspace(1.0, 3.0, n), np.linspace(0.05, 0.95, n)
        np.testing.assert_allclose(np.asarray(special.betainc(xp.asarray(a), xp.asarray(b), xp.asarray(x))),
                                   sc.betainc(a, b, x), rtol=1e-12)
        np.testing.assert_allclose(np.asarray(special.hyp1f1(xp.asarray(a), xp.asarray(b), xp.asarray(x))),
                                   sc.hyp1f1(a, b, x), rtol=1e-12)
        m, v = np.ones(n), np.full(n, 3.0)
        np.testing.assert_allclose(np.asarray(special.lpmv(xp.asarray(m), xp.asarray(v), xp.asarray(x))),
                                   sc.lpmv(m, v, x), rtol=1e-12, atol=1e-14)
    assert runtime.compile_calls[0] == before


def test_bucketed_first_call_at_a_bucket_runs_the_plain_body_then_stages(monkeypatch):
    """With `first`, the first eager call at a bucket runs that body on the unpadded arguments (nothing
    staged); a call at the same bucket again (any shape in it) stages the padded body once. (Off the host
    kernels the first call stages: test_bucketed_first_call_runs_staged_where_eager_work_is_not_on_host_kernels.)"""
    from array_namespace import _staged
    from xla import host, runtime
    if host.MODE == "xla" or not runtime._kernels_on():
        pytest.skip("host kernels switched off: the first call stages (tested below)")
    monkeypatch.setattr(_staged, "_BUCKETED", {})
    monkeypatch.setattr(_staged, "_SEEN", set())
    calls.clear()
    first = lambda a, b: (calls.append(("first", a.shape)), _pair(a, b))[1]  # noqa: E731
    rng = np.random.default_rng(1)
    for shape in ((5,), (2, 3), (7,), (3,)):
        a, b = rng.standard_normal(shape), rng.standard_normal(shape)
        got = bucketed(_pair, (xp.asarray(a), xp.asarray(b)), (0.0, 0.0), first=first)
        np.testing.assert_allclose(np.asarray(got[0]), a * b + 1.0, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(got[1]), a - b, rtol=1e-15)
        assert got[0].shape == shape
    # (5,): first at 8; (2, 3): staged at 8; (7,) and (3,): that staging again (8 is the least bucket)
    assert calls == [("first", (5,)), ("pair", (5,)), ("pair", (8,))], calls


@pytest.mark.parametrize("a,b", [
    ([0.5, 3.0, 25.0, 1e3, 2.0], [1.5, 0.5, 25.0, 30.0, 1e4]),    # both forms of the front, all of betaln's
    ([25.0, 10.0, 1e3, 40.0, 12.5], [25.0, 1e4, 10.0, 40.0, 99.0]),  # every p, q >= 10: the large form only
    ([0.5, 3.0, 9.5, 1.0, 2.0], [1.5, 0.5, 9.0, 7.0, 0.25]),        # all below 10: log B by lgamma sums only
    ([0.5, 3.0, 9.5, 1.0, 2.0], [15.0, 50.0, 1e3, 1e5, 12.0])])     # one of p, q >= 10: Stirling brackets
def test_betainc_first_eager_call_and_staged_calls_agree_and_compile_nothing(a, b, monkeypatch, fresh_staged):
    """The first eager call (the plain body: forms no element needs are skipped) against the staged,
    padded calls after it, jit, and scipy."""
    import scipy.special as sc
    from array_namespace import _staged, special
    from xla import host, runtime
    if host.MODE == "xla" or not runtime._kernels_on():
        pytest.skip("host kernels switched off")
    monkeypatch.setattr(_staged, "_SEEN", set())
    a, b = np.array(a), np.array(b)
    x = np.array([0.3, 0.99, 0.5, 0.97, 1e-4])
    args = [xp.asarray(v) for v in (a, b, x)]
    before = runtime.compile_calls[0]
    outs = [np.asarray(special.betainc(*args)) for _ in range(3)]
    assert runtime.compile_calls[0] == before
    np.testing.assert_allclose(outs[0], sc.betainc(a, b, x), rtol=1e-13)
    np.testing.assert_allclose(outs[1], outs[0], rtol=4e-16, atol=0)   # staged and padded vs eager, unpadded
    np.testing.assert_array_equal(outs[2], outs[1])
    # (XLA's exp, log1p differ from NumPy's by ulps, which the front's exponent amplifies ~p-fold)
    np.testing.assert_allclose(np.asarray(jit(special.betainc)(*args)), outs[0], rtol=1e-12, atol=0)


def test_bucketed_first_call_runs_staged_where_eager_work_is_not_on_host_kernels(monkeypatch):
    """Off the host kernels (an accelerator; here: switched off) a plain eager run would compile its loops
    per exact shape: the first call stages the padded body as before."""
    from array_namespace import _staged
    from xla import host, runtime
    monkeypatch.setattr(_staged, "_BUCKETED", {})
    monkeypatch.setattr(_staged, "_SEEN", set())
    assert _staged._plain_runs_on_host(()) == (host.MODE != "xla" and runtime._kernels_on())
    monkeypatch.setattr(host, "MODE", "xla")
    assert not _staged._plain_runs_on_host(())
    calls.clear()
    first = lambda a, b: (calls.append(("first", a.shape)), _pair(a, b))[1]  # noqa: E731
    got = bucketed(_pair, (xp.ones(5), xp.ones(5)), (0.0, 0.0), first=first)
    np.testing.assert_array_equal(np.asarray(got[0]), np.full(5, 2.0))
    assert calls == [("pair", (8,))]
