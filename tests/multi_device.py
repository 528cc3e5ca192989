"""Run a cases file under pytest in a fresh process with N CPU devices (the device count is fixed when
the client is made, so multi-device cases cannot share the main test process)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run_cases_on_devices(path, n, timeout=300):
    env = dict(os.environ, ARRAY_NAMESPACE_CPU_DEVICES=str(n))
    env.pop("XLA_FLAGS", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", path],
                       capture_output=True, text=True, timeout=timeout, env=env, cwd=ROOT)
    assert r.returncode == 0, r.stdout[-6000:] + failure_tail(r.stderr)
    assert " passed" in r.stdout and "failed" not in r.stdout


def failure_tail(err, n=3000):
    """The last n characters of a child's stderr, but where the child crashed, faulthandler's report from its
    start ("Fatal Python error") up to its long "Extension modules:" list: the crashing thread's stack, which
    the bare tail would cut off."""
    start = err.rfind("Fatal Python error")
    if start < 0:
        return err[-n:]
    end = err.find("Extension modules:", start)
    return err[start:end if end >= 0 else None][-4 * n:]
