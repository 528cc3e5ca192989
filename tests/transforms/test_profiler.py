"""transforms.profiler end to end: the memory profile is parsed with our own protobuf reader
(tests/profile_proto.py) and must hold the buffers and host values a test made -- their exact byte
sizes and a stack frame naming the test -- and drop them once they die; live_arrays and
device_memory_stats are checked against arrays of known size and value; a trace must be a real
XSpace and Chrome trace holding the annotated span and the executable run inside it."""
import gc
import gzip
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import array_namespace as xp
import transforms
from profile_proto import read_pprof, read_xspace
from transforms import jit, profiler
from transforms.backend import backend

F32_OUT = 37 * 29 * 4     # bytes of the jitted results below (inputs are 37x53: a different size)
F64_HOST = 1237 * 8       # bytes of the host-held linspace below


def _slice_times_3(x):
    return x[:, :29] * 3.0


def _profile(tmp_path):
    path = tmp_path / "memory.prof"
    profiler.save_device_memory_profile(str(path))
    prof = read_pprof(path.read_bytes())
    assert prof.sample_types == [("allocations", "count"), ("space", "bytes")]
    return prof


def _mine(prof, kind, nbytes, test_name):
    """Samples of `kind` and size `nbytes` whose stack passes through the function `test_name`."""
    return [s for s in prof.samples if s.labels.get("kind") == kind and s.values == [1, nbytes]
            and any(fr[0] == test_name and fr[1] == __file__ for fr in s.frames)]


def test_memory_profile_holds_jit_results_with_the_stack_that_made_them(tmp_path):
    f = jit(_slice_times_3)
    x = xp.ones((37, 53), dtype=xp.float32)
    with profiler.allocation_stacks():
        first = f(x)       # traced, compiled, run from Python
        second = f(x)      # the native dispatcher's fast path
    want = np.full((37, 29), 3.0, np.float32)
    np.testing.assert_array_equal(np.asarray(first), want)
    np.testing.assert_array_equal(np.asarray(second), want)
    name = "test_memory_profile_holds_jit_results_with_the_stack_that_made_them"
    mine = _mine(_profile(tmp_path), "buffer", F32_OUT, name)
    assert len(mine) == 2
    assert all(s.labels["device"] == "cpu:0" for s in mine)
    del first, second
    gc.collect()
    assert _mine(_profile(tmp_path), "buffer", F32_OUT, name) == []   # dead buffers leave the profile


def test_memory_profile_counts_host_held_eager_values_with_their_stack(tmp_path):
    with profiler.allocation_stacks():
        h = xp.linspace(0.0, 1.0, 1237)
    np.testing.assert_allclose(np.asarray(h), np.linspace(0.0, 1.0, 1237), rtol=0, atol=1e-15)
    name = "test_memory_profile_counts_host_held_eager_values_with_their_stack"
    mine = _mine(_profile(tmp_path), "host_value", F64_HOST, name)
    assert len(mine) == 1 and mine[0].labels["value"] == "f64[1237]"
    del h
    gc.collect()
    assert _mine(_profile(tmp_path), "host_value", F64_HOST, name) == []


def test_values_made_without_stacks_appear_with_size_and_no_frames(tmp_path):
    prev = profiler.enable_allocation_stacks(False)
    try:
        out = jit(_slice_times_3)(xp.ones((37, 53), dtype=xp.float32))
        h = xp.linspace(0.0, 1.0, 1237)
    finally:
        profiler.enable_allocation_stacks(prev[0], host=prev[1])
    prof = _profile(tmp_path)
    name = "test_values_made_without_stacks_appear_with_size_and_no_frames"
    assert _mine(prof, "buffer", F32_OUT, name) == [] and _mine(prof, "host_value", F64_HOST, name) == []
    assert any(s.labels.get("kind") == "buffer" and s.values == [1, F32_OUT] and not s.frames for s in prof.samples)
    assert any(s.labels.get("kind") == "host_value" and s.values == [1, F64_HOST] and not s.frames
               for s in prof.samples)
    del out, h


def test_device_memory_profile_is_gzip_of_the_saved_file(tmp_path):
    data = profiler.device_memory_profile()
    assert data[:2] == b"\x1f\x8b"
    assert read_pprof(gzip.decompress(data)).sample_types == [("allocations", "count"), ("space", "bytes")]


def _matches(arrays, shape, dtype, values):
    return [a for a in arrays if a.shape == shape and a.dtype == dtype and np.array_equal(np.asarray(a), values)]


def test_live_arrays_lists_device_buffers_and_host_values():
    d = jit(lambda v: v + 1)(xp.arange(1763, dtype=xp.int32))      # a device buffer
    h = xp.arange(1811, dtype=xp.int16) * 2                           # a host-held eager value
    want_d, want_h = np.arange(1763, dtype=np.int32) + 1, np.arange(1811, dtype=np.int16) * 2
    live = profiler.live_arrays()
    assert len(_matches(live, (1763,), xp.int32, want_d)) == 1
    assert len(_matches(live, (1811,), xp.int16, want_h)) == 1
    assert all(type(a) is xp.Array for a in live)
    device_only = profiler.live_arrays(include_host=False)
    assert len(_matches(device_only, (1763,), xp.int32, want_d)) == 1
    assert _matches(device_only, (1811,), xp.int16, want_h) == []
    del live, device_only, d, h
    gc.collect()
    live = profiler.live_arrays()
    assert _matches(live, (1763,), xp.int32, want_d) == [] and _matches(live, (1811,), xp.int16, want_h) == []


def test_device_memory_stats_measure_the_bytes_of_live_values():
    f = jit(_slice_times_3)
    x = xp.ones((37, 53), dtype=xp.float32)
    np.asarray(f(x))   # (compile, and any constants it keeps: not part of the deltas below)
    xp.linspace(0.0, 1.0, 1237)   # (likewise the small constants eager linspace caches on first use)
    gc.collect()
    s0 = profiler.device_memory_stats()
    out = f(x)
    h = xp.linspace(0.0, 1.0, 1237)
    gc.collect()
    s1 = profiler.device_memory_stats()
    assert s1["live_buffers"] - s0["live_buffers"] == 1
    assert s1["live_buffer_bytes"] - s0["live_buffer_bytes"] == F32_OUT
    assert s1["host_values"] - s0["host_values"] == 1
    assert s1["host_value_bytes"] - s0["host_value_bytes"] == F64_HOST
    assert profiler.device_memory_stats(backend.devices()[0]) == s1     # the default device, named
    assert "bytes_in_use" not in s1   # the CPU allocator reports nothing; no figure is made up
    assert profiler.device_memory_stats(x.device) == s1   # an array's .device names the same device
    with pytest.raises(TypeError, match="device_memory_stats: device must be one of the backend's devices"):
        profiler.device_memory_stats("cpu")
    del out, h
    gc.collect()
    s2 = profiler.device_memory_stats()
    assert (s2["live_buffer_bytes"], s2["host_value_bytes"]) == (s0["live_buffer_bytes"], s0["host_value_bytes"])


def _traced_helper(f, x):
    with profiler.TraceAnnotation("profiled_region"):
        return np.asarray(f(x))


def test_trace_writes_an_xspace_and_a_chrome_trace_of_what_ran(tmp_path):
    f = jit(lambda v: v @ v)
    x = xp.ones((64, 64), dtype=xp.float32)
    np.asarray(f(x))   # compile outside the trace
    with profiler.trace(tmp_path, perfetto=True) as written:
        got = _traced_helper(f, x)
    np.testing.assert_array_equal(got, np.full((64, 64), 64.0, np.float32))
    assert all(p.startswith(str(tmp_path / "plugins" / "profile")) for p in written)
    kinds = sorted(p.rsplit("/", 1)[1].split(".", 1)[1] for p in written)
    assert kinds == ["perfetto_trace.json.gz", "trace.json.gz", "xplane.pb"]

    (xplane,) = [p for p in written if p.endswith(".xplane.pb")]
    with open(xplane, "rb") as fh:
        events = read_xspace(fh.read())["/host:CPU"]["events"]
    assert events["profiled_region"] == 1
    assert any("Execute" in n for n in events)            # PJRT ran the executable

    (chrome,) = [p for p in written if p.endswith("/" + os.path.basename(xplane)[:-len("xplane.pb")] + "trace.json.gz")]
    with gzip.open(chrome) as fh:
        trace = json.load(fh)
    (region,) = [e for e in trace["traceEvents"] if e.get("name") == "profiled_region"]
    runs = [e for e in trace["traceEvents"] if "Execute" in e.get("name", "") and e.get("ph") == "X"]
    t0, t1 = region["ts"], region["ts"] + region["dur"]
    assert any(t0 <= e["ts"] and e["ts"] + e["dur"] <= t1 for e in runs)   # the run lies inside the span
    assert any(e.get("name", "").endswith(" _traced_helper") for e in trace["traceEvents"])  # Python tracer
    (perfetto,) = [p for p in written if p.endswith("perfetto_trace.json.gz")]
    with gzip.open(perfetto) as fh:
        pf = json.load(fh)
    assert "metadata" not in pf and pf["traceEvents"] == trace["traceEvents"]


def test_trace_without_the_python_tracer_has_no_python_frames(tmp_path):
    f = jit(lambda v: v + 1)
    x = xp.ones(3)
    with profiler.trace(tmp_path, python_tracer=False) as written:
        _traced_helper(f, x)
    (chrome,) = [p for p in written if p.endswith(".trace.json.gz")]
    with gzip.open(chrome) as fh:
        names = [e.get("name", "") for e in json.load(fh)["traceEvents"]]
    assert "profiled_region" in names
    assert not any(n.endswith(" _traced_helper") for n in names)


def test_one_trace_at_a_time(tmp_path):
    with pytest.raises(RuntimeError, match="no trace is running"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path / "a")
    try:
        with pytest.raises(RuntimeError, match="already running"):
            profiler.start_trace(tmp_path / "b")
    finally:
        written = profiler.stop_trace()
    assert written and not (tmp_path / "b").exists()


def test_profiler_without_a_backend_says_what_is_missing():
    code = textwrap.dedent("""
        import sys
        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.split(".")[0] in ("jaxlib", "xla", "array_namespace"):
                    raise ImportError("blocked: " + name)
        sys.meta_path.insert(0, Block())
        from transforms import profiler
        from transforms.backend import NoBackendError
        for run in (profiler.device_memory_profile, profiler.live_arrays, profiler.device_memory_stats,
                    lambda: profiler.start_trace("/nonexistent")):
            try:
                run()
            except NoBackendError as e:
                print("NoBackendError", e)
    """)
    src = os.path.dirname(os.path.dirname(transforms.__file__))
    env = dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("NoBackendError profiler: no array backend") == 4
