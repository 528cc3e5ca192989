"""xla/profiling.py (the XLA side of transforms.profiler): the host-value accounting (aliasing, shared
memory, bf16), the stack switches, no `jax` import, and the independent file readers
(tests/profile_proto.py) cross-checked against jaxlib's own decoders (pprof_profile_to_json,
_profile_data.ProfileData), so that the transforms tests' oracle is sound."""
import ctypes
import gc
import gzip
import json
import os
import subprocess
import sys
import textwrap
import tracemalloc

import ml_dtypes
import numpy as np
import pytest

import array_namespace as xp  # noqa: F401  (brings the backend up)
from profile_proto import fields, read_pprof, read_xspace
from transforms.core import ShapedArray
from xla import _jaxlib, profiling, runtime
from xla.host import HostValue, aligned_empty

_xla = _jaxlib.xc._xla


def _host_value(n, dtype=np.float64, aligned=True):
    if aligned:
        a = aligned_empty((n,), dtype)
    else:   # an 8-byte offset from a 64-byte boundary: HostValue.buffer must copy
        raw = aligned_empty((n + 1,), dtype)
        a = raw[1:]
        assert a.ctypes.data % 64 != 0
    a[...] = np.arange(n).astype(dtype)
    return HostValue(a, ShapedArray((n,), np.dtype(dtype)))


def _alloc_bytes(n, itemsize):
    """What aligned_empty really allocates for n items: one uint8 block with 64 bytes of slack."""
    return n * itemsize + 64


def _data_pointer(buf):
    """A device buffer's address through DLPack (DLTensor.data is the first field of the capsule's
    struct). Not buf.unsafe_buffer_pointer() and not a bf16 readback: both import the jax package."""
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
    cap = _xla.buffer_to_dlpack_managed_tensor(buf, stream=None)
    return ctypes.c_void_p.from_address(get(cap, b"dltensor")).value


def _host_sample_sizes():
    prof = read_pprof(profiling.memory_profile())
    return [s.values[1] for s in prof.samples if s.labels["kind"] == "host_value"]


def test_an_aliasing_device_buffer_is_counted_once_as_a_device_buffer():
    hv = _host_value(1531)                         # 12248 bytes, 64-byte aligned
    gc.collect()
    s0 = profiling.memory_stats()
    assert _alloc_bytes(1531, 8) in _host_sample_sizes()
    buf = hv.buffer(runtime.default_device())     # zero-copy: the buffer is the NumPy memory
    assert np.asarray(buf).ctypes.data == hv.np.ctypes.data == _data_pointer(buf)
    assert profiling._aliased(hv)
    assert _alloc_bytes(1531, 8) not in _host_sample_sizes()
    s1 = profiling.memory_stats()
    assert s1["live_buffer_bytes"] - s0["live_buffer_bytes"] == 1531 * 8
    assert s0["host_value_bytes"] - s1["host_value_bytes"] == _alloc_bytes(1531, 8)
    del buf, hv


def test_a_copying_device_buffer_is_counted_on_both_sides():
    hv = _host_value(1529, aligned=False)
    buf = hv.buffer(runtime.default_device())
    assert np.asarray(buf).ctypes.data != hv.np.ctypes.data
    assert not profiling._aliased(hv)
    assert _alloc_bytes(1530, 8) in _host_sample_sizes()   # (the view's whole allocation is held)
    np.testing.assert_array_equal(np.asarray(buf), np.arange(1529.0))
    del buf, hv


@pytest.mark.parametrize("aligned", [True, False])
def test_bfloat16_aliasing_follows_the_zero_copy_rule(aligned):
    # bf16 cannot go through the buffer protocol; the rule used instead must agree with what PJRT did
    hv = _host_value(96, ml_dtypes.bfloat16, aligned=aligned)
    buf = hv.buffer(runtime.default_device())
    assert np.asarray(buf).dtype == object
    assert (_data_pointer(buf) == hv.np.ctypes.data) is aligned     # what PJRT did
    assert profiling._aliased(hv) is aligned
    del buf, hv


def test_values_sharing_memory_count_their_allocation_once():
    base = np.arange(2003.0)
    a = HostValue(base, ShapedArray((2003,), np.dtype(np.float64)))
    b = HostValue(base, ShapedArray((2003,), np.dtype(np.float64), weak_type=True))   # same array
    view = base[10:20]
    c = HostValue(view, ShapedArray((10,), np.dtype(np.float64)))                     # a view of it
    gc.collect()
    mine = [(h, n) for h, n in profiling._host_allocations() if h is a or h is b or h is c]
    assert len(mine) == 1 and mine[0][1] == 2003 * 8
    del a, b
    gc.collect()
    mine = [(h, n) for h, n in profiling._host_allocations() if h is c]
    assert mine == [(c, 2003 * 8)]    # a live view keeps (and is charged) its whole base
    del c


def test_live_values_show_a_host_value_once_not_its_buffer():
    hv = _host_value(1033)
    buf = hv.buffer(runtime.default_device())
    live = profiling.live_values(True)
    assert sum(v is hv for v in live) == 1 and not any(v is buf for v in live)
    assert any(v is buf for v in profiling.live_values(False))
    del hv, buf, live


def test_allocation_stacks_switch_restores_the_previous_state():
    assert not _xla.tracebacks_enabled() and not tracemalloc.is_tracing()
    prev = profiling.set_allocation_stacks(True, True)
    assert prev == (False, False) and _xla.tracebacks_enabled() and tracemalloc.is_tracing()
    hv = HostValue(np.arange(7.0), ShapedArray((7,), np.dtype(np.float64)))   # made while recording
    assert profiling.set_allocation_stacks(*prev) == (True, True)
    assert not _xla.tracebacks_enabled() and not tracemalloc.is_tracing()
    frames = profiling._host_stack(hv)    # kept when tracemalloc stopped
    assert frames and frames[0] == (__file__, frames[0][1])
    assert profiling._function_at(*frames[0]) == "test_allocation_stacks_switch_restores_the_previous_state"


def test_a_users_own_tracemalloc_is_left_running():
    tracemalloc.start(5)
    try:
        profiling.set_allocation_stacks(True, True)
        profiling.set_allocation_stacks(False, False)
        assert tracemalloc.is_tracing()
    finally:
        tracemalloc.stop()


def test_function_names_come_from_the_enclosing_def():
    def inner():
        return 1   # this line's function is `inner`
    line = inner.__code__.co_firstlineno + 1
    assert profiling._function_at(__file__, line) == "inner"
    assert profiling._function_at(__file__, line - 1) == "inner"
    assert profiling._function_at(__file__, 1) == "<module>"


def test_our_pprof_reader_agrees_with_jaxlibs_decoder():
    with_stack = None
    prev = profiling.set_allocation_stacks(True, True)
    try:
        with_stack = _host_value(977), runtime.device_put(np.arange(13.0))
    finally:
        profiling.set_allocation_stacks(*prev)
    data = gzip.decompress(profiling.memory_profile())
    ours = read_pprof(data)
    ref = json.loads(_xla.pprof_profile_to_json(data))
    st = ref["stringTable"]
    fn = {f["id"]: st[int(f["name"])] for f in ref["function"]}
    loc = {lo["id"]: [fn[ln["functionId"]] for ln in lo["line"]] for lo in ref["location"]}
    assert ours.sample_types == [(st[int(t["type"])], st[int(t["unit"])]) for t in ref["sampleType"]]
    assert len(ours.samples) == len(ref["sample"])
    for s, r in zip(ours.samples, ref["sample"]):
        assert s.values == [int(v) for v in r["value"]]
        assert s.labels == {st[int(lb["key"])]: st[int(lb["str"])] for lb in r.get("label", [])}
        assert [f[0] for f in s.frames] == [n for i in r.get("locationId", []) for n in loc[i]]
    assert any(s.values == [1, _alloc_bytes(977, 8)] and s.frames for s in ours.samples)
    del with_stack


def test_reader_rejects_what_is_not_a_protobuf():
    with pytest.raises((ValueError, IndexError)):
        fields(b"\x00\x01")
    with pytest.raises((ValueError, IndexError)):
        fields(b"\x0a\x05ab")     # a length running past the end


def test_our_xspace_reader_agrees_with_jaxlibs_profile_data(tmp_path):
    from jaxlib import _profile_data
    profiling.start_trace(str(tmp_path), False, 2, False)
    with profiling.trace_annotation("xspace_check"):
        runtime.to_numpy(runtime.device_put(np.arange(5.0)))
    (xplane,) = [p for p in profiling.stop_trace() if p.endswith(".xplane.pb")]
    with open(xplane, "rb") as fh:
        ours = read_xspace(fh.read())
    ref = _profile_data.ProfileData.from_file(xplane)
    assert sorted(ours) == sorted(p.name for p in ref.planes)
    for plane in ref.planes:
        counts = {}
        for line in plane.lines:
            for ev in line.events:
                counts[ev.name] = counts.get(ev.name, 0) + 1
        assert ours[plane.name]["events"] == counts
    assert ours["/host:CPU"]["events"]["xspace_check"] == 1


def test_profiling_never_imports_the_jax_package(tmp_path):
    code = textwrap.dedent(f"""
        import sys, gc
        import numpy as np
        import array_namespace as xp
        from transforms import jit, profiler
        with profiler.allocation_stacks():
            h = xp.arange(10.0) * 2
            d = jit(lambda v: v + 1)(h)
            _ = xp.asarray(np.ones(4, dtype="float32"))
        profiler.device_memory_profile(); profiler.live_arrays(); profiler.device_memory_stats()
        with profiler.trace({str(tmp_path)!r}):
            jit(lambda v: v * 2)(d)
        assert "jax" not in sys.modules, "jax was imported"
        print("ok")
    """)
    src = os.path.dirname(os.path.dirname(profiling.__file__))
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
