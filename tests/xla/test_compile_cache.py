"""The persistent compilation cache (xla/compile_cache.py): hits across processes, damaged and
stale entries replaced, concurrent writers, LRU cap, the environment switches.

Every test uses its own temporary cache directory. In-process tests count the real compiles by
wrapping `_jaxlib.compile`; subprocess tests count the cache's log lines.
"""
import multiprocessing
import os
import struct
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import array_namespace as xp
from transforms import make_jaxpr, pure_callback
from transforms.callbacks import ShapeDtypeStruct
from xla import _jaxlib, compile_cache as cc, runtime
from xla.lowering import lower_jaxpr

SRC = os.path.join(os.path.dirname(__file__), "..", "..", "src")
X = np.linspace(-1.5, 2.0, 16).reshape(4, 4)


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A fresh cache directory, and a count of the real compiles."""
    cc.flush()
    d = tmp_path / "xla"
    monkeypatch.setenv("ARRAY_NAMESPACE_CACHE_DIR", str(d))
    for var in ("ARRAY_NAMESPACE_CACHE", "ARRAY_NAMESPACE_CACHE_MAX_SIZE", "ARRAY_NAMESPACE_CACHE_LOG"):
        monkeypatch.delenv(var, raising=False)
    real = _jaxlib.compile
    compiles = []

    def counting(module, device, *a):
        compiles.append(module)
        return real(module, device, *a)
    monkeypatch.setattr(_jaxlib, "compile", counting)
    yield d, compiles
    cc.flush()


def buf(x):
    """A device buffer of the host array `x` (what executables take)."""
    x = np.ascontiguousarray(x)
    return _jaxlib.device_put(x, make_jaxpr(lambda v: v)(xp.asarray(x)).jaxpr.invars[0].aval, runtime.default_device())


def module_for(c):
    """A distinct lowered program for every constant `c` (a fresh ir.Module each call)."""
    closed = make_jaxpr(lambda x: xp.sin(x) * c + (x @ x) / 3.0)(xp.asarray(X))
    return lower_jaxpr(closed, "main", ()), closed.jaxpr.outvars[0].aval


def run(c, expect=None):
    """Compile (through the cache) and run the program for `c`; check it against NumPy."""
    module, aval = module_for(c)
    dev = runtime.default_device()
    exe = cc.compile(module, dev)
    out = np.asarray(runtime.Compiled(exe, [_jaxlib.result_handler(aval, dev)], [aval])([buf(X)])[0])
    np.testing.assert_allclose(out, np.sin(X) * c + (X @ X) / 3.0, rtol=1e-13)
    return out


def entry_path(d, c):
    text = _jaxlib.module_text(module_for(c)[0])
    digest = cc.key_of(text, runtime.default_device())
    return d / (digest.hex() + cc.SUFFIX), digest


def delta(before):
    return {k: v - before.get(k, 0) for k, v in cc.stats.items() if v != before.get(k, 0)}


def test_second_compile_is_a_hit_equal_to_a_fresh_compile(cache, monkeypatch):
    d, compiles = cache
    before = cc.stats.copy()
    first = run(1.25)
    cc.flush()
    path, digest = entry_path(d, 1.25)
    assert cc.read_entry(str(path), digest) is not None
    assert len(compiles) == 1 and delta(before) == {"miss": 1, "write": 1}
    mtime = os.stat(path).st_mtime
    os.utime(path, (mtime - 100, mtime - 100))
    hit = run(1.25)
    assert len(compiles) == 1 and delta(before) == {"miss": 1, "write": 1, "hit": 1}
    assert os.stat(path).st_mtime > mtime - 50            # a hit is a use (LRU)
    monkeypatch.setenv("ARRAY_NAMESPACE_CACHE", "0")
    fresh = run(1.25)
    assert len(compiles) == 2
    assert first.tobytes() == hit.tobytes() == fresh.tobytes()


def test_one_program_jitted_from_two_functions_compiles_once(cache):
    """The key leaves the module's name (the Python function's) out: two functions of one body share an entry,
    another body does not."""
    from transforms import jit
    d, compiles = cache

    def first(v):
        return xp.sin(v) * 3.5 + 1.0

    def second(w):
        return xp.sin(w) * 3.5 + 1.0

    def third(w):
        return xp.sin(w) * 3.5 - 1.0
    x = xp.asarray(X)
    for f, want in ((first, np.sin(X) * 3.5 + 1.0), (second, np.sin(X) * 3.5 + 1.0), (third, np.sin(X) * 3.5 - 1.0)):
        np.testing.assert_allclose(np.asarray(jit(f)(x)), want, rtol=1e-14)
    names = [cc._module_name(_jaxlib.module_text(m)) for m in compiles]
    assert len(names) == 2 and "first" in names[0] and "third" in names[1], names


def test_a_repeated_compile_before_the_write_lands_compiles_nothing(cache):
    d, compiles = cache
    before = cc.stats.copy()
    outs = [run(1.75) for _ in range(3)]               # no flush: the entry may still be queued
    ev = delta(before)
    assert len(compiles) == 1 and (ev["miss"], ev["hit"], ev.get("bad", 0)) == (1, 2, 0)   # the write may have landed
    assert outs[0].tobytes() == outs[1].tobytes() == outs[2].tobytes()
    cc.flush()
    assert cc.stats["write"] - before.get("write", 0) == 1


def _flip_payload(data, other):
    b = bytearray(data)
    b[len(b) // 2] ^= 0x40
    return bytes(b)


def _header(data, **changes):
    fields = dict(zip(["magic", "version", "key", "length", "checksum"], struct.unpack_from(cc.HEADER.format, data)))
    fields.update(changes)
    return cc.HEADER.pack(*fields.values()) + data[cc.HEADER.size:]


DAMAGE = {
    "flipped payload byte": _flip_payload,
    "truncated": lambda data, other: data[: len(data) * 2 // 3],
    "header only": lambda data, other: data[: cc.HEADER.size],
    "cut inside header": lambda data, other: data[:20],
    "empty": lambda data, other: b"",
    "extra bytes": lambda data, other: data + b"\0" * 16,
    "wrong magic": lambda data, other: _header(data, magic=b"NOTANXLA"),
    "older format": lambda data, other: _header(data, version=cc.FORMAT_VERSION - 1),
    "length lies": lambda data, other: _header(data, length=len(data)),
    "checksum lies": lambda data, other: _header(data, checksum=b"\1" * 32),
    "another key's entry": lambda data, other: other,                 # stale: filed under the wrong key
}


@pytest.mark.parametrize("kind", list(DAMAGE))
def test_damaged_or_stale_entries_are_ignored_and_replaced(cache, kind):
    d, compiles = cache
    run(2.5)
    run(3.5)
    cc.flush()
    path, digest = entry_path(d, 2.5)
    other_path, _ = entry_path(d, 3.5)
    good = path.read_bytes()
    path.write_bytes(DAMAGE[kind](good, other_path.read_bytes()))
    n, before = len(compiles), cc.stats.copy()
    run(2.5)                                          # checked against NumPy inside
    cc.flush()
    assert len(compiles) == n + 1
    assert delta(before) == {"bad": 1, "miss": 1, "write": 1}
    assert cc.read_entry(str(path), digest) is not None   # replaced by a good entry
    run(2.5)
    assert len(compiles) == n + 1 and cc.stats["hit"] - before.get("hit", 0) == 1


def test_other_jaxlib_version_is_another_key_and_its_entry_is_not_loaded(cache, monkeypatch):
    d, compiles = cache
    run(4.5)
    cc.flush()
    old_path, old_digest = entry_path(d, 4.5)
    real_parts = _jaxlib.executable_key_parts
    monkeypatch.setattr(_jaxlib, "executable_key_parts",
                        lambda dev: [p.replace(_jaxlib.JAXLIB_VERSION, "0.10.3") for p in real_parts(dev)])
    new_path, new_digest = entry_path(d, 4.5)
    assert new_digest != old_digest
    new_path.write_bytes(old_path.read_bytes())        # an old entry under the new name
    before = cc.stats.copy()
    run(4.5)
    cc.flush()
    assert len(compiles) == 2 and delta(before) == {"bad": 1, "miss": 1, "write": 1}
    assert cc.read_entry(str(new_path), new_digest) is not None
    assert cc.read_entry(str(old_path), old_digest) is not None   # the other version's entry is left alone


def test_lru_eviction_keeps_the_cap(cache, monkeypatch):
    d, compiles = cache
    for c in (5.0, 6.0, 7.0):
        run(c)
    cc.flush()
    paths = {c: entry_path(d, c)[0] for c in (5.0, 6.0, 7.0, 8.0)}
    now = time.time()
    for age, c in ((300, 5.0), (200, 6.0), (100, 7.0)):
        os.utime(paths[c], (now - age, now - age))
    run(5.0)                                           # the oldest entry is used again: now the newest
    sizes = sum(os.path.getsize(paths[c]) for c in (5.0, 6.0, 7.0))
    cap = sizes + 100                                  # three entries fit, four do not
    monkeypatch.setenv("ARRAY_NAMESPACE_CACHE_MAX_SIZE", str(cap))
    before = cc.stats.copy()
    run(8.0)
    cc.flush()
    total = sum(p.stat().st_size for p in d.iterdir())
    assert total <= cap * 0.9
    # over the cap: least recently used first (6.0, then 7.0) until 90% of the cap is left;
    # 5.0 was used after them, 8.0 written last
    assert sorted(p.name for p in d.iterdir()) == sorted(paths[c].name for c in (5.0, 8.0))
    assert delta(before) == {"miss": 1, "write": 1, "evict": 2}
    assert len(compiles) == 4


def test_eviction_removes_stale_temp_files_only(tmp_path):
    old, fresh = tmp_path / (cc.TMP_PREFIX + "old"), tmp_path / (cc.TMP_PREFIX + "fresh")
    old.write_bytes(b"x")
    fresh.write_bytes(b"x")
    t = time.time() - cc.STALE_TMP_SECONDS - 10
    os.utime(old, (t, t))
    (tmp_path / "unrelated.txt").write_bytes(b"y" * 100)
    assert cc.evict(str(tmp_path), 1 << 20) == 0
    assert not old.exists() and fresh.exists() and (tmp_path / "unrelated.txt").exists()


@pytest.mark.parametrize("env", [{"ARRAY_NAMESPACE_CACHE": "0"}, {"ARRAY_NAMESPACE_CACHE": "off"},
                                 {"ARRAY_NAMESPACE_CACHE_DIR": ""}])
def test_disabled_by_the_environment(cache, monkeypatch, env):
    d, compiles = cache
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    before = cc.stats.copy()
    run(9.0)
    run(9.0)
    cc.flush()
    assert len(compiles) == 2 and delta(before) == {}
    assert not d.exists()


def test_settings_default_location_and_sizes(monkeypatch, tmp_path):
    monkeypatch.delenv("ARRAY_NAMESPACE_CACHE_DIR", raising=False)
    monkeypatch.delenv("ARRAY_NAMESPACE_CACHE", raising=False)
    monkeypatch.delenv("ARRAY_NAMESPACE_CACHE_MAX_SIZE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cc.settings() == (str(tmp_path / "array_namespace" / "xla"), 1 << 30)
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/ignored")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cc.settings()[0] == str(tmp_path / "home" / ".cache" / "array_namespace" / "xla")
    for text, size in [("1000", 1000), ("512M", 512 << 20), ("2G", 2 << 30), ("1.5GiB", 3 << 29),
                       ("64kb", 64 << 10), ("junk", 1 << 30)]:
        monkeypatch.setenv("ARRAY_NAMESPACE_CACHE_MAX_SIZE", text)
        assert cc.settings()[1] == size, text


def test_modules_with_host_callbacks_are_never_cached(cache):
    d, compiles = cache
    calls = []

    def host(x):
        calls.append(1)
        return np.asarray(x) * 2.0

    def f(x):
        return pure_callback(host, ShapeDtypeStruct(x.shape, x.dtype), x) + 1.0
    closed = make_jaxpr(f)(xp.asarray(X))
    before = cc.stats.copy()
    for _ in range(2):
        out = runtime.compile_jaxpr(closed)([buf(X)])[0]
        np.testing.assert_array_equal(np.asarray(out), X * 2.0 + 1.0)
    cc.flush()
    assert len(compiles) == 2 and len(calls) == 2 and delta(before) == {"skip": 2}
    assert not d.exists() or not any(d.iterdir())


def _hammer(directory, worker, rounds):
    """Write entries for shared keys 0..3 and this worker's own key, with payloads that differ
    per write (sizes 0 B .. 200 KB)."""
    rng = np.random.default_rng(worker)
    for i in range(rounds):
        k = int(rng.integers(5))
        key = bytes([k if k < 4 else 100 + worker]) * 32
        payload = rng.bytes(int(rng.choice([0, 10, 5000, 200_000])))
        cc.write_entry(directory, os.path.join(directory, key.hex() + cc.SUFFIX), key, payload)


def test_concurrent_writers_never_leave_a_corrupt_entry(tmp_path):
    directory = str(tmp_path)
    ctx = multiprocessing.get_context("fork")
    procs = [ctx.Process(target=_hammer, args=(directory, w, 150)) for w in range(4)]
    for p in procs:
        p.start()
    reads = 0
    while any(p.is_alive() for p in procs):           # read while they write: never a torn entry
        for name in os.listdir(directory):
            if name.endswith(cc.SUFFIX):
                try:
                    assert cc.read_entry(os.path.join(directory, name), bytes.fromhex(name[:-len(cc.SUFFIX)])) \
                        is not None, name
                    reads += 1
                except FileNotFoundError:
                    pass
    for p in procs:
        p.join()
        assert p.exitcode == 0
    names = sorted(os.listdir(directory))
    assert names == sorted(bytes([k]).hex() * 32 + cc.SUFFIX for k in [0, 1, 2, 3, 100, 101, 102, 103])
    for name in names:
        assert cc.read_entry(os.path.join(directory, name), bytes.fromhex(name[:-len(cc.SUFFIX)])) is not None
    assert reads > 0


SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import array_namespace as xp
    from transforms import jit

    def program(x, y):
        for _ in range(10):
            x = xp.tanh(x @ y + 1.0) * 0.5 - x / 3.0
        return xp.sum(x, axis=0)

    x = xp.asarray(np.linspace(-1.0, 1.0, 64).reshape(8, 8))
    out = jit(program)(x, xp.exp(x) * 0.25)
    own = jit(lambda v: v * float(sys.argv[1]) + 1.0)(x)      # a key no other process compiles
    donor = xp.asarray(np.arange(64.0))
    donated = jit(lambda v, w: v * 2.0 + w, donate_argnums=0)(donor, xp.ones(64))
    try:
        np.asarray(donor)
        state = "kept"
    except RuntimeError:
        state = "donated"
    print(np.asarray(out).tobytes().hex(), np.asarray(own).tobytes().hex(), np.asarray(donated).tobytes().hex(),
          state)
""")


def _spawn(cache_dir, own):
    env = dict(os.environ, ARRAY_NAMESPACE_CACHE_DIR=str(cache_dir), ARRAY_NAMESPACE_CACHE_LOG="1",
               PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    env.pop("ARRAY_NAMESPACE_CACHE", None)
    return subprocess.Popen([sys.executable, "-c", SCRIPT, str(own)], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _finish(proc):
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    events = [line.split()[3] for line in err.splitlines() if line.startswith("array_namespace compile cache:")]
    return out.split(), {e: events.count(e) for e in set(events)}


def test_a_second_process_compiles_nothing(tmp_path):
    d = tmp_path / "xla"
    a, b = _spawn(d, 2.0), _spawn(d, 3.0)             # two writers at once: same keys and one own key each
    (out_a, ev_a), (out_b, ev_b) = _finish(a), _finish(b)
    assert ev_a.get("miss", 0) > 0 and ev_a.get("error", 0) == ev_b.get("error", 0) == 0
    assert out_a[0] == out_b[0]
    for p in d.iterdir():                              # every entry complete and filed under its key
        assert cc.read_entry(str(p), bytes.fromhex(p.name[:-len(cc.SUFFIX)])) is not None
    out_c, ev_c = _finish(_spawn(d, 2.0))
    assert ev_c.get("miss", 0) == 0 and ev_c.get("bad", 0) == 0 and ev_c.get("write", 0) == 0
    assert ev_c.get("hit", 0) >= 2                    # the two jitted programs at least
    assert out_c == out_a                              # a hit computes (and donates) as a fresh compile did
    assert out_c[3] == "donated"
    np.testing.assert_array_equal(np.frombuffer(bytes.fromhex(out_c[2])), np.arange(64.0) * 2.0 + 1.0)
    x = np.linspace(-1.0, 1.0, 64).reshape(8, 8)
    y = np.exp(x) * 0.25
    for _ in range(10):
        x = np.tanh(x @ y + 1.0) * 0.5 - x / 3.0
    np.testing.assert_allclose(np.frombuffer(bytes.fromhex(out_c[0])), x.sum(axis=0), rtol=1e-12)


DEVICES_SCRIPT = textwrap.dedent("""
    import numpy as np
    import array_namespace as xp
    from transforms import make_jaxpr
    from xla import _jaxlib, compile_cache as cc, runtime
    X = np.arange(6.0)
    closed = make_jaxpr(lambda x: xp.cos(x) * 2.0 + x)(xp.asarray(X))
    for rnd in range(2):                               # compile (and store), then load from disk
        for dev in runtime.devices():
            out = runtime.compile_jaxpr(closed, device=dev)([_jaxlib.device_put(X, closed.jaxpr.invars[0].aval, dev)])[0]
            assert _jaxlib.device_of(out) == dev, (rnd, dev)
            np.testing.assert_allclose(np.asarray(out), np.cos(X) * 2.0 + X, rtol=1e-14)
        cc.flush()
        print(rnd, dict(cc.stats))
        cc.stats.clear()
""")


def test_each_device_has_its_own_entry(tmp_path):
    """An executable keeps its device assignment: one compiled for cpu:0 cannot run on cpu:1."""
    env = dict(os.environ, ARRAY_NAMESPACE_CACHE_DIR=str(tmp_path), ARRAY_NAMESPACE_CPU_DEVICES="2",
               PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    env.pop("ARRAY_NAMESPACE_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", DEVICES_SCRIPT], env=env, text=True, capture_output=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:2] == ["0 {'miss': 2, 'write': 2}", "1 {'hit': 2}"]
    assert len(list(tmp_path.iterdir())) == 2


EXIT_SCAN_SCRIPT = textwrap.dedent("""
    import os, sys
    import numpy as np
    import array_namespace as xp
    from transforms import jit
    from xla import compile_cache as cc
    jit(lambda v: v * 7.25 + 1.0)(xp.asarray(np.ones(3))).block_until_ready()
    cc.flush()
    print(len(os.listdir(sys.argv[1])))   # the other processes' entries, not scanned at this first write
""")


def test_a_process_scans_the_directory_at_exit_not_at_its_first_write(tmp_path):
    """Other processes' entries over the cap are evicted (least recently used first) when a process that wrote
    exits, not by its writer thread at its first write, where each stat handed the GIL back and forth with the
    caller's eager work."""
    d = tmp_path / "xla"
    d.mkdir()
    now = time.time()
    for k in range(40):   # 40 entries of 10 kB from "other processes", the oldest first
        p = d / (bytes([k]).hex() * 32 + cc.SUFFIX)
        p.write_bytes(b"\0" * 10_000)
        os.utime(p, (now - 1000 + k, now - 1000 + k))
    env = dict(os.environ, ARRAY_NAMESPACE_CACHE_DIR=str(d), ARRAY_NAMESPACE_CACHE_MAX_SIZE="200000",
               PYTHONPATH=os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]))
    env.pop("ARRAY_NAMESPACE_CACHE", None)
    proc = subprocess.run([sys.executable, "-c", EXIT_SCAN_SCRIPT, str(d)], env=env, text=True,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["41"]                 # all 40 and its own, until it exited
    left = sorted(p.name for p in d.iterdir())
    assert sum(p.stat().st_size for p in d.iterdir()) <= 200000 * 0.9
    others = [bytes([k]).hex() * 32 + cc.SUFFIX for k in range(40)]
    kept = [n for n in others if n in left]
    assert kept == others[len(others) - len(kept):] and len(kept) < 40   # the newest kept, the oldest evicted
    assert len(left) == len(kept) + 1                   # and the process's own (the most recent) entry
