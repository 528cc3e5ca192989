"""Every primitive of the vocabulary (src/transforms/primitives/) is reached by something checked against
an oracle: traced out of an oracle-tested namespace function or its jvp (the op table, the namespace
table, xp.special against scipy, the REACH entries below whose test files are read to confirm they
use the function), or bound directly in a NumPy-oracle table of this folder (DIRECT). A primitive that
nothing reaches is a rule nobody checks; this test names it."""
import importlib.util
import os

import numpy as np
import pytest

import array_namespace as xp
from transforms import checkpoint, cond, custom_jvp, custom_vjp, debug_print, io_callback, jit, jvp, make_jaxpr
from transforms import pure_callback, scan, while_loop
from transforms import (P, all_gather, all_to_all, axis_index, make_mesh, pmap, pmax, pmean, pmin, ppermute, psum,
                        psum_scatter, shard_map)
from transforms.core import abstract_eval_rules

HERE = os.path.dirname(__file__)
TESTS = os.path.dirname(os.path.dirname(HERE))


def _load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3] + "_for_reach", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _prims(jaxpr, acc):
    for eqn in jaxpr.eqns:
        acc.add(eqn.prim.name)
        for v in eqn.params.values():
            for j in v if isinstance(v, (tuple, list)) else [v]:
                inner = getattr(j, "jaxpr", j)
                if hasattr(inner, "eqns"):
                    _prims(inner, acc)
    return acc


def _trace(fn, args, acc, derivative=True):
    """Primitives of fn and (for float inputs) of its jvp in each argument: derivative rules bind
    primitives of their own. An argument with a declared missing derivative (an integer order) is skipped."""
    _prims(make_jaxpr(fn)(*args).jaxpr, acc)
    for i, a in enumerate(args if derivative else ()):
        if np.dtype(a.dtype).kind not in "fc":
            continue

        def tangent(v, i=i):
            return jvp(lambda u: fn(*args[:i], u, *args[i + 1:]), (v,), (xp.ones_like(v),))[1]
        try:
            _prims(make_jaxpr(tangent)(a).jaxpr, acc)
        except NotImplementedError:
            pass


_SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])


@custom_jvp
def _cj(x):
    return xp.sin(x)


_cj.defjvp(lambda p, t: (xp.sin(p[0]), xp.cos(p[0]) * t[0]))


@custom_vjp
def _cv(x):
    return xp.sin(x)


_cv.defvjp(lambda x: (xp.sin(x), xp.cos(x)), lambda c, g: (c * g,))


def _callbacks(x):
    debug_print("x = {}", x)
    y = pure_callback(np.sin, x, x)
    return io_callback(np.cos, x, y)


def _in_pmap(body):
    return pmap(body, axis_name="i")


# label -> (test file under tests/ that checks it against an oracle, text that file must contain, fn, inputs)
REACH = {
    "cholesky": ("array_namespace/test_linalg.py", "LA.cholesky", xp.linalg.cholesky, [_SPD]),
    "eigh": ("array_namespace/test_linalg.py", "LA.eigh", xp.linalg.eigh, [_SPD]),
    "eig": ("array_namespace/test_linalg_eig.py", "LA.eig", xp.linalg.eig, [_SPD]),
    "qr": ("array_namespace/test_linalg.py", "LA.qr", xp.linalg.qr, [_SPD]),
    "svd": ("array_namespace/test_linalg.py", "LA.svd", xp.linalg.svd, [_SPD]),
    "solve": ("array_namespace/test_linalg.py", "LA.solve", lambda a: xp.linalg.solve(a, a[:, :1]), [_SPD]),
    # (lu, and the triangular solves of its jvp: solve and inv bind solve_p)
    "det": ("array_namespace/test_linalg.py", "LA.det", lambda a: jvp(xp.linalg.det, (a,), (a,))[1], [_SPD]),
    "fft": ("array_namespace/test_fft.py", "FF.fft", xp.fft.fft, [_SPD]),
    "sort": ("array_namespace/test_sorting.py", "xp.sort", xp.sort, [_SPD]),
    "cumulative_sum": ("array_namespace/test_sorting.py", "xp.cumulative_sum",
                       lambda a: xp.cumulative_sum(a, axis=0), [_SPD]),
    "cumulative_prod": ("array_namespace/test_sorting.py", "xp.cumulative_prod",
                        lambda a: xp.cumulative_prod(a, axis=0), [_SPD]),
    "at_array_index": ("array_namespace/test_indexing.py", "test_updates_match_numpy",
                       lambda a: a.at[xp.asarray([0, 2])].set(a[1]), [_SPD]),
    "traced_index": ("array_namespace/test_indexing.py", "test_traced_scalar_index_reads_and_updates_under_jit",
                     lambda a, i: a.at[i].set(a[i] * 2.0), [_SPD, np.int64(1)]),
    "cond": ("transforms/test_control_flow_cond.py", "cond(", lambda a: cond(a[0, 0] > 0, xp.sin, xp.cos, a), [_SPD]),
    "scan": ("transforms/test_control_flow_scan.py", "scan(", lambda a: scan(lambda c, r: (c + r, c * r), a[0], a),
             [_SPD]),
    "while_loop": ("transforms/test_control_flow_while.py", "while_loop(",
                   lambda a: while_loop(lambda v: xp.sum(v) < 100.0, lambda v: v * 2.0, a), [_SPD]),
    "jit": ("transforms/test_jit.py", "jit(", jit(xp.sin), [_SPD]),
    "checkpoint": ("transforms/test_custom_derivatives.py", "checkpoint(", checkpoint(xp.sin), [_SPD]),
    "custom_jvp": ("transforms/test_custom_derivatives.py", "custom_jvp", _cj, [_SPD]),
    "custom_vjp": ("transforms/test_custom_derivatives.py", "custom_vjp", _cv, [_SPD]),
    "custom_vjp_linearized": ("transforms/test_custom_derivatives.py", "custom_vjp",
                              lambda a: jvp(lambda v: xp.sum(_cv(v)), (a,), (a,))[0], [_SPD]),
    "callbacks": ("transforms/test_callbacks.py", "io_callback(", _callbacks, [_SPD]),
    "ellipe": ("array_namespace/special/test_erf_bessel.py", "ellipe", xp.special.ellipe, [_SPD / 5]),
    # collectives, staged inside a one-device pmap (under vmap(axis_name=) they batch away into other
    # primitives); their values are checked against NumPy under vmap and on 8 devices under pmap
    "psum": ("transforms/test_collectives.py", "psum(", _in_pmap(lambda v: psum(v, "i")), [_SPD[None]]),
    "pmean": ("transforms/test_collectives.py", "pmean", _in_pmap(lambda v: pmean(v, "i")), [_SPD[None]]),
    "pmax": ("transforms/test_collectives.py", "pmax", _in_pmap(lambda v: pmax(v, "i")), [_SPD[None]]),
    "pmin": ("transforms/test_collectives.py", "pmin", _in_pmap(lambda v: pmin(v, "i")), [_SPD[None]]),
    "all_gather": ("transforms/test_collectives.py", "all_gather(", _in_pmap(lambda v: all_gather(v, "i")),
                   [_SPD[None]]),
    "psum_scatter": ("transforms/test_collectives.py", "psum_scatter(",
                     _in_pmap(lambda v: psum_scatter(v, "i", tiled=True)), [_SPD[None]]),
    "all_to_all": ("transforms/test_collectives.py", "all_to_all(",
                   _in_pmap(lambda v: all_to_all(v, "i", 0, 1, tiled=True)), [_SPD[None]]),
    "ppermute": ("transforms/test_collectives.py", "ppermute(", _in_pmap(lambda v: ppermute(v, "i", [(0, 0)])),
                 [_SPD[None]]),
    "axis_index": ("transforms/test_collectives.py", "axis_index(", _in_pmap(lambda v: v + xp.astype(axis_index("i"), v.dtype)),
                   [_SPD[None]]),
    "pmap": ("transforms/pmap_cases.py", "pmap(", _in_pmap(xp.sin), [_SPD[None]]),
    "shard_map": ("transforms/shard_map_cases.py", "shard_map(",
                  lambda a: shard_map(xp.sin, make_mesh((1,), ("i",)), P("i"), P("i"))(a), [_SPD]),
}


def _direct():
    """Primitive names bound directly against a NumPy oracle: the DIRECT tables of this folder."""
    names = set()
    for f in sorted(os.listdir(HERE)):
        if f.startswith("test_") and f != os.path.basename(__file__):
            names |= set(getattr(_load(os.path.join(HERE, f)), "DIRECT", {}))
    return names


def _reached():
    from op_table import ALL_OPS
    table = _load(os.path.join(TESTS, "array_namespace", "test_namespace_table.py"))
    cov = _load(os.path.join(TESTS, "array_namespace", "special", "test_special_coverage.py"))
    acc, rng = set(), np.random.default_rng(0)
    for op in ALL_OPS:
        for dt in op.dtypes:
            _trace(op.fn, [xp.asarray(v) for v in op.inputs(rng, op.shapes[-1], dt)], acc, op.grad)
    for _, fn, _, nargs, dtypes in table.TABLE:
        for dt in dtypes:
            _trace(fn, [xp.asarray(table._data(rng, (3, 4), dt)) for _ in range(nargs)], acc, False)
    for name in cov.NAMES:
        if hasattr(xp.special, name):
            ours = cov._ours(cov._args(name))
            arrays = [a for a in ours if not isinstance(a, int)]

            def call(*arrs, f=getattr(xp.special, name), ours=ours):
                it = iter(arrs)
                return f(*[a if isinstance(a, int) else next(it) for a in ours])
            _trace(call, arrays, acc)
    for _, _, fn, args in REACH.values():
        _trace(fn, [xp.asarray(a) for a in args], acc, derivative=False)
    return acc


@pytest.mark.parametrize("label", list(REACH))
def test_reach_entries_name_a_test_that_uses_them(label):
    path, needle, _, _ = REACH[label]
    with open(os.path.join(TESTS, path)) as fh:
        src = fh.read()
    assert needle in src, f"{label}: {path} does not contain {needle!r}"
    # a NumPy comparison: np.testing's, or cf_util.close (np.testing.assert_allclose) in the control-flow tests
    compares = "assert_allclose" in src or "array_equal" in src or ("from cf_util import" in src and "close(" in src)
    assert "np." in src and compares, f"{path}: no NumPy comparison"


def test_every_primitive_is_reached_by_an_oracle_test(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(TESTS, "array_namespace"))   # the table's own imports
    everything = {p.name for p in abstract_eval_rules}
    direct = _direct()
    assert direct <= everything, f"DIRECT names unknown primitives: {sorted(direct - everything)}"
    missing = sorted(everything - _reached() - direct)
    assert not missing, (f"primitives that no oracle-tested function reaches and no DIRECT table binds: {missing}; "
                         "expose them through a namespace function or add a NumPy-oracle test in "
                         "tests/transforms/primitives/")
