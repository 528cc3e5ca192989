"""xla/pmap_runtime.py: the cases in pmap_runtime_cases.py need 4 CPU devices (fixed when the client is made), so
they run in a fresh process with ARRAY_NAMESPACE_CPU_DEVICES=4."""
import os
import subprocess
import sys

HERE = os.path.dirname(__file__)


def test_pmap_runtime_on_four_devices_in_a_subprocess():
    env = dict(os.environ, ARRAY_NAMESPACE_CPU_DEVICES="4")
    env.pop("XLA_FLAGS", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                        os.path.join(HERE, "pmap_runtime_cases.py")], capture_output=True, text=True, timeout=300,
                       env=env, cwd=os.path.dirname(os.path.dirname(HERE)))
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and "failed" not in r.stdout
