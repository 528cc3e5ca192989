"""Several processes as one run (multi-controller): join before first use, then pmap spans every process.

Each process runs the same program. `initialize(coordinator_address, num_processes, process_id)` joins
them through the backend's distributed runtime (XLA's coordination service: process 0 serves it at
`coordinator_address`, everyone connects); it must come before this process makes its backend client,
i.e. before its first array, device query or computation. Afterwards `devices()` lists every process's
devices, `local_devices()` this one's, and `pmap` maps over the devices of all processes, each process
passing the members on its own devices (its local slice of the mapped axis) and getting theirs back;
collectives inside run across processes (gloo over TCP between CPU processes).

Arguments left out come from the environment: ARRAY_NAMESPACE_COORDINATOR_ADDRESS (host:port),
ARRAY_NAMESPACE_NUM_PROCESSES, ARRAY_NAMESPACE_PROCESS_ID and ARRAY_NAMESPACE_LOCAL_DEVICE_IDS
(comma-separated; on the CPU only their count matters: how many CPU devices this process gets).

A process that dies is detected by missed heartbeats (`heartbeat_timeout` seconds); the runtime then
terminates the others with an error naming the lost process -- a run fails, it does not hang. A
coordinator address where nothing answers is a RuntimeError naming it after `initialization_timeout`;
processes with unequal numbers of local devices get a ValueError naming both counts at first use.
"""
from __future__ import annotations

import os

from .backend import NoBackendError, backend

ENV_ADDRESS = "ARRAY_NAMESPACE_COORDINATOR_ADDRESS"
ENV_NUM_PROCESSES = "ARRAY_NAMESPACE_NUM_PROCESSES"
ENV_PROCESS_ID = "ARRAY_NAMESPACE_PROCESS_ID"
ENV_LOCAL_DEVICE_IDS = "ARRAY_NAMESPACE_LOCAL_DEVICE_IDS"


def _int(value, what, source, low):
    if isinstance(value, bool):
        raise TypeError(f"distributed.initialize: {what} must be an int, got bool ({source})")
    from_env = isinstance(value, str) and source.startswith("from ")
    try:
        n = int(value) if from_env else value.__index__()
    except (AttributeError, TypeError, ValueError):
        raise (ValueError if from_env else TypeError)(
            f"distributed.initialize: {what} must be an int, got {value!r} ({source})") from None
    if n < low:
        raise ValueError(f"distributed.initialize: {what} must be >= {low}, got {n} ({source})")
    return n


def _from_env(value, env, what):
    """(value, where it came from): the argument, else the environment variable, else an error."""
    if value is not None:
        return value, "argument"
    got = os.environ.get(env)
    if got is None or got.strip() == "":
        raise ValueError(f"distributed.initialize: no {what} given; pass it or set {env}")
    return got.strip(), f"from {env}"


def _address(value, source):
    if not isinstance(value, str):
        raise TypeError(f"distributed.initialize: coordinator_address must be a 'host:port' string, got "
                        f"{type(value).__name__} ({source})")
    host, sep, port = value.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"distributed.initialize: coordinator_address must be 'host:port' with a port in 1..65535, "
                         f"got {value!r} ({source})")
    return value


def _device_ids(value, source):
    if isinstance(value, str):
        try:
            value = [int(v) for v in value.split(",") if v.strip()]
        except ValueError:
            raise ValueError(f"distributed.initialize: local_device_ids must be comma-separated ints, got "
                             f"{value!r} ({source})") from None
    if isinstance(value, int) and not isinstance(value, bool):
        value = [value]
    try:
        ids = [_int(v, "each local_device_ids entry", source, 0) for v in value]
    except TypeError:
        raise TypeError(f"distributed.initialize: local_device_ids must be a sequence of ints, got {value!r} "
                        f"({source})") from None
    if not ids or len(set(ids)) != len(ids):
        raise ValueError(f"distributed.initialize: local_device_ids must be distinct and not empty, got {ids} "
                         f"({source})")
    return tuple(ids)


def initialize(coordinator_address=None, num_processes=None, process_id=None, local_device_ids=None, *,
               platform="cpu", initialization_timeout=300, heartbeat_timeout=100, shutdown_timeout=300):
    """Join a run of `num_processes` processes as process `process_id` (0 serves the coordinator at
    `coordinator_address`, 'host:port'). Before any other use of the backend in this process; once.

    Parameters: coordinator_address (str): 'host:port' of process 0's coordinator. num_processes (int):
        how many processes join (>= 1). process_id (int): this one's index, below num_processes.
        local_device_ids (int or sequence of ints): the devices this process uses (on the CPU, their count
        is its number of CPU devices). Each left out (None) comes from its ARRAY_NAMESPACE_* environment
        variable (module docstring). platform (str, keyword): 'cpu' (gloo collectives between processes)
        or 'cuda' (the CUDA PJRT plugin, NCCL). initialization_timeout, heartbeat_timeout,
        shutdown_timeout (int seconds, keyword): how long to wait for every process to join, after how
        long without a heartbeat a process counts as dead (the others are then terminated), how long
        shutdown waits.
    Returns: None.
    Raises: TypeError: if an argument has the wrong type. ValueError: if an argument (or its environment
        variable) is missing or out of range. RuntimeError: if this process already joined a run or
        already made its client, if nothing answers at coordinator_address or a process does not join
        within initialization_timeout, or if platform='cuda' and the CUDA plugin is not installed.
        (Later, the first use of the backend raises ValueError if the processes have unequal numbers of
        local devices.)

    Two processes on one machine each run (shown, not run here: a real call serves or joins a
    coordinator and waits for the other process):

        distributed.initialize("localhost:12345", num_processes=2, process_id=0)   # in process 0
        distributed.initialize("localhost:12345", num_processes=2, process_id=1)   # in process 1

    Arguments are checked before anything starts:

    >>> distributed.initialize("localhost", num_processes=2, process_id=0)
    Traceback (most recent call last):
    ValueError: distributed.initialize: coordinator_address must be 'host:port' ... got 'localhost' (argument)
    """
    addr, src = _from_env(coordinator_address, ENV_ADDRESS, "coordinator_address")
    addr = _address(addr, src)
    n, src = _from_env(num_processes, ENV_NUM_PROCESSES, "num_processes")
    n = _int(n, "num_processes", src, 1)
    pid, src = _from_env(process_id, ENV_PROCESS_ID, "process_id")
    pid = _int(pid, "process_id", src, 0)
    if pid >= n:
        raise ValueError(f"distributed.initialize: process_id={pid} is not below num_processes={n}")
    if local_device_ids is None and os.environ.get(ENV_LOCAL_DEVICE_IDS, "").strip():
        local_device_ids, src = os.environ[ENV_LOCAL_DEVICE_IDS], f"from {ENV_LOCAL_DEVICE_IDS}"
    else:
        src = "argument"
    ids = None if local_device_ids is None else _device_ids(local_device_ids, src)
    if platform not in ("cpu", "cuda"):
        raise ValueError(f"distributed.initialize: platform must be 'cpu' or 'cuda', got {platform!r}")
    timeouts = {}
    for name, v in (("initialization_timeout", initialization_timeout), ("heartbeat_timeout", heartbeat_timeout),
                    ("shutdown_timeout", shutdown_timeout)):
        timeouts[name] = _int(v, name, "argument", 1)
    backend.distributed_initialize(addr, n, pid, ids, platform=platform, **timeouts)


def shutdown():
    """Leave the run: waits for every process to reach its shutdown, then stops the coordinator (process 0).
    Programs across processes cannot run afterwards, and initialize cannot be called again. Also run at
    exit.

    Parameters: none.
    Returns: bool: whether there was a run to leave (False outside a run or when already left).
    Raises: RuntimeError: the runtime's, if the processes' shutdown barrier fails (a process gone, or
        shutdown_timeout passed).

    Outside a run it does nothing:

    >>> distributed.shutdown()
    False
    """
    try:
        return backend.distributed_shutdown()
    except NoBackendError:
        return False


def barrier(name="barrier", timeout=300):
    """Wait until every process of the run reaches its barrier (the k-th call in each process meets the
    k-th in the others).

    Parameters: name (str): a label for error messages (default 'barrier'). timeout (number): seconds to
        wait (default 300).
    Returns: None.
    Raises: ValueError: if timeout is not a positive number. RuntimeError: outside a run, after
        `timeout` seconds, or if a process is gone.

    >>> distributed.barrier()      # this process joined no run
    Traceback (most recent call last):
    RuntimeError: distributed.barrier: no distributed run (call distributed.initialize first)
    """
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout > 0:
        raise ValueError(f"distributed.barrier: timeout must be a positive number of seconds, got {timeout!r}")
    backend.distributed_barrier(str(name), float(timeout))


def is_initialized():
    """Whether this process has joined a run (and not yet shut it down).

    Parameters: none.
    Returns: bool: True between initialize and shutdown; False otherwise, also with no backend.
    Raises: nothing.

    >>> distributed.is_initialized()
    False
    """
    try:
        return backend.distributed_is_initialized()
    except NoBackendError:
        return False


__all__ = ["initialize", "shutdown", "barrier", "is_initialized"]
