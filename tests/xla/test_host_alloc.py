"""xla/host_alloc.py: glibc's malloc thresholds are set once where host kernels run, left alone when the
user opts out or has set their own, and a chain of eager ops on medium arrays then reuses its pages
(oracle: the process's minor page-fault count, in a fresh process)."""
import os
import subprocess
import sys
import textwrap

import pytest

from xla import host, host_alloc, runtime

GLIBC = sys.platform.startswith("linux") and os.confstr_names.get("CS_GNU_LIBC_VERSION") is not None \
    and "glibc" in os.confstr("CS_GNU_LIBC_VERSION")
SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")


def test_set_at_start_on_glibc_where_host_kernels_run():
    runtime._kernels_on()
    if GLIBC and host.MODE != "xla" and not host_alloc.reason.startswith("the user's own"):
        assert host_alloc.applied == (64 << 20, 256 << 20), host_alloc.reason
    else:
        assert host_alloc.applied is None and host_alloc.reason != "set"


@pytest.mark.parametrize("env, why", [
    ({"ARRAY_NAMESPACE_MALLOC_TUNING": "0"}, "switched off"),
    ({"ARRAY_NAMESPACE_MALLOC_TUNING": " Off "}, "switched off"),
    ({"MALLOC_TRIM_THRESHOLD_": "1000000"}, "user's own"),
    ({"GLIBC_TUNABLES": "glibc.malloc.mmap_threshold=1000"}, "user's own"),
])
def test_left_alone_when_switched_off_or_set_by_the_user(monkeypatch, env, why):
    monkeypatch.setattr(host_alloc, "applied", None)
    monkeypatch.setattr(host_alloc, "reason", "not tried")
    assert host_alloc.tune(env) is False
    assert why in host_alloc.reason
    assert host_alloc.applied is None


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_tune_is_idempotent_and_reports_the_values(monkeypatch):
    monkeypatch.setattr(host_alloc, "applied", None)
    assert host_alloc.tune({}) is True
    assert host_alloc.applied == (host_alloc.MMAP_THRESHOLD, host_alloc.TRIM_THRESHOLD)
    assert host_alloc.tune({"ARRAY_NAMESPACE_MALLOC_TUNING": "0"}) is True   # (already set: stays set)


_CHAIN = textwrap.dedent("""
    import resource
    import numpy as np
    import array_namespace as xp
    from xla import host_alloc
    x = xp.asarray(np.random.default_rng(0).standard_normal((800, 800)))   # 5 MiB per temporary
    def chain():
        m = xp.mean(x, axis=1, keepdims=True)
        return xp.sum((x - m) * (x - m), axis=1)
    chain(); chain()
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        chain()
    print(host_alloc.reason, resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0)
""")


@pytest.mark.skipif(not GLIBC, reason="glibc's malloc only")
def test_eager_chain_on_medium_arrays_reuses_its_pages():
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    env["PYTHONPATH"] = os.path.abspath(SRC) + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("ARRAY_NAMESPACE_MALLOC_TUNING", None)
    env.pop("ARRAY_NAMESPACE_EAGER", None)
    out = subprocess.run([sys.executable, "-c", _CHAIN], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    reason, faults = out.stdout.split()
    assert reason == "set"
    # 20 chains of three 5 MiB temporaries: ~23000 faults when glibc gives the pages back each time
    assert int(faults) < 1000, f"{faults} minor page faults in 20 chains"
