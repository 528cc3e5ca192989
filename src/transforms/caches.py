"""Bounded executable caches: least-recently-used maps whose caps come from the environment.

Every compiled program a cache keeps holds native code and memory, so a long run over many
distinct shapes must not grow without bound. Three caps, read once from the environment at
import and changeable at run time with `set_cache_size`:

    eager         ARRAY_NAMESPACE_EAGER_CACHE_SIZE          4096  single-primitive executables (process-wide)
    jit           ARRAY_NAMESPACE_JIT_CACHE_SIZE             256  traced signatures per jitted function
    jit_dispatch  ARRAY_NAMESPACE_JIT_DISPATCH_CACHE_SIZE   4096  the backend's native jit dispatcher (process-wide)

The engine owns the settings (the backend reads them and registers a hook for the caps it keeps
natively), so `transforms` stays free of the backend. `LRUCache` is thread-safe: reads are single
C-level dict operations (atomic under the GIL), writes and evictions take a lock.
"""
from __future__ import annotations

import os
import threading
import weakref
from collections import OrderedDict

DEFAULTS = {"eager": 4096, "jit": 256, "jit_dispatch": 4096}
ENV_VARS = {"eager": "ARRAY_NAMESPACE_EAGER_CACHE_SIZE", "jit": "ARRAY_NAMESPACE_JIT_CACHE_SIZE",
            "jit_dispatch": "ARRAY_NAMESPACE_JIT_DISPATCH_CACHE_SIZE"}


def _check(kind, n, where):
    if kind is not None and kind not in DEFAULTS:
        raise ValueError(f"{where}: unknown cache {kind!r}; expected one of {sorted(DEFAULTS)}")
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        what = f"the {kind!r} cache" if kind else "a cache"
        raise ValueError(f"{where}: the size of {what} must be an integer >= 1, got {n!r}")
    return n


def _from_env(kind):
    var = ENV_VARS[kind]
    text = os.environ.get(var, "").strip()
    if not text:
        return DEFAULTS[kind]
    try:
        n = int(text)
    except ValueError:
        n = text
    return _check(kind, n, var)


_sizes = {kind: _from_env(kind) for kind in DEFAULTS}
_caches = {kind: weakref.WeakSet() for kind in DEFAULTS}   # live caches of each kind, resized together
_hooks = {kind: [] for kind in DEFAULTS}                    # backend callbacks for caps kept natively
_registry_lock = threading.Lock()                           # (a weak set must not grow while it is walked)


def cache_size(kind):
    """The current cap of the `kind` cache ('eager', 'jit' or 'jit_dispatch')."""
    _check(kind, 1, "cache_size")
    return _sizes[kind]


def cache_sizes():
    return dict(_sizes)


def set_cache_size(kind, n):
    """Set the cap of the `kind` cache; live caches of that kind evict down to it at once.
    Returns the previous cap. ('jit_dispatch': jaxlib fixes a dispatcher cache's capacity when it is
    made, so the new cap applies to functions jitted from now on.)"""
    _check(kind, n, "set_cache_size")
    with _registry_lock:
        old, _sizes[kind] = _sizes[kind], n
        live = list(_caches[kind])
    for cache in live:
        cache.resize(n)
    for hook in _hooks[kind]:
        hook(n)
    return old


def on_resize(kind, hook):
    """Register `hook(n)`, called when the `kind` cap changes (the backend, for caches it keeps natively)."""
    _check(kind, 1, "on_resize")
    _hooks[kind].append(hook)


def clear_all(keep=None):
    """Empty every live cache (each drops its entries and takes a new lock): the backend calls it in a forked
    child, whose executables of the parent's runtime are unusable, and where a lock another thread held at
    the fork stays held. keep: called with each cache's entries (a dict) before it is emptied (the backend
    keeps them: destroying them in the child can wait on such a lock)."""
    global _registry_lock
    _registry_lock = threading.Lock()
    for kind in _caches:
        for cache in list(_caches[kind]):
            cache._lock = threading.Lock()
            if keep is not None:
                keep(dict(cache))
            cache.clear()


class LRUCache(OrderedDict):
    """A map holding at most `maxsize` entries; inserting past it evicts the least recently used.

    `get` marks a hit as most recently used. Hot paths may read with `cache[key]` and call
    `cache.move_to_end(key)` themselves (two C calls, no Python frame). `kind` ties the cap to the
    process-wide setting of that name (see `set_cache_size`); without it the cap is `maxsize`.
    """

    def __init__(self, maxsize=None, kind=None):
        super().__init__()
        self.kind = kind
        self.evictions = 0
        self._lock = threading.Lock()
        if kind is None:
            self.maxsize = _check(None, maxsize, "LRUCache")
            return
        _check(kind, 1, "LRUCache")
        with _registry_lock:   # (reads the cap and joins the live caches at once: no resize slips between)
            self.maxsize = _check(kind, _sizes[kind] if maxsize is None else maxsize, "LRUCache")
            _caches[kind].add(self)

    def __hash__(self):   # (weak sets need a hash; identity is what a cache is)
        return id(self)

    def __eq__(self, other):
        return self is other

    def get(self, key, default=None):
        try:
            value = self[key]
        except KeyError:
            return default
        try:
            self.move_to_end(key)
        except KeyError:   # evicted by another thread in between: the value is still good
            pass
        return value

    def put(self, key, value):
        """Insert (or refresh) `key`, evicting least recently used entries past the cap; returns `value`."""
        with self._lock:
            self[key] = value
            self.move_to_end(key)
            self._evict(self.maxsize)
        return value

    def resize(self, maxsize):
        with self._lock:
            self.maxsize = _check(self.kind, maxsize, "LRUCache.resize")
            self._evict(maxsize)

    def _evict(self, maxsize):
        while len(self) > maxsize:
            self.popitem(last=False)
            self.evictions += 1

    def __repr__(self):
        return f"LRUCache(kind={self.kind!r}, size={len(self)}, maxsize={self.maxsize}, evictions={self.evictions})"
