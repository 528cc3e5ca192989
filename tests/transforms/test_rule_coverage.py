"""Every primitive has every rule, or declares why not (a tested matrix, not a hope); the linear ones
are derived from the rules (a transpose rule is the claim "linear") and each claim is checked with the
dot-product identity <ct, J t> = <J^T ct, t> on random values; and every primitive is reached by an
oracle-tested namespace function, or is tested directly against NumPy (tests/transforms/primitives/)."""
import os

import numpy as np
import pytest

import array_namespace as xp
import transforms  # noqa: F401  (registers everything)
from transforms import checkpoint, cond, custom_vjp, jit, linear_transpose, scan, vjp
from transforms.core import abstract_eval_rules, bind, get_aval, impl_rules, is_tracer
from transforms.primitives import indexing as IX
from transforms.rules import (UndefPrimal, Zero, batch_gaps, batch_rules, jvp_gaps, jvp_rules, partial_eval_rules,
                              transpose_gaps, transpose_rules)
from xla.lowering import lowering_rules

PRIMS = sorted(abstract_eval_rules, key=lambda p: p.name)
TESTS = os.path.dirname(os.path.dirname(__file__))


@pytest.mark.parametrize("prim", PRIMS, ids=[p.name for p in PRIMS])
def test_every_primitive_is_complete(prim):
    assert prim in lowering_rules, f"{prim} has no XLA lowering"
    assert prim in impl_rules, f"{prim} has no eager impl"
    assert prim in jvp_rules or prim in jvp_gaps, f"{prim}: no jvp rule and no declared reason"
    assert prim in batch_rules or prim in batch_gaps, f"{prim}: no batching rule and no declared reason"
    for table in (jvp_gaps, batch_gaps, transpose_gaps):
        if prim in table:
            assert isinstance(table[prim], str) and len(table[prim]) > 10


# ------------------------------------------------ linearity, derived from the rules and then checked

LINEAR = sorted(p.name for p in PRIMS if p in transpose_rules)


def test_linear_list_is_derived_and_not_empty():
    assert {"add", "mul", "dot_general", "transpose", "reduce_sum", "jit", "scan", "cond"} <= set(LINEAR)
    assert not {"sin", "exp", "lu", "sort"} & set(LINEAR)


def _draw(rng, shape, dtype):
    dt = np.dtype(dtype)
    v = rng.standard_normal(shape)
    return (v + 1j * rng.standard_normal(shape) if dt.kind == "c" else v).astype(dt)


def _rng_values(rng, aval):
    """A raw value of `aval` drawn at random (what primitives and rules take)."""
    return xp.asarray(_draw(rng, tuple(aval.shape), aval.dtype))._v


@custom_vjp
def _sin_cv(x):
    return xp.sin(x)


_sin_cv.defvjp(lambda x: (xp.sin(x), xp.cos(x)), lambda c, g: (c * g,))
_A = np.random.default_rng(0).standard_normal((3, 3)) + 3 * np.eye(3)


def _lt_dynamic_slice(x):
    return IX.dynamic_slice(x._v, [xp.asarray(np.int32(1))._v], (2,))


def _lt_dynamic_update(x, u):
    return IX.dynamic_update_slice(x._v, u._v, [xp.asarray(np.int32(2))._v])


def _lt_complex_of_parts(x, y):
    from transforms.primitives import elementwise as E
    return bind(E.complex_p, x._v, y._v)


# Real uses whose reverse pass (vjp) or linear_transpose calls the transpose rules: (mode, fn, input shapes).
# The op table's differentiable rows are added below.
EXAMPLES = {
    "complex": ("vjp", lambda z: xp.real(z * xp.conj(z)) + 2.0 * xp.imag(z), [((4,), "complex128")]),
    "cumsum": ("vjp", xp.cumulative_sum, [((4,), "float64")]),
    "fft": ("vjp", xp.fft.fft, [((4,), "float64")]),
    "solve": ("vjp", lambda b: xp.linalg.solve(xp.asarray(_A), b), [((3, 2), "float64")]),
    # (lu's jvp solves with the factors: a reverse pass through slogdet transposes those solves)
    "triangular_solve": ("vjp", lambda m: xp.linalg.slogdet(xp.asarray(_A) + 0.1 * m).logabsdet, [((3, 3), "float64")]),
    "gather": ("vjp", lambda x: x[xp.argsort(x)], [((5,), "float64")]),
    "pad": ("vjp", lambda x, y: x.at[::2].set(y), [((5,), "float64"), ((3,), "float64")]),
    "scatter": ("vjp", lambda x, y: x.at[xp.argsort(x)[:2]].set(y), [((5,), "float64"), ((2,), "float64")]),
    "cond": ("vjp", lambda x: cond(True, xp.sin, lambda v: v * 2.0, x), [((3,), "float64")]),
    "scan": ("vjp", lambda x: scan(lambda c, v: (c * v, c + v), x[0], x)[1], [((4,), "float64")]),
    "jit": ("vjp", jit(lambda x: xp.sin(x) * 2.0), [((3,), "float64")]),
    "checkpoint": ("vjp", checkpoint(lambda x: xp.sin(xp.sin(x))), [((3,), "float64")]),
    "custom_vjp": ("vjp", _sin_cv, [((3,), "float64")]),
    "sub": ("linear_transpose", lambda x, y: x - 2.0 * y, [((3,), "float64"), ((3,), "float64")]),
    "dynamic_slice": ("linear_transpose", _lt_dynamic_slice, [((5,), "float64")]),
    "dynamic_update_slice": ("linear_transpose", _lt_dynamic_update, [((5,), "float64"), ((2,), "float64")]),
    "complex_of_parts": ("linear_transpose", _lt_complex_of_parts, [((3,), "float64"), ((), "float64")]),
}



def _inside_named_vmap(col):
    """Collectives are transposed only inside the vmap/pmap binding their axis: x -> J^T J x per member."""
    from transforms import vmap
    return lambda x: vmap(lambda v: vjp(col, v)[1](col(v))[0], axis_name="i")(x)


def _collective_examples():
    from transforms import all_gather, all_to_all, pmap, ppermute, psum, psum_scatter
    return {
        "psum": ("vjp", _inside_named_vmap(lambda v: psum(v, "i")), [((4, 3), "float64")]),
        "all_gather": ("vjp", _inside_named_vmap(lambda v: all_gather(v, "i", axis=1)), [((4, 3), "float64")]),
        "psum_scatter": ("vjp", _inside_named_vmap(lambda v: psum_scatter(v, "i", scatter_dimension=1)),
                         [((4, 3, 4), "float64")]),
        "all_to_all": ("vjp", _inside_named_vmap(lambda v: all_to_all(v, "i", 1, 0)), [((4, 3, 4), "float64")]),
        "ppermute": ("vjp", _inside_named_vmap(lambda v: ppermute(v, "i", [(0, 2), (2, 1)])), [((4, 3), "float64")]),
        "pmap": ("vjp", pmap(lambda v, w: xp.sin(v) * w + psum(v, "i"), "i", in_axes=(0, None)),
                 [((1, 3), "float64"), ((3,), "float64")]),
    }


EXAMPLES.update(_collective_examples())   # (transforms/collectives.py)


def _shard_map_examples():
    import transforms
    from transforms import Mesh, P, psum, shard_map
    mesh = Mesh(np.array(transforms.devices()[:1]).reshape(1, 1), ("i", "j"))   # any device count
    f = shard_map(lambda v, w: xp.sin(v) * w + psum(v, ("i", "j")), mesh, (P("i"), P()), P("i"))
    return {"shard_map": ("vjp", f, [((2, 3), "float64"), ((3,), "float64")])}


EXAMPLES.update(_shard_map_examples())   # (transforms/shard_map.py)

def _examples():
    from op_table import ALL_OPS
    rng = np.random.default_rng(1)
    for op in ALL_OPS:
        if op.grad:
            yield op.name, "vjp", op.fn, [xp.asarray(v) for v in op.inputs(rng, op.shapes[-1], "float64")]
    for name, (mode, fn, specs) in EXAMPLES.items():
        yield name, mode, fn, [xp.asarray(_draw(rng, s, d)) for s, d in specs]


@pytest.fixture(scope="module")
def transpose_calls():
    """prim name -> [(example, args, params)]: the transpose rules' calls while the examples run their reverse
    passes; args is None for a call on tracers (inside a staged or batched transpose: not replayable)."""
    calls = {}

    def spy(prim, rule):
        def recorded(ct, *args, **params):
            leaves = list(ct) if prim.multiple_results else [ct]
            leaves += [a for a in args if type(a) is not UndefPrimal]
            concrete = not any(is_tracer(v) for v in leaves)
            mine = calls.setdefault(prim.name, [])
            if len(mine) < 3 and (concrete or example[0] not in [c[0] for c in mine]):
                mine.append((example[0], args if concrete else None, params))
            return rule(ct, *args, **params)
        return recorded
    example = [None]
    with pytest.MonkeyPatch.context() as mp:
        for prim, rule in list(transpose_rules.items()):
            mp.setitem(transpose_rules, prim, spy(prim, rule))
        for name, mode, fn, args in _examples():
            example[0] = (fn, args)
            if mode == "vjp":
                out, pull = vjp(fn, *args)
                pull(xp.ones_like(out))
            else:
                out = get_aval(getattr(fn(*args), "_v", None) or fn(*args))
                linear_transpose(fn, *args)(xp.ones(out.shape, dtype=out.dtype))
    return calls


def _pair(a, b):
    """The real bilinear pairing Re(sum(a * b)) under which transposes of complex maps are taken."""
    return float(np.real(np.sum(np.asarray(a) * np.asarray(b))))


def _check_adjoint(prim, args, params, rng):
    undef = [i for i, a in enumerate(args) if type(a) is UndefPrimal]
    avals = [a.aval if type(a) is UndefPrimal else get_aval(a) for a in args]
    out_avals = abstract_eval_rules[prim](*avals, **params)
    out_avals = list(out_avals) if prim.multiple_results else [out_avals]

    def forward(ts):
        vals = list(args)
        for i, t in zip(undef, ts):
            vals[i] = t
        out = bind(prim, *vals, **params)
        return list(out) if prim.multiple_results else [out]

    draw = lambda: [_draw(rng, tuple(avals[i].shape), avals[i].dtype) for i in undef]
    raw = lambda ts: [xp.asarray(t)._v for t in ts]
    ts, t1, t2 = raw(draw()), draw(), draw()
    # linear in the marked arguments: f(2 t1 - 3 t2) == 2 f(t1) - 3 f(t2)
    mixed = forward(raw([2 * a - 3 * b for a, b in zip(t1, t2)]))
    for m, a, b in zip(mixed, forward(raw(t1)), forward(raw(t2))):
        np.testing.assert_allclose(np.asarray(m), 2 * np.asarray(a) - 3 * np.asarray(b), rtol=1e-9, atol=1e-9,
                                   err_msg=f"{prim}: not linear in its transposed arguments")
    cts = [_rng_values(rng, a) if np.dtype(a.dtype).kind in "fc" else Zero for a in out_avals]
    cts_in = transpose_rules[prim](cts if prim.multiple_results else cts[0], *args, **params)
    lhs = sum(_pair(c, y) for c, y in zip(cts, forward(ts)) if c is not Zero)
    rhs = 0.0
    for i, t in zip(undef, ts):
        c = cts_in[i]
        if c is None or c is Zero:
            continue
        assert get_aval(c).shape == avals[i].shape, f"{prim}: cotangent {i} shape {get_aval(c).shape}"
        assert get_aval(c).dtype == avals[i].dtype, f"{prim}: cotangent {i} dtype {get_aval(c).dtype}"
        rhs += _pair(c, t)
    assert abs(lhs - rhs) <= 1e-9 * (1 + abs(lhs)), f"{prim}: <ct, J t> = {lhs} but <J^T ct, t> = {rhs}"


def _check_adjoint_of_function(example, prim, rng):
    """For a primitive with no forward (custom_lin: only the user's backward pass exists) or transposed only on
    tracers (inside jit, vmap), the identity on the whole example function, with J t from central
    differences of the function itself."""
    fn, x = example
    t = [_draw(rng, a.shape, np.asarray(a).dtype) for a in x]
    out, pull = vjp(fn, *x)
    ct = _draw(rng, out.shape, np.asarray(out).dtype)
    h = 1e-6
    plus = np.asarray(fn(*[xp.asarray(np.asarray(a) + h * d) for a, d in zip(x, t)]))
    minus = np.asarray(fn(*[xp.asarray(np.asarray(a) - h * d) for a, d in zip(x, t)]))
    lhs = _pair(ct, (plus - minus) / (2 * h))
    rhs = sum(_pair(c, d) for c, d in zip(pull(xp.asarray(ct)), t))
    assert abs(lhs - rhs) <= 1e-6 * (1 + abs(lhs)), f"{prim}: <ct, J t> = {lhs} but <J^T ct, t> = {rhs}"


@pytest.mark.parametrize("name", LINEAR)
def test_transpose_rule_is_the_adjoint(name, transpose_calls):
    """Each primitive with a transpose rule, at the calls a real reverse pass makes: linear in the arguments
    it transposes, and its transpose satisfies <ct, J t> = <J^T ct, t> for random ct and t."""
    assert transpose_calls.get(name), f"no example reaches the transpose of {name}: add one to EXAMPLES"
    prim = next(p for p in PRIMS if p.name == name)
    rng = np.random.default_rng(2)
    replayable = [c for c in transpose_calls[name] if c[1] is not None]
    for example, args, params in replayable or transpose_calls[name]:
        if args is None or prim in jvp_gaps:   # only traced calls, or no forward of its own (custom_lin)
            _check_adjoint_of_function(example, prim, rng)
        else:
            _check_adjoint(prim, args, params, rng)


def test_call_primitive_has_partial_eval_rule():
    prim = next(p for p in PRIMS if p.name == "jit")
    assert prim in partial_eval_rules
