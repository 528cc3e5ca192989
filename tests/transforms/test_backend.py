"""The engine/backend seam (transforms/backend.py): hooks a backend fills in, clear errors where none is.

Oracles: NumPy values for a primitive registered after the backend came up; the error types and texts
for the cases that cannot run.
"""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import array_namespace as xp
import transforms
from transforms import jit
from transforms.backend import Backend, NoBackendError, backend
from transforms.core import Primitive, abstract_eval_rules, bind


def test_xla_is_the_registered_backend():
    assert backend.name == "xla"
    x = backend.device_put(np.arange(3.0))
    np.testing.assert_array_equal(backend.to_numpy(x), np.arange(3.0))
    assert backend.default_device() in backend.devices()


def test_unregistered_hooks_raise_no_backend_error():
    b = Backend()
    with pytest.raises(NoBackendError, match="device_put: no array backend is registered.*import array_namespace"):
        b.device_put(np.zeros(2))
    assert b.jit_public(None) is None and b.jit_fast_call(None) is None   # jit falls back to Python dispatch
    with pytest.raises(TypeError, match="unknown backend hooks \\['compile'\\]"):
        b.register("x", compile=lambda *a: None)


def test_primitive_defined_after_the_backend_came_up_runs_eagerly():
    from xla.lowering import lowering_rules
    from xla.lower_elementwise import hlo
    twice_p = Primitive("twice_late")
    abstract_eval_rules[twice_p] = lambda a: a
    lowering_rules[twice_p] = lambda c, x: hlo.add(x, x)
    x = np.arange(4.0)
    out = bind(twice_p, backend.device_put(x))
    np.testing.assert_array_equal(backend.to_numpy(out), 2 * x)
    got = jit(lambda a: xp.asarray(bind(twice_p, a._v)) + 1.0)(xp.asarray(x))
    np.testing.assert_array_equal(np.asarray(got), 2 * x + 1)


def test_primitive_without_a_lowering_names_what_is_missing():
    orphan_p = Primitive("orphan_late")
    abstract_eval_rules[orphan_p] = lambda a: a
    with pytest.raises(NotImplementedError, match=r"orphan_late: no eager implementation.*lowering_rules\[orphan_late_p\]"):
        bind(orphan_p, backend.device_put(np.zeros(2)))


def test_engine_without_a_backend_traces_and_says_how_to_execute():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("jaxlib", "xla", "array_namespace"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        import numpy as np
        import transforms
        from transforms.backend import NoBackendError
        from transforms.core import bind
        from transforms.primitives import elementwise as E
        print(transforms.make_jaxpr(lambda x: bind(E.sin_p, x))(np.float64(1.0)))
        for run in (lambda: bind(E.sin_p, np.float64(1.0)), lambda: transforms.jit(lambda x: bind(E.sin_p, x))(np.float64(1.0))):
            try:
                run()
            except NoBackendError as e:
                print("NoBackendError", e)
        assert not any(m.split(".")[0] in ("jaxlib", "xla", "array_namespace") for m in sys.modules)
    """)
    src = os.path.dirname(os.path.dirname(transforms.__file__))
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert "b:f64[] = sin a" in r.stdout
    assert r.stdout.count("NoBackendError") == 2 and "import array_namespace" in r.stdout
