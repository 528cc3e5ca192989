"""The Array node's callbacks that jaxlib's C++ dispatcher calls per Array argument and result of every jit
call (xla/jit_dispatch.array_node): the C versions (xla/_dispatch_nodes.c, an optional extension) give what
the Python ones give, for every kind of value an Array holds, raise the same errors, take the Python
fallback only where it must (a host value without a live buffer), leak no references, and carry a jit
call's values through unchanged. tests/xla/test_jit_dispatch.py has the dispatcher's caching behaviour."""
import copy
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import array_namespace as xp
from transforms import jit, vmap
from transforms.core import EVAL, boxing
from xla import jit_dispatch
from array_namespace._helpers import wrap
from xla.host import HostValue, shared_aval

native = pytest.param(True, id="native", marks=pytest.mark.skipif(
    jit_dispatch._native is None, reason="the optional C extension xla._dispatch_nodes was not built"))
KINDS = [pytest.param(False, id="python"), native]


@pytest.fixture(params=KINDS)
def node(request):
    return jit_dispatch.array_node(native=request.param)


def _host_held(values):
    """An Array holding a host value, in every eager mode (xp.asarray makes one only in the default mode)."""
    a = np.array(values)
    return wrap(HostValue(a, shared_aval(a.shape, a.dtype)))


def _device_held(values):
    y = jit(lambda v: v + 0.0)(xp.asarray(values))   # a jit result holds a device buffer
    assert type(y._v) is not HostValue
    return y


def test_the_default_install_uses_the_c_callbacks():
    # the README's install builds the extension wherever a C compiler is (CI included); a missing one
    # would only cost speed, so this names it rather than hiding it
    assert jit_dispatch._native is not None
    flat, unflat = jit_dispatch.array_node()
    assert flat is jit_dispatch._native.flatten and unflat is jit_dispatch._native.unflatten


def test_flatten_gives_the_buffer_of_each_kind_of_value(node):
    flatten, _ = node
    y = _device_held(np.arange(5.0))
    kids, aux = flatten(y)
    assert kids == (y._v,) and kids[0] is y._v and aux is None
    x = _host_held(np.arange(7, dtype=np.int32))           # host-held, no buffer yet: made once
    assert x._v._buf is None
    (b,), aux = flatten(x)
    assert aux is None and b is x._v._buf
    np.testing.assert_array_equal(np.asarray(b), np.arange(7, dtype=np.int32))
    (b2,), _ = flatten(x)                                   # ... and reused
    assert b2 is b


def test_both_callbacks_agree_value_for_value():
    (pf, pu), (cf, cu) = jit_dispatch.array_node(native=False), jit_dispatch.array_node()
    for a in (_host_held(np.float32(2.5)), _host_held(np.ones((2, 3), np.complex128)),
              _device_held(np.arange(4.0)), _host_held(np.array([True, False]))):
        assert pf(a) == cf(a)
        pa, ca = pu(None, pf(a)[0]), cu(None, cf(a)[0])
        assert type(pa) is type(ca) is boxing.box_type
        assert pa._v is ca._v and pa._trace is ca._trace is EVAL
        assert pa._base is ca._base is None and pa._views is ca._views is None   # (as wrap makes an Array)


def test_unflatten_makes_an_eager_array_around_the_buffer(node):
    _, unflatten = node
    y = _device_held(np.array([1.0, -2.0, 3.5]))
    for kids in ((y._v,), [y._v]):
        a = unflatten(None, kids)
        assert type(a) is type(y) and a._v is y._v and a._trace is EVAL
        np.testing.assert_array_equal(np.asarray(a), [1.0, -2.0, 3.5])
        np.testing.assert_array_equal(np.asarray(a * 2.0 + 1.0), [3.0, -3.0, 8.0])


@pytest.mark.skipif(jit_dispatch._native is None, reason="the optional C extension was not built")
def test_c_callbacks_refuse_what_is_not_theirs():
    c = jit_dispatch._native
    with pytest.raises(ValueError, match="exactly one child"):
        c.unflatten(None, ())
    with pytest.raises(ValueError, match="exactly one child"):
        c.unflatten(None, (1, 2))
    with pytest.raises(TypeError, match="2 arguments"):
        c.unflatten(None)

    class NoSlots:
        pass
    with pytest.raises(TypeError, match="not a slot"):
        c.configure(NoSlots, HostValue, EVAL, jit_dispatch._arg_buffer)
    jit_dispatch.array_node()   # (still configured as before)
    assert c.flatten(_device_held(np.ones(2)))[1] is None


def test_a_donated_host_value_raises_the_same_error(node):
    flatten, _ = node
    y = _host_held(np.ones(1000))
    jit(lambda v: v + 1.0, donate_argnums=0)(y)
    assert y._v.is_deleted()
    with pytest.raises(RuntimeError, match="donated"):
        flatten(y)


@pytest.mark.skipif(jit_dispatch._native is None, reason="the optional C extension was not built")
def test_c_flatten_calls_python_only_for_a_host_value_without_a_live_buffer():
    c, calls = jit_dispatch._native, []
    y, x = _device_held(np.arange(3.0)), _host_held(np.arange(3.0))

    def fallback(a):
        calls.append(a)
        return jit_dispatch._arg_buffer(a)
    c.configure(boxing.box_type, HostValue, EVAL, fallback)
    try:
        c.flatten(y)
        assert calls == []
        c.flatten(x)          # no buffer yet
        assert calls == [x]
        c.flatten(x)          # a live one
        assert calls == [x]
    finally:
        jit_dispatch.array_node()


def test_no_reference_is_leaked(node):
    flatten, unflatten = node
    y = _device_held(np.arange(3.0))
    x = _host_held(np.arange(3.0))
    flatten(x)
    buf_y, buf_x = y._v, x._v._buf
    before = sys.getrefcount(buf_y), sys.getrefcount(buf_x), sys.getrefcount(EVAL)
    for _ in range(1000):
        flatten(y)
        flatten(x)
        unflatten(None, (buf_y,))
    assert (sys.getrefcount(buf_y), sys.getrefcount(buf_x), sys.getrefcount(EVAL)) == before


def test_jit_calls_through_the_dispatcher_match_numpy():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal(3)
    f = jit(lambda u, v, w: (u * v + w, {"s": xp.sum(u, axis=0)}))
    for _ in range(3):   # the first call is a miss; the rest run in C++ through the node callbacks
        x, y = xp.asarray(a), xp.asarray(b)
        out, d = f(x, y, 2.0)
        np.testing.assert_allclose(np.asarray(out), a * b + 2.0, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(d["s"]), a.sum(0), rtol=1e-15)
        out2, _ = f(out, y, 0.5)   # a device-held result as an argument
        np.testing.assert_allclose(np.asarray(out2), (a * b + 2.0) * b + 0.5, rtol=1e-15)
        assert type(out2) is type(x) and out2._trace is EVAL
    # the results are ordinary Arrays: transforms and eager ops take them
    g = vmap(lambda r: xp.sum(r * r))(out2)
    np.testing.assert_allclose(np.asarray(g), (((a * b + 2.0) * b + 0.5) ** 2).sum(1), rtol=1e-14)


def test_without_the_extension_jit_runs_on_the_python_callbacks():
    # (a fresh process: the dispatcher registers the Array node once, at its first jit)
    code = """
import numpy as np
import array_namespace as xp
from transforms import jit
from xla import jit_dispatch
jit_dispatch._native = None   # as where the optional extension was not built
f = jit(lambda u, v: (u * v + 1.0, xp.sum(u)))
x = xp.asarray(np.arange(4.0))
for _ in range(3):
    a, s = f(x, x)
    b, _ = f(a, x)
assert np.array_equal(np.asarray(a), np.arange(4.0) ** 2 + 1.0) and float(s) == 6.0
assert np.array_equal(np.asarray(b), (np.arange(4.0) ** 2 + 1.0) * np.arange(4.0) + 1.0)
g = jit(lambda u: u * 2.0 if float(xp.sum(u)) > 0 else -u)   # guarded: every call runs in Python
for v in (x, -x, x, -x):
    assert np.array_equal(np.asarray(g(v)), np.asarray(v) * 2.0 if np.sum(np.asarray(v)) > 0 else -np.asarray(v))
import types
assert all(isinstance(f, types.FunctionType) for f in jit_dispatch.array_node())   # (Python's, not C builtins)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]


@pytest.mark.skipif(jit_dispatch._native is None, reason="the optional C extension was not built")
def test_check_returns_the_result_only_for_an_accepted_vector():
    c = jit_dispatch._native
    jit(lambda v: v + 1.0)(xp.asarray([1.0]))   # (configures the guard check)
    vec = jit(lambda v: v * 1)(xp.asarray(np.array([3, 7], np.int64)))._v   # (a device buffer)
    result = object()
    accepted = {np.array([3, 7], np.int64).tobytes()}
    before = sys.getrefcount(result), sys.getrefcount(vec)
    assert c.check(accepted, (result, vec)) is result and c.check(accepted, [result, vec]) is result
    miss = c.check({np.array([3, 8], np.int64).tobytes()}, (result, vec))
    assert type(miss) is jit_dispatch.GuardMiss   # in the result's place (an exception through jaxlib: ~20 us)
    assert miss.vector == np.array([3, 7], np.int64).tobytes()   # the vector this call computed
    del miss
    assert (sys.getrefcount(result), sys.getrefcount(vec)) == before
    host = np.array([3, 7], np.int64)   # a value without a buffer the protocol reads: the Python fallback
    assert c.check(accepted, (result, host)) is result
    with pytest.raises(ValueError, match="two children"):
        c.check(accepted, (result,))
    with pytest.raises(TypeError, match="2 arguments"):
        c.check(accepted)


@pytest.mark.skipif(jit_dispatch._native is None, reason="the optional C extension was not built")
def test_dispatcher_forwards_calls_and_attributes_and_hands_a_guard_miss_to_its_fallback():
    c, seen = jit_dispatch._native, []

    def inner(*args, **kwargs):
        if kwargs.get("miss"):
            return jit_dispatch.GuardMiss(b"vector")
        if kwargs.get("other"):
            raise KeyError("not a guard miss")
        return ("ran", args, kwargs)

    def fallback(args, kwargs, miss):
        seen.append((args, kwargs, miss.vector))
        return "fallback"
    inner.note = "the inner's"
    d = c.Dispatcher(inner, fallback)
    assert d(1, b=2) == ("ran", (1,), {"b": 2}) and seen == []
    assert d(1, 2, miss=True) == "fallback" and seen == [((1, 2), {"miss": True}, b"vector")]
    with pytest.raises(KeyError, match="not a guard miss"):
        d(other=True)
    assert d.note == "the inner's" and d._inner is inner
    d.note = "its own"
    assert d.note == "its own" and inner.note == "the inner's"

    class Holder:
        m = d
    h = Holder()
    assert h.m(5) == ("ran", (h, 5), {}) and Holder.m is d
    assert copy.copy(d) is d and copy.deepcopy({"f": d})["f"] is d   # (as a function's copies)
    with pytest.raises(TypeError, match="two callables"):
        c.Dispatcher(inner, None)


def test_a_guarded_jit_checks_every_repeat_call_against_numpy():
    def step(x):   # a branch (bool guard) and a size (int guard), the variant of the first call cached in C++
        if float(xp.sum(x)) > 0:
            return x[x > 0.5] * 2.0
        return -x
    f = jit(step)
    rng = np.random.default_rng(0)
    for _ in range(30):
        x = rng.standard_normal(6) + rng.choice([-1.0, 1.0])
        want = x[x > 0.5] * 2.0 if np.sum(x) > 0 else -x
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), want)
        np.testing.assert_array_equal(np.asarray(f(xp.asarray(x))), np.asarray(step(xp.asarray(x))))


@pytest.mark.skipif(jit_dispatch._native is None, reason="the optional C extension was not built")
def test_c_number_gives_what_python_gives_for_every_dtype_and_conversion():
    c = jit_dispatch._native
    jit(lambda v: v + 1.0)(xp.asarray([1.0]))   # (configures the number callback)
    values = [np.float64(-2.75), np.float64(np.nan), np.float32(0.1), np.int64(-(2 ** 62) - 3),
              np.int32(-7), np.int8(-128), np.uint8(255), np.uint64(2 ** 64 - 1), np.bool_(True), np.bool_(False),
              np.complex128(1.5 - 2j), np.complex64(0.1 + 0.2j), np.float64(np.inf)]
    for v in values:
        (buf,), _ = jit_dispatch._arg_buffer(xp.asarray(np.array(v)))
        assert memoryview(buf).ndim == 0   # (a 0-d device buffer, read in place)
        for conv in (float, int, bool, complex):
            try:
                want = conv(np.asarray(buf))
            except (TypeError, ValueError, OverflowError) as e:
                with pytest.raises(type(e)):
                    c.number(conv, (buf,))
                continue
            got = c.number(conv, (buf,))
            assert type(got) is type(want) and (got == want or (got != got and want != want)), (v, conv, got)


@pytest.mark.skipif(jit_dispatch._native is None, reason="the optional C extension was not built")
def test_c_callbacks_never_crash_unconfigured_or_when_a_buffer_is_replaced():
    # in a fresh process: before configure (jit's first call), flatten called its unset Python fallback (a
    # segfault); then a host value whose buffer's is_deleted replaces that buffer (another thread can, where
    # is_deleted lets it run) -- flatten returned the buffer it no longer held (freed: a crash or garbage)
    code = textwrap.dedent('''
        import numpy as np
        from xla import _dispatch_nodes as c
        for call in (lambda: c.flatten(1.0), lambda: c.unflatten(None, (1.0,)), lambda: c.number(float, (1.0,)),
                     lambda: c.check(set(), (1.0, b""))):
            try:
                call()
                raise AssertionError("no error")
            except RuntimeError as e:
                assert "not configured" in str(e), e
        from xla import jit_dispatch
        from array_namespace._helpers import wrap
        from xla.host import HostValue, shared_aval
        flatten, _ = jit_dispatch.array_node()
        a0 = np.arange(3.0)
        for _ in range(50):
            hv = HostValue(a0, shared_aval(a0.shape, a0.dtype))
            class Buffer:
                def is_deleted(self):
                    hv._buf = None   # (drops the value's only reference to this buffer)
                    return False
            hv._buf = Buffer()
            (b,), aux = flatten(wrap(hv))
            junk = [object() for _ in range(64)]   # (reuses freed memory)
            assert type(b) is Buffer and aux is None, type(b)
        print("ok")
    ''')
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stdout + out.stderr[-3000:]


@pytest.mark.skipif(jit_dispatch._native is None, reason="the optional C extension was not built")
def test_the_namespace_wrap_is_the_c_one_and_makes_the_python_ones_arrays():
    """array_namespace._helpers.wrap is _dispatch_nodes.wrap (backend.box_fn): eagerly an Array of the value owned by
    EVAL, as the Python wrap makes it; inside a trace the Python wrap's, owned by that trace; no reference leaked."""
    from array_namespace import _helpers as H
    from transforms.core import trace_state
    assert H.wrap is jit_dispatch._native.wrap
    v = xp.asarray(np.arange(3.0))._v
    before = sys.getrefcount(v), sys.getrefcount(EVAL)
    a = H.wrap(v)
    assert type(a) is boxing.box_type and a._v is v and a._trace is EVAL
    np.testing.assert_array_equal(np.asarray(a + 1.0), [1.0, 2.0, 3.0])
    del a
    assert (sys.getrefcount(v), sys.getrefcount(EVAL)) == before
    seen = []

    def f(t):
        b = H.wrap(t._v)
        seen.append(b._trace is trace_state.trace and b._trace is not EVAL and b._v is t._v)
        return b * 2.0
    np.testing.assert_array_equal(np.asarray(jit(f)(xp.asarray([1.0, 2.0]))), [2.0, 4.0])
    np.testing.assert_array_equal(np.asarray(vmap(f)(xp.asarray([1.0, 2.0]))), [2.0, 4.0])
    assert seen == [True, True]
