"""Several processes as one run: PJRT's distributed runtime and the collectives between processes.

Process 0 serves the coordination service (task registry, heartbeats, key-value store, barriers);
every process, 0 included, connects a runtime client to it. The PJRT client is then made over that
runtime: on the CPU with gloo collectives over TCP (without them XLA refuses programs over several
processes), on CUDA through the PJRT plugin, whose NCCL collectives use the same runtime client. So
`initialize` must run before this process makes its client (its first array or device query); the
client then sees every process's devices (`devices()`), of which `local_devices()` are its own.

Failure: a process that dies stops sending heartbeats; the service then aborts the others with
"Terminating process because the JAX distributed service detected fatal errors ... another task died"
(XLA's own wording; a C++ abort, there is no Python exception to catch), and a collective already
talking to it fails first with "Gloo ... Connection closed by peer" as an XlaRuntimeError. Keep the
heartbeat short where a hang matters more than a slow peer (tests use a few seconds). Before its runtime
client connects (which would abort the process at its deadline), each process waits for the coordinator's
port to accept connections and raises a RuntimeError naming the address after `initialization_timeout`.
Processes with unequal local device counts are refused when the client is made (the shared topology
says each one's count), before a pmap would run different programs in them.

The CUDA path (`platform="cuda"`) follows shared/notes/jaxlib-runtime.md §7 and was written from
jaxlib's and the plugin's source: it could not be run here (no GPU).
"""
from __future__ import annotations

import atexit
import ctypes
import importlib.util
import pathlib
import socket
import time

from . import _jaxlib
from ._jaxlib import _jax, xc


class _State:
    def __init__(self):
        self.service = None        # the coordination service (process 0 only)
        self.client = None         # this process's runtime client
        self.address = None
        self.process_id = None
        self.num_processes = None
        self.local_device_ids = None
        self.platform = None
        self.barriers = 0          # barrier ids are numbered: every process calls barrier() in the same order
        self.shut = False
        self.refusal = None        # why this process cannot make its client (devices unequal between processes)


_state = _State()


def is_initialized():
    return _state.client is not None and not _state.shut


def initialize(coordinator_address, num_processes, process_id, local_device_ids=None, *, platform="cpu",
               initialization_timeout=300, heartbeat_timeout=100, shutdown_timeout=300, bind_address=None):
    """Join the run (the engine validated the arguments, transforms/distributed.py). Raises RuntimeError if
    this process already joined one or already made its client."""
    with _jaxlib._init_lock:
        if _state.client is not None:
            raise RuntimeError(f"distributed.initialize: this process already joined a run (process "
                               f"{_state.process_id} of {_state.num_processes}, coordinator {_state.address}"
                               f"{', since shut down' if _state.shut else ''}); initialize once per process")
        if _jaxlib.client_exists():
            raise RuntimeError("distributed.initialize: this process's client already exists (an array, a device "
                               "query or a computation made it); call distributed.initialize first, before any "
                               "other use of the backend")
        if platform == "cuda":
            _cuda_plugin()   # fail now, before joining, if the plugin is absent
        elif platform != "cpu":
            raise ValueError(f"distributed.initialize: platform must be 'cpu' or 'cuda', got {platform!r}")
        service = None
        if process_id == 0:
            port = coordinator_address.rsplit(":", 1)[1]
            service = _jax.get_distributed_runtime_service(bind_address or f"[::]:{port}", num_processes,
                                                            heartbeat_timeout=heartbeat_timeout,
                                                            shutdown_timeout=shutdown_timeout)
        try:
            _reach(coordinator_address, process_id, initialization_timeout)
        except RuntimeError:
            if service is not None:
                service.shutdown()
            raise
        client = _jax.get_distributed_runtime_client(coordinator_address, process_id,
                                                     init_timeout=initialization_timeout,
                                                     heartbeat_timeout=heartbeat_timeout,
                                                     shutdown_timeout=shutdown_timeout)
        try:
            client.connect()
        except _jaxlib.XlaRuntimeError as e:
            if service is not None:
                service.shutdown()
            raise RuntimeError(f"distributed.initialize: process {process_id} could not join the run at "
                               f"{coordinator_address}: {e}") from e
        _state.service, _state.client, _state.address = service, client, coordinator_address
        _state.process_id, _state.num_processes, _state.platform = process_id, num_processes, platform
        _state.local_device_ids = None if local_device_ids is None else tuple(local_device_ids)
        _state.shut = False
        _jaxlib.set_client_factory(_make_client)
    atexit.register(_at_exit)


def _make_client():
    """The PJRT client over the runtime (called once, by _jaxlib.client(), under its lock)."""
    s = _state
    if s.refusal is not None:
        raise ValueError(s.refusal)
    if s.platform == "cuda":
        return _same_counts(_make_cuda_client())
    # CPU devices are virtual: local_device_ids only says how many this process gets
    n = len(s.local_device_ids) if s.local_device_ids is not None else _jaxlib.cpu_device_count()
    collectives = _jax.make_gloo_tcp_collectives(distributed_client=s.client, hostname=_hostname(s.address))
    return _same_counts(xc.make_cpu_client(distributed_client=s.client, node_id=s.process_id,
                                           num_nodes=s.num_processes, collectives=collectives, num_devices=n))


def _same_counts(client):
    """The client, once every process is seen to have as many local devices as this one (pmap gives each
    process's devices one slice of the axis: unequal slices would run different programs and wait on each
    other until a timeout). The topology every process's client shares says how many each has. A refusal
    sticks: a second client would wait for the other processes' second topology exchange, which never comes."""
    s = _state
    counts = {}
    for d in client.devices():
        counts[d.process_index] = counts.get(d.process_index, 0) + 1
    mine = counts.get(s.process_id, 0)
    other = {p: k for p, k in sorted(counts.items()) if k != mine}
    if other:
        s.refusal = (f"distributed run: this process ({s.process_id}) has {mine} local device(s) but "
                     f"{', '.join(f'process {p} has {k}' for p, k in other.items())}; expected the same number "
                     "in every process (give each the same local_device_ids / ARRAY_NAMESPACE_LOCAL_DEVICE_IDS "
                     "count, or CPU device count)")
        raise ValueError(s.refusal)
    return client


def _reach(address, process_id, timeout):
    """Wait until something accepts connections at the coordinator's address (process 0 may start later), for
    at most `timeout` seconds; then a RuntimeError naming the address. (The runtime's own client would
    abort the whole process at its deadline, with no word of which address it tried.)"""
    host, port = address.rsplit(":", 1)
    deadline, last = time.monotonic() + timeout, None
    while True:
        try:
            socket.create_connection((host.strip("[]"), int(port)), timeout=1).close()
            return
        except OSError as e:
            last = e
        if time.monotonic() >= deadline:
            raise RuntimeError(f"distributed.initialize: process {process_id} could not reach the coordinator at "
                               f"{address} within initialization_timeout={timeout} s ({last}); expected process 0 "
                               "to serve it there: check the address and that process 0 runs")
        time.sleep(0.2)


def _hostname(address):
    """The interface gloo listens on: loopback for a loopback coordinator, else this host's name."""
    host = address.rsplit(":", 1)[0].strip("[]")
    if host in ("127.0.0.1", "localhost", "::1"):
        return host
    return None   # gloo picks this host's address


def _cuda_plugin():
    """The CUDA PJRT plugin's shared object (package jax-cuda12-pjrt / jax-cuda13-pjrt), found without
    executing the plugin package (its initialize() imports jax)."""
    for name in ("jax_plugins.xla_cuda12", "jax_plugins.xla_cuda13"):
        try:
            spec = importlib.util.find_spec(name)
        except ModuleNotFoundError:
            spec = None
        if spec is not None and spec.submodule_search_locations:
            so = pathlib.Path(list(spec.submodule_search_locations)[0]) / "xla_cuda_plugin.so"
            if so.exists():
                return so
    raise RuntimeError("distributed.initialize(platform='cuda'): the CUDA PJRT plugin is not installed; install "
                       f"jax-cuda12-plugin[with-cuda]=={_jaxlib.JAXLIB_VERSION} (same version as jaxlib)")


def _make_cuda_client():   # written from the notes (§7) and jaxlib's source; not run here (no GPU)
    s = _state
    if not xc.pjrt_plugin_loaded("cuda"):
        xc.load_pjrt_plugin_dynamically("cuda", str(_cuda_plugin()))
    if not xc.pjrt_plugin_initialized("cuda"):
        xc.initialize_pjrt_plugin("cuda")
    options = xc.generate_pjrt_gpu_plugin_options()
    options["node_id"], options["num_nodes"] = s.process_id, s.num_processes
    if s.local_device_ids is not None:
        options["visible_devices"] = list(s.local_device_ids)
    return xc.make_c_api_client("cuda", options, distributed_client=s.client)


def barrier(name, timeout):
    """Wait until every process reaches its barrier of the same number (name is for the error message)."""
    s = _state
    if not is_initialized():
        raise RuntimeError("distributed.barrier: no distributed run (call distributed.initialize first)")
    s.barriers += 1
    ident = f"array_namespace:{s.barriers}:{name}"
    try:
        s.client.wait_at_barrier(ident, int(timeout * 1000))
    except _jaxlib.XlaRuntimeError as e:
        raise RuntimeError(f"distributed.barrier({name!r}) #{s.barriers} failed in process {s.process_id} of "
                           f"{s.num_processes} (a process missing, dead, or at another barrier): {e}") from e


def shutdown():
    """Leave the run: every process waits for the others (the runtime's shutdown barrier), then the
    coordinator stops its service. The client stays but can no longer run programs across processes,
    and initialize cannot be called again in this process."""
    s = _state
    with _jaxlib._init_lock:
        if s.client is None or s.shut:
            return False
        s.shut = True
        try:
            s.client.shutdown()
        finally:
            if s.service is not None:
                s.service.shutdown()
                s.service = None
    return True


def joined():
    """Whether this process joined a run (even one since shut down)."""
    return _state.client is not None


def forsake():
    """In a forked child (xla/fork.py): the run's runtime client and service are the parent's; kept alive
    for good (destroying them would wait on threads a fork does not copy) and never used here."""
    s = _state
    for obj in (s.client, s.service):
        if obj is not None:
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))
    s.shut, s.service = True, None


def _at_exit():
    try:
        shutdown()
    except Exception:   # noqa: BLE001  (at exit, a peer already gone must not turn into a traceback)
        pass


def joined():
    """Whether this process joined a run of several processes (then programs over devices wait: one_in_flight)."""
    return _state.client is not None


def process_info():
    """(process_id, num_processes) of the run, or (0, 1) without one."""
    if _state.client is None:
        return 0, 1
    return _state.process_id, _state.num_processes


_in_flight = []   # the outputs of the last program run over several devices in a run of several processes


def one_in_flight():
    """Before a program over several devices in a run of several processes: wait for the previous one's
    outputs. XLA:CPU runs each replica on a pool thread and a gloo collective waits for its peers in the
    other processes; independent programs in flight together can take the threads in another order in each
    process and wait on each other for good (100 psums dispatched at once over 2 processes x 2 devices hung;
    jax.pmap hangs the same way), with no watchdog across processes."""
    if _state.client is None:
        return
    for o in _in_flight:
        if not o.is_deleted():
            o.block_until_ready()
    _in_flight.clear()


def launched(outs):
    """Note a program's outputs (see one_in_flight); returns them."""
    if _state.client is not None:
        _in_flight[:] = [o for o in outs if type(o) is _jaxlib.ArrayImpl]
    return outs
