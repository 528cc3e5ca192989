"""Our jit where the libraries' tests put jax.jit: ``lazy_xp_function`` tags under ``--xp-jit``.

Why: scipy's and array-api-extra's tests tag the functions they test with
``lazy_xp_function``; their ``xp`` fixtures call ``patch_lazy_xp_functions``, which, while a
JAX test runs, replaces every tagged function (in the test module's globals and in the
modules and classes its ``lazy_xp_modules`` lists) by ``jax_autojit(func)``. ``install``
swaps that helper for one that does the same for our namespace with our ``transforms.jit``,
and for every tagged function, ``jax_jit=False`` ones too, so the libraries' own tests
check their functions under our jit. Other backends get the library's own helper.

``autojit`` follows array-api-extra's ``jax_autojit``: the arguments and the result are
split by pickling (the library's ``pickle_flatten``) into our arrays, which are traced, and
everything else, which is static (part of the compile key: one trace per distinct value;
Python scalars are not made arrays); a returned iterator is consumed into a list and handed
back as an iterator. A fresh jit per test, as upstream: nothing is cached across tests.
Each top-level call of a wrapped function is recorded against the running test (``CALLS``),
so a report can say which functions pass under our jit (``function_table``).
"""
from __future__ import annotations

import contextlib
import functools
from collections import defaultdict
from collections.abc import Iterator

CALLS = defaultdict(lambda: defaultdict(int))   # test nodeid -> function key -> top-level calls
_depth = [0]                                    # > 0 inside a wrapped call (nested calls not recorded)
_trees = {}                                     # flatten helpers' module -> registered pytree node


def function_key(func, owner=None, name=None):
    """'module.qualname' of a tagged function (a ufunc has no __module__: the module it was found in);
    a method tagged on a class is named after that class (B.g, not the A.g it inherits)."""
    if isinstance(owner, type) and name:
        return f"{owner.__module__}.{owner.__qualname__}.{name}"
    mod = getattr(func, "__module__", None) or getattr(owner, "__name__", "?")
    return f"{mod}.{getattr(func, '__qualname__', None) or getattr(func, '__name__', repr(func))}"


def _tree_type(flatten, unflatten):
    """A pytree node holding any object: our arrays inside it are its children, the rest (pickled, plus
    what cannot be pickled) its static aux. One class per pair of helpers, registered once."""
    key = (flatten, unflatten)
    if key in _trees:
        return _trees[key]
    from array_namespace._array import Array
    from transforms import register_pytree_node

    class Tree:
        __slots__ = ("obj", "is_iter")

        def __init__(self, obj, is_iter=None):
            if is_iter is None:
                is_iter = isinstance(obj, Iterator)
                obj = list(obj) if is_iter else obj
            self.obj, self.is_iter = obj, is_iter

        def value(self):
            return iter(self.obj) if self.is_iter else self.obj

    def flat(t):
        arrays, rest = flatten(t.obj, Array)
        return arrays, (t.is_iter, rest)

    register_pytree_node(Tree, flat, lambda aux, kids: Tree(unflatten(kids, aux[1]), aux[0]))
    _trees[key] = Tree
    return Tree


def autojit(func, flatten, unflatten, on_call=None):
    """func under our jit with every non-array argument static (see the module doc); on_call() runs
    at each top-level call (not for calls made inside another wrapped function)."""
    from transforms import jit

    Tree = _tree_type(flatten, unflatten)
    inner = jit(lambda t: Tree(func(*t.obj[0], **t.obj[1])))

    @functools.wraps(func)
    def outer(*args, **kwargs):
        if on_call is not None and _depth[0] == 0:
            on_call()
        _depth[0] += 1
        try:
            return inner(Tree((args, kwargs))).value()
        finally:
            _depth[0] -= 1

    outer._our_jit = func
    return outer


def iter_tagged(module, ufunc_tags):
    """(owner, name, attr, function, tags) for every tagged function the test module reaches, as the
    library's own patch_lazy_xp_functions finds them (owners listed twice are visited once).
    array-api-extra 0.11 also tags methods (``lazy_xp_function((cls, name))`` sets tags["owner"]):
    classes found in the listed modules are searched, a static/classmethod is looked through, and a
    class holding another class's method is skipped. Tags without an owner (scipy's vendored copy) are
    found as that copy finds them: on plain functions of listed modules and classes only (a scipy
    ``from_*`` staticmethod carries its tag on ``__func__``, so upstream never wraps it)."""
    listed = [module, *getattr(module, "lazy_xp_modules", [])]
    found = [v for o in listed for v in list(vars(o).values()) if isinstance(v, type)]
    seen = set()
    for owner in listed + found:
        if id(owner) in seen:
            continue
        seen.add(id(owner))
        is_listed = any(owner is o for o in listed)
        for name, attr in list(vars(owner).items()):
            func = attr.__func__ if isinstance(attr, (staticmethod, classmethod)) else attr
            if getattr(func, "_our_jit", None) is not None:
                continue
            tags = getattr(func, "_lazy_xp_function", None)
            if tags is None:
                with contextlib.suppress(KeyError, TypeError):
                    tags = ufunc_tags[func]
            if tags is None:
                continue
            if "owner" in tags:
                if isinstance(owner, type) and tags["owner"] is not owner:
                    continue
            elif not is_listed or attr is not func:
                continue
            yield owner, name, attr, func, tags


def _count(calls, key):
    calls[key] += 1


def helpers(testing):
    """pickle_flatten/pickle_unflatten: in the testing module (scipy's vendored copy) or in its
    _helpers (array-api-extra 0.11, where testing is a package and the code is testing._testing)."""
    src = testing if hasattr(testing, "pickle_flatten") else testing._helpers
    return src.pickle_flatten, src.pickle_unflatten


def make_patch(original, testing, is_ours):
    """patch_lazy_xp_functions for the library whose testing module is `testing`: ours (is_ours(xp))
    gets every tagged function under our jit until the context exits; other backends the original."""

    def patch_lazy_xp_functions(request, monkeypatch=None, *, xp):
        if not is_ours(xp):
            return original(request, monkeypatch, xp=xp)
        calls = CALLS[request.node.nodeid]
        undo = []
        flatten, unflatten = helpers(testing)
        for owner, name, attr, func, _tags in iter_tagged(request.module, testing._ufuncs_tags):
            key = function_key(func, owner, name)
            wrapped = autojit(func, flatten, unflatten, functools.partial(_count, calls, key))
            if isinstance(attr, (staticmethod, classmethod)):
                wrapped = type(attr)(wrapped)
            if monkeypatch is not None:   # the deprecated form: monkeypatch undoes it
                monkeypatch.setattr(owner, name, wrapped)
            else:
                undo.append((owner, name, attr))
                setattr(owner, name, wrapped)

        @contextlib.contextmanager
        def revert_on_exit():
            try:
                yield
            finally:
                for owner, name, func in reversed(undo):
                    setattr(owner, name, func)

        return revert_on_exit()

    patch_lazy_xp_functions.__wrapped__ = original
    return patch_lazy_xp_functions


def install(testing, holders, is_ours):
    """Replace testing.patch_lazy_xp_functions, and the name where `holders` (conftests) imported it."""
    current = testing.patch_lazy_xp_functions
    original = getattr(current, "__wrapped__", current)
    patched = make_patch(original, testing, is_ours)
    for mod in (testing, *holders):
        if getattr(mod, "patch_lazy_xp_functions", None) in (original, current):
            mod.patch_lazy_xp_functions = patched
    return patched


def inventory(modules, ufunc_tags):
    """Every tagged function the given test modules reach: key -> jax_jit tag."""
    out = {}
    for mod in modules:
        for owner, name, _attr, func, tags in iter_tagged(mod, ufunc_tags):
            out[function_key(func, owner, name)] = bool(tags.get("jax_jit", True))
    return out


def function_table(outcomes, calls, tagged):
    """Per tagged function: the outcomes of the tests that called it under our jit, and its status:
    'pass' (every such test passed), 'fail' (one failed or errored), 'other' (only skips/xfails),
    'untested' (no test that ran called it)."""
    table = {k: {"jax_jit": j, "tests": defaultdict(int)} for k, j in tagged.items()}
    for nodeid, per_fn in calls.items():
        outcome = outcomes.get(nodeid, "pending")
        for key in per_fn:
            row = table.setdefault(key, {"jax_jit": None, "tests": defaultdict(int)})
            row["tests"][outcome] += 1
    for row in table.values():
        row["tests"] = dict(row["tests"])
        row["status"] = status_of(row["tests"])
    return table


def status_of(tests):
    """A function's status from the outcomes of the tests that called it (outcome -> count)."""
    if tests.get("failed") or tests.get("error"):
        return "fail"
    if tests.get("passed") or tests.get("xpassed"):
        return "pass"
    return "other" if tests else "untested"
