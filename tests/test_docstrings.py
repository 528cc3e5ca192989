"""Every public function and class documents its parameters, what it returns, what it raises, and has a
short example; the examples run (doctest, NORMALIZE_WHITESPACE | ELLIPSIS) and print what they claim.

COMPLETE lists the public APIs held to this; each name in an API must pass. An API not yet complete is
not listed here (the report of the change that adds docstrings says which remain)."""
import doctest
import inspect

import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import distributed, profiler, random, traceback_util

# api label -> (module, the public names)
# transforms.__all__ names whose docstrings are not written yet (their modules were being changed by
# others at the time); test_pending_is_current keeps this list honest -- drop a name once it passes.
TRANSFORMS_PENDING = set()

# Array's public attributes and methods (its operators are described in the class docstring), and the
# inspection object's methods.
ARRAY_MEMBERS = ["dtype", "shape", "ndim", "size", "device", "aval", "T", "mT", "at", "to_device", "tolist", "item",
                 "block_until_ready", "is_ready", "sharding", "addressable_shards", "__dlpack__", "__dlpack_device__"]
INFO_METHODS = ["capabilities", "default_device", "devices", "default_dtypes", "dtypes"]

COMPLETE = {
    "array_namespace": (xp, xp.__all__),
    "array_namespace.linalg": (xp.linalg, xp.linalg.__all__),
    "array_namespace.fft": (xp.fft, xp.fft.__all__),
    "array_namespace.Array": (xp.Array, ARRAY_MEMBERS),
    "array_namespace.__array_namespace_info__()": (xp.__array_namespace_info__(), INFO_METHODS),
    "transforms": (transforms, [n for n in transforms.__all__ if n not in TRANSFORMS_PENDING]),
    "transforms.random": (random, random.__all__),
    "transforms.profiler": (profiler, profiler.__all__),
    "transforms.distributed": (distributed, distributed.__all__),
    "transforms.traceback_util": (traceback_util, traceback_util.__all__),
}

SECTIONS = ("Parameters", "Returns", "Raises")


def _globs():
    g = {"xp": xp, "np": np, "transforms": transforms, "random": random, "profiler": profiler,
         "distributed": distributed}
    g.update({n: getattr(transforms, n) for n in transforms.__all__})
    return g


def _cases():
    for api, (mod, names) in COMPLETE.items():
        for name in names:
            obj = inspect.getattr_static(mod, name) if inspect.isclass(mod) else getattr(mod, name)
            if callable(obj) or isinstance(obj, property):   # functions, classes, properties (not constants, dtypes)
                yield pytest.param(api, mod, name, id=f"{api}.{name}")


def _needs_parameters(obj):
    if isinstance(obj, property):
        return False
    target = obj.__init__ if inspect.isclass(obj) else obj
    try:
        sig = inspect.signature(target)
    except (TypeError, ValueError):
        return True
    return any(p.name not in ("self", "cls") for p in sig.parameters.values())


def _problems(obj):
    doc = inspect.getdoc(obj) or ""
    if not doc:
        return "no docstring"
    missing = [s for s in SECTIONS if f"{s}:" not in doc and not (s == "Parameters" and not _needs_parameters(obj))]
    if missing:
        return f"the docstring lacks {missing}"
    return None if ">>>" in doc else "no example"


def test_pending_is_current():
    # one test, not parametrised: an empty PENDING (as now) must not turn into a skipped case
    done = [n for n in sorted(TRANSFORMS_PENDING) if n in transforms.__all__ and not _problems(getattr(transforms, n))]
    assert not done, f"transforms.{done} are documented now: drop them from PENDING"
    assert TRANSFORMS_PENDING <= set(transforms.__all__), "PENDING names a name transforms does not export"


@pytest.mark.parametrize("api,mod,name", list(_cases()))
def test_public_name_is_documented_with_a_running_example(api, mod, name):
    obj = inspect.getattr_static(mod, name) if inspect.isclass(mod) else getattr(mod, name)
    doc = inspect.getdoc(obj) or ""
    assert doc, f"{api}.{name} has no docstring"
    missing = [s for s in SECTIONS if f"{s}:" not in doc and not (s == "Parameters" and not _needs_parameters(obj))]
    assert not missing, f"{api}.{name}: the docstring lacks {missing} (write 'Parameters:', 'Returns:', 'Raises:')"
    assert ">>>" in doc, f"{api}.{name}: the docstring has no example"
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(obj, f"{api}.{name}", globs=_globs())
    assert tests and any(t.examples for t in tests)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    for t in tests:
        runner.run(t)
    res = runner.summarize(verbose=False)
    assert res.failed == 0, f"{api}.{name}: {res.failed} of {res.attempted} example lines failed (see output above)"


def test_the_check_catches_a_missing_section_and_a_wrong_example():
    def f(x):
        """Add one.

        Parameters: x (int)
        Returns: int

        >>> f(1)
        3
        """
        return x + 1
    doc = inspect.getdoc(f)
    assert "Raises:" not in doc
    t = doctest.DocTestFinder(recurse=False).find(f, "f", globs={"f": f})[0]
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    runner.run(t, out=lambda s: None)
    assert runner.summarize(verbose=False).failed == 1
