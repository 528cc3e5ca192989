"""transforms/distributed.py: runs of 2 processes x 2 CPU devices on 127.0.0.1 (distributed_worker.py), each
with a hard subprocess timeout and short runtime heartbeats, checking collectives across processes against
NumPy and that a dead peer makes the others fail clearly instead of hanging. In this process (which must
never join a run: a client made with gloo would stay), only what fails before joining."""
import os
import socket
import subprocess
import sys
import time

import pytest

import array_namespace  # noqa: F401  (the backend: its hooks answer below)
from transforms import distributed

from multi_device import failure_tail

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKER = os.path.join(HERE, "distributed_worker.py")
TIMEOUT = 120   # seconds per run (a loaded 2-core box); a run takes a few


def _free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env(**extra):
    env = dict(os.environ, ARRAY_NAMESPACE_CPU_DEVICES="2", PYTHONUNBUFFERED="1")   # (extra: applied last)
    env.pop("XLA_FLAGS", None)
    for k in list(env):
        if k.startswith("ARRAY_NAMESPACE_") and k != "ARRAY_NAMESPACE_CPU_DEVICES":
            env.pop(k)   # (the worker sets the distributed ones itself where a test wants them)
    env["PYTHONPATH"] = os.pathsep.join([os.path.join(ROOT, "src"), HERE] + [p for p in [os.environ.get("PYTHONPATH")]
                                                                               if p])
    env.update(extra)
    return env


def run_workers(scenario, n=2, timeout=TIMEOUT, **extra):
    """Start n workers; [(returncode, output, seconds)] per process. Every worker is killed at the timeout."""
    port = _free_port()
    procs, t0 = [], time.monotonic()
    for pid in range(n):
        procs.append(subprocess.Popen([sys.executable, WORKER, scenario, str(pid), str(n), str(port)], cwd=ROOT,
                                      env=_env(**extra), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    results = []
    try:
        for p in procs:
            left = max(1.0, timeout - (time.monotonic() - t0))
            out, _ = p.communicate(timeout=left)
            results.append((p.returncode, out, time.monotonic() - t0))
    except subprocess.TimeoutExpired:
        outs = []
        for p in procs:
            p.kill()
            outs.append(p.communicate()[0])
        pytest.fail(f"{scenario}: a worker still ran after {timeout} s (a hang):\n" + "\n---\n".join(
            o[-3000:] for o in outs))
    return results


def _ok(results, checks):
    for pid, (rc, out, _) in enumerate(results):
        assert rc == 0 and "WORKER OK" in out, f"process {pid} (rc {rc}):\n{failure_tail(out, 6000)}"
        for name in checks:
            assert f"process {pid}: {name} ok" in out, f"process {pid} did not check {name}:\n{out[-3000:]}"


def test_collectives_across_two_processes_match_numpy():
    _ok(run_workers("collectives"), ["psum", "pmax", "all_to_all", "all_gather", "ppermute", "psum_scatter",
                                     "axis_index", "replicated", "jit(pmap)", "ppermute twice", "grad", "100 in flight",
                                     "repeats", "shard_map psum", "shard_map all_gather",
                                     "shard_map split readback refused", "bad input"])


def test_arguments_from_the_environment():
    _ok(run_workers("env"), ["psum", "all_gather", "bad input"])


def test_large_psum_scatter_4_mib_per_shard():
    results = run_workers("big")
    _ok(results, [])
    for pid, (_, out, _) in enumerate(results):
        assert f"process {pid}: psum_scatter 4 MiB per shard" in out, out[-3000:]


@pytest.mark.parametrize("scenario", ["die", pytest.param("die_early", marks=pytest.mark.slow)])
def test_a_dead_peer_makes_the_other_fail_clearly(scenario):
    """The last process exits abruptly (after a collective together, or before any). The survivor must
    end within the timeout with an error naming the cause: gloo's closed connection (a RuntimeError from
    pmap) or the runtime's missed heartbeats (it terminates the process with its message)."""
    (rc0, out0, secs), (rc1, out1, _) = run_workers(scenario, timeout=90, WORKER_HEARTBEAT="3")
    assert rc1 == 7 and "dying" in out1, out1[-2000:]
    assert rc0 != 0 and "WORKER OK" not in out0, out0[-3000:]
    clear = ("closed by peer", "reset by peer", "another task died", "stopped sending heartbeats",
             "heartbeat timeout")
    assert any(c in out0 for c in clear), out0[-4000:]
    if scenario == "die":   # the collective itself fails first, as a Python exception (at dispatch or readback)
        line = next((ln for ln in out0.splitlines() if "FAILED CLEARLY" in ln), "")
        assert "Gloo" in line and ("closed by peer" in line or "reset by peer" in line), out0[-4000:]
    assert secs < 60, secs


def test_a_wrong_coordinator_address_fails_clearly_within_the_timeout():
    """Nothing serves the coordinator at the address: initialize raises a RuntimeError naming the address
    after initialization_timeout (3 s here), instead of the runtime aborting the process at its deadline."""
    (rc, out, secs), = run_workers("wrong_address", n=1, timeout=60)
    assert rc == 0 and "WORKER OK" in out, out[-3000:]
    assert secs < 40, secs


def test_unequal_device_counts_between_processes_fail_clearly():
    """Process 0 has 2 CPU devices, process 1 has 1: each one's first use of the backend raises a ValueError
    naming both counts (again on every later use), where pmap would otherwise run different programs in the
    two processes and wait for each other until gloo's timeout."""
    results = run_workers("mismatch", timeout=60)
    _ok(results, ["unequal device counts refused"])
    assert all(secs < 40 for *_, secs in results), results


def test_initialize_after_the_client_exists():
    (rc, out, _), = run_workers("after_client", n=1)
    assert rc == 0 and "WORKER OK" in out, out[-3000:]


# ------------------------------------------------------- in this process: errors before joining anything
def test_missing_arguments_name_the_environment_variable(monkeypatch):
    for k in (distributed.ENV_ADDRESS, distributed.ENV_NUM_PROCESSES, distributed.ENV_PROCESS_ID,
              distributed.ENV_LOCAL_DEVICE_IDS):
        monkeypatch.delenv(k, raising=False)
    with pytest.raises(ValueError, match="no coordinator_address given; pass it or set "
                                         "ARRAY_NAMESPACE_COORDINATOR_ADDRESS"):
        distributed.initialize()
    with pytest.raises(ValueError, match="ARRAY_NAMESPACE_NUM_PROCESSES"):
        distributed.initialize("127.0.0.1:1234")
    with pytest.raises(ValueError, match="ARRAY_NAMESPACE_PROCESS_ID"):
        distributed.initialize("127.0.0.1:1234", 2)
    monkeypatch.setenv(distributed.ENV_NUM_PROCESSES, "two")
    with pytest.raises(ValueError, match=r"num_processes must be an int, got 'two' \(from ARRAY_NAMESPACE_NUM"):
        distributed.initialize("127.0.0.1:1234", process_id=0)
    monkeypatch.setenv(distributed.ENV_NUM_PROCESSES, "2")
    monkeypatch.setenv(distributed.ENV_PROCESS_ID, "2")
    with pytest.raises(ValueError, match="process_id=2 is not below num_processes=2"):
        distributed.initialize("127.0.0.1:1234")
    monkeypatch.setenv(distributed.ENV_PROCESS_ID, "0")
    monkeypatch.setenv(distributed.ENV_LOCAL_DEVICE_IDS, "0,x")
    with pytest.raises(ValueError, match=r"comma-separated ints, got '0,x' \(from ARRAY_NAMESPACE_LOCAL_DEVICE_IDS"):
        distributed.initialize("127.0.0.1:1234")


@pytest.mark.parametrize("kwargs, exc, match", [
    (dict(coordinator_address=1234), TypeError, "'host:port' string, got int"),
    (dict(coordinator_address="localhost"), ValueError, "'host:port'"),
    (dict(coordinator_address="h:70000"), ValueError, "port in 1..65535"),
    (dict(num_processes=0), ValueError, "num_processes must be >= 1, got 0"),
    (dict(num_processes=True), TypeError, "num_processes must be an int, got bool"),
    (dict(num_processes=2.5), TypeError, "num_processes must be an int, got 2.5"),
    (dict(process_id=-1), ValueError, "process_id must be >= 0"),
    (dict(local_device_ids=[0, 0]), ValueError, "distinct and not empty"),
    (dict(local_device_ids=[]), ValueError, "distinct and not empty"),
    (dict(local_device_ids=["a"]), TypeError, "local_device_ids"),
    (dict(platform="tpu"), ValueError, "platform must be 'cpu' or 'cuda', got 'tpu'"),
    (dict(heartbeat_timeout=0), ValueError, "heartbeat_timeout must be >= 1"),
])
def test_bad_arguments(kwargs, exc, match):
    args = dict(coordinator_address="127.0.0.1:1234", num_processes=2, process_id=1)
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        distributed.initialize(**args)
    assert not distributed.is_initialized()


def test_not_initialized_here():
    assert distributed.is_initialized() is False
    assert distributed.shutdown() is False   # nothing to leave
    with pytest.raises(RuntimeError, match="no distributed run"):
        distributed.barrier()
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        distributed.barrier("b", timeout=0)
