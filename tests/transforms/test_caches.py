"""transforms/caches.py: the LRU map (eviction order, resizing, threads) and the cache-size settings
(defaults, environment variables, the setter, the README's table)."""
import os
import pathlib
import re
import subprocess
import sys
import threading

import pytest

from transforms import caches
from transforms.caches import LRUCache

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture
def restore_sizes():
    saved = caches.cache_sizes()
    yield
    for kind, n in saved.items():
        if caches.cache_size(kind) != n:
            caches.set_cache_size(kind, n)


def test_evicts_least_recently_used_first():
    c = LRUCache(3)
    for k in "abc":
        c.put(k, k.upper())
    assert c.get("a") == "A"            # a is now the most recent: b is the least
    c.put("d", "D")
    assert list(c) == ["c", "a", "d"] and c.evictions == 1
    c["c"], c.put("e", "E")             # a plain read does not refresh (hot paths refresh themselves)
    assert list(c) == ["a", "d", "e"]
    c.move_to_end("a")
    c.put("f", "F")
    assert list(c) == ["e", "a", "f"] and c.evictions == 3
    c.put("e", "E2")                    # re-inserting refreshes, evicts nothing
    assert list(c) == ["a", "f", "e"] and c["e"] == "E2" and c.evictions == 3
    assert c.get("zz", 7) == 7 and len(c) == 3


def test_resize_evicts_down_to_the_new_cap_in_lru_order():
    c = LRUCache(5)
    for i in range(5):
        c.put(i, i * i)
    c.get(0)
    c.resize(2)
    assert list(c) == [4, 0] and c.maxsize == 2 and c.evictions == 3
    c.resize(4)
    for i in range(10, 13):
        c.put(i, i)
    assert list(c) == [0, 10, 11, 12]


def test_set_cache_size_resizes_live_caches_of_that_kind_and_returns_the_old_cap(restore_sizes):
    old = caches.cache_size("jit")
    a, b, other = LRUCache(kind="jit"), LRUCache(kind="jit"), LRUCache(kind="eager")
    assert a.maxsize == old and other.maxsize == caches.cache_size("eager")
    for i in range(6):
        a.put(i, i), b.put(-i, i), other.put(i, i)
    assert caches.set_cache_size("jit", 2) == old
    assert list(a) == [4, 5] and list(b) == [-4, -5] and len(other) == 6
    assert caches.cache_size("jit") == 2 and LRUCache(kind="jit").maxsize == 2
    assert LRUCache(9, kind="jit").maxsize == 9      # an explicit cap wins over the setting


def test_resize_hooks_run_with_the_new_cap(restore_sizes):
    seen = []
    caches.on_resize("eager", seen.append)
    try:
        caches.set_cache_size("eager", 17)
        assert seen == [17]
    finally:
        caches._hooks["eager"].remove(seen.append)


@pytest.mark.parametrize("bad", [0, -3, 2.5, "10", True, None])
def test_bad_sizes_are_value_errors_naming_the_cache(bad):
    with pytest.raises(ValueError, match=r"set_cache_size: the size of the 'jit' cache must be an integer >= 1"):
        caches.set_cache_size("jit", bad)
    with pytest.raises(ValueError, match="must be an integer >= 1"):
        LRUCache(bad)


def test_unknown_cache_kind_is_a_value_error():
    with pytest.raises(ValueError, match=r"unknown cache 'exe'; expected one of \['eager', 'jit', 'jit_dispatch'\]"):
        caches.set_cache_size("exe", 4)
    with pytest.raises(ValueError, match="unknown cache"):
        caches.cache_size("exe")


def _run(code, **env):
    full = dict(os.environ, PYTHONPATH=str(ROOT / "src"), **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=full, timeout=120)


def test_environment_variables_set_the_caps_at_import():
    code = "from transforms import caches; print(caches.cache_sizes())"
    out = _run(code, ARRAY_NAMESPACE_EAGER_CACHE_SIZE="12", ARRAY_NAMESPACE_JIT_CACHE_SIZE=" 3 ",
               ARRAY_NAMESPACE_JIT_DISPATCH_CACHE_SIZE="")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "{'eager': 12, 'jit': 3, 'jit_dispatch': 4096}"
    bad = _run(code, ARRAY_NAMESPACE_JIT_CACHE_SIZE="lots")
    assert bad.returncode != 0
    assert "ARRAY_NAMESPACE_JIT_CACHE_SIZE: the size of the 'jit' cache must be an integer >= 1, got 'lots'" in bad.stderr


def test_defaults_without_the_environment():
    env = {k: v for k, v in os.environ.items() if k not in caches.ENV_VARS.values()}
    env["PYTHONPATH"] = str(ROOT / "src")
    out = subprocess.run([sys.executable, "-c", "from transforms import caches; print(caches.cache_sizes())"],
                         capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.strip() == "{'eager': 4096, 'jit': 256, 'jit_dispatch': 4096}", out.stderr


def test_readme_documents_every_cap_and_its_default():
    text = (ROOT / "README.md").read_text()
    for kind, var in caches.ENV_VARS.items():
        assert re.search(rf"{var}=\S*\s.*default {caches.DEFAULTS[kind]}\b", text), (kind, var)
    assert "set_cache_size" in text


def test_threads_share_a_cache_without_errors_or_overflow():
    c = LRUCache(16)
    errors = []

    def work(seed):
        try:
            for i in range(20000):
                k = (seed * 7 + i) % 40
                v = c.get(k)
                if v is None:
                    c.put(k, k * 3)
                elif v != k * 3:
                    errors.append((k, v))
                if i % 5000 == 0:
                    c.resize(8 + seed % 8)
        except Exception as e:   # noqa: BLE001 -- reported below
            errors.append(e)
    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(c) <= c.maxsize and c.evictions > 0
    assert all(c[k] == k * 3 for k in list(c))
