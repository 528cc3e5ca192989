"""Hints for NumPy/JAX spellings (array_namespace/_hints.py): a missing common name answers with the
Array API name; a missing array method with the function to call; everything else stays a plain, quick
AttributeError (hasattr probes by libraries answer False)."""
import timeit

import numpy as np
import pytest

import array_namespace as xp
from array_namespace import _hints


def _resolve(dotted):
    obj = xp
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


@pytest.mark.parametrize("name", sorted(_hints.MODULE))
def test_module_hint_names_what_exists(name):
    text, targets = _hints.MODULE[name]
    assert name not in xp.__all__ and not hasattr(xp, name)
    with pytest.raises(AttributeError) as info:
        getattr(xp, name)
    assert str(info.value) == f"array_namespace has no {name!r}; {text}"
    for t in targets:   # what the hint points to is really there
        assert _resolve(t) is not None, (name, t)
        assert t.split(".")[-1] in text, (name, t)


def test_the_examples_of_the_issue():
    with pytest.raises(AttributeError, match=r"array_namespace has no 'dot'; the Array API names are matmul"):
        xp.dot
    with pytest.raises(AttributeError, match=r"has no 'concatenate'; the Array API name is concat$"):
        xp.concatenate
    with pytest.raises(AttributeError, match=r"'einsum'; einsum is not in the Array API standard"):
        xp.einsum
    with pytest.raises(AttributeError, match=r"Array has no method 'mean'; use xp.mean\(x\)"):
        xp.ones(3).mean()
    assert xp.newaxis is None and callable(xp.expand_dims)   # these exist: no hint in the way


def test_unknown_names_are_plain_attribute_errors():
    for name in ("no_such_thing", "__cuda_array_interface__", "__wrapped__"):
        with pytest.raises(AttributeError, match=f"module 'array_namespace' has no attribute '{name}'"):
            getattr(xp, name)
    with pytest.raises(ImportError):
        exec("from array_namespace import dot", {})


@pytest.mark.parametrize("name", sorted(_hints.METHODS))
def test_array_method_hint(name):
    x = xp.asarray([1.0, 2.0])
    assert not hasattr(x, name) and not hasattr(xp.Array, name)
    with pytest.raises(AttributeError) as info:
        getattr(x, name)
    assert str(info.value) == f"Array has no method {name!r}; use {_hints.METHODS[name]}"


def test_array_method_hints_point_to_functions_that_exist_and_agree():
    x = xp.asarray([[3.0, 1.0], [2.0, 5.0]])
    for name, hint in _hints.METHODS.items():
        if hint.startswith("xp."):
            fn = hint[3:].split("(")[0]
            assert callable(_resolve(fn)), (name, fn)
    np.testing.assert_allclose(np.asarray(xp.mean(x)), np.asarray(x).mean())
    np.testing.assert_allclose(np.asarray(xp.reshape(x, (-1,))), np.asarray(x).ravel())


def test_hints_do_not_hide_the_real_api():
    """No hint shadows an attribute Arrays or the namespace have (the standard's names stay as they are)."""
    assert not set(_hints.MODULE) & set(xp.__all__)
    x = xp.ones((2, 2))
    for attr in ("dtype", "shape", "ndim", "size", "device", "T", "mT", "at", "tolist", "item", "to_device"):
        getattr(x, attr)
    assert x.T.shape == (2, 2)


def test_probes_for_missing_attributes_stay_quick_and_false():
    """Libraries (array-api-compat, scipy, NumPy) probe attributes; a probe must answer False as before,
    through the interpreter's own lookup (no Python-level __getattr__ on Array)."""
    x = xp.ones(3)
    for probe in ("__cuda_array_interface__", "__array_interface__", "__jax_array__", "_ver"):
        assert not hasattr(x, probe)
    assert x._base is None and x._views is None   # (set slots: the view checks read them without a miss)
    assert "__getattr__" not in vars(xp.Array)
    t_probe = min(timeit.repeat(lambda: hasattr(x, "__cuda_array_interface__"), number=2000, repeat=5))
    t_hit = min(timeit.repeat(lambda: x.shape, number=2000, repeat=5))
    assert t_probe < 20 * t_hit + 1e-3   # generous: the failed lookup costs what any failed lookup costs
