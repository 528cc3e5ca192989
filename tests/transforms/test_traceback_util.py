"""Traceback filtering (transforms/traceback_util.py): an error inside transformed user code shows the
user's frames and none of the library's; switched off, every frame shows; the exception is unchanged."""
import os
import subprocess
import sys
import traceback
import types

import pytest

import array_namespace as xp
import transforms as T
from transforms import traceback_util as TU

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__)))), "src")
HERE = os.path.realpath(__file__)
LIB = tuple(os.path.join(SRC, p) + os.sep for p in ("transforms", "xla", "array_namespace"))


class UserError(Exception):
    pass


def _frames(exc):
    return [(os.path.realpath(fs.filename), fs.name) for fs in traceback.extract_tb(exc.__traceback__)]


def _library_frames(exc):
    return [f for f in _frames(exc) if f[0].startswith(LIB)]


def boom(x):
    y = xp.sin(x)
    raise UserError("raised by the user's function")


def scalar_boom(x):
    return boom(x)


X = xp.asarray([0.5, 1.5])
S = xp.asarray(0.5)

# how each transform reaches the user's function (each must hide every library frame in between)
CASES = {
    "grad": lambda: T.grad(lambda x: xp.sum(boom(x)))(X),
    "grad(jit)": lambda: T.grad(T.jit(lambda x: xp.sum(boom(x))))(X),
    "jit(grad)": lambda: T.jit(T.grad(lambda x: xp.sum(boom(x))))(X),
    "jit": lambda: T.jit(boom)(X),
    "jit static": lambda: T.jit(lambda x, n: boom(x), static_argnums=1)(X, 2),
    "jit.lower": lambda: T.jit(boom).lower(X),
    "value_and_grad": lambda: T.value_and_grad(lambda x: xp.sum(boom(x)))(X),
    "jvp": lambda: T.jvp(boom, (X,), (X,)),
    "vjp": lambda: T.vjp(boom, X),
    "linearize": lambda: T.linearize(boom, X),
    "vmap": lambda: T.vmap(boom)(X),
    "vmap(grad)": lambda: T.vmap(T.grad(scalar_boom))(X),
    "make_jaxpr": lambda: T.make_jaxpr(boom)(X),
    "jacfwd": lambda: T.jacfwd(boom)(X),
    "jacrev": lambda: T.jacrev(boom)(X),
    "hessian": lambda: T.hessian(lambda x: xp.sum(boom(x)))(X),
    "checkpoint": lambda: T.grad(lambda x: xp.sum(T.checkpoint(boom)(x)))(X),
    "cond": lambda: T.cond(S > 0, boom, lambda x: x, S),
    "switch": lambda: T.switch(0, [boom, lambda x: x], S),
    "scan": lambda: T.scan(lambda c, x: (c, boom(x)), S, X),
    "map": lambda: T.map(boom, X),
    "while_loop": lambda: T.while_loop(lambda c: c < 3.0, boom, S),
    "fori_loop": lambda: T.fori_loop(0, 3, lambda i, c: boom(c), S),
    "jit(scan)": lambda: T.jit(lambda x: T.scan(lambda c, v: (c, boom(v)), x[0], x))(X),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_user_error_shows_the_users_frames_and_no_library_frame(name):
    with pytest.raises(UserError) as info:
        CASES[name]()
    e = info.value
    assert str(e) == "raised by the user's function" and type(e) is UserError
    frames = _frames(e)
    assert _library_frames(e) == [], f"{name}: library frames left in the traceback: {_library_frames(e)}"
    assert frames[-1] == (HERE, "boom"), frames    # the line that raised is the last one shown
    assert frames[0][0] == HERE                     # and the caller's line, in this file, the first
    assert TU.NOTE in e.__notes__ and e.__notes__.count(TU.NOTE) == 1   # once, though boundaries nest


def test_switched_off_shows_every_frame_and_the_same_exception():
    prev = TU.set_filtering(False)
    try:
        with pytest.raises(UserError) as info:
            CASES["grad(jit)"]()
    finally:
        TU.set_filtering(prev)
    e = info.value
    libs = {os.path.relpath(f, SRC).split(os.sep)[0] for f, _ in _library_frames(e)}
    assert {"transforms", "xla"} <= libs   # the engine's tracing and the backend's jit dispatch
    assert _frames(e)[-1] == (HERE, "boom")
    assert str(e) == "raised by the user's function" and not getattr(e, "__notes__", None)


def test_the_exception_object_is_the_users():
    err = UserError("mine")

    def f(x):
        raise err
    with pytest.raises(UserError) as info:
        T.grad(T.jit(f))(X)
    assert info.value is err and err.args == ("mine",)


def test_a_library_error_keeps_the_user_line_that_called():
    def f(x):
        return xp.sum(x + xp.asarray([1, 2], dtype=xp.int8))   # float64 + int8: strict promotion refuses

    with pytest.raises(TypeError) as eager:
        f(X)
    with pytest.raises(TypeError) as traced:
        T.grad(T.jit(f))(X)
    assert str(traced.value) == str(eager.value)   # same type and message as eagerly
    assert _library_frames(traced.value) == []
    assert _frames(traced.value)[-1][1] == "f"     # the user's line calling `+`
    assert _library_frames(eager.value)            # eagerly (no transform) nothing is filtered


def test_a_transform_misused_shows_only_the_callers_line():
    with pytest.raises(TypeError, match="jit expects a callable") as info:
        T.jit(3)
    assert [name for _, name in _frames(info.value)] == ["test_a_transform_misused_shows_only_the_callers_line"]


def test_chained_exceptions_are_filtered_too():
    def f(x):
        try:
            xp.asarray([1, 2], dtype=xp.int8) + x
        except TypeError as inner:
            raise UserError("wrapped") from inner
        return x

    with pytest.raises(UserError) as info:
        T.vmap(f)(X)
    cause = info.value.__cause__
    assert type(cause) is TypeError
    assert [f for f in traceback.extract_tb(cause.__traceback__) if os.path.realpath(f.filename).startswith(LIB)] == []


def test_jit_returns_the_native_dispatcher_unwrapped():
    """The per-call path of jit(f) stays the backend's C++ dispatcher (no Python wrapper); only its
    cache-miss callback is a boundary."""
    jf = T.jit(lambda x: x + 1)
    assert not isinstance(jf, (types.FunctionType, types.MethodType))
    assert float(jf(S)) == 1.5 and float(jf(S)) == 1.5


def test_boundary_keeps_the_signature_name_and_docstring():
    assert T.grad.__name__ == "grad" and "Gradient" in T.grad.__doc__
    assert T.vmap.__wrapped__.__name__ == "vmap"
    g = T.grad(scalar_boom)
    assert g.__name__ == "grad_scalar_boom"


def test_set_filtering_validates():
    with pytest.raises(TypeError, match="expects a bool"):
        TU.set_filtering("off")


@pytest.mark.parametrize("value,expected", [("off", False), ("0", False), ("OFF", False), ("on", True), ("", True)])
def test_environment_variable(value, expected):
    code = ("import transforms.traceback_util as TU, transforms as T\n"
            "def f(x):\n    raise KeyError('k')\n"
            "try:\n    T.make_jaxpr(f)(1.0)\nexcept KeyError as e:\n"
            "    import traceback; n = len(traceback.extract_tb(e.__traceback__))\n"
            "print(TU.filtering_enabled(), n)")
    env = dict(os.environ, ARRAY_NAMESPACE_TRACEBACK_FILTERING=value, PYTHONPATH=SRC)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    enabled, n = out.split()
    assert enabled == str(expected)
    assert (int(n) == 2) == expected   # filtered: the caller's line and f's line only
