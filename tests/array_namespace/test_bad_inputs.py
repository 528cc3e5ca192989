"""Every namespace function x every bad-input category (bad_input_table.py): the standard's exception type,
a message naming the function the user called and the argument, and the same refusal under jit.

A new function is covered by adding its row to bad_input_table.ROWS; test_every_function_has_a_row fails
until it has one.
"""
import numpy as np
import pytest

import array_namespace as xp
from bad_input_table import CATEGORIES, ROWS, all_cases, call, classify, names_argument, names_function, row_of
from test_completeness import FFT, LINALG, MAIN

CASES = all_cases()
NOT_FUNCTIONS = set("__array_api_version__ e inf nan newaxis pi bool int8 int16 int32 int64 uint8 uint16 uint32 "
                    "uint64 float32 float64 complex64 complex128 linalg fft".split())


def test_every_function_has_a_row():
    names = {r.fn for r in ROWS}
    want = ({n for n in MAIN if n not in NOT_FUNCTIONS} | {f"linalg.{n}" for n in LINALG}
            | {f"fft.{n}" for n in FFT})
    assert not want - names, f"functions without a bad-input row: {sorted(want - names)}"
    assert not names - want, f"rows for names that are not functions of the standard: {sorted(names - want)}"
    assert len(names) == len(ROWS), "a function has two rows"


def test_every_row_has_cases_and_every_category_is_filled():
    no_case = [r.fn for r in ROWS if not r.cases()]
    assert not no_case, f"rows without a bad input: {no_case}"
    counts = {c: sum(1 for k in CASES if k.category == c) for c in CATEGORIES}
    assert all(counts.values()), f"empty categories: {counts}"
    assert not {k.category for k in CASES} - set(CATEGORIES)


@pytest.mark.parametrize("row", ROWS, ids=[r.fn for r in ROWS])
def test_the_valid_call_of_each_row_succeeds(row):
    """The bad calls differ from a call that works in one argument: without this, a case could pass
    by failing for another reason."""
    call(row.func, row.args, row.kwargs)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case):
    outcome, exc = classify(case)
    assert outcome == "typed-clear", (
        f"{case.fn}({case.what}): want {case.expected.__name__} naming {case.fn!r} and one of {case.arg}; "
        f"got {outcome}: {type(exc).__name__}: {exc}")
    if row_of(case.fn).no_jit:
        return
    j_outcome, j_exc = classify(case, under_jit=True)
    assert type(j_exc) is type(exc), f"under jit: {type(j_exc).__name__}: {j_exc} (eagerly {type(exc).__name__})"
    assert j_outcome == "typed-clear", f"under jit: {j_outcome}: {j_exc}"


def test_axis_error_is_both_index_and_value_error():
    """An axis out of range is NumPy's AxisError: `except IndexError` and `except ValueError` both catch it."""
    for f in (lambda: xp.sum(xp.ones((2, 3)), axis=2), lambda: xp.linalg.cross(xp.ones(3), xp.ones(3), axis=-3)):
        with pytest.raises(IndexError) as e:
            f()
        assert isinstance(e.value, ValueError)


def test_the_classifier_tells_outcomes_apart():
    """The message checks reject what they should (a test of the test)."""
    assert names_function("std: axis 3 is out of bounds", "std") and not names_function("var: axis 3", "std")
    assert names_function("linalg: inv: x must be square", "linalg.inv")
    assert not names_function("invert: x", "linalg.inv")
    assert names_argument("sum: axis must be an int", ("axis",)) and not names_argument("sum: axes", ("axis",))
    from bad_input_table import Case
    ok = Case("sum", "axis_type", (xp.ones(3),), {"axis": 1.5}, TypeError, ("axis",), "t")
    assert classify(ok)[0] == "typed-clear"
    wrong = Case("sum", "axis_type", (xp.ones(3),), {"axis": 1.5}, ValueError, ("axis",), "t")
    assert classify(wrong)[0] == "wrong-type"
    unclear = Case("sum", "axis_type", (xp.ones(3),), {"axis": 1.5}, TypeError, ("keepdims",), "t")
    assert classify(unclear)[0] == "unclear"
    accepted = Case("sum", "axis_type", (xp.ones(3),), {"axis": 0}, TypeError, ("axis",), "t")
    assert classify(accepted)[0] == "accepted"


def _special_functions():
    """(name, function, number of required positional arguments, {position: static value}) for xp.special."""
    import inspect
    out = []
    for name in xp.special.__all__:
        f = getattr(xp.special, name)
        ps = [p for p in inspect.signature(f).parameters.values()
              if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        out.append((name, f, len(ps), {1: 3} if name == "multigammaln" else {}))
    return out


@pytest.mark.parametrize("name,f,n,static", _special_functions(), ids=[s[0] for s in _special_functions()])
def test_special_huge_python_int_and_shapes(name, f, n, static):
    """xp.special: a Python int beyond int64 in any argument is an OverflowError naming the function and
    the argument (it used to be wrapped modulo 2**64, nbdtr(2**64 + 3, 5, .2) == nbdtr(3, 5, .2), or
    rounded; scipy refuses it too), and arrays that do not broadcast a ValueError naming the function
    (not broadcast_arrays: or multiply:), eagerly, under jit and under vmap alike."""
    import inspect
    from transforms import jit, vmap
    names = list(inspect.signature(f).parameters)
    for i in (i for i in range(n) if i not in static):
        for big in (2 ** 64 + 3, -(2 ** 63) - 1, 10 ** 400):
            args = [static.get(j, 0.5) for j in range(n)]
            args[i] = big
            for how, call in (("eagerly", lambda: f(*args)), ("under jit", lambda: jit(lambda v: f(*args) + v)(0.0)),
                              ("under vmap", lambda: vmap(lambda v: f(*args) + v)(xp.ones(2)))):
                with pytest.raises(OverflowError) as e:
                    call()
                assert str(e.value).startswith(f"{name}: {names[i]} = "), (how, str(e.value))
    arrays = [i for i in range(n) if i not in static]
    if len(arrays) < 2:
        return
    args = [static.get(j, xp.ones(3)) for j in range(n)]
    args[arrays[-1]] = xp.ones(4)
    def traced(*a):
        return f(*[static.get(j, v) for j, v in enumerate(a)])
    stand_in = [xp.ones(1) if j in static else a for j, a in enumerate(args)]
    batched = [xp.ones(2) if j in static else xp.stack([a, a]) for j, a in enumerate(args)]
    for how, call in (("eagerly", lambda: f(*args)), ("under jit", lambda: jit(traced)(*stand_in)),
                      ("under vmap", lambda: vmap(traced)(*batched))):
        with pytest.raises(ValueError) as e:
            call()
        msg = str(e.value)
        assert msg.startswith(f"{name}: ") and names[arrays[-1]] in msg and "(4,)" in msg, (how, msg)


def test_special_nbdtr_of_a_huge_int_is_not_wrapped():
    """The issue's case: not the value at 3 (the int modulo 2**64)."""
    with pytest.raises(OverflowError, match="nbdtr: k"):
        xp.special.nbdtr(2 ** 64 + 3, 5, .2)
    import scipy.special as sc
    import numpy as np
    np.testing.assert_allclose(float(xp.special.nbdtr(2 ** 62, 5, .2)), sc.nbdtr(2 ** 62, 5, .2), rtol=1e-13)  # C int cast


def test_special_multigammaln_same_eagerly_and_under_transforms():
    """multigammaln: a bad (static) d is a ValueError both ways; a at or below (d - 1) / 2 is NaN both
    ways (a traced value cannot raise), the valid elements as scipy."""
    import numpy as np
    import scipy.special as sc
    from transforms import jit, vmap
    a = xp.asarray([0.5, 1.0, 3.0, 7.25])
    want = np.array([np.nan, np.nan, sc.multigammaln(3.0, 3), sc.multigammaln(7.25, 3)])
    for f in (lambda v: xp.special.multigammaln(v, 3), jit(lambda v: xp.special.multigammaln(v, 3)),
              vmap(lambda v: xp.special.multigammaln(v, 3))):
        np.testing.assert_allclose(np.asarray(f(a)), want, rtol=1e-13)
    for d in (0, -2, 1.5, True, 2 ** 70):
        for f in (lambda: xp.special.multigammaln(a, d), lambda: jit(lambda v: xp.special.multigammaln(v, d))(a)):
            with pytest.raises(ValueError, match="multigammaln: d"):
                f()


@pytest.mark.parametrize("row", ROWS, ids=[r.fn for r in ROWS])
def test_an_unknown_keyword_names_the_function(row):
    """Python words a bad keyword with the function's __qualname__: a namespace function made by a factory
    said `_unary.<locals>.f()` (issue 24); every one must say its public name."""
    with pytest.raises(TypeError) as e:
        call(row.func, row.args, {**row.kwargs, "no_such_keyword": 1})
    assert names_function(str(e.value), row.fn) and "no_such_keyword" in str(e.value), str(e.value)


_JAX_CASES = """
import numpy as np, pytest, jax.numpy as jnp
import array_namespace as xp
from transforms import grad, jit, vmap
from xla import _jaxlib
c = jnp.asarray([1.0, 2.0, 3.0])
assert not _jaxlib.is_ours(c) and _jaxlib.is_ours(jit(lambda v: v * 2)(xp.ones(3))._v)
a = xp.asarray(c)
f = jit(lambda v: v * 2)
for _ in range(2):   # (the second call: the C++ fast path's)
    np.testing.assert_array_equal(np.asarray(jit(lambda v: v + a)(xp.ones(3, dtype=xp.float32))), np.asarray(c) + 1)
    np.testing.assert_array_equal(np.asarray(f(c)), 2 * np.asarray(c))
    np.testing.assert_array_equal(np.asarray(f(xp.ones(3, dtype=xp.float32))), [2.0, 2.0, 2.0])
np.testing.assert_array_equal(np.asarray(vmap(lambda v: v * 2)(c)), 2 * np.asarray(c))
np.testing.assert_array_equal(np.asarray(grad(lambda v: xp.sum(v * v))(c)), 2 * np.asarray(c))
with pytest.raises(TypeError, match="add: x2 must be an array.*ArrayImpl"):
    jit(lambda v: xp.add(v, c))(xp.ones(3))
print("ok")
"""


def test_a_jax_array_is_copied_in_eagerly_and_under_jit():
    """A jax.Array has jaxlib's ArrayImpl type, as our device values do, but another client: a jit closing over
    xp.asarray(it), or given it, failed inside XLA ('... on device cpu:0, but replica is assigned to device
    cpu:0', issue 24). It is copied in as a NumPy array would be; an operator it cannot enter says TypeError.
    In a fresh process: importing jax changes how this process shares jaxlib's state (_jaxlib.jax_owns_states)."""
    import importlib.util
    import os
    import subprocess
    import sys
    if importlib.util.find_spec("jax") is None:   # (not importorskip: that would import jax here)
        pytest.skip("jax is not installed")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "src"))
    r = subprocess.run([sys.executable, "-c", _JAX_CASES], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stdout[-3000:] + r.stderr[-3000:]


BIG, HUGE = 2 ** 70, 2 ** 1100   # past int64; past float64


@pytest.mark.parametrize("name, f, want", [
    ("add", lambda v: xp.add(BIG, v), lambda n: BIG + n),
    ("subtract", lambda v: v - BIG, lambda n: n - BIG),
    ("multiply", lambda v: xp.multiply(v, -BIG), lambda n: n * -BIG),
    ("where", lambda v: xp.where(v > 1, BIG, v), lambda n: np.where(n > 1, float(BIG), n)),
    ("clip", lambda v: xp.clip(v, max=-BIG), lambda n: np.clip(n, None, -BIG)),
    ("full_like", lambda v: xp.full_like(v, BIG), lambda n: np.full_like(n, BIG)),
    ("full", lambda v: xp.full((2,), BIG, dtype=xp.float64), lambda n: np.full((2,), float(BIG))),
    ("linspace", lambda v: xp.linspace(0, BIG, 3), lambda n: np.linspace(0, float(BIG), 3)),
    ("eye", lambda v: xp.eye(2, k=BIG), lambda n: np.eye(2, k=BIG)),
    ("tril", lambda v: xp.tril(xp.ones((2, 2)), k=-BIG), lambda n: np.tril(np.ones((2, 2)), k=-2)),   # (any k past)
    ("add-complex", lambda v: xp.add(v + 0j, BIG), lambda n: (n + 0j) + BIG),
])
def test_a_python_int_past_int64_is_the_float_it_is_eagerly_and_under_jit(name, f, want):
    """The standard's scalar rule: a Python int with a float array takes the float dtype. Eagerly it did, under jit
    it raised 'OverflowError: Python int too large to convert to C long' naming no function (issue 24)."""
    import numpy as np
    from transforms import jit
    n = np.array([1.0, 2.0])
    for way, got in (("eager", f(xp.asarray(n))), ("jit", jit(f)(xp.asarray(n)))):
        np.testing.assert_array_equal(np.asarray(got), want(n), err_msg=f"{name} {way}")


@pytest.mark.parametrize("fn, f", [
    ("add", lambda v: xp.add(HUGE, v)), ("multiply", lambda v: v * HUGE),
    ("full_like", lambda v: xp.full_like(v, HUGE)),
    ("linspace", lambda v: xp.linspace(0, -HUGE, 3)), ("full", lambda v: xp.full((2,), BIG)),
    ("full_like", lambda v: xp.full_like(xp.astype(v, xp.int64), BIG)), ("add", lambda v: xp.astype(v, xp.int64) + BIG),
])
def test_a_python_int_no_dtype_can_hold_is_an_overflow_error_naming_the_function(fn, f):
    from transforms import jit
    for g in (f, jit(f)):
        with pytest.raises(OverflowError) as e:
            g(xp.ones(2))
        assert names_function(str(e.value), fn) and "C long" not in str(e.value), str(e.value)


def test_a_python_int_argument_past_int64_is_an_overflow_error_naming_the_transform():
    """A Python int argument of a transformed function becomes a weak int64 scalar: one past int64 said only
    'Python int too large to convert to C long'. It names the transform and the ways out; one in range runs."""
    from transforms import grad, jit, vmap
    for call, who in ((lambda: jit(lambda n, x: x + n)(2 ** 70, xp.ones(2)), "jit(<lambda>) argument"),
                      (lambda: jit(xp.special.gamma)(-(2 ** 63) - 1), "jit(gamma) argument"),
                      (lambda: vmap(lambda x, n: x * n, in_axes=(0, None))(xp.ones(2), 2 ** 64), "vmap argument")):
        with pytest.raises(OverflowError) as e:
            call()
        assert str(e.value).startswith(who) and "beyond int64" in str(e.value) and "C long" not in str(e.value)
    assert int(jit(lambda n: n - 1)(2 ** 63 - 1)) == 2 ** 63 - 2
    assert float(grad(lambda x, n: x * n)(1.0, 2 ** 62)) == 2.0 ** 62
