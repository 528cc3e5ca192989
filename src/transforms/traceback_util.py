"""Traceback filtering: an error raised inside transformed user code shows the user's frames, not ours.

A function given to grad, vmap, jit, scan, ... runs beneath dozens of library frames (tracing, rules,
staging, the namespace's validation). When an exception leaves a public entry point wrapped with
`api_boundary`, the frames of the library's files (the packages `transforms`, `xla` and
`array_namespace`) are dropped from its traceback, and from the tracebacks of its `__cause__` /
`__context__` chain. What stays is the user's: the line that called the transform, and the user's
function down to the line that raised -- for an error the library raised (a validation TypeError, say),
the user's line that called into it. The exception itself is untouched (same object, type, message and
args); one note says that library frames were hidden and how to see them.

Switched off by the environment variable ARRAY_NAMESPACE_TRACEBACK_FILTERING=off (read at import) or by
`set_filtering(False)` (for debugging the library itself). The wrapper costs one Python frame per call
and nothing more unless an exception passes; jit's native dispatcher is not wrapped per call (only its
cache-miss callback into Python is).
"""
from __future__ import annotations

import functools
import os
import types

__all__ = ["api_boundary", "filtering_enabled", "set_filtering", "filter_traceback", "library_paths"]

_ENV = "ARRAY_NAMESPACE_TRACEBACK_FILTERING"
_OFF = ("off", "0", "false", "no")
_enabled = os.environ.get(_ENV, "on").strip().lower() not in _OFF

_SRC = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
# Directories whose frames are hidden: this engine and its sibling packages (named by path only).
library_paths = [os.path.join(_SRC, pkg) + os.sep for pkg in ("transforms", "xla", "array_namespace")]
_verdicts = {}   # a code object's file name as imported (maybe 'tests/../src/...') -> whether it is ours

NOTE = (f"(library frames were hidden from this traceback; set {_ENV}=off or call "
        "transforms.traceback_util.set_filtering(False) to see them)")


def filtering_enabled():
    """Whether tracebacks are filtered at the transforms' entry points.

    Returns:
        bool: True unless switched off (by the environment variable or `set_filtering`).
    Raises:
        nothing.

    >>> from transforms import traceback_util
    >>> traceback_util.filtering_enabled() in (True, False)
    True
    """
    return _enabled


def set_filtering(enabled):
    """Switch traceback filtering on or off for the whole process; returns the previous setting.

    Parameters:
        enabled (bool): True to hide library frames, False to see every frame.
    Returns:
        bool: the previous setting.
    Raises:
        TypeError: if `enabled` is not a bool.

    >>> from transforms import traceback_util
    >>> prev = traceback_util.set_filtering(False)
    >>> traceback_util.filtering_enabled()
    False
    >>> _ = traceback_util.set_filtering(prev)
    """
    global _enabled
    if type(enabled) is not bool:
        raise TypeError(f"set_filtering expects a bool, got {type(enabled).__name__}")
    prev, _enabled = _enabled, enabled
    return prev


def _is_library(frame):
    name = frame.f_code.co_filename
    ours = _verdicts.get(name)
    if ours is None:
        real = os.path.realpath(name)
        ours = _verdicts[name] = any(real.startswith(p) for p in library_paths)
    return ours


def filter_traceback(tb):
    """The traceback `tb` without the library's frames (a new chain; None if nothing is left).

    Parameters:
        tb (types.TracebackType or None): a traceback, e.g. `exc.__traceback__`.
    Returns:
        types.TracebackType or None: the user's entries of `tb`, in order.
    Raises:
        AttributeError: if tb is not a traceback.

    >>> from transforms.traceback_util import filter_traceback
    >>> try:
    ...     1 / 0
    ... except ZeroDivisionError as e:
    ...     filter_traceback(e.__traceback__) is not None
    True
    """
    kept = []
    while tb is not None:
        if not _is_library(tb.tb_frame):
            kept.append(tb)
        tb = tb.tb_next
    out = None
    for entry in reversed(kept):
        out = types.TracebackType(out, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return out


def filter_exception(exc):
    """Hide the library's frames from exc's traceback (and its causes'), in place; what api_boundary does."""
    seen = set()
    hid = False
    e = exc
    stack = [exc]
    while stack:
        e = stack.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        tb = e.__traceback__
        new = filter_traceback(tb)
        if _length(new) != _length(tb):
            hid = True
            e.__traceback__ = new
        stack += [e.__cause__, e.__context__]
    if hid and NOTE not in getattr(exc, "__notes__", ()):
        try:
            exc.add_note(NOTE)
        except Exception:   # an exception type that refuses notes keeps its traceback filtered, unannotated
            pass


def _length(tb):
    n = 0
    while tb is not None:
        n, tb = n + 1, tb.tb_next
    return n


def api_boundary(fun):
    """Wrap a public entry point so exceptions leaving it carry a traceback without library frames.

    Parameters:
        fun (callable): the entry point (a transform, or the function a transform returns).
    Returns:
        callable: `fun` with the same signature, name and docstring (`functools.wraps`).
    Raises:
        whatever `fun` raises, unchanged but for the traceback.

    >>> from transforms.traceback_util import api_boundary
    >>> @api_boundary
    ... def entry(x):
    ...     return x + 1
    >>> entry(1), entry.__name__
    (2, 'entry')
    """
    @functools.wraps(fun)
    def boundary(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            if _enabled:
                filter_exception(e)
            raise   # a bare re-raise adds no entry for this frame: the filtered traceback goes on as it is
    return boundary
