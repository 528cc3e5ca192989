"""__array_namespace_info__: capabilities follow what works where the call is made."""
import array_namespace as xp
from transforms import grad, jit, vmap


def _caps_seen(transform):
    seen = []

    def f(x):
        seen.append(xp.__array_namespace_info__().capabilities())
        return xp.sum(x)
    transform(f)(xp.ones(3))
    return seen[-1]


def test_boolean_indexing_and_data_dependent_shapes_reported_only_where_values_are_concrete():
    for name, t, want in [("eager", lambda f: f, True), ("grad", grad, True), ("jit", jit, False),
                          ("vmap", lambda f: vmap(f), False), ("jit(grad)", lambda f: jit(grad(f)), False),
                          ("grad(jit)", lambda f: grad(jit(f)), False)]:
        caps = _caps_seen(t)
        assert caps["boolean indexing"] is want, name
        assert caps["data-dependent shapes"] is want, name
        assert caps["max dimensions"] == 64


def test_where_capabilities_are_true_boolean_masks_work():
    x = xp.asarray([1.0, -2.0, 3.0])
    assert xp.__array_namespace_info__().capabilities()["boolean indexing"]
    assert x[x > 0].shape == (2,)
    g = grad(lambda v: xp.sum(v[v > 0] ** 2))(x)
    assert [float(a) for a in g] == [2.0, 0.0, 6.0]


def test_devices_is_a_tuple_that_still_adds_to_a_list():
    info = xp.__array_namespace_info__()
    devs = info.devices()
    assert isinstance(devs, tuple) and tuple(devs) == (info.default_device(),)   # the 2025.12 standard
    assert devs + [None] == [info.default_device(), None]     # as scipy's conftest uses it
    assert devs + (None,) == (info.default_device(), None)
