"""Test setup: make the src/ layout importable from a plain checkout, and seed hypothesis."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "src"))
sys.path.insert(0, os.path.dirname(__file__))
os.environ["SCIPY_ARRAY_API"] = "1"  # before anything imports scipy (array-API dispatch; tests/downstream)
# persistent compile cache: a session temp dir, never ~/.cache (made by the first conftest to run, pytest-xdist's
# controller: its workers inherit it, so a program one of them compiles the others load)
if "ARRAY_NAMESPACE_CACHE_DIR" not in os.environ:
    import atexit, glob, shutil, tempfile  # noqa: E401
    _prefix = os.path.join(tempfile.gettempdir(), "array_namespace_cache_")
    for _old in glob.glob(_prefix + "*_*") if os.name == "posix" else ():  # left by killed sessions
        try:
            os.kill(int(_old[len(_prefix):].split("_", 1)[0]), 0)
        except ProcessLookupError:
            shutil.rmtree(_old, True)
        except (ValueError, OSError):
            pass
    os.environ["ARRAY_NAMESPACE_CACHE_DIR"] = _cache_dir = tempfile.mkdtemp(prefix=f"{_prefix}{os.getpid()}_")
    atexit.register(shutil.rmtree, _cache_dir, True)

from hypothesis import settings  # noqa: E402

settings.register_profile("ci", max_examples=15, deadline=None, derandomize=True)
settings.load_profile("ci")


def pytest_sessionfinish(session, exitstatus):
    """Nothing the tests ran may have imported the jax package (installed on some machines for
    benchmarks only): once imported it owns jaxlib's C++ states, and src/ must work without it."""
    if "jax" in sys.modules and exitstatus == 0:
        session.exitstatus = 1
        print("\nERROR: the jax package was imported during the test run (src/ must never import it; "
              "jaxlib's convenience helpers such as LoadedExecutable.execute do)", file=sys.stderr)


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def _order_free_rng(request):
    """A test module's shared `RNG` (a NumPy Generator) is reseeded for each test from the test's id, so what a test
    draws does not depend on which tests ran before it in its process: under pytest-xdist that varies from run to
    run (test_lpmv_large_degree failed only on the runs whose draws met a bug)."""
    import zlib

    import numpy as np
    mod = request.module
    if isinstance(getattr(mod, "RNG", None), np.random.Generator):
        mod.RNG = np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture
def fresh_staged():
    """Every staged body is staged afresh (its way decided again): tests that count compiles or force the
    eager policy's threshold then do not depend on what earlier tests ran."""
    from transforms import jaxpr_transforms as JT
    JT._staged_jaxpr.cache_clear()


@pytest.fixture
def spy(monkeypatch):
    """spy(obj, name, *more) -> log: obj.name (and every (obj, name) pair in `more`, all the same function)
    replaced for the test by a wrapper appending, per call, whether it returned something other than None."""
    def install(obj, name, *more):
        log = []
        real = getattr(obj, name)

        def wrapper(*args, **kwargs):
            out = real(*args, **kwargs)
            log.append(out is not None)
            return out
        for o, n in ((obj, name),) + tuple(zip(more[::2], more[1::2])):
            monkeypatch.setattr(o, n, wrapper)
        return log
    return install
