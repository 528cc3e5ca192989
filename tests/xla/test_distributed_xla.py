"""xla/distributed.py (named _xla: tests/transforms/test_distributed.py takes the basename): the runtime side of
a multi-process run. A process that joins keeps a client made with the distributed runtime, so every join
runs in a fresh subprocess (hard timeout); runs of two processes are in tests/transforms/test_distributed.py."""
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import array_namespace  # noqa: F401
from xla import _jaxlib, distributed

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(__file__)))


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _run(code, timeout=90):
    env = dict(os.environ, ARRAY_NAMESPACE_CPU_DEVICES="2", PYTHONPATH=os.path.join(ROOT, "src"))
    env.pop("XLA_FLAGS", None)
    r = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                       cwd=ROOT, timeout=timeout)
    return r.returncode, r.stdout + r.stderr


def test_initialize_after_the_client_exists_here():
    _jaxlib.client()   # this process's client exists: joining now must be refused before connecting anywhere
    assert not distributed.is_initialized()
    with pytest.raises(RuntimeError, match="client already exists .* call distributed.initialize first"):
        distributed.initialize(f"127.0.0.1:{_free_port()}", 2, 1, initialization_timeout=1)
    assert not distributed.is_initialized() and distributed.process_info() == (0, 1)


def test_a_run_of_one_process():
    port = _free_port()
    rc, out = _run(f"""
        import numpy as np
        import array_namespace as xp   # brings up the backend; makes no client
        from transforms import distributed
        import transforms
        from xla import distributed as xd, _jaxlib
        assert not _jaxlib.client_exists()
        distributed.initialize("127.0.0.1:{port}", 1, 0, heartbeat_timeout=5, shutdown_timeout=10)
        assert distributed.is_initialized() and xd.process_info() == (0, 1) and not _jaxlib.client_exists()
        from transforms import pmap, psum
        x = np.arange(6.0).reshape(2, 3)
        got = np.asarray(pmap(lambda a: psum(a, "i"), "i")(xp.asarray(x)))   # gloo collectives, one process
        np.testing.assert_array_equal(got, np.broadcast_to(x.sum(0), (2, 3)))
        assert transforms.process_count() == 1 and transforms.device_count() == 2
        distributed.barrier("a", timeout=10); distributed.barrier("a", timeout=10)   # the same name twice
        try:
            distributed.initialize("127.0.0.1:{port}", 1, 0)
        except RuntimeError as e:
            assert "already joined a run (process 0 of 1" in str(e), e
        else:
            raise AssertionError("initialize twice")
        assert distributed.shutdown() is True and distributed.shutdown() is False
        assert not distributed.is_initialized()
        try:
            distributed.initialize("127.0.0.1:{port}", 1, 0)
        except RuntimeError as e:
            assert "since shut down" in str(e), e
        else:
            raise AssertionError("initialize after shutdown")
        try:
            distributed.barrier()
        except RuntimeError as e:
            assert "no distributed run" in str(e), e
        print("RUN OK")
    """)
    assert rc == 0 and "RUN OK" in out, out[-4000:]


def test_local_device_ids_give_the_cpu_device_count():
    port = _free_port()
    rc, out = _run(f"""
        import array_namespace
        from transforms import distributed
        import transforms
        distributed.initialize("127.0.0.1:{port}", 1, 0, local_device_ids=[0, 1, 2], heartbeat_timeout=5,
                               shutdown_timeout=10)
        assert transforms.local_device_count() == 3, transforms.local_devices()
        print("RUN OK")
    """)
    assert rc == 0 and "RUN OK" in out, out[-4000:]


def test_cuda_without_the_plugin_fails_before_joining():
    try:
        so = distributed._cuda_plugin()
    except RuntimeError as e:
        assert "jax-cuda12-plugin[with-cuda]==0.10.2" in str(e)
    else:   # a machine with the plugin installed
        assert so.name == "xla_cuda_plugin.so" and so.exists()
        return
    rc, out = _run(f"""
        import array_namespace
        from transforms import distributed
        try:
            distributed.initialize("127.0.0.1:{_free_port()}", 2, 1, platform="cuda", initialization_timeout=1)
        except RuntimeError as e:
            assert "CUDA PJRT plugin is not installed" in str(e), e
        from xla import _jaxlib
        assert not distributed.is_initialized() and not _jaxlib.client_exists()
        print("RUN OK")
    """)
    assert rc == 0 and "RUN OK" in out, out[-4000:]


@pytest.mark.parametrize("address, host", [("127.0.0.1:80", "127.0.0.1"), ("localhost:80", "localhost"),
                                           ("[::1]:80", "::1"), ("10.1.2.3:80", None), ("node7:1234", None)])
def test_gloo_interface(address, host):
    assert distributed._hostname(address) == host
