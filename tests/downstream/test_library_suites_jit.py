"""tools/library_suites/lazy_jit.py: `--xp-jit` puts the functions a library's tests tag with
`lazy_xp_function` under our jit, as array-api-extra's `patch_lazy_xp_functions` does with jax.jit.

Checked on a fake test module (tags made by scipy's vendored array-api-extra, the one its suites use):
every tagged function is wrapped (jax_jit=False too), untagged ones are not; the wrapped function is
our jit (Python runs once per distinct static value, not per call) and gives NumPy's values; non-array
arguments are static and non-array results come back as they are; the patch is undone on exit; another
backend gets the library's own helper; top-level calls are recorded per test."""
import os
import sys
import types

import numpy as np
import pytest

import array_namespace as xp
from scipy._lib.array_api_extra import testing as xpx_testing

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "tools"))
from library_suites import lazy_jit  # noqa: E402


def _fake_module():
    mod = types.ModuleType("fake_tests")
    runs = []

    def scale(x, n, *, mode="mul", fn=None):
        runs.append(("scale", n, mode))
        y = x * n if mode == "mul" else x + n
        return {"y": fn(y) if fn is not None else y, "n": n, "mode": mode, "pair": (y, "text")}

    def checked(x):
        runs.append(("checked",))
        if xp.any(x < 0):          # value-dependent Python: guarded under our jit
            raise ValueError("checked: negative entries")
        return mod.scale(x, 2)["y"]    # a nested tagged call (not recorded: not the test's own call)

    def pieces(x):
        return iter([x[0], x[1] * 10, "end"])

    def untagged(x):
        return x

    class Thing:
        def double(self, x):
            runs.append(("double",))
            return 2 * x

        @staticmethod
        def make(x):     # scipy's from_* pattern: the tag lands on __func__; upstream leaves it alone
            return Thing()

    xpx_testing.lazy_xp_function(scale, jax_jit=False)
    xpx_testing.lazy_xp_function(checked)
    xpx_testing.lazy_xp_function(pieces)
    xpx_testing.lazy_xp_function(Thing.double)
    xpx_testing.lazy_xp_function(Thing.make)
    mod.scale, mod.checked, mod.pieces, mod.untagged, mod.Thing = scale, checked, pieces, untagged, Thing
    mod.lazy_xp_modules = [Thing]
    return mod, runs


def _request(mod, nodeid):
    return types.SimpleNamespace(module=mod, node=types.SimpleNamespace(nodeid=nodeid))


def _patch():
    return lazy_jit.make_patch(xpx_testing.patch_lazy_xp_functions, xpx_testing,
                               lambda ns: getattr(ns, "__name__", None) == "array_namespace")


def test_tagged_functions_run_under_our_jit_with_static_non_arrays_and_the_patch_is_undone():
    mod, runs = _fake_module()
    originals = dict(vars(mod)), mod.Thing.__dict__["double"]
    make = mod.Thing.__dict__["make"]
    a = np.asarray([1.0, 2.0, 3.0])
    with _patch()(_request(mod, "t::jit"), xp=xp):
        for name in ("scale", "checked", "pieces"):
            assert getattr(mod, name)._our_jit is originals[0][name], name   # jax_jit=False too
        assert mod.Thing.__dict__["double"]._our_jit is originals[1]
        assert mod.Thing.__dict__["make"] is make
        assert mod.untagged is originals[0]["untagged"]
        x = xp.asarray(a)
        for _ in range(3):                                    # one trace: Python ran once
            out = mod.scale(x, 3, mode="mul", fn=xp.sqrt)
        assert runs == [("scale", 3, "mul")]
        np.testing.assert_allclose(np.asarray(out["y"]), np.sqrt(a * 3), rtol=1e-15)
        assert out["n"] == 3 and type(out["n"]) is int and out["mode"] == "mul"   # non-arrays as they were
        assert out["pair"][1] == "text" and isinstance(out["pair"][0], type(x))
        out = mod.scale(x, 4, mode="add")                     # another static value: another trace
        assert runs[-1] == ("scale", 4, "add")
        np.testing.assert_array_equal(np.asarray(out["y"]), a + 4)
        np.testing.assert_array_equal(np.asarray(mod.checked(x)), a * 2)
        with pytest.raises(ValueError, match="negative"):     # the same error as eagerly
            mod.checked(xp.asarray(-a))
        it = mod.pieces(x)
        assert iter(it) is it
        first, second, end = list(it)
        assert (float(first), float(second), end) == (1.0, 20.0, "end")
        np.testing.assert_array_equal(np.asarray(mod.Thing().double(x)), 2 * a)
    assert dict(vars(mod)) == originals[0] and mod.Thing.__dict__["double"] is originals[1]
    calls = lazy_jit.CALLS["t::jit"]
    names = {k.rsplit(".", 1)[-1]: v for k, v in calls.items()}
    # scale: 3 + 1 top-level calls (the one inside checked is nested, not recorded)
    assert names == {"scale": 4, "checked": 2, "pieces": 1, "double": 1}


def test_another_backend_gets_the_librarys_own_helper():
    mod, runs = _fake_module()
    scale = mod.scale
    with _patch()(_request(mod, "t::numpy"), xp=np):
        assert mod.scale is scale
        mod.scale(np.ones(2), 2)
        mod.scale(np.ones(2), 2)
    assert len(runs) == 2 and not lazy_jit.CALLS.get("t::numpy")


def test_install_replaces_the_helper_where_a_conftest_imported_it():
    holder = types.ModuleType("fake_conftest")
    holder.patch_lazy_xp_functions = xpx_testing.patch_lazy_xp_functions
    original = xpx_testing.patch_lazy_xp_functions
    try:
        patched = lazy_jit.install(xpx_testing, [holder], lambda ns: False)
        assert holder.patch_lazy_xp_functions is patched and xpx_testing.patch_lazy_xp_functions is patched
        again = lazy_jit.install(xpx_testing, [holder], lambda ns: False)   # no wrapper of a wrapper
        assert again.__wrapped__ is original and holder.patch_lazy_xp_functions is again
    finally:
        xpx_testing.patch_lazy_xp_functions = original


def test_function_table_status_per_function():
    calls = {"a": {"m.f": 1, "m.g": 2}, "b": {"m.f": 1}, "c": {"m.h": 1}}
    outcomes = {"a": "passed", "b": "failed", "c": "skipped"}
    table = lazy_jit.function_table(outcomes, calls, {"m.f": True, "m.g": False, "m.h": True, "m.k": True})
    assert {k: r["status"] for k, r in table.items()} == {"m.f": "fail", "m.g": "pass", "m.h": "other",
                                                            "m.k": "untested"}
    assert table["m.f"]["tests"] == {"passed": 1, "failed": 1} and table["m.g"]["jax_jit"] is False


def test_array_api_extra_0_11_methods_tagged_with_their_class_keep_static_and_class_methods():
    """array-api-extra 0.11 (installed; its own suite): testing is a package, the tags live in
    testing._testing, and `lazy_xp_function((cls, name))` tags a method with tags["owner"] = cls; the
    class is found in the test module without being listed, and a class holding the function under
    another name is not its owner."""
    xtesting = pytest.importorskip("array_api_extra.testing._testing")
    mod = types.ModuleType("fake_xpx_tests")
    runs = []

    class B:
        def g(self, x):
            runs.append("g")
            return x + 1

        @staticmethod
        def h(x):
            runs.append("h")
            return x * 3

        @classmethod
        def k(cls, x):
            runs.append(("k", cls.__name__))
            return x - 1

    for name in ("g", "h", "k"):
        xtesting.lazy_xp_function((B, name))

    class Naked:           # upstream's pattern to bypass the patch: B's tagged method, not Naked's
        h = B.h
    mod.B, mod.Naked = B, Naked
    before = {n: B.__dict__[n] for n in ("g", "h", "k")}
    patch = lazy_jit.make_patch(xtesting.patch_lazy_xp_functions, xtesting,
                                lambda ns: getattr(ns, "__name__", None) == "array_namespace")
    a = np.asarray([1.0, 2.0])
    x = xp.asarray(a)
    with patch(_request(mod, "t::xpx"), xp=xp):
        assert isinstance(B.__dict__["h"], staticmethod) and isinstance(B.__dict__["k"], classmethod)
        assert all(B.__dict__[n] is not before[n] for n in before)
        assert Naked.h is before["h"].__func__ and Naked.h._lazy_xp_function["owner"] is B
        for _ in range(2):                                   # traced once each
            np.testing.assert_array_equal(np.asarray(B().g(x)), a + 1)
            np.testing.assert_array_equal(np.asarray(B.h(x)), a * 3)
            np.testing.assert_array_equal(np.asarray(B.k(x)), a - 1)
        assert runs == ["g", "h", ("k", "B")]
    assert {n: B.__dict__[n] for n in before} == before
    assert {k.rsplit(".", 1)[-1]: v for k, v in lazy_jit.CALLS["t::xpx"].items()} == {"g": 2, "h": 2, "k": 2}
