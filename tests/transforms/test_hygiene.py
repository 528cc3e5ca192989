"""Tracing hygiene: escaped tracers fail loudly wherever they are used; traces are cached."""
import pytest

import array_namespace as xp
from transforms import UnexpectedTracerError, grad, jit, vmap


def _leak(transform, x):
    box = []

    def f(v):
        box.append(v)
        return xp.sum(v) if transform is grad else v
    transform(f)(x)
    return box[0]


@pytest.mark.parametrize("transform", [jit, grad, vmap], ids=["jit", "grad", "vmap"])
@pytest.mark.parametrize("use", ["eager", "jit", "grad", "vmap"])
def test_escaped_tracer_raises_when_used(transform, use):
    x = xp.ones((2, 3)) if transform is vmap else xp.ones(3)
    leaked = _leak(transform, x)
    uses = {"eager": lambda: leaked + 1.0,
            "jit": lambda: jit(lambda y: y + leaked)(xp.ones(leaked.shape)),
            "grad": lambda: grad(lambda y: xp.sum(y * leaked))(xp.ones(leaked.shape)),
            "vmap": lambda: vmap(lambda y: y + leaked)(xp.ones((2,) + leaked.shape))}
    with pytest.raises(UnexpectedTracerError, match="escaped|finished"):
        uses[use]()


def test_same_avals_hit_the_trace_cache():
    count = []

    @jit
    def f(x, y):
        count.append(1)
        return x @ y
    a, b = xp.ones((2, 2)), xp.ones((2, 2))
    for _ in range(5):
        f(a, b)
    f(xp.zeros((2, 2)), b)
    assert len(count) == 1 and f.trace_count == 1


def test_concretization_errors_name_the_line_outside_the_library_that_asked():
    import pytest

    import array_namespace as xp
    from transforms import ConcretizationTypeError, jit

    def user_code(x):
        if x[0] > 0:   # the line the error must point at
            return x
        return -x
    with pytest.raises(ConcretizationTypeError) as info:
        jit(user_code, guards=False)(xp.ones(3))
    assert "test_hygiene.py" in str(info.value) and "if x[0] > 0:" in str(info.value)
    with pytest.raises(ConcretizationTypeError) as info:
        jit(lambda m: xp.ones(3)[m], guards=False)(xp.ones(3) > 0)
    assert "test_hygiene.py" in str(info.value)


def test_interrupt_inside_set_trace_leaves_eager_mode_clean(monkeypatch):
    import pytest

    import array_namespace as xp
    from transforms import core

    real = core._on_trace_change
    state = {"armed": True}

    def hook(v):
        real(v)
        if state["armed"] and v is True:
            state["armed"] = False
            raise KeyboardInterrupt   # lands inside set_trace.__enter__, after the trace was made current
    monkeypatch.setattr(core, "_on_trace_change", hook)
    with pytest.raises(KeyboardInterrupt):
        jit(lambda x: x + 1)(xp.ones(2) * 3.0)
    monkeypatch.setattr(core, "_on_trace_change", real)
    assert core.current_trace() is core.EVAL
    y = xp.ones(2) + 1.0          # eager again: a concrete value, not a tracer
    assert float(y[0]) == 2.0
    assert [float(v) for v in jit(lambda x: x * 2)(xp.ones(2))] == [2.0, 2.0]
