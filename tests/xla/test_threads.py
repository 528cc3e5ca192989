"""Thread safety from the first call: the client, device list, LAPACK/FFI registration, executable
caches and the trace state are safe under concurrent first use (fresh processes, results vs NumPy)."""
import os
import subprocess
import sys

import pytest

SCRIPT = os.path.join(os.path.dirname(__file__), "threads_first_use.py")


@pytest.mark.parametrize("run", range(4))
def test_eight_threads_first_use_in_a_fresh_process(run, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(__file__), "..", "..", "src"),
               ARRAY_NAMESPACE_CACHE_DIR=str(tmp_path))   # a cold compile cache: first compiles race too
    p = subprocess.run([sys.executable, SCRIPT], env=env, capture_output=True, text=True, timeout=240)
    assert p.returncode == 0, (p.returncode, p.stdout[-2000:], p.stderr[-2000:])
    assert p.stdout.strip().startswith("OK")
