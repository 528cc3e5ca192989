"""Persistent compilation cache: compiled XLA executables kept on disk across processes.

Why: compiling dominates start-up (tens of ms per eager primitive, hundreds for a jitted
program) and every new process pays it again, while loading a serialized executable costs a
few ms. `compile(module, device)` is the one compile path (xla/runtime.compile_jaxpr).

Entries: one file per executable, `<dir>/<key>.xla`, written by a background thread so the
caller never waits on the disk (an executable waiting to be written serves
repeated compiles of its module meanwhile): temp file in the same directory, fsync, `os.replace` -- a
crash or a concurrent writer leaves the old entry, the new one, or none, never a mix.
A file is a header (magic, format version, key digest, payload length, payload sha256) and
jaxlib's serialized executable; one that is truncated, corrupt, of another format or filed
under another key is ignored (compiled afresh and overwritten), never deserialized.
The key hashes the module's text (no locations, not its name), jaxlib's version and API, the compile
options, platform, device kind, device count, XLA_FLAGS and the host CPU (XLA's CPU code
targets its instruction set). Modules with host callbacks are never cached: their
executables call Python functions that only exist in this process.
LRU: a hit refreshes the file's mtime; a process that wrote entries scans the directory at exit (and when its
running total passes the cap, and every 256 writes, to see other processes' entries) and removes the least
recently used entries until 90% of the cap is left. Not at its first write: the writer thread's stat of every
entry hands the GIL back and forth with the caller's eager work (3,991 entries: xp.mean's eager calls ran 2-4x
slower for ~60 ms after a process's first compile).

Environment, read at every compile:
  ARRAY_NAMESPACE_CACHE=0           disable (also false/off/no)
  ARRAY_NAMESPACE_CACHE_DIR=path    directory (default $XDG_CACHE_HOME or ~/.cache, then
                                    array_namespace/xla); set but empty disables
  ARRAY_NAMESPACE_CACHE_MAX_SIZE=n  cap in bytes, suffix K/M/G allowed (default 1G)
  ARRAY_NAMESPACE_CACHE_LOG=1       one line per hit/miss/write/skip/bad/evict on stderr
"""
from __future__ import annotations

import atexit
import collections
import hashlib
import os
import platform
import queue
import struct
import sys
import tempfile
import threading
import time

from . import _jaxlib

MAGIC = b"ANXLAEXE"
FORMAT_VERSION = 2   # 2: the compile flags depend on the module (compile_flags.overrides)
HEADER = struct.Struct("<8sI32sQ32s")   # magic, format version, key digest, payload length, payload sha256
SUFFIX = ".xla"
TMP_PREFIX = ".tmp-"
DEFAULT_MAX_SIZE = 1 << 30
STALE_TMP_SECONDS = 3600                # temp files of killed writers older than this are removed

stats = collections.Counter()           # hit, miss, bad, write, skip, evict, error: this process
_stats_lock = threading.Lock()


def _note(event, key="", name=""):
    with _stats_lock:
        stats[event] += 1
    if os.environ.get("ARRAY_NAMESPACE_CACHE_LOG", "") not in ("", "0"):
        print(f"array_namespace compile cache: {event} {key[:16]} {name}".rstrip(), file=sys.stderr, flush=True)


def _parse_size(text):
    if text is None or not text.strip():
        return DEFAULT_MAX_SIZE
    t = text.strip().upper().rstrip("B").rstrip("I")   # 512M, 512MB, 512MiB
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(t[-1:], 1)
    try:
        return int(float(t[:-1] if scale > 1 else t) * scale)
    except ValueError:
        return DEFAULT_MAX_SIZE


def settings():
    """(directory, cap in bytes) from the environment; directory None when disabled."""
    if os.environ.get("ARRAY_NAMESPACE_CACHE", "1").strip().lower() in ("0", "false", "off", "no"):
        return None, 0
    d = os.environ.get("ARRAY_NAMESPACE_CACHE_DIR")
    if d is None:
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not os.path.isabs(base):      # the XDG spec: relative values are ignored
            base = os.path.join(os.path.expanduser("~"), ".cache")
        d = os.path.join(base, "array_namespace", "xla")
    elif not d.strip():
        return None, 0
    return os.path.abspath(os.path.expanduser(d)), _parse_size(os.environ.get("ARRAY_NAMESPACE_CACHE_MAX_SIZE"))


_host = None


def _host_id():
    """The host CPU's identity: machine, model and feature flags (first processor of /proc/cpuinfo)."""
    global _host
    if _host is None:
        with _host_lock:
            if _host is None:
                _host = _read_host_id()
    return _host


_host_lock = threading.Lock()


def _read_host_id():
    parts = [platform.system(), platform.machine(), platform.processor()]
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break
                if line.startswith(("model name", "flags", "Features", "CPU implementer", "CPU part")):
                    parts.append(" ".join(line.split()))
    except OSError:
        pass
    return "\n".join(parts)


def key_of(text: str, device) -> bytes:
    """The sha256 digest keying `text` (a module) compiled for `device` here. The module's own name (the jitted
    Python function's) is left out: one program jitted from two functions (two lambdas, a function and its
    eager staged body) compiles once; a hit's executable keeps the first name (XLA profiles show that one)."""
    h = hashlib.sha256()
    for part in [str(FORMAT_VERSION), *_jaxlib.executable_key_parts(device), _host_id()]:
        h.update(part.encode())
        h.update(b"\0")
    name = _module_name(text)
    if name:
        text = "module @_" + text[8 + len(name):]
    h.update(hashlib.sha256(text.encode()).digest())
    return h.digest()


def _module_name(text):
    return text[8:text.find(" ", 8)] if text.startswith("module @") else ""


def compile(module, device):
    """A loaded executable for `module` on `device`: from the disk cache, or compiled (and stored)."""
    directory, cap = settings()
    if directory is None:
        return _jaxlib.compile(module, device)
    text = _jaxlib.module_text(module)
    name = _module_name(text)
    if _jaxlib.HOST_CALLBACK_TARGET in text or _jaxlib.HOST_CALLBACKS_ATTR in text:
        _note("skip", "", name)
        return _jaxlib.compile(module, device)
    digest = key_of(text, device)
    path = os.path.join(directory, digest.hex() + SUFFIX)
    exe = _writer.pending.get((path, device))   # compiled here, not yet on disk
    if exe is not None:
        _note("hit", digest.hex(), name)
        return exe
    exe = _load(path, digest, device, name)
    if exe is None:
        exe = _jaxlib.compile(module, device)
        if _jaxlib.compile_elsewhere is None:   # (a forked child's executable, loaded from another process's bytes,
            _writer.put((directory, cap, path, digest, exe, name), (path, device))   # serializes incomplete)
    return exe


def read_entry(path, digest):
    """The payload of the entry at `path` if its header and checksum hold for `digest`, else None.

    Raises FileNotFoundError when there is no entry."""
    with open(path, "rb") as f:
        data = f.read()
    if len(data) < HEADER.size:
        return None
    magic, version, key, length, checksum = HEADER.unpack_from(data)
    if magic != MAGIC or version != FORMAT_VERSION or key != digest or length != len(data) - HEADER.size:
        return None
    payload = data[HEADER.size:]
    if hashlib.sha256(payload).digest() != checksum:
        return None
    return payload


def write_entry(directory, path, digest, payload: bytes) -> int:
    """Store `payload` under `path` atomically (temp file, fsync, replace); returns the bytes written."""
    os.makedirs(directory, mode=0o700, exist_ok=True)
    header = HEADER.pack(MAGIC, FORMAT_VERSION, digest, len(payload), hashlib.sha256(payload).digest())
    fd, tmp = tempfile.mkstemp(prefix=TMP_PREFIX, dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(header)
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.remove(tmp)
        except OSError:
            pass
        raise
    return HEADER.size + len(payload)


def _load(path, digest, device, name):
    key = digest.hex()
    try:
        payload = read_entry(path, digest)
    except OSError:          # absent (or unreadable): a plain miss
        _note("miss", key, name)
        return None
    exe = None
    if payload is not None:
        try:
            exe = _jaxlib.deserialize_executable(payload, device)
        except Exception:    # noqa: BLE001 -- a checked payload jaxlib still refuses: recompile
            exe = None
    if exe is None:
        _note("bad", key, name)
        _note("miss", key, name)
        return None
    try:
        os.utime(path)       # least recently *used*: a hit counts as a use
    except OSError:
        pass
    _note("hit", key, name)
    return exe


def evict(directory, cap) -> int:
    """Remove least recently used entries until the directory holds <= 90% of `cap` (if over
    `cap`), and temp files of killed writers; returns the bytes left."""
    entries, total, now = [], 0, time.time()
    try:
        it = os.scandir(directory)
    except OSError:
        return 0
    with it:
        for e in it:
            try:
                st = e.stat()
            except OSError:
                continue
            if e.name.startswith(TMP_PREFIX):
                if now - st.st_mtime > STALE_TMP_SECONDS:
                    _remove(e.path)
            elif e.name.endswith(SUFFIX):
                entries.append((st.st_mtime, st.st_size, e.path))
                total += st.st_size
    if total > cap:
        entries.sort()
        for _, size, p in entries:
            if total <= cap * 0.9:
                break
            if _remove(p):
                _note("evict", os.path.basename(p))
            total -= size
    return total


def _remove(path):
    try:
        os.remove(path)
        return True
    except OSError:
        return False


def clear(directory=None):
    """Remove every entry of the cache directory (the configured one by default)."""
    directory = directory or settings()[0]
    if directory:
        evict(directory, -1)


class _Writer:
    """One background thread per process serializing and storing new executables."""

    def __init__(self):
        self.queue = queue.Queue()
        self.thread = None
        self.lock = threading.Lock()
        self.totals = {}     # directory -> bytes it held at the last scan (0 before one) plus what we wrote since
        self.caps = {}       # directory -> the cap of our last write there (the exit scan's)
        self.writes = 0
        self.pending = {}    # (path, device) -> executable queued for writing: reused meanwhile

    def put(self, item, pending_key):
        with self.lock:
            if self.thread is None or not self.thread.is_alive():
                self.thread = threading.Thread(target=self._run, name="array_namespace-compile-cache", daemon=True)
                self.thread.start()
            self.pending[pending_key] = item[4]
        self.queue.put((item, pending_key))

    def _run(self):
        while True:
            item, pending_key = self.queue.get()
            try:
                self._store(*item)
            except Exception:   # noqa: BLE001 -- a cache that cannot write is only slower
                _note("error", item[3].hex(), item[5])
            finally:
                with self.lock:
                    self.pending.pop(pending_key, None)
                self.queue.task_done()

    def _store(self, directory, cap, path, digest, exe, name):
        size = write_entry(directory, path, digest, _jaxlib.serialize_executable(exe))
        _note("write", digest.hex(), name)
        self.writes += 1
        total = self.totals.get(directory, 0) + size
        if total > cap or self.writes % 256 == 0:
            total = evict(directory, cap)
        self.totals[directory], self.caps[directory] = total, cap

    def flush(self, timeout=None):
        """Wait until every queued executable is stored (or `timeout` seconds pass)."""
        q = self.queue
        deadline = None if timeout is None else time.monotonic() + timeout
        with q.all_tasks_done:
            while q.unfinished_tasks:
                left = None if deadline is None else deadline - time.monotonic()
                if left is not None and left <= 0:
                    return False
                q.all_tasks_done.wait(left)
        return True


_writer = _Writer()


def flush(timeout=None):
    """Wait for pending cache writes; True when none is left."""
    return _writer.flush(timeout)


def _after_fork():   # the child has no writer thread and must not wait on the parent's queue
    global _writer
    _writer = _Writer()


os.register_at_fork(after_in_child=_after_fork)


def _at_exit():
    """Pending writes stored, then each directory this process wrote to held to its cap (see LRU above)."""
    if flush(30.0):
        for directory, cap in list(_writer.caps.items()):
            evict(directory, cap)


atexit.register(_at_exit)
